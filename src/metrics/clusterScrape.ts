/**
 * One scrape, every worker's metrics. With BACKSCROLL_WORKERS above 1 the
 * primary hands each connection to one worker, so a worker answering
 * `/metrics` from its own registry would report only its own share. Instead
 * the worker asks the primary over IPC, and the primary answers with
 * prom-client's `AggregatorRegistry.clusterMetrics()`: prom-client asks every
 * worker for its registry and merges them (counters and histograms summed,
 * gauges by their `aggregator`). The merging is prom-client's; this file is
 * only the request from the scraped worker to the primary and back.
 *
 * prom-client (15.1) gives up on workers that have not answered after 5 s,
 * fixed (a worker that died mid-scrape, or one still starting); the worker
 * also bounds its own wait for the primary, so a scrape never hangs.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const ASK = 'backscroll:metrics-ask';
const ANSWER = 'backscroll:metrics-answer';
/** How long a worker waits for the primary: past prom-client's own 5 s, so the primary's reason normally comes first. */
const CLUSTER_SCRAPE_WAIT_MS = 6000;

interface Ask {
  type: typeof ASK;
  id: number;
}
type Answer = { type: typeof ANSWER; id: number } & ({ text: string } | { error: string });

/** The metrics of the other workers could not be had: the scrape is answered 503. */
export class ClusterMetricsUnavailable extends Error {}

const isAsk = (message: unknown): message is Ask => (message as Ask | null)?.type === ASK;
const isAnswer = (message: unknown): message is Answer => (message as Answer | null)?.type === ANSWER;

/** In the primary: answers each worker's request with every worker's metrics merged. Call once. */
export function answerWorkerScrapes(): void {
  const aggregator = new AggregatorRegistry();
  const onMessage = (worker: Worker, message: unknown) => {
    if (!isAsk(message)) return;
    const reply = (answer: Answer) => {
      // A worker that died while we gathered is past answering; the callback keeps its closed channel from throwing.
      if (worker.isConnected()) worker.send(answer, () => {});
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ type: ANSWER, id: message.id, text }),
      (error: Error) => reply({ type: ANSWER, id: message.id, error: error.message }),
    );
  };
  cluster.on('message', onMessage);
}

/**
 * In a worker: offers `register` to the primary's aggregation and returns the
 * function that gets every worker's metrics (rejects with
 * `ClusterMetricsUnavailable` when they cannot be had in time).
 */
export function joinClusterMetrics(register: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries(register);
  // prom-client installs its listener (the one answering the primary with
  // `register`) when an AggregatorRegistry is constructed; nothing else is used.
  new AggregatorRegistry();
  const waiting = new Map<number, (answer: Answer | Error) => void>();
  let next = 0;
  process.on('message', (message: unknown) => {
    if (isAnswer(message)) waiting.get(message.id)?.(message);
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => settle(new Error(`the primary did not answer within ${CLUSTER_SCRAPE_WAIT_MS} ms`)), CLUSTER_SCRAPE_WAIT_MS);
      const settle = (answer: Answer | Error) => {
        if (!waiting.delete(id)) return;
        clearTimeout(timer);
        if (answer instanceof Error) reject(new ClusterMetricsUnavailable(answer.message));
        else if ('error' in answer) reject(new ClusterMetricsUnavailable(answer.error));
        else resolve(answer.text);
      };
      waiting.set(id, settle);
      if (!process.send) {
        settle(new Error('this process has no primary to ask'));
        return;
      }
      process.send({ type: ASK, id } satisfies Ask, (error: Error | null) => {
        if (error) settle(error);
      });
    });
}
