/**
 * Probes for process managers and load balancers: `/healthz` answers while
 * the process can answer at all; `/readyz` answers 200 only while the
 * database is reachable and its migrations are current, 503 otherwise. Read
 * replicas never make it 503: reads fall back to the primary, so the
 * process serves while the primary does; their states are in the body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ReplicaReport } from '../db/replicaSet.ts';

/** Why the server cannot serve yet, or null when it can. */
export type ReadinessCheck = () => Promise<string | null>;

const PROBES = new Set(['/healthz', '/readyz']);

/** Whether `url` is one of the probes (checked on every request, so no parsing). */
export function isProbe(url: string | undefined): boolean {
  return url !== undefined && PROBES.has(url.split('?')[0]!);
}

/** Answers a probe request (`isProbe` said it is one). */
export async function answerProbe(
  req: IncomingMessage,
  res: ServerResponse,
  readiness: ReadinessCheck,
  replicas?: () => ReplicaReport[],
): Promise<void> {
  if ((req.url ?? '').startsWith('/healthz')) {
    send(res, 200, { status: 'ok' });
    return;
  }
  let problem: string | null;
  try {
    problem = await readiness();
  } catch (error) {
    problem = `the database cannot be reached (${(error as Error).message})`;
  }
  const body = problem === null ? { status: 'ready' } : { status: 'unavailable', reason: problem };
  send(res, problem === null ? 200 : 503, replicas === undefined ? body : { ...body, replicas: replicas() });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
