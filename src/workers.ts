/**
 * Several server processes on one port (node:cluster): the request path is
 * CPU-bound in Node, so one process per core serves more. The primary only
 * forks, restarts a worker that dies (in the same slot: the conversations
 * whose sends it stores stay its), passes shutdown signals on, relays sends
 * to the worker that stores them (src/sendForwarding.ts), and answers a
 * worker's `/metrics` with every worker's metrics merged.
 */
import cluster from 'node:cluster';
import { answerWorkerScrapes } from './metrics/clusterScrape.ts';
import { relaySends } from './sendForwarding.ts';
import { workerExecArgv } from './workerFlags.ts';

/** The environment variable that tells a worker its slot, 0 to BACKSCROLL_WORKERS - 1. */
const WORKER_SLOT = 'BACKSCROLL_WORKER_SLOT';

/** Forks `count` workers; calls `onReady` with the URL once all of them listen. */
export function runWorkers(count: number, onReady: (url: string) => void): Promise<void> {
  let listening = 0;
  let stopping = false;
  // Until the primary exits: workers draining on shutdown may still be scraped.
  answerWorkerScrapes();
  relaySends();
  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv) });
  const slots = new Map<number, number>();
  const fork = (slot: number) => {
    const worker = cluster.fork({ [WORKER_SLOT]: String(slot) });
    slots.set(worker.id, slot);
    worker.on('message', (message: { listening?: string }) => {
      if (message.listening && ++listening === count) onReady(message.listening);
    });
  };
  for (let slot = 0; slot < count; slot++) fork(slot);
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    process.stderr.write(`backscroll: worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    listening -= 1;
    const slot = slots.get(worker.id)!;
    slots.delete(worker.id);
    fork(slot);
  });
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
      const waitForAll = () => (Object.keys(cluster.workers ?? {}).length === 0 ? resolve() : setTimeout(waitForAll, 50));
      waitForAll();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

/** Tells the primary this worker is listening. */
export function reportListening(url: string): void {
  process.send?.({ listening: url });
}

/** This worker's slot, 0 to BACKSCROLL_WORKERS - 1 (given by the primary when it forked it). */
export function workerSlot(): number {
  return Number(process.env[WORKER_SLOT]);
}
