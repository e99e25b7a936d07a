/**
 * The archiver and the body reads over its segments, on each backend, with
 * the folder store and with S3 (s3rver): what is archived, what stays warm, that every message
 * reads the same afterwards, that revokes and erasures after archiving win,
 * and that a crash at any step leaves every body readable and the next run
 * finishes the work and removes what the crash left behind.
 */
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ArchiveOptions, archiveBodies, type ArchiveStep, type SegmentReport } from '../../src/archive/archiver.ts';
import { ArchiveUnavailableError, createArchiveReader } from '../../src/archive/reader.ts';
import { folderStore, type SegmentStore, s3Store } from '../../src/archive/segmentStore.ts';
import { verifyArchive } from '../../src/archive/verify.ts';
import { createRunner, type SqlRunner, type StatementTally } from '../../src/db/runner.ts';
import { messageGlobalId } from '../../src/history/globalId.ts';
import { findMessageBodies, type MessageBody } from '../../src/store/messages.ts';
import { seedAgedMessages, storedKeys, textOf } from '../helpers/archive.ts';
import { type Backend, backends } from '../helpers/database.ts';
import { type Client, type Harness, startHarness } from '../helpers/harness.ts';
import { type LocalS3, startLocalS3 } from '../helpers/localS3.ts';
import { createGroup, REVOKE } from '../helpers/operations.ts';

const ERASE = 'mutation Erase($userId: ID!) { eraseUser(input: { userId: $userId }) { erasedCount } }';
const STEPS: ArchiveStep[] = ['read', 'written', 'verified', 'recorded', 'committed'];
const MiB = 1024 * 1024;

/** A stop that a test's fault hook throws, standing for a crash. */
class Crash extends Error {}

const keysOf = (convId: string, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ({ convId, seq: from + i }));
const texts = (from: number, to: number): MessageBody[] => keysOf('', from, to).map(({ seq }) => ({ kind: 'text', text: textOf(seq) }));

type StoreKind = 'folder' | 's3';
const plans: [Backend, StoreKind][] = [...backends.map((b): [Backend, StoreKind] => [b, 'folder']), ...backends.map((b): [Backend, StoreKind] => [b, 's3'])];

describe.each(plans)('The archiver and archived reads (%s, %s store)', (backend, storeKind) => {
  let harness: Harness;
  let db: SqlRunner;
  let alice: Client;
  let admin: Client;
  let folder: string;
  let s3: LocalS3 | null = null;
  let store: SegmentStore;
  /** Tests that write files into the folder store behind its back. */
  const folderOnly = (storeKind === 'folder' ? it : () => undefined) as typeof it;

  beforeAll(async () => {
    harness = await startHarness(backend);
    db = createRunner(harness.database.client);
    alice = await harness.client('alice');
    admin = await harness.client('root', { roles: ['admin'] });
    folder = await mkdtemp(join(tmpdir(), 'backscroll-archiver-'));
    if (storeKind === 's3') {
      s3 = await startLocalS3();
      store = s3Store(await s3.bucket('archiver'));
    } else {
      store = folderStore(folder);
    }
  });
  afterAll(async () => {
    await harness.close();
    await s3?.close();
    await rm(folder, { recursive: true, force: true });
  });

  /** A group of alice and bob with `count` messages from `sender`, all `ageDays` old. */
  async function agedConversation(count: number, ageDays = 30, sender = 'alice'): Promise<{ id: string; uuid: string }> {
    const conv = await createGroup(alice, ['bob']);
    await seedAgedMessages(db, conv.uuid, sender, count, ageDays);
    return conv;
  }

  /** One archiver run over everything created before now, keeping `keepNewest`; answers the run and the segments of `convId`. */
  async function archive(convId: string, keepNewest: number, extra: Partial<ArchiveOptions> = {}) {
    const segments: SegmentReport[] = [];
    const summary = await archiveBodies(db, store, {
      before: new Date(),
      keepNewest,
      orphanGraceMs: 0,
      ...extra,
      onSegment: (report) => {
        if (report.convId === convId) segments.push(report);
        extra.onSegment?.(report);
      },
    });
    return { summary, segments };
  }

  const warmCount = async (convId: string) =>
    (await db.rows<{ n: number }>(sql`select count(*)::int as n from message_bodies where conv_id = ${convId}`))[0]!.n;
  const recordedKeys = async () => (await db.rows<{ key: string }>(sql`select key from archive_segments order by key`)).map((r) => r.key);

  it('archives all but the newest keepNewest in segments of at most 1,000, and every message reads the same', async () => {
    const conv = await agedConversation(1250);
    const { segments } = await archive(conv.uuid, 200);
    expect(segments.map(({ fromSeq, toSeq, count }) => ({ fromSeq, toSeq, count }))).toEqual([
      { fromSeq: 1, toSeq: 1000, count: 1000 },
      { fromSeq: 1001, toSeq: 1050, count: 50 },
    ]);
    expect(await warmCount(conv.uuid)).toBe(200);
    expect(await findMessageBodies(db, keysOf(conv.uuid, 1, 1250), createArchiveReader(store, 64 * MiB))).toEqual(texts(1, 1250));
  });

  it('reads a page of archived bodies in one statement, fetching each segment once, and then from the cache', async () => {
    const conv = await agedConversation(1100);
    await archive(conv.uuid, 0);
    const reader = createArchiveReader(store, 64 * MiB);
    const tally: StatementTally = { statements: 0 };
    // A page across the boundary of the two segments, and a warm-free key order.
    const keys = [...keysOf(conv.uuid, 1051, 1100), ...keysOf(conv.uuid, 951, 1000)].reverse();
    const answer = await findMessageBodies(createRunner(harness.database.client, tally), keys, reader);
    expect(answer).toEqual(keys.map(({ seq }) => ({ kind: 'text', text: textOf(seq) })));
    expect([tally.statements, reader.stats]).toEqual([1, { hits: 0, fetches: 2 }]);
    await findMessageBodies(db, keys, reader);
    expect(reader.stats).toEqual({ hits: 2, fetches: 2 });
  });

  it('fetches each segment once per call even with no cache', async () => {
    const conv = await agedConversation(30);
    await archive(conv.uuid, 0);
    const reader = createArchiveReader(store, 0);
    await findMessageBodies(db, keysOf(conv.uuid, 1, 30), reader);
    await findMessageBodies(db, keysOf(conv.uuid, 1, 30), reader);
    expect(reader.stats).toEqual({ hits: 0, fetches: 2 });
  });

  it('archives only messages older than the cut-off, and says nothing is left on the next run', async () => {
    const conv = await createGroup(alice, ['bob']);
    await seedAgedMessages(db, conv.uuid, 'alice', 300, 30);
    await seedAgedMessages(db, conv.uuid, 'alice', 100, 1);
    const sevenDaysAgo = new Date(Date.now() - 7 * 24 * 3600 * 1000);
    expect((await archive(conv.uuid, 0, { before: sevenDaysAgo })).segments.map((s) => [s.fromSeq, s.toSeq])).toEqual([[1, 300]]);
    expect(await warmCount(conv.uuid)).toBe(100);
    const again = await archive(conv.uuid, 0, { before: sevenDaysAgo });
    expect([again.segments, again.summary.segments, again.summary.messages]).toEqual([[], 0, 0]);
  });

  it('serves a message revoked after archiving as revoked, and one erased after archiving as erased, never the text', async () => {
    const conv = await createGroup(alice, ['bob']);
    await seedAgedMessages(db, conv.uuid, 'alice', 20, 30);
    await seedAgedMessages(db, conv.uuid, 'bob', 20, 29);
    await archive(conv.uuid, 0);
    expect(await warmCount(conv.uuid)).toBe(0);
    const revoked = await alice.gql(REVOKE, { messageId: messageGlobalId(conv.uuid, 5) });
    expect(revoked.errors).toBeUndefined();
    expect((await admin.gql(ERASE, { userId: 'bob' })).data).toEqual({ eraseUser: { erasedCount: 20 } });
    const bodies = await findMessageBodies(db, keysOf(conv.uuid, 1, 40), createArchiveReader(store, 64 * MiB));
    expect(bodies.map((body) => body.kind)).toEqual([...Array(4).fill('text'), 'revoked', ...Array(15).fill('text'), ...Array(20).fill('erased')]);
    expect(bodies[4]).toEqual({ kind: 'revoked', revokedAt: expect.any(String), revokedBy: 'alice' });
  });

  it('skips a segment whose bodies changed between reading and recording: no record, no object, the rest warm until the next run', async () => {
    const conv = await agedConversation(50);
    const skipped: number[][] = [];
    const { segments } = await archive(conv.uuid, 0, {
      onSkipped: (convId, from, to) => convId === conv.uuid && skipped.push([from, to]),
      fault: async (step, at) => {
        if (step !== 'verified' || at.convId !== conv.uuid || skipped.length > 0) return;
        expect((await alice.gql(REVOKE, { messageId: messageGlobalId(conv.uuid, 7) })).errors).toBeUndefined();
      },
    });
    expect([segments, skipped]).toEqual([[], [[1, 50]]]);
    expect(await warmCount(conv.uuid)).toBe(49);
    expect((await storedKeys(store)).filter((k) => k.startsWith(conv.uuid))).toEqual([]);
    const next = await archive(conv.uuid, 0);
    expect(next.segments.map((s) => [s.fromSeq, s.toSeq, s.count])).toEqual([[1, 50, 49]]);
    const bodies = await findMessageBodies(db, keysOf(conv.uuid, 1, 50), createArchiveReader(store, 64 * MiB));
    expect(bodies).toEqual(texts(1, 50).map((body, i) => (i === 6 ? { kind: 'revoked', revokedAt: expect.any(String), revokedBy: 'alice' } : body)));
  });

  it.each(STEPS)('leaves every message readable when killed at step "%s", and the next run finishes and removes what was left behind', async (step) => {
    const conv = await agedConversation(1500);
    const failed = archive(conv.uuid, 100, {
      limits: { messages: 600, bytes: 256 * 1024 },
      fault: (at, where) => {
        // The second segment, so one is already complete when the crash comes.
        if (at === step && where.convId === conv.uuid && where.fromSeq === 601) throw new Crash(`killed at ${step}`);
      },
    });
    await expect(failed).rejects.toBeInstanceOf(Crash);
    const reader = createArchiveReader(store, 64 * MiB);
    expect(await findMessageBodies(db, keysOf(conv.uuid, 1, 1500), reader)).toEqual(texts(1, 1500));
    const warm = await warmCount(conv.uuid);
    expect(warm).toBe(step === 'committed' ? 300 : 900);

    const rerun = await archive(conv.uuid, 100, { limits: { messages: 600, bytes: 256 * 1024 } });
    expect(rerun.summary.orphansRemoved).toBe(step === 'read' || step === 'committed' ? 0 : 1);
    expect(await warmCount(conv.uuid)).toBe(100);
    expect(await findMessageBodies(db, keysOf(conv.uuid, 1, 1500), createArchiveReader(store, 64 * MiB))).toEqual(texts(1, 1500));
    expect(await storedKeys(store)).toEqual(await recordedKeys());
  });

  folderOnly('removes a half-written file a crashed put left, and unrecorded objects only once older than the grace', async () => {
    const conv = await agedConversation(10);
    await archive(conv.uuid, 0);
    const dir = join(folder, conv.uuid);
    const partial = join(dir, '.partial-00000000beef');
    const unrecorded = join(dir, '1-10-00000000deadbeef.seg');
    await writeFile(partial, 'half');
    await writeFile(unrecorded, 'never recorded');
    const recorded = await storedKeys(store);
    expect((await archive(conv.uuid, 0, { orphanGraceMs: 60_000 })).summary.orphansRemoved).toBe(0);
    const anHourAgo = new Date(Date.now() - 3600_000);
    await utimes(partial, anHourAgo, anHourAgo);
    await utimes(unrecorded, anHourAgo, anHourAgo);
    expect((await archive(conv.uuid, 0, { orphanGraceMs: 60_000 })).summary.orphansRemoved).toBe(2);
    expect(await storedKeys(store)).toEqual(recorded.filter((k) => !k.endsWith('.partial-00000000beef') && !k.endsWith('00000000deadbeef.seg')));
  });

  it('verifies every segment, naming the missing, corrupt and resized ones, and reads of them fail with ARCHIVE_UNAVAILABLE', async () => {
    const conv = await agedConversation(90);
    await archive(conv.uuid, 0, { limits: { messages: 30, bytes: 256 * 1024 } });
    expect((await verifyArchive(db, store)).bad).toEqual([]);
    const [first, second, third] = (await storedKeys(store)).filter((k) => k.startsWith(conv.uuid)).sort((x, y) => parseInt(x.split('/')[1]!) - parseInt(y.split('/')[1]!));
    await store.delete(first!);
    const bytes = Buffer.from((await store.get(second!))!);
    bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0x20;
    await store.put(second!, bytes);
    await store.put(third!, Buffer.concat([(await store.get(third!))!, Buffer.from('x')]));
    const { checked, bad } = await verifyArchive(db, store);
    expect(checked).toBe((await recordedKeys()).length);
    expect(bad).toEqual([
      { key: first, convId: conv.uuid, fromSeq: 1, toSeq: 30, problem: `${store.location} has no such object` },
      { key: second, convId: conv.uuid, fromSeq: 31, toSeq: 60, problem: 'its checksum does not match its content' },
      { key: third, convId: conv.uuid, fromSeq: 61, toSeq: 90, problem: expect.stringMatching(/^it is \d+ bytes, \d+ were recorded$/) },
    ]);
    const read = (seq: number) => findMessageBodies(db, keysOf(conv.uuid, seq, seq), createArchiveReader(store, 64 * MiB));
    expect(await read(5)).toMatchObject([{ kind: 'unavailable', error: { code: 'ARCHIVE_UNAVAILABLE', problem: 'missing', segmentKey: first } }]);
    const [corrupt] = await read(35);
    expect(corrupt).toMatchObject({ kind: 'unavailable', error: { code: 'ARCHIVE_UNAVAILABLE', problem: 'corrupt', segmentKey: second } });
    expect(corrupt!.kind === 'unavailable' && corrupt!.error).toBeInstanceOf(ArchiveUnavailableError);
    // Put back, so later tests' verifications start clean.
    await db.rows(sql`delete from archive_segments where conv_id = ${conv.uuid}`);
  });

  it('answers an archived body as unavailable in a process with no archive, or when the store does not answer, naming the segment', async () => {
    const conv = await agedConversation(5);
    await archive(conv.uuid, 0);
    const [key] = (await storedKeys(store)).filter((k) => k.startsWith(conv.uuid));
    const unconfigured = await findMessageBodies(db, keysOf(conv.uuid, 1, 5), null);
    expect(unconfigured).toHaveLength(5);
    for (const body of unconfigured) {
      expect(body).toMatchObject({ kind: 'unavailable', error: { code: 'ARCHIVE_UNAVAILABLE', problem: 'not-configured', segmentKey: key } });
    }
    const down: SegmentStore = { ...store, get: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:9')) };
    const unreachable = await findMessageBodies(db, keysOf(conv.uuid, 1, 5), createArchiveReader(down, 0));
    expect(unreachable[0]).toMatchObject({
      kind: 'unavailable',
      error: { code: 'ARCHIVE_UNAVAILABLE', problem: 'unreachable', message: expect.stringContaining('connect ECONNREFUSED') },
    });
    // Warm bodies and index-only answers need no archive.
    expect(await findMessageBodies(db, [{ convId: conv.uuid, seq: 99 }], null)).toEqual([{ kind: 'missing' }]);
  });
});
