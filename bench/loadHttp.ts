/**
 * One HTTP load run in its own process (a fresh one per scenario, so one
 * run's garbage never lands in another's p99): autocannon against the server
 * with a fresh request body per request. Prints one JSON LoadResult line.
 *
 *   node --import tsx bench/loadHttp.ts <scenario> <url> <connections> <seconds>
 */
import { signToken } from '../src/auth/tokens.ts';
import { BENCH_DATA } from '../src/seed/benchData.ts';
import { runGraphQLLoad } from './graphqlLoad.ts';
import { type PageScenario, pageRequest, type SendScenario, sendRequest } from './scenarios.ts';

const [scenario, url, connectionsText, secondsText] = process.argv.slice(2) as [string, string, string, string];
const secret = process.env.JWT_SECRET!;
const tokens = new Map<string, string>();
for (let i = 0; i < BENCH_DATA.conversations; i++) tokens.set(`user-${i}`, await signToken(secret, `user-${i}`, 3600));

const next = scenario.startsWith('send-') ? () => sendRequest(scenario as SendScenario) : () => pageRequest(scenario as PageScenario);
const out = await runGraphQLLoad({
  url,
  connections: Number(connectionsText),
  seconds: Number(secondsText),
  next: () => {
    const r = next();
    return { body: r.body, token: tokens.get(r.userId)! };
  },
});
process.stdout.write(`${JSON.stringify(out)}\n`);
