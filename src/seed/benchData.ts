/**
 * The benchmark data set, loaded with set-based SQL (a few statements per
 * batch of conversations, never one call per message): 2,000,000 messages in
 * 2,000 conversations, one hot conversation of 500,000, the rest even; texts
 * of 20 to 200 characters mixing Chinese and English; a few per cent of
 * messages deleted-for-me by some members, and some revoked. Bodies are
 * inserted without search vectors: `backscroll seed --bench` indexes them
 * afterwards with the JavaScript tokenizer (src/search/reindex.ts).
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { rowsOf } from '../db/rows.ts';

/** The shape of the data set; tests use a small one, the benchmark the default. */
export interface BenchDataShape {
  conversations: number;
  totalMessages: number;
  hotMessages: number;
  /** Members per conversation (the first is the bench user `bench-0`... see `memberOf`). */
  membersPerConversation: number;
}

export const BENCH_DATA: BenchDataShape = {
  conversations: 2000,
  totalMessages: 2_000_000,
  hotMessages: 500_000,
  membersPerConversation: 5,
};

/** The hot conversation's id, fixed so benchmarks find it. */
export const HOT_CONVERSATION_ID = '00000000-0000-4000-8000-000000000000';

/** Conversation `i`'s id (i = 0 is the hot one). */
export function benchConversationId(i: number): string {
  return `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
}

/** The user ids of conversation `i`: `user-i`, `user-(i+1)`, ... so every user is in several conversations. */
export function benchMembers(i: number, shape: BenchDataShape): string[] {
  return Array.from({ length: shape.membersPerConversation }, (_, k) => `user-${(i + k) % shape.conversations}`);
}

/** The search benchmark's user: a member of conversations 1 to 100 (not the hot one), about 75,000 messages. */
export const SEARCH_BENCH_USER = 'searcher';
export const SEARCH_BENCH_CONVERSATIONS = 100;

/** Makes `SEARCH_BENCH_USER` a member of its conversations; harmless to repeat (the benchmark runs it on older data sets). */
export async function addSearchBenchMember(db: Database): Promise<void> {
  const ids = Array.from({ length: SEARCH_BENCH_CONVERSATIONS }, (_, k) => benchConversationId(k + 1));
  await db.execute(sql`insert into members (conv_id, user_id, role)
    select id, ${SEARCH_BENCH_USER}, 'member' from unnest(${sql.param(ids)}::uuid[]) as t(id)
    on conflict do nothing`);
}

// Fragments that texts are made of: Chinese, English and mixed, so texts are realistic for search.
const FRAGMENTS = [
  '好的，明天见', 'see you tomorrow', '消息漫游已经上线了', 'the release is out', 'GraphQL 游标分页',
  '我们下午三点开会', 'can you review my PR?', '这个问题我来看一下', 'lunch at noon?', '数据库迁移完成',
  'deploying to staging now', '谢谢大家的支持', 'ok 👍', '周末去爬山吗', 'the build is green again',
  '客户反馈说加载太慢', 'let me check the logs', '历史消息同步有延迟', 'merged, thanks!', '晚上一起吃饭',
  'PostgreSQL keyset pagination', '请把文档发给我', 'on my way', '服务器重启了一次', 'happy birthday 🎉',
  '这周的周报写好了吗', 'latency p99 looks fine', '新版本修复了撤回的问题', 'who is on call today?', '收到',
];

/** Loads the data set into an empty, migrated database; reports progress through `progress`. */
export async function seedBenchData(
  db: Database,
  shape: BenchDataShape,
  progress: (line: string) => void,
): Promise<{ messages: number; seconds: number }> {
  const started = Date.now();
  const existing = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int8 as n from conversations`))[0]!.n;
  if (existing > 0) throw new Error('The database already has conversations; seed an empty database.');
  const rest = shape.conversations - 1;
  const perConversation = Math.floor((shape.totalMessages - shape.hotMessages) / Math.max(rest, 1));
  // The remainder goes to conversation 1, so the total is exact.
  const remainder = shape.totalMessages - shape.hotMessages - perConversation * rest;
  const countOf = (i: number) => (i === 0 ? shape.hotMessages : i === 1 ? perConversation + remainder : perConversation);
  const fragments = sql.param(FRAGMENTS);
  const batchSize = 100;
  let messages = 0;
  for (let from = 0; from < shape.conversations; from += batchSize) {
    const to = Math.min(from + batchSize, shape.conversations);
    const ids = Array.from({ length: to - from }, (_, k) => benchConversationId(from + k));
    const counts = ids.map((_, k) => countOf(from + k));
    const members = ids.flatMap((id, k) => benchMembers(from + k, shape).map((userId, r) => ({ id, userId, role: r === 0 ? 'owner' : 'member' })));
    await db.transaction(async (tx) => {
      await tx.execute(sql`insert into conversations (id, kind, title, max_seq, last_activity_at)
        select id, 'group', 'bench ' || id, n, now() - interval '1 hour' * random()
        from unnest(${sql.param(ids)}::uuid[], ${sql.param(counts)}::int8[]) as t(id, n)`);
      await tx.execute(sql`insert into members (conv_id, user_id, role)
        select * from unnest(${sql.param(members.map((m) => m.id))}::uuid[], ${sql.param(members.map((m) => m.userId))}::text[], ${sql.param(members.map((m) => m.role))}::text[])`);
      // Spread over three years, oldest first; sender rotates through the members;
      // every 37th message is revoked (by its sender).
      await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id, created_at, revoked_at, revoked_by)
        select c.id, g, 'user-' || ((c.ord + g % ${shape.membersPerConversation}) % ${shape.conversations}), 'seed-' || g,
          now() - interval '3 years' * (1 - g::float8 / c.max_seq),
          case when g % 37 = 0 then now() - interval '3 years' * (1 - g::float8 / c.max_seq) + interval '1 minute' end,
          case when g % 37 = 0 then 'user-' || ((c.ord + g % ${shape.membersPerConversation}) % ${shape.conversations}) end
        from (select id, max_seq, ('x' || right(id::text, 12))::bit(48)::int8 as ord from conversations
              where id = any(${sql.param(ids)}::uuid[])) c,
          generate_series(1, c.max_seq) g`);
      await tx.execute(sql`insert into message_bodies (conv_id, seq, text)
        select m.conv_id, m.seq, left(case when char_length(t.text) < 20 then t.text || ' · ' || f[1 + m.seq % n] || ' ' || f[1 + (m.seq + 1) % n] else t.text end, 200)
        from messages m, (select ${fragments}::text[] as f, ${FRAGMENTS.length}::int as n) w,
          lateral (select array_to_string((array[
            f[1 + (m.seq * 7) % n], f[1 + (m.seq * 13 + 3) % n], f[1 + (m.seq * 17 + 5) % n], f[1 + (m.seq * 19 + 7) % n],
            f[1 + (m.seq * 23 + 11) % n], f[1 + (m.seq * 29 + 13) % n], f[1 + (m.seq * 31 + 17) % n], f[1 + (m.seq * 37 + 19) % n],
            f[1 + (m.seq * 41 + 23) % n], f[1 + (m.seq * 43 + 29) % n]])[1:(2 + m.seq % 9)], ' ') as text) t
        where m.conv_id = any(${sql.param(ids)}::uuid[]) and m.revoked_at is null`);
      // A few per cent deleted-for-me: the second member hides every 29th message.
      await tx.execute(sql`insert into message_hides (conv_id, user_id, seq)
        select m.conv_id, mb.user_id, m.seq
        from messages m join members mb on mb.conv_id = m.conv_id and mb.role = 'member'
        where m.conv_id = any(${sql.param(ids)}::uuid[]) and m.seq % 29 = 0
          and mb.user_id = 'user-' || ((('x' || right(m.conv_id::text, 12))::bit(48)::int8 + 1) % ${shape.conversations})`);
    });
    messages += counts.reduce((a, b) => a + b, 0);
    const seconds = (Date.now() - started) / 1000;
    progress(`seeded ${to}/${shape.conversations} conversations, ${messages.toLocaleString('en')} messages, ${seconds.toFixed(1)} s`);
  }
  await addSearchBenchMember(db);
  // Fresh visibility maps let index-only scans skip the heap, as on a long-lived database.
  progress('vacuuming and analyzing tables');
  await db.execute(sql`vacuum analyze conversations, members, messages, message_bodies, message_hides`);
  return { messages, seconds: (Date.now() - started) / 1000 };
}
