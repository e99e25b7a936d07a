/**
 * The retention rule as it runs: `expiredThrough` in src/store/sqlFragments.ts,
 * read through the store against a real database. Each case compares the
 * cut-off a conversation reports (`findMemberConversations`, behind
 * `retentionPolicy.expiredThroughSeq`) and the seqs a page read still shows
 * (`scanPage`), so the boundaries below are the ones clients get.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { KEEP_EVERYTHING, MS_PER_DAY, type RetentionPolicy } from '../../src/history/retention.ts';
import { createGroup, findMemberConversations } from '../../src/store/conversations.ts';
import { scanPage } from '../../src/store/pages.ts';
import { purgeExpired } from '../../src/store/purge.ts';
import { backends, openTestDatabase } from '../helpers/database.ts';
import { appendHistory, setOwnPolicy } from '../helpers/history.ts';

/** The instant every read here judges retention at; histories are written before it. */
const NOW = new Date();
const daysAgo = (days: number, plusMs = 0) => new Date(NOW.getTime() - days * MS_PER_DAY + plusMs);
/** `count` messages all created at `at`. */
const times = (count: number, at: Date) => Array.from({ length: count }, () => at);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe.each(backends)('The retention cut-off, as reads apply it (%s)', (backend) => {
  let handle: DatabaseHandle;
  let db: SqlRunner;

  beforeAll(async () => {
    handle = await openTestDatabase(backend);
    db = createRunner(handle.client);
  });
  afterAll(() => handle.close());

  /** A group of alice and bob under its own `policy`, with messages created at `createdAt` (oldest first). */
  const conversation = async (policy: RetentionPolicy, createdAt: Date[]): Promise<string> => {
    const convId = await createGroup(db, 'alice', null, ['bob']);
    await setOwnPolicy(db, convId, policy);
    await appendHistory(db, convId, createdAt);
    return convId;
  };

  /** What alice gets of `convId` at NOW under the server's limits `server`: the cut-off, and the seqs a page still shows. */
  const seen = async (convId: string, server: RetentionPolicy = KEEP_EVERYTHING) => {
    const clock = { server, now: NOW };
    const [found] = await findMemberConversations(db, 'alice', clock, [convId]);
    const page = await scanPage(db, 'alice', clock, convId, { direction: 'forward', size: 100, afterSeq: 0 });
    if (page.kind === 'not-found') throw new Error('alice is a member of every conversation here');
    return { expiredThroughSeq: found!.expiredThroughSeq, visible: page.scanned.map((m) => m.seq) };
  };

  /** Deletes stored messages `seqs` of `convId`, as a purge leaves holes. */
  const deleteStored = (convId: string, seqs: number[]) =>
    db.rows(sql`delete from messages where conv_id = ${convId} and seq = any(${sql.param(seqs)}::int8[])`);

  describe('by days', () => {
    it('keeps a message created exactly at the cut-off instant and expires one a millisecond older', async () => {
      const convId = await conversation({ days: 7, maxMessages: null }, [daysAgo(8), daysAgo(7, -1), daysAgo(7), daysAgo(7, 1), daysAgo(1)]);
      expect(await seen(convId)).toEqual({ expiredThroughSeq: 2, visible: [3, 4, 5] });
    });

    it('expires nothing while every message is newer than the cut-off', async () => {
      const convId = await conversation({ days: 7, maxMessages: null }, [daysAgo(7), daysAgo(1)]);
      expect(await seen(convId)).toEqual({ expiredThroughSeq: 0, visible: [1, 2] });
    });

    it('expires the whole history once every message is older than the cut-off', async () => {
      const convId = await conversation({ days: 7, maxMessages: null }, [daysAgo(9), daysAgo(7, -1)]);
      expect(await seen(convId)).toEqual({ expiredThroughSeq: 2, visible: [] });
    });
  });

  describe('by message count (seqs)', () => {
    const count = async (maxMessages: number, messages: number) => seen(await conversation({ days: null, maxMessages }, times(messages, NOW)));

    it('keeps everything when maxMessages equals the count', async () => {
      expect(await count(10, 10)).toEqual({ expiredThroughSeq: 0, visible: range(1, 10) });
    });

    it('expires the oldest when maxMessages is one under the count', async () => {
      expect(await count(9, 10)).toEqual({ expiredThroughSeq: 1, visible: range(2, 10) });
    });

    it('keeps everything when maxMessages is one over the count', async () => {
      expect(await count(11, 10)).toEqual({ expiredThroughSeq: 0, visible: range(1, 10) });
    });

    it('counts seqs, not surviving rows, in a conversation with holes', async () => {
      // Seqs 4 and 5 are gone: keeping the newest 8 seqs keeps 3..10, six messages.
      const convId = await conversation({ days: null, maxMessages: 8 }, times(10, NOW));
      await deleteStored(convId, [4, 5]);
      expect(await seen(convId)).toEqual({ expiredThroughSeq: 2, visible: [3, 6, 7, 8, 9, 10] });
    });

    it('expires nothing in an empty conversation', async () => {
      expect(await count(5, 0)).toEqual({ expiredThroughSeq: 0, visible: [] });
    });
  });

  describe('both rules together', () => {
    it('cuts at the count rule’s seq when it is the higher', async () => {
      const convId = await conversation({ days: 1, maxMessages: 3 }, [...times(5, daysAgo(2)), ...times(5, NOW)]);
      expect(await seen(convId)).toEqual({ expiredThroughSeq: 7, visible: [8, 9, 10] });
    });

    it('cuts at the time rule’s seq when it is the higher', async () => {
      const convId = await conversation({ days: 1, maxMessages: 3 }, [...times(9, daysAgo(2)), NOW]);
      expect(await seen(convId)).toEqual({ expiredThroughSeq: 9, visible: [10] });
    });

    it('ignores message ages when days is not set', async () => {
      const convId = await conversation({ days: null, maxMessages: 3 }, times(10, daysAgo(400)));
      expect(await seen(convId)).toEqual({ expiredThroughSeq: 7, visible: [8, 9, 10] });
    });

    it('expires nothing without a policy', async () => {
      const convId = await conversation(KEEP_EVERYTHING, times(3, daysAgo(400)));
      expect(await seen(convId)).toEqual({ expiredThroughSeq: 0, visible: [1, 2, 3] });
    });
  });

  describe("the server's limits", () => {
    it('apply to a conversation without its own', async () => {
      const convId = await conversation(KEEP_EVERYTHING, [daysAgo(40), ...times(4, daysAgo(1))]);
      expect(await seen(convId, { days: 30, maxMessages: 3 })).toEqual({ expiredThroughSeq: 2, visible: [3, 4, 5] });
    });

    it('are shortened by a conversation’s own shorter limit', async () => {
      const convId = await conversation({ days: 7, maxMessages: null }, [daysAgo(10), daysAgo(1)]);
      expect(await seen(convId, { days: 30, maxMessages: null })).toEqual({ expiredThroughSeq: 1, visible: [2] });
    });

    it('are never lengthened by a conversation’s own longer limit', async () => {
      const convId = await conversation({ days: 30, maxMessages: 10 }, [daysAgo(10), ...times(3, daysAgo(1))]);
      expect(await seen(convId, { days: 7, maxMessages: 2 })).toEqual({ expiredThroughSeq: 2, visible: [3, 4] });
    });
  });

  describe('after the purge', () => {
    // The purge deletes what the time rule expired, so the newest message
    // older than the cut-off is gone: the cut-off must not fall back with it.
    const purge = (server: RetentionPolicy = KEEP_EVERYTHING) => purgeExpired(db, { server, now: NOW }, { batchSize: 100 });

    it('keeps the cut-off where it was once the expired messages are deleted', async () => {
      const convId = await conversation({ days: 7, maxMessages: null }, [daysAgo(9), daysAgo(8), daysAgo(1)]);
      const before = await seen(convId);
      await purge();
      expect([before, await seen(convId)]).toEqual([
        { expiredThroughSeq: 2, visible: [3] },
        { expiredThroughSeq: 2, visible: [3] },
      ]);
    });

    it('counts a conversation whose every message was purged as expired through its newest seq', async () => {
      const convId = await conversation({ days: 7, maxMessages: null }, [daysAgo(9), daysAgo(8)]);
      await purge();
      expect(await seen(convId)).toEqual({ expiredThroughSeq: 2, visible: [] });
    });

    it('does not treat missing old seqs as expired when no time rule applies', async () => {
      const convId = await conversation({ days: null, maxMessages: 10 }, times(5, NOW));
      await deleteStored(convId, [1, 2, 3]);
      expect(await seen(convId)).toEqual({ expiredThroughSeq: 0, visible: [4, 5] });
    });
  });
});
