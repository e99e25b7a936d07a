/**
 * The freshness load of bench/replicas.ts, in its own process: each client
 * sends a message to a conversation of its own, then at once reads that
 * conversation's newest page (50) with the `Backscroll-Consistency` token
 * the send answered (or, with `no-token`, without it), and checks the page
 * holds the message it sent; over and over for the given seconds. Prints
 * one JSON FreshResult line.
 *
 *   node --import tsx bench/loadFresh.ts <url> <clients> <seconds> token|no-token
 *
 * Client k (from 1) is the owner of seeded conversation k, which no other
 * client writes to, so its own send is always the newest message there.
 */
import { signToken } from '../src/auth/tokens.ts';
import { conversationGlobalId } from '../src/history/globalId.ts';
import { BENCH_DATA, benchConversationId, benchMembers } from '../src/seed/benchData.ts';
import { quantile } from './loadResult.ts';
import { PAGE_QUERY } from './scenarios.ts';

/** What one freshness run counted. */
export interface FreshResult {
  /** Send-then-read pairs completed. */
  pairs: number;
  /** Reads whose page did not hold the message sent just before. */
  missed: number;
  /** Sends or reads that failed (not 200, GraphQL errors, a send with no token). */
  failures: number;
  sendP50: number;
  sendP99: number;
  readP50: number;
  readP99: number;
}

const SEND = `mutation Send($conversationId: ID!, $clientMsgId: String!, $text: String!) {
  sendMessage(input: { conversationId: $conversationId, clientMsgId: $clientMsgId, text: $text }) { message { seq } }
}`;

const [url, clientsText, secondsText, mode] = process.argv.slice(2) as [string, string, string, string];
const secret = process.env.JWT_SECRET!;
const withToken = mode === 'token';
const deadline = Date.now() + Number(secondsText) * 1000;
const runId = Math.random().toString(36).slice(2, 8);
const sendTimes: number[] = [];
const readTimes: number[] = [];
let missed = 0;
let failures = 0;
let firstFailure: string | null = null;

/** POSTs `body` as `bearer`; answers the parsed body, the response's token and the milliseconds it took, or null after counting a failure. */
async function post(bearer: string, body: unknown, consistency: string | null): Promise<{ data: any; token: string | null; ms: number } | null> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${bearer}`,
      ...(consistency === null ? {} : { 'backscroll-consistency': consistency }),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200 || text.includes('"errors"')) {
    failures += 1;
    firstFailure ??= `${response.status} ${text.slice(0, 300)}`;
    return null;
  }
  return { data: (JSON.parse(text) as { data: any }).data, token: response.headers.get('backscroll-consistency'), ms };
}

async function client(k: number): Promise<void> {
  const userId = benchMembers(k, BENCH_DATA)[0]!;
  const bearer = await signToken(secret, userId, 3600);
  const conversationId = conversationGlobalId(benchConversationId(k));
  for (let n = 0; Date.now() < deadline; n++) {
    const sent = await post(bearer, { query: SEND, variables: { conversationId, clientMsgId: `fresh-${runId}-${k}-${n}`, text: `freshness ${n}` } }, null);
    if (sent === null) continue;
    if (sent.token === null) {
      failures += 1;
      firstFailure ??= 'a send answered no Backscroll-Consistency token';
      continue;
    }
    sendTimes.push(sent.ms);
    const read = await post(bearer, { query: PAGE_QUERY, variables: { id: conversationId } }, withToken ? sent.token : null);
    if (read === null) continue;
    readTimes.push(read.ms);
    const seqs: number[] = read.data.conversation.messages.edges.map((edge: { node: { seq: number } }) => edge.node.seq);
    if (!seqs.includes(sent.data.sendMessage.message.seq)) missed += 1;
  }
}

await Promise.all(Array.from({ length: Number(clientsText) }, (_, i) => client(i + 1)));
if (firstFailure) process.stderr.write(`fresh: first failure: ${firstFailure}\n`);
sendTimes.sort((a, b) => a - b);
readTimes.sort((a, b) => a - b);
const out: FreshResult = {
  pairs: readTimes.length,
  missed,
  failures,
  sendP50: quantile(sendTimes, 0.5),
  sendP99: quantile(sendTimes, 0.99),
  readP50: quantile(readTimes, 0.5),
  readP99: quantile(readTimes, 0.99),
};
process.stdout.write(`${JSON.stringify(out)}\n`);
