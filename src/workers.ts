/**
 * Several server processes on one port (node:cluster): the request path is
 * CPU-bound in Node, so one process per core serves more. The primary only
 * forks, restarts a worker that dies, passes shutdown signals on, and
 * answers a worker's `/metrics` with every worker's metrics merged.
 */
import cluster from 'node:cluster';
import { answerWorkerScrapes } from './metrics/clusterScrape.ts';
import { workerExecArgv } from './workerFlags.ts';

/** Forks `count` workers; calls `onReady` with the URL once all of them listen. */
export function runWorkers(count: number, onReady: (url: string) => void): Promise<void> {
  let listening = 0;
  let stopping = false;
  // Until the primary exits: workers draining on shutdown may still be scraped.
  answerWorkerScrapes();
  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv) });
  const fork = () => {
    const worker = cluster.fork();
    worker.on('message', (message: { listening?: string }) => {
      if (message.listening && ++listening === count) onReady(message.listening);
    });
  };
  for (let i = 0; i < count; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    process.stderr.write(`backscroll: worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    listening -= 1;
    fork();
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
