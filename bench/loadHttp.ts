/**
 * One HTTP load run in its own process (a fresh one per scenario, so one
 * run's garbage never lands in another's p99): autocannon against the server
 * with a fresh request body per request. Prints one JSON LoadResult line.
 *
 *   node --import tsx bench/loadHttp.ts <scenario> <url> <connections> <seconds>
 */
import { runGraphQLLoad } from './graphqlLoad.ts';
import { benchUserTokens, type PageScenario, pageRequest, type SendScenario, sendRequest } from './scenarios.ts';

const [scenario, url, connectionsText, secondsText] = process.argv.slice(2) as [string, string, string, string];
const tokens = await benchUserTokens(process.env.JWT_SECRET!);

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
