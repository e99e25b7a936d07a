/**
 * One load run of GraphQL POSTs with autocannon, the part every load process
 * shares: `next` names each request's body and bearer token; a non-200 answer
 * or one carrying `errors` counts as a failure (the first is printed to stderr).
 * Latencies are taken from each response's time, in fractions of a
 * millisecond like the raw SQL runs': autocannon's own histogram keeps whole
 * milliseconds, so a 3 ms p50 against an 8 ms one could only move a ratio in
 * steps of a third.
 */
import autocannon from 'autocannon';
import { type LoadResult, quantile } from './loadResult.ts';

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
  const latencies: number[] = [];
  const options: autocannon.Options = {
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
  };
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (error: unknown, done: autocannon.Result) => (error ? reject(error) : resolve(done)));
    instance.on('response', (_client, _status, _bytes, responseTimeMs) => latencies.push(responseTimeMs));
  });
  latencies.sort((a, b) => a - b);
  if (firstFailure) process.stderr.write(`${load.label ? `${load.label}: ` : ''}first failure: ${firstFailure}\n`);
  return {
    requests: result.requests.total,
    perSecond: result.requests.total / load.seconds,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    failures: failures + result.errors + result.timeouts,
  };
}
