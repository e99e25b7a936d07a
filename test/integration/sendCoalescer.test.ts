/**
 * Group commit of a process's sends (src/store/sendCoalescer.ts): sends
 * that overlap, to one conversation or several, are stored together by one
 * statement, each still answered as if alone (its own message, a retry its
 * first copy, a non-member not found), with seqs dense in the order they
 * were asked in each conversation and every stored one announced once.
 */
import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { createGroup } from '../../src/store/conversations.ts';
import type { Notice, Publisher } from '../../src/store/notify.ts';
import { createSendCoalescer, MAX_IN_FLIGHT, MAX_TOGETHER } from '../../src/store/sendCoalescer.ts';
import type { SendOutcome, SendRequest } from '../../src/store/sends.ts';
import { backends, openTestDatabase, postgresOnly } from '../helpers/database.ts';

const request = (senderId: string, clientMsgId: string, reply: SendRequest['reply'] = null): SendRequest => ({
  senderId,
  clientMsgId,
  text: `text of ${clientMsgId}`,
  reply,
  mentions: { userIds: [], everyone: false },
});

/** `db`, counting the statements it has running at once (`most`) and keeping each one's error. */
function watched(db: SqlRunner): { runner: SqlRunner; most: () => number; errors: unknown[] } {
  let running = 0;
  let most = 0;
  const errors: unknown[] = [];
  const runner: SqlRunner = {
    async rows(query) {
      running += 1;
      most = Math.max(most, running);
      try {
        return await db.rows(query);
      } catch (error) {
        errors.push(error);
        throw error;
      } finally {
        running -= 1;
      }
    },
    transaction: (work) => db.transaction(work),
  };
  return { runner, most: () => most, errors };
}

/** The seqs stored for `convId` among `outcomes`, in the order the sends were asked. */
const seqsIn = (outcomes: SendOutcome[], convId: string) =>
  outcomes.flatMap((o) => (o.kind === 'stored' && o.message.convId === convId ? [o.message.seq] : []));

describe.each(backends)('Sends stored together (%s)', (backend) => {
  let database: DatabaseHandle;
  let db: SqlRunner;
  const published: Notice[] = [];
  const publisher: Publisher = { publish: (notices) => void published.push(...notices) };

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    db = createRunner(database.client);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('stores overlapping sends to one conversation in fewer statements, each answered with its own message, seqs dense', async () => {
    const convId = await createGroup(db, 'alice', 'busy', ['bob']);
    const together: number[] = [];
    const sends = createSendCoalescer(publisher, (stored) => together.push(stored));
    published.length = 0;
    const count = 40;
    const outcomes = await Promise.all(
      Array.from({ length: count }, (_, i) => sends.send(db, convId, request(i % 2 === 0 ? 'alice' : 'bob', `m-${i}`))),
    );
    expect(outcomes.every((o) => o.kind === 'stored')).toBe(true);
    const stored = outcomes.map((o) => (o.kind === 'stored' ? o.message : null)!);
    expect(stored.map((m) => m.senderId)).toEqual(Array.from({ length: count }, (_, i) => (i % 2 === 0 ? 'alice' : 'bob')));
    expect(stored.map((m) => m.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    // Every send counted once, and most of them shared a statement.
    expect(together.reduce((sum, n) => sum + n, 0)).toBe(count);
    expect(together.length).toBeLessThan(count);
    expect(Math.max(...together)).toBeGreaterThan(1);
    expect(Math.max(...together)).toBeLessThanOrEqual(MAX_TOGETHER);
    expect(published.map((n) => n.seq).sort((a, b) => a - b)).toEqual(stored.map((m) => m.seq).sort((a, b) => a - b));
  });

  it('answers a retry with its first copy and a non-member with not found, storing the rest without a hole', async () => {
    const convId = await createGroup(db, 'alice', 'mixed', ['bob']);
    const sends = createSendCoalescer(publisher);
    const first = await sends.send(db, convId, request('alice', 'first'));
    expect(first.kind).toBe('stored');
    published.length = 0;
    // One in flight, then a batch holding a retry and a stranger among new sends.
    const outcomes = await Promise.all([
      sends.send(db, convId, request('bob', 'n-0')),
      sends.send(db, convId, request('alice', 'n-1')),
      sends.send(db, convId, request('alice', 'first')),
      sends.send(db, convId, request('mallory', 'n-2')),
      sends.send(db, convId, request('bob', 'n-3')),
    ]);
    expect(outcomes.map((o) => o.kind)).toEqual(['stored', 'stored', 'deduplicated', 'not-found', 'stored']);
    const retry = outcomes[2]!;
    expect(retry.kind === 'deduplicated' && first.kind === 'stored' && retry.message.seq).toBe(first.kind === 'stored' && first.message.seq);
    const seqs = outcomes.flatMap((o) => (o.kind === 'stored' ? [o.message.seq] : [])).sort((a, b) => a - b);
    expect(seqs).toEqual([2, 3, 4]);
    expect(published.map((n) => n.seq).sort((a, b) => a - b)).toEqual([2, 3, 4]);
  });

  it('keeps conversations apart: overlapping sends to two conversations each get their own dense seqs', async () => {
    const a = await createGroup(db, 'alice', 'a', ['bob']);
    const b = await createGroup(db, 'alice', 'b', ['bob']);
    const sends = createSendCoalescer(publisher);
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => sends.send(db, i % 2 === 0 ? a : b, request('alice', `x-${i}`))));
    for (const convId of [a, b]) {
      const seqs = outcomes.flatMap((o) => (o.kind === 'stored' && o.message.convId === convId ? [o.message.seq] : [])).sort((x, y) => x - y);
      expect(seqs).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    }
  });

  it('stores a batch holding a stranger and replies: the stranger not found, the rest dense in the order asked, replies kept', async () => {
    const convId = await createGroup(db, 'alice', 'replies', ['bob']);
    const together: number[] = [];
    const sends = createSendCoalescer(publisher, (stored) => together.push(stored));
    const root = await sends.send(db, convId, request('alice', 'root'));
    expect(root.kind).toBe('stored');
    published.length = 0;
    const reply = { replyToSeq: 1, threadRootSeq: 1 };
    const outcomes = await Promise.all([
      sends.send(db, convId, request('bob', 'r-0', reply)),
      sends.send(db, convId, request('alice', 'r-1')),
      sends.send(db, convId, request('mallory', 'r-2', reply)),
      sends.send(db, convId, request('bob', 'r-3', reply)),
      sends.send(db, convId, request('alice', 'r-4')),
    ]);
    expect(outcomes.map((o) => o.kind)).toEqual(['stored', 'stored', 'not-found', 'stored', 'stored']);
    const stored = outcomes.flatMap((o) => (o.kind === 'stored' ? [o.message] : []));
    expect(stored.map((m) => m.seq)).toEqual([2, 3, 4, 5]);
    expect(stored.map((m) => [m.senderId, m.replyToSeq, m.threadRootSeq])).toEqual([
      ['bob', 1, 1],
      ['alice', null, null],
      ['bob', 1, 1],
      ['alice', null, null],
    ]);
    // The root alone, then r-0 alone (nothing in flight), then the four that waited behind it, the stranger too, as one statement.
    expect(together).toEqual([1, 1, 4]);
    expect(published.map((n) => n.seq)).toEqual([2, 3, 4, 5]);
    const texts = await db.rows<{ seq: number; text: string }>(
      sql`select seq::int as seq, text from message_bodies where conv_id = ${convId} order by seq`,
    );
    expect(texts.map((t) => [t.seq, t.text])).toEqual([
      [1, 'text of root'],
      [2, 'text of r-0'],
      [3, 'text of r-1'],
      [4, 'text of r-3'],
      [5, 'text of r-4'],
    ]);
  });

  it('stores a send that mentions someone alone and at once, with its mentions, while the others wait and go together', async () => {
    const convId = await createGroup(db, 'alice', 'mentions', ['bob']);
    const together: number[] = [];
    const sends = createSendCoalescer(publisher, (stored) => together.push(stored));
    const outcomes = await Promise.all([
      sends.send(db, convId, request('alice', 'p-0')),
      sends.send(db, convId, request('alice', 'p-1')),
      sends.send(db, convId, { ...request('alice', 'mention'), mentions: { userIds: ['bob'], everyone: false } }),
      sends.send(db, convId, request('bob', 'p-2')),
    ]);
    expect(outcomes.map((o) => o.kind)).toEqual(['stored', 'stored', 'stored', 'stored']);
    // p-0 and the mention alone; p-1 and p-2, which waited, together.
    expect([...together].sort()).toEqual([1, 1, 2]);
    const mention = outcomes[2]!;
    const mentioned = await db.rows<{ user_id: string }>(
      sql`select user_id from message_mentions where conv_id = ${convId} and seq = ${mention.kind === 'stored' ? mention.message.seq : -1}`,
    );
    expect(mentioned.map((r) => r.user_id)).toEqual(['bob']);
    const seqs = outcomes.flatMap((o) => (o.kind === 'stored' ? [o.message.seq] : [])).sort((a, b) => a - b);
    expect(seqs).toEqual([1, 2, 3, 4]);
  });

  it('stores overlapping sends to many conversations together, at most MAX_IN_FLIGHT statements at once, seqs dense in each in the order asked', async () => {
    const convIds: string[] = [];
    for (let k = 0; k < 12; k++) convIds.push(await createGroup(db, 'alice', `spread-${k}`, ['bob', 'carol']));
    const together: number[] = [];
    const sends = createSendCoalescer(publisher, (stored) => together.push(stored));
    const { runner, most } = watched(db);
    published.length = 0;
    // Three rounds over the twelve conversations, all asked at once.
    const asked = Array.from({ length: 36 }, (_, i) => ({ convId: convIds[i % 12]!, sender: ['alice', 'bob', 'carol'][Math.floor(i / 12)]! }));
    const outcomes = await Promise.all(asked.map(({ convId, sender }, i) => sends.send(runner, convId, request(sender, `s-${i}`))));
    expect(outcomes.every((o) => o.kind === 'stored')).toBe(true);
    for (const convId of convIds) {
      expect(seqsIn(outcomes, convId)).toEqual([1, 2, 3]);
      const stored = outcomes.flatMap((o) => (o.kind === 'stored' && o.message.convId === convId ? [o.message.senderId] : []));
      expect(stored).toEqual(['alice', 'bob', 'carol']);
    }
    expect(together.reduce((sum, n) => sum + n, 0)).toBe(36);
    expect(together.length).toBeLessThan(36);
    expect(Math.max(...together)).toBeGreaterThan(1);
    expect(most()).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    expect(published).toHaveLength(36);
    // Each body and each member's inbox row came with its message.
    const bodies = await db.rows<{ n: number }>(
      sql`select count(*)::int as n from message_bodies b join messages m on m.conv_id = b.conv_id and m.seq = b.seq
          where b.conv_id = any(${sql.param(convIds)}::uuid[]) and b.text = 'text of ' || m.client_msg_id`,
    );
    expect(bodies[0]!.n).toBe(36);
    const stale = await db.rows<{ n: number }>(
      sql`select count(*)::int as n from user_inbox ui join conversations c on c.id = ui.conv_id
          where ui.conv_id = any(${sql.param(convIds)}::uuid[]) and ui.activity_at is distinct from c.last_activity_at`,
    );
    expect(stale[0]!.n).toBe(0);
  });

  it('answers a stranger in a batch across conversations with not found, storing the others without a hole', async () => {
    const [x, y, a, b] = [
      await createGroup(db, 'alice', 'x', ['bob']),
      await createGroup(db, 'alice', 'y', ['bob']),
      await createGroup(db, 'alice', 'a', ['bob']),
      await createGroup(db, 'alice', 'b', ['bob']),
    ];
    const together: number[] = [];
    const sends = createSendCoalescer(publisher, (stored) => together.push(stored));
    published.length = 0;
    // Two alone fill the slots; the five behind them wait and go as one statement.
    const outcomes = await Promise.all([
      sends.send(db, x!, request('alice', 'x-0')),
      sends.send(db, y!, request('alice', 'y-0')),
      sends.send(db, a!, request('alice', 'a-0')),
      sends.send(db, b!, request('bob', 'b-0')),
      sends.send(db, b!, request('mallory', 'b-1')),
      sends.send(db, a!, request('bob', 'a-1', { replyToSeq: 1, threadRootSeq: 1 })),
      sends.send(db, b!, request('alice', 'b-2')),
    ]);
    expect(outcomes.map((o) => o.kind)).toEqual(['stored', 'stored', 'stored', 'stored', 'not-found', 'stored', 'stored']);
    expect([...together].sort((p, q) => p - q)).toEqual([1, 1, 5]);
    expect(seqsIn(outcomes, a!)).toEqual([1, 2]);
    expect(seqsIn(outcomes, b!)).toEqual([1, 2]);
    const reply = outcomes[5]!;
    expect(reply.kind === 'stored' && [reply.message.replyToSeq, reply.message.threadRootSeq]).toEqual([1, 1]);
    expect(published).toHaveLength(6);
  });

  postgresOnly(backend)('takes the row locks of a batch in one order: two processes storing the same conversations in opposite orders never deadlock', async () => {
    const convIds: string[] = [];
    for (let k = 0; k < 8; k++) convIds.push(await createGroup(db, 'alice', `both-${k}`, ['bob']));
    const blockers = [await createGroup(db, 'alice', 'block-0', ['bob']), await createGroup(db, 'alice', 'block-1', ['bob'])];
    // Two coalescers stand for two server processes, each on its own connections.
    const first = { sends: createSendCoalescer(publisher), watch: watched(db) };
    const second = { sends: createSendCoalescer(publisher), watch: watched(db) };
    const round = (who: typeof first, order: string[], tag: string) => [
      ...blockers.map((convId, i) => who.sends.send(who.watch.runner, convId, request('alice', `${tag}-block-${i}`))),
      ...order.map((convId, i) => who.sends.send(who.watch.runner, convId, request('bob', `${tag}-${i}`))),
    ];
    for (let r = 0; r < 10; r++) {
      const outcomes = await Promise.all([...round(first, convIds, `p${r}`), ...round(second, [...convIds].reverse(), `q${r}`)]);
      expect(outcomes.every((o) => o.kind === 'stored')).toBe(true);
    }
    // A deadlock would have failed a batch (each of its sends then stored alone): none failed.
    expect([...first.watch.errors, ...second.watch.errors]).toEqual([]);
    const seqs = await db.rows<{ conv_id: string; seqs: number[] }>(
      sql`select conv_id, array_agg(seq::int order by seq) as seqs from messages where conv_id = any(${sql.param(convIds)}::uuid[]) group by conv_id`,
    );
    expect(seqs.map((row) => row.seqs)).toEqual(convIds.map(() => Array.from({ length: 20 }, (_, i) => i + 1)));
  });

  it('rejects each send of a failed statement with its own error when storing it alone fails too', async () => {
    const convId = await createGroup(db, 'alice', 'broken', ['bob']);
    const sends = createSendCoalescer(publisher);
    const tried: string[] = [];
    // A runner whose statements fail, as a database gone away would.
    const failing: SqlRunner = {
      rows: (query) => {
        tried.push(new PgDialect().sqlToQuery(query).sql.startsWith('with sent') ? 'together' : 'alone');
        return Promise.reject(new Error('statement failed'));
      },
      transaction: () => Promise.reject(new Error('no transaction expected')),
    };
    const results = await Promise.allSettled([
      sends.send(failing, convId, request('alice', 'f-0')),
      sends.send(failing, convId, request('alice', 'f-1')),
      sends.send(failing, convId, request('alice', 'f-2')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : ''))).toEqual(['statement failed', 'statement failed', 'statement failed']);
    // The first alone; the two that waited together once, then alone.
    expect(tried).toEqual(['alone', 'together', 'alone', 'alone']);
    // The conversation is free again: the next send is stored.
    expect((await sends.send(db, convId, request('alice', 'after'))).kind).toBe('stored');
  });
});
