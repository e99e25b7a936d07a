/**
 * The physical floor: the same page (or send) as one raw SQL statement
 * through postgres.js (prepared), from `connections` concurrent loops for the
 * given seconds, in its own process. Prints one JSON LoadResult line.
 *
 *   node --import tsx bench/loadRaw.ts <scenario> <connections> <seconds>
 */
import postgres from 'postgres';
import { socketFromUrl } from '../src/db/client.ts';
import { searchVector } from '../src/history/searchText.ts';
import type { LoadResult } from './loadResult.ts';
import { quantile } from './loadResult.ts';
import { PAGE_SIZE, type PageScenario, pageRequest, type SendScenario, sendRequest } from './scenarios.ts';

const [scenario, connectionsText, secondsText] = process.argv.slice(2) as [string, string, string];
const connections = Number(connectionsText);
// The same connection the server makes (a `?host=/socket/dir` URL means a Unix socket).
const { url, socketPath } = socketFromUrl(process.env.DATABASE_URL!);
const sql = postgres(url, { max: connections, onnotice: () => {}, ...(socketPath ? { path: socketPath } : {}) });

const COLUMNS = 'm.seq, m.sender_id, m.created_at, m.revoked_at, m.revoked_by, b.text';
const FROM = 'messages m left join message_bodies b on b.conv_id = m.conv_id and b.seq = m.seq';

/** One statement of the scenario, as our server would need at the least. */
function statement(): Promise<unknown> {
  if (scenario.startsWith('send-')) {
    const r = sendRequest(scenario as SendScenario);
    const { clientMsgId, text } = JSON.parse(r.body).variables;
    return sql`with conv as (
        update conversations c set max_seq = c.max_seq + 1, last_activity_at = now()
        where c.id = ${r.convId} and exists (select 1 from members mb where mb.conv_id = ${r.convId} and mb.user_id = ${r.userId})
        returning c.id, c.max_seq, c.last_activity_at, c.large),
      -- The members' inbox rows, as the server's send moves them (src/store/inboxIndex.ts).
      inbox as (update user_inbox ui set activity_at = conv.last_activity_at from conv join members mb on mb.conv_id = conv.id
        where not conv.large and ui.user_id = mb.user_id and ui.conv_id = conv.id),
      m as (insert into messages (conv_id, seq, sender_id, client_msg_id)
        select id, max_seq, ${r.userId}, ${clientMsgId} from conv returning *),
      body as (insert into message_bodies (conv_id, seq, text, search_terms)
        select conv_id, seq, ${text}, ${searchVector(r.convId, text)}::tsvector from m)
      select seq from m`;
  }
  const r = pageRequest(scenario as PageScenario);
  if (scenario === 'hot-around') {
    return sql.unsafe(
      `(select ${COLUMNS} from ${FROM} where m.conv_id = $1 and m.seq < $2 order by m.seq desc limit ${PAGE_SIZE / 2 + 1})
       union all (select ${COLUMNS} from ${FROM} where m.conv_id = $1 and m.seq >= $2 order by m.seq asc limit ${PAGE_SIZE / 2 + 1})`,
      [r.convId, r.seq!],
      { prepare: true },
    );
  }
  if (r.seq === null) {
    return sql.unsafe(`select ${COLUMNS} from ${FROM} where m.conv_id = $1 order by m.seq desc limit ${PAGE_SIZE + 1}`, [r.convId], {
      prepare: true,
    });
  }
  return sql.unsafe(`select ${COLUMNS} from ${FROM} where m.conv_id = $1 and m.seq < $2 order by m.seq desc limit ${PAGE_SIZE + 1}`, [r.convId, r.seq], {
    prepare: true,
  });
}

const latencies: number[] = [];
let failures = 0;
const deadline = performance.now() + Number(secondsText) * 1000;
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      try {
        await statement();
        latencies.push(performance.now() - started);
      } catch (error) {
        failures += 1;
        if (failures === 1) process.stderr.write(`first failure: ${String(error)}\n`);
      }
    }
  }),
);
await sql.end();
latencies.sort((a, b) => a - b);
const out: LoadResult = {
  requests: latencies.length,
  perSecond: latencies.length / Number(secondsText),
  p50: quantile(latencies, 0.5),
  p99: quantile(latencies, 0.99),
  failures,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
