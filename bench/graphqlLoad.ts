/**
 * One load run of GraphQL POSTs with autocannon, the part every load process
 * shares: `next` names each request's body and bearer token; a non-200 answer
 * or one carrying `errors` counts as a failure (the first is printed to stderr).
 */
import autocannon from 'autocannon';
import type { LoadResult } from './loadResult.ts';

export interface GraphQLLoad {
  url: string;
  connections: number;
  seconds: number;
  /** The next request: its JSON body and the token it is sent with (called synchronously, per request). */
  next(): { body: string; token: string };
  /** Prefixed to the first-failure line. */
  label?: string;
}

/** Runs `load` and answers its figures. */
export async function runGraphQLLoad(load: GraphQLLoad): Promise<LoadResult> {
  let failures = 0;
  let firstFailure: string | null = null;
  const result = await autocannon({
    url: load.url,
    connections: load.connections,
    duration: load.seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const { body, token } = load.next();
          return { ...request, body, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } };
        },
        onResponse: (status, text) => {
          if (status !== 200 || text.includes('"errors"')) {
            failures += 1;
            firstFailure ??= `${status} ${text.slice(0, 300)}`;
          }
        },
      },
    ],
  });
  if (firstFailure) process.stderr.write(`${load.label ? `${load.label}: ` : ''}first failure: ${firstFailure}\n`);
  return {
    requests: result.requests.total,
    perSecond: result.requests.total / load.seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: failures + result.errors + result.timeouts,
  };
}
