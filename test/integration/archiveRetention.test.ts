/**
 * Retention, purges and erasure reach the archive, on each backend, with
 * the folder store and with S3 (s3rver): a segment left with no live
 * message loses its record in the transaction that removed them and its
 * object at the archiver's next run; one more than half gone, or holding a
 * revoked or erased text, is rewritten with its live messages only, which
 * read as before; once `eraseUser` answers, no stored object holds the
 * erased user's text (and if the store failed meanwhile, once the next run
 * has). A crash at any step of a rewrite leaves every message
 * readable, and the next run finishes it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveBodies } from '../../src/archive/archiver.ts';
import { runArchivePass } from '../../src/archive/pass.ts';
import { createArchiveReader, setProcessArchive } from '../../src/archive/reader.ts';
import { type ReconcileOptions, reconcileSegments, type RewriteStep } from '../../src/archive/rewrite.ts';
import { decodeSegment, type SegmentEntry } from '../../src/archive/segment.ts';
import { folderStore, type SegmentStore, s3Store } from '../../src/archive/segmentStore.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { messageGlobalId } from '../../src/history/globalId.ts';
import { createLogger } from '../../src/log.ts';
import { findMessageBodies, type MessageBody } from '../../src/store/messages.ts';
import { purgeExpired } from '../../src/store/purge.ts';
import { seedAgedMessages, storedKeys, textOf } from '../helpers/archive.ts';
import { type Backend, backends } from '../helpers/database.ts';
import { type Client, type Harness, startHarness } from '../helpers/harness.ts';
import { type LocalS3, startLocalS3 } from '../helpers/localS3.ts';
import { createGroup, type Edge, MESSAGES, REVOKE } from '../helpers/operations.ts';

const PURGE = 'mutation Purge($ids: [ID!]!) { purgeMessages(input: { messageIds: $ids }) { purgedCount } }';
const ERASE = 'mutation Erase($userId: ID!) { eraseUser(input: { userId: $userId }) { erasedCount } }';
const KEEP_EVERYTHING = { days: null, maxMessages: null };
const REWRITE_STEPS: RewriteStep[] = ['written', 'verified', 'recorded'];

/** A stop that a test's fault hook throws, standing for a crash. */
class Crash extends Error {}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const keysOf = (convId: string, seqs: number[]) => seqs.map((seq) => ({ convId, seq }));
const texts = (seqs: number[]): MessageBody[] => seqs.map((seq) => ({ kind: 'text', text: textOf(seq) }));

type StoreKind = 'folder' | 's3';
const plans: [Backend, StoreKind][] = [...backends.map((b): [Backend, StoreKind] => [b, 'folder']), ...backends.map((b): [Backend, StoreKind] => [b, 's3'])];

describe.each(plans)('Retention, purges and erasure in the archive (%s, %s store)', (backend, storeKind) => {
  let harness: Harness;
  let db: SqlRunner;
  let alice: Client;
  let bob: Client;
  let admin: Client;
  let folder: string | null = null;
  let s3: LocalS3 | null = null;
  let store: SegmentStore;

  beforeAll(async () => {
    harness = await startHarness(backend);
    db = createRunner(harness.database.client);
    [alice, bob] = await Promise.all([harness.client('alice'), harness.client('bob')]);
    admin = await harness.client('root', { roles: ['admin'] });
    if (storeKind === 's3') {
      s3 = await startLocalS3();
      store = s3Store(await s3.bucket('retention'));
    } else {
      folder = await mkdtemp(join(tmpdir(), 'backscroll-retention-'));
      store = folderStore(folder);
    }
    // No cache: every read through the API fetches from the store, so it shows what the store holds.
    setProcessArchive(createArchiveReader(store, 0));
  });
  afterAll(async () => {
    setProcessArchive(null);
    await harness.close();
    await s3?.close();
    if (folder !== null) await rm(folder, { recursive: true, force: true });
  });

  /** Archives every warm body of every conversation, `messages` to a segment. */
  const archive = (messages: number) =>
    archiveBodies(db, store, { before: new Date(), keepNewest: 0, limits: { messages, bytes: 256 * 1024 }, orphanGraceMs: 0 });

  /**
   * The archiver's next run as `runArchivePass` makes it (segments brought
   * in line, then the cleanup of unrecorded objects and archiving), with no
   * grace for unrecorded objects: in a deployment the objects of archived
   * history are far older than the grace.
   */
  async function nextRun(options: ReconcileOptions = {}) {
    const reconciled = await reconcileSegments(db, store, options);
    const archived = await archiveBodies(db, store, { before: new Date(), keepNewest: 0, orphanGraceMs: 0 });
    return { reconciled, orphansRemoved: archived.orphansRemoved };
  }

  /** `convId`'s segment records: [fromSeq, toSeq, count], in seq order. */
  const recorded = async (convId: string) =>
    (
      await db.rows<{ from_seq: number; to_seq: number; count: number }>(
        sql`select from_seq, to_seq, count from archive_segments where conv_id = ${convId} order by from_seq`,
      )
    ).map((r) => [r.from_seq, r.to_seq, r.count]);
  const recordedKeys = async () => (await db.rows<{ key: string }>(sql`select key from archive_segments`)).map((r) => r.key).sort();
  const objectsOf = async (convId: string) => (await storedKeys(store)).filter((key) => key.startsWith(`${convId}/`));

  /** Every object in the store, decoded. */
  async function everyStoredEntry(): Promise<{ key: string; entries: SegmentEntry[] }[]> {
    const objects = [];
    for (const key of await storedKeys(store)) {
      const decoded = await decodeSegment((await store.get(key))!);
      if (!decoded.ok) throw new Error(`${key}: ${decoded.problem}`);
      objects.push({ key, entries: decoded.entries });
    }
    return objects;
  }

  /** The seqs in `convId`'s stored objects, by object, in seq order. */
  const storedSeqs = async (convId: string) =>
    (await everyStoredEntry())
      .filter((o) => o.key.startsWith(`${convId}/`))
      .map((o) => o.entries.map((e) => e.seq))
      .sort((x, y) => x[0]! - y[0]!);

  const readBodies = (convId: string, seqs: number[]) => findMessageBodies(db, keysOf(convId, seqs), createArchiveReader(store, 0));

  /** Every edge `client` sees in `conv`, oldest first, through the API. */
  async function everyEdge(client: Client, conv: { id: string }): Promise<Edge[]> {
    const edges: Edge[] = [];
    let after: string | null = null;
    for (;;) {
      const response = await client.gql(MESSAGES, { id: conv.id, first: 100, after });
      expect(response.errors, JSON.stringify(response.errors)).toBeUndefined();
      const page = response.data.conversation.messages as { edges: Edge[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
      edges.push(...page.edges);
      if (!page.pageInfo.hasNextPage) return edges;
      after = page.pageInfo.endCursor;
    }
  }

  /** Expires `convId`'s messages below its newest `keep` and runs the retention purge. */
  async function expireAllBut(convId: string, keep: number, batchSize = 1000) {
    await db.rows(sql`update conversations set retention_max_messages = ${keep} where id = ${convId}`);
    return purgeExpired(db, { server: KEEP_EVERYTHING, now: new Date() }, { batchSize });
  }

  describe('the retention purge', () => {
    it('deletes a segment whose messages all expired: its record in the batch that purges the last of them, its object at the next run', async () => {
      const conv = await createGroup(alice, ['bob']);
      await seedAgedMessages(db, conv.uuid, 'alice', 1500, 30);
      await archive(500);
      const before = await objectsOf(conv.uuid);
      expect(before).toHaveLength(3);
      // Batches of 300: the segment 1-500 empties in the second batch (301-600), which starts inside it.
      expect((await expireAllBut(conv.uuid, 800, 300)).messages).toBe(700);
      expect(await recorded(conv.uuid)).toEqual([
        [501, 1000, 500],
        [1001, 1500, 500],
      ]);
      // Until the next run the object is there, recorded nowhere (as after a crash right after the commit).
      expect(await objectsOf(conv.uuid)).toEqual(before);
      const run = await nextRun();
      expect([run.reconciled.dropped, run.reconciled.rewritten, run.orphansRemoved]).toEqual([0, 0, 1]);
      expect(await objectsOf(conv.uuid)).toEqual(before.filter((key) => !key.startsWith(`${conv.uuid}/1-500-`)));
      expect(await readBodies(conv.uuid, range(701, 1500))).toEqual(texts(range(701, 1500)));
    });

    it('keeps a segment exactly half expired, and rewrites one more than half expired with its live messages only', async () => {
      const conv = await createGroup(alice, ['bob']);
      await seedAgedMessages(db, conv.uuid, 'alice', 1000, 30);
      await archive(500);
      const before = await objectsOf(conv.uuid);
      await expireAllBut(conv.uuid, 750);
      expect((await nextRun()).reconciled).toMatchObject({ dropped: 0, rewritten: 0 });
      expect([await recorded(conv.uuid), await objectsOf(conv.uuid)]).toEqual([
        [
          [1, 500, 500],
          [501, 1000, 500],
        ],
        before,
      ]);

      await expireAllBut(conv.uuid, 749);
      expect((await nextRun()).reconciled).toMatchObject({ dropped: 0, rewritten: 1, textsRemoved: 251, skipped: 0, failed: 0 });
      expect(await recorded(conv.uuid)).toEqual([
        [252, 500, 249],
        [501, 1000, 500],
      ]);
      expect(await storedSeqs(conv.uuid)).toEqual([range(252, 500), range(501, 1000)]);
      expect(await recordedKeys()).toEqual(await storedKeys(store));
      expect(await readBodies(conv.uuid, range(252, 1000))).toEqual(texts(range(252, 1000)));
    });
  });

  describe('the admin purge', () => {
    it('deletes the record of a segment it empties in its own transaction, rewrites one more than half purged, keeps one half purged', async () => {
      const conv = await createGroup(alice, ['bob']);
      await seedAgedMessages(db, conv.uuid, 'alice', 60, 30);
      await archive(20);
      const purged = [...range(1, 20), ...range(21, 31), ...range(41, 50)];
      const response = await admin.gql(PURGE, { ids: purged.map((seq) => messageGlobalId(conv.uuid, seq)) });
      expect(response.data).toEqual({ purgeMessages: { purgedCount: 41 } });
      expect(await recorded(conv.uuid)).toEqual([
        [21, 40, 20],
        [41, 60, 20],
      ]);

      expect((await nextRun()).reconciled).toMatchObject({ dropped: 0, rewritten: 1, textsRemoved: 11 });
      expect(await recorded(conv.uuid)).toEqual([
        [32, 40, 9],
        [41, 60, 20],
      ]);
      expect(await storedSeqs(conv.uuid)).toEqual([range(32, 40), range(41, 60)]);
      const edges = await everyEdge(alice, conv);
      expect(edges.map((e) => [e.node.seq, e.node.content])).toEqual(
        [...range(32, 40), ...range(51, 60)].map((seq) => [seq, { __typename: 'TextContent', text: textOf(seq) }]),
      );
    });
  });

  describe('eraseUser', () => {
    it("leaves none of the erased user's texts, revoked ones included, in any stored object; everyone else's read the same through the API", async () => {
      const conv = await createGroup(alice, ['bob']);
      const other = await createGroup(bob, ['alice']);
      // 1-40 and 81-120 alternate alice and bob in tens; 41-80 are all bob's.
      for (const sender of ['alice', 'bob', 'alice', 'bob', ...Array(4).fill('bob'), 'alice', 'bob', 'alice', 'bob']) {
        await seedAgedMessages(db, conv.uuid, sender, 10, 30);
      }
      await seedAgedMessages(db, other.uuid, 'alice', 5, 30);
      await seedAgedMessages(db, other.uuid, 'bob', 5, 30);
      await db.rows(sql`update message_bodies b set text = 'bob secret ' || b.seq from messages m
        where m.conv_id = b.conv_id and m.seq = b.seq and m.sender_id = 'bob'`);
      await archive(40);
      expect(await recorded(conv.uuid)).toEqual([
        [1, 40, 40],
        [41, 80, 40],
        [81, 120, 40],
      ]);
      // Revoked (by the group's owner) after archiving: the text stays in its segment until the segment is rewritten.
      expect((await alice.gql(REVOKE, { messageId: messageGlobalId(conv.uuid, 95) })).errors).toBeUndefined();
      const bobsTexts = (await everyStoredEntry()).flatMap((o) => o.entries).filter((e) => e.text.startsWith('bob secret'));
      expect(bobsTexts).toHaveLength(85);
      const aliceBefore = (await everyEdge(alice, conv)).filter((e) => e.node.sender.id === 'alice');
      const otherBefore = (await everyEdge(alice, other)).filter((e) => e.node.sender.id === 'alice');
      expect(aliceBefore).toHaveLength(40);

      expect((await admin.gql(ERASE, { userId: 'bob' })).data).toEqual({ eraseUser: { erasedCount: 84 } });
      // The segment of bob's alone goes with the erasure's transaction, its
      // object once it commits; the three holding his texts among others are
      // rewritten before the erasure answers, with no archiver run.
      expect(await recorded(conv.uuid)).toEqual([
        [1, 30, 20],
        [81, 110, 20],
      ]);
      expect(await recordedKeys()).toEqual((await storedKeys(store)).sort());
      expect((await everyStoredEntry()).flatMap((o) => o.entries).filter((e) => e.text.includes('bob secret'))).toEqual([]);
      // So the archiver's next run finds nothing left to do.
      const run = await nextRun();
      expect(run.reconciled).toMatchObject({ dropped: 0, rewritten: 0, failed: 0, skipped: 0 });
      expect(run.orphansRemoved).toBe(0);

      const stored = await everyStoredEntry();
      expect(stored.flatMap((o) => o.entries).filter((e) => e.text.includes('bob secret'))).toEqual([]);
      expect(stored.map((o) => o.key).sort()).toEqual(await recordedKeys());
      expect(await storedSeqs(conv.uuid)).toEqual([
        [...range(1, 10), ...range(21, 30)],
        [...range(81, 90), ...range(101, 110)],
      ]);
      expect(await storedSeqs(other.uuid)).toEqual([range(1, 5)]);
      expect((await everyEdge(alice, conv)).filter((e) => e.node.sender.id === 'alice')).toEqual(aliceBefore);
      expect((await everyEdge(alice, other)).filter((e) => e.node.sender.id === 'alice')).toEqual(otherBefore);
      const bobsEdges = (await everyEdge(alice, conv)).filter((e) => e.node.sender.id === 'bob');
      expect(bobsEdges.map((e) => [e.node.seq, e.node.content.__typename])).toEqual(
        [...range(11, 20), ...range(31, 80), ...range(91, 100), ...range(111, 120)].map((seq) => [seq, seq === 95 ? 'RevokedContent' : 'PurgedContent']),
      );
    });
    it('still erases when the store fails meanwhile; the archiver\'s next run then removes the texts', async () => {
      const conv = await createGroup(alice, ['bob']);
      await seedAgedMessages(db, conv.uuid, 'alice', 10, 30);
      await seedAgedMessages(db, conv.uuid, 'bob', 10, 30);
      await db.rows(sql`update message_bodies b set text = 'carol secret ' || b.seq from messages m
        where m.conv_id = b.conv_id and m.seq = b.seq and m.sender_id = 'bob'`);
      await archive(20);
      // A store that stops answering writes and deletes just as the erasure commits.
      const down = (): Promise<never> => Promise.reject(new Error('store unreachable'));
      const failing: SegmentStore = { location: store.location, put: down, delete: down, get: (key) => store.get(key), list: () => store.list() };
      setProcessArchive(createArchiveReader(failing, 0));
      try {
        const erased = (await admin.gql(ERASE, { userId: 'bob' })).data as { eraseUser: { erasedCount: number } };
        expect(erased.eraseUser.erasedCount).toBeGreaterThanOrEqual(10);
      } finally {
        setProcessArchive(createArchiveReader(store, 0));
      }
      const held = async () => (await everyStoredEntry()).flatMap((o) => o.entries).filter((e) => e.text.startsWith('carol secret')).length;
      expect(await held()).toBe(10);
      expect((await everyEdge(alice, conv)).filter((e) => e.node.sender.id === 'bob').map((e) => e.node.content.__typename)).toEqual(Array(10).fill('PurgedContent'));
      const run = await nextRun();
      expect(run.reconciled).toMatchObject({ rewritten: 1, failed: 0 });
      expect(await held()).toBe(0);
    });
  });

  describe('the archiver run', () => {
    it('rewrites segments in runArchivePass, which then archives what is warm', async () => {
      const conv = await createGroup(alice, ['bob']);
      await seedAgedMessages(db, conv.uuid, 'alice', 30, 30);
      await archive(30);
      const [old] = await objectsOf(conv.uuid);
      expect((await alice.gql(REVOKE, { messageId: messageGlobalId(conv.uuid, 7) })).errors).toBeUndefined();
      await seedAgedMessages(db, conv.uuid, 'alice', 10, 20);
      const rewritten: number[][] = [];
      const summary = await runArchivePass(db, store, { afterDays: 0, keepNewest: 0, restRatio: 0 }, createLogger('silent'), {
        onRewritten: (before, after) => before.convId === conv.uuid && rewritten.push([before.fromSeq, before.toSeq, after.fromSeq, after.toSeq, after.count]),
      });
      expect(summary!.reconciled).toMatchObject({ rewritten: 1, textsRemoved: 1, failed: 0 });
      expect(rewritten).toEqual([[1, 30, 1, 30, 29]]);
      expect(await recorded(conv.uuid)).toEqual([
        [1, 30, 29],
        [31, 40, 10],
      ]);
      expect(await objectsOf(conv.uuid)).not.toContain(old);
      expect(await storedSeqs(conv.uuid)).toEqual([range(1, 30).filter((seq) => seq !== 7), range(31, 40)]);
    });

    it('skips a rewrite whose segment changed between reading and recording: the old one stays recorded, the new object goes; the next run rewrites it', async () => {
      const conv = await createGroup(alice, ['bob']);
      await seedAgedMessages(db, conv.uuid, 'alice', 20, 30);
      await archive(20);
      const [old] = await objectsOf(conv.uuid);
      expect((await alice.gql(REVOKE, { messageId: messageGlobalId(conv.uuid, 3) })).errors).toBeUndefined();
      const first = await nextRun({
        fault: async (step, at) => {
          if (step !== 'verified' || at.before.convId !== conv.uuid) return;
          expect((await alice.gql(REVOKE, { messageId: messageGlobalId(conv.uuid, 4) })).errors).toBeUndefined();
        },
      });
      expect(first.reconciled).toMatchObject({ rewritten: 0, skipped: 1 });
      expect([await recorded(conv.uuid), await objectsOf(conv.uuid)]).toEqual([[[1, 20, 20]], [old]]);
      expect((await nextRun()).reconciled).toMatchObject({ rewritten: 1, skipped: 0, textsRemoved: 2 });
      expect(await storedSeqs(conv.uuid)).toEqual([[1, 2, ...range(5, 20)]]);
      expect(await readBodies(conv.uuid, [1, 2, ...range(5, 20)])).toEqual(texts([1, 2, ...range(5, 20)]));
    });

    it.each(REWRITE_STEPS)('leaves every message readable when killed at step "%s" of a rewrite, and the next run finishes it', async (step) => {
      const conv = await createGroup(alice, ['bob']);
      await seedAgedMessages(db, conv.uuid, 'alice', 40, 30);
      await archive(40);
      const response = await admin.gql(PURGE, { ids: range(1, 25).map((seq) => messageGlobalId(conv.uuid, seq)) });
      expect(response.data).toEqual({ purgeMessages: { purgedCount: 25 } });
      const crashed = nextRun({
        fault: (at, where) => {
          if (at === step && where.before.convId === conv.uuid) throw new Crash(`killed at ${step}`);
        },
      });
      await expect(crashed).rejects.toBeInstanceOf(Crash);
      expect(await readBodies(conv.uuid, range(26, 40))).toEqual(texts(range(26, 40)));
      expect(await recorded(conv.uuid)).toEqual([step === 'recorded' ? [26, 40, 15] : [1, 40, 40]]);
      // The new object (before it was recorded) or the old one (after) is left unrecorded beside the recorded one.
      expect(await objectsOf(conv.uuid)).toHaveLength(2);

      const rerun = await nextRun();
      expect([rerun.reconciled.rewritten, rerun.orphansRemoved]).toEqual([step === 'recorded' ? 0 : 1, 1]);
      expect(await recorded(conv.uuid)).toEqual([[26, 40, 15]]);
      expect(await storedSeqs(conv.uuid)).toEqual([range(26, 40)]);
      expect(await readBodies(conv.uuid, range(26, 40))).toEqual(texts(range(26, 40)));
      expect(await storedKeys(store)).toEqual(await recordedKeys());
    });
  });
});
