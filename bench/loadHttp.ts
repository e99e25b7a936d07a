/**
 * One HTTP load run in its own process (a fresh one per scenario, so one
 * run's garbage never lands in another's p99): autocannon against the server
 * with a fresh request body per request. Prints one JSON LoadResult line.
 *
 *   node --import tsx bench/loadHttp.ts <scenario> <url> <connections> <seconds>
 */
import autocannon from 'autocannon';
import { signToken } from '../src/auth/tokens.ts';
import { BENCH_DATA } from '../src/seed/benchData.ts';
import type { LoadResult } from './loadResult.ts';
import { type PageScenario, pageRequest, type SendScenario, sendRequest } from './scenarios.ts';

const [scenario, url, connectionsText, secondsText] = process.argv.slice(2) as [string, string, string, string];
const secret = process.env.JWT_SECRET!;
const tokens = new Map<string, string>();
for (let i = 0; i < BENCH_DATA.conversations; i++) tokens.set(`user-${i}`, await signToken(secret, `user-${i}`, 3600));

const next = scenario.startsWith('send-') ? () => sendRequest(scenario as SendScenario) : () => pageRequest(scenario as PageScenario);
let failures = 0;
let firstFailure: string | null = null;

const result = await autocannon({
  url,
  connections: Number(connectionsText),
  duration: Number(secondsText),
  requests: [
    {
      method: 'POST',
      setupRequest: (request) => {
        const r = next();
        return {
          ...request,
          body: r.body,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.get(r.userId)}` },
        };
      },
      onResponse: (status, body) => {
        if (status !== 200 || body.includes('"errors"')) {
          failures += 1;
          firstFailure ??= `${status} ${body.slice(0, 300)}`;
        }
      },
    },
  ],
});

if (firstFailure) process.stderr.write(`first failure: ${firstFailure}\n`);
const out: LoadResult = {
  requests: result.requests.total,
  perSecond: result.requests.total / Number(secondsText),
  p50: result.latency.p50,
  p99: result.latency.p99,
  failures: failures + result.errors + result.timeouts,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
