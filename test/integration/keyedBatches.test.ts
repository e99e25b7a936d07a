/**
 * Loader batches whose keys come from several conversations (an inbox
 * page's bodies, a star list's reactions) answer each key exactly as a
 * batch of its conversation alone does. Each batch names its
 * conversations apart from its keys (src/store/batchConversations.ts), and
 * some look keys up in every conversation of the batch and keep the one of
 * the key's own: three conversations hold the same seqs here, each with
 * its own reactions, stars, mentions, versions, threads, read positions,
 * hides, revokes and expiry, so a key answered from another conversation
 * would show.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { findEdits } from '../../src/store/edits.ts';
import { countReaders } from '../../src/store/inbox.ts';
import { findMentions } from '../../src/store/mentions.ts';
import { findMessageBodies, findVisibleMessages, type MessageKey } from '../../src/store/messages.ts';
import { findReactionGroups, findReactors } from '../../src/store/reactions.ts';
import type { RetentionClock } from '../../src/store/sqlFragments.ts';
import { findStarredByMe } from '../../src/store/stars.ts';
import { countThreads } from '../../src/store/threads.ts';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { createGroup } from '../helpers/operations.ts';

const SEQS = [1, 2, 3, 4, 5, 6, 7, 8];
const NO_RETENTION: RetentionClock = { server: { days: null, maxMessages: null }, now: new Date() };
const TEN_YEARS: RetentionClock = { server: { days: 3650, maxMessages: null }, now: new Date() };

/** A batch function over keys, as the loaders call it. */
type Batch = (db: SqlRunner, keys: MessageKey[]) => Promise<unknown[]>;

const batches: Record<string, Batch> = {
  findVisibleMessages: (db, keys) => findVisibleMessages(db, 'alice', NO_RETENTION, keys),
  'findVisibleMessages under a time limit': (db, keys) => findVisibleMessages(db, 'alice', TEN_YEARS, keys),
  findMessageBodies: (db, keys) => findMessageBodies(db, keys, null),
  findReactionGroups: (db, keys) => findReactionGroups(db, 'alice', keys),
  findReactors: (db, keys) => findReactors(db, keys.map((key) => ({ ...key, reaction: '👍', after: null, limit: 10 }))),
  findEdits: (db, keys) => findEdits(db, keys.map((key) => ({ ...key, beforeVersion: null, limit: 10 }))),
  countThreads: (db, keys) => countThreads(db, 'alice', NO_RETENTION, keys),
  'countThreads under a time limit': (db, keys) => countThreads(db, 'alice', TEN_YEARS, keys),
  countReaders: (db, keys) => countReaders(db, keys),
  findMentions: (db, keys) => findMentions(db, keys),
  findStarredByMe: (db, keys) => findStarredByMe(db, 'alice', keys),
};

describe.each(backends)('Loader batches across conversations (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let db: SqlRunner;
  /** Three of alice's conversations with the same seqs, and one of someone else's. */
  let conversations: string[];

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    const carol = await harness.client('carol');
    db = createRunner(harness.database.client);
    const ours = [await createGroup(alice, ['bob']), await createGroup(alice, ['bob']), await createGroup(alice, ['bob'])].map((g) => g.uuid);
    const theirs = (await createGroup(carol, ['bob'])).uuid;
    conversations = [...ours, theirs];
    for (const convId of conversations) await seedMessages(harness, convId, 'bob', SEQS.length);
    const [a, b, c] = ours as [string, string, string];
    const run = (query: ReturnType<typeof sql>) => harness.database.db.execute(query);
    // What sets each conversation apart, seq for seq.
    await run(sql`update message_bodies set text = conv_id || ': ' || text`);
    await run(sql`insert into message_reactions (conv_id, seq, reaction, user_id) values
      (${a}, 2, '👍', 'alice'), (${a}, 2, '👍', 'bob'), (${a}, 3, ':eyes:', 'bob'), (${b}, 3, '👍', 'bob'), (${c}, 2, ':eyes:', 'alice')`);
    await run(sql`insert into message_stars (conv_id, seq, user_id) values (${a}, 1, 'alice'), (${b}, 2, 'alice'), (${c}, 3, 'bob')`);
    await run(sql`insert into message_mentions (conv_id, seq, user_id, position, sent_at) values
      (${a}, 4, 'alice', 1, now()), (${b}, 4, '', 0, now()), (${c}, 5, 'bob', 1, now())`);
    await run(sql`insert into message_edits (conv_id, seq, version, text, edited_at) values
      (${a}, 5, 1, 'first', now()), (${b}, 5, 1, 'one', now()), (${b}, 5, 2, 'two', now())`);
    await run(sql`update messages set reply_to_seq = 1, thread_root_seq = 1 where conv_id = ${a} and seq in (6, 7)`);
    await run(sql`update messages set reply_to_seq = 2, thread_root_seq = 2 where conv_id = ${b} and seq = 7`);
    await run(sql`update members set read_seq = case when user_id = 'alice' then 3 else 8 end where conv_id = ${a}`);
    await run(sql`update members set read_seq = case when user_id = 'alice' then 6 else 2 end where conv_id = ${b}`);
    await run(sql`update members set clear_seq = 1 where conv_id = ${c} and user_id = 'alice'`);
    await run(sql`insert into message_hide_ranges (conv_id, user_id, from_seq, to_seq) values (${c}, 'alice', 6, 7)`);
    await run(sql`update messages set revoked_at = now(), revoked_by = 'bob' where conv_id = ${b} and seq = 8`);
    await run(sql`delete from message_bodies where conv_id = ${b} and seq = 8`);
    await run(sql`update messages set created_at = now() - interval '4000 days' where conv_id = ${a} and seq <= 2`);
  });
  afterAll(() => harness.close());

  /** Every seq of every conversation, interleaved (the same seq of each in turn), and a seq none has. */
  const mixedKeys = (): MessageKey[] => [...SEQS, 9].flatMap((seq) => conversations.map((convId) => ({ convId, seq })));

  it.each(Object.keys(batches))('answers %s for keys of several conversations as for each conversation alone', async (name) => {
    const batch = batches[name]!;
    const keys = mixedKeys();
    const together = await batch(db, keys);
    const alone = new Map<MessageKey, unknown>();
    for (const convId of conversations) {
      const own = keys.filter((key) => key.convId === convId);
      (await batch(db, own)).forEach((answer, i) => alone.set(own[i]!, answer));
    }
    expect(together).toEqual(keys.map((key) => alone.get(key)));
    // The conversations answer the same seq differently somewhere, so a key answered from another would show.
    const differs = SEQS.some((seq) => new Set(conversations.map((_, c) => JSON.stringify(together[(seq - 1) * conversations.length + c]))).size > 1);
    expect(differs).toBe(true);
  });
});
