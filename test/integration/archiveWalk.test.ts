/**
 * The archive's promise, through the GraphQL API: a 1,200-message
 * conversation walked both ways, page by page, by each of three members
 * with different views (the owner who revoked some messages, a member who
 * deleted some for himself, a member who cleared the oldest), answers
 * every page identically (text included) before and after archiving all
 * but the newest 200, at one statement more per page that reaches the archive; on PGlite and
 * PostgreSQL, with the folder store and with S3 (s3rver).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveBodies } from '../../src/archive/archiver.ts';
import { createArchiveReader, setProcessArchive } from '../../src/archive/reader.ts';
import { folderStore, type SegmentStore, s3Store } from '../../src/archive/segmentStore.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { messageGlobalId } from '../../src/history/globalId.ts';
import { seedAgedMessages, storedKeys } from '../helpers/archive.ts';
import { type Backend, backends } from '../helpers/database.ts';
import { type Client, type GraphQLResponse, type Harness, startHarness } from '../helpers/harness.ts';
import { type LocalS3, startLocalS3 } from '../helpers/localS3.ts';
import { CLEAR, createGroup, DELETE_FOR_ME, MESSAGES_AROUND, MESSAGES_WITH_GAPS, REVOKE } from '../helpers/operations.ts';

const TOTAL = 1200;
const KEEP_NEWEST = 200;
const PAGE = 50;
const MiB = 1024 * 1024;

type StoreKind = 'folder' | 's3';
const plans: [Backend, StoreKind][] = [...backends.map((b): [Backend, StoreKind] => [b, 'folder']), ...backends.map((b): [Backend, StoreKind] => [b, 's3'])];

/** A walk: every page's whole connection, and each page's statement count. */
interface Walk {
  pages: unknown[];
  statements: number[];
}

describe.each(plans)('Walking an archived conversation both ways (%s, %s store)', { timeout: 120_000 }, (backend, storeKind) => {
  let harness: Harness;
  let db: SqlRunner;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let store: SegmentStore;
  let conv: { id: string; uuid: string };
  let s3: LocalS3 | null = null;
  let folder: string | null = null;
  const before = new Map<string, Walk>();

  beforeAll(async () => {
    harness = await startHarness(backend);
    db = createRunner(harness.database.client);
    if (storeKind === 's3') {
      s3 = await startLocalS3();
      store = s3Store(await s3.bucket('walk'));
    } else {
      folder = await mkdtemp(join(tmpdir(), 'backscroll-walk-'));
      store = folderStore(folder);
    }
    setProcessArchive(createArchiveReader(store, 64 * MiB));
    [alice, bob, carol] = await Promise.all([harness.client('alice'), harness.client('bob'), harness.client('carol')]);
    conv = await createGroup(alice, ['bob', 'carol'], 'archive walk');
    // carol clears the first 300; then 900 more, half alice's and half bob's.
    await seedAgedMessages(db, conv.uuid, 'alice', 300, 40);
    expect((await carol.gql(CLEAR, { conversationId: conv.id })).errors).toBeUndefined();
    await seedAgedMessages(db, conv.uuid, 'bob', 450, 35);
    await seedAgedMessages(db, conv.uuid, 'alice', 450, 30);
    // alice revokes some (old and new), bob deletes some for himself (some runs, some single).
    for (const seq of [3, 150, 299, 301, 640, 999, 1000, 1001, 1150]) {
      expect((await alice.gql(REVOKE, { messageId: messageGlobalId(conv.uuid, seq) })).errors).toBeUndefined();
    }
    const hidden = [...Array.from({ length: 60 }, (_, i) => 400 + i), 2, 777, 1002, 1100];
    expect((await bob.gql(DELETE_FOR_ME, { messageIds: hidden.map((seq) => messageGlobalId(conv.uuid, seq)) })).errors).toBeUndefined();
  });
  afterAll(async () => {
    setProcessArchive(null);
    await harness.close();
    await s3?.close();
    if (folder !== null) await rm(folder, { recursive: true, force: true });
  });

  /** `client`'s walk in `direction`, to the far end. */
  async function walk(client: Client, direction: 'backward' | 'forward'): Promise<Walk> {
    const result: Walk = { pages: [], statements: [] };
    let cursor: string | null = null;
    for (let i = 0; i < 100; i++) {
      const variables: Record<string, unknown> = direction === 'backward' ? { last: PAGE, before: cursor } : { first: PAGE, after: cursor };
      const response: GraphQLResponse = await client.gql(MESSAGES_WITH_GAPS, { id: conv.id, ...variables });
      expect(response.errors, JSON.stringify(response.errors)).toBeUndefined();
      const connection: { pageInfo: { hasPreviousPage: boolean; hasNextPage: boolean; startCursor: string; endCursor: string } } = response.data.conversation.messages;
      result.pages.push(connection);
      result.statements.push(response.stats.statements);
      const more = direction === 'backward' ? connection.pageInfo.hasPreviousPage : connection.pageInfo.hasNextPage;
      if (!more) return result;
      cursor = direction === 'backward' ? connection.pageInfo.startCursor : connection.pageInfo.endCursor;
    }
    throw new Error(`${client.userId}'s ${direction} walk did not end`);
  }

  const members = () => [alice, bob, carol];
  const around = (client: Client, seq: number) =>
    client.gql(MESSAGES_AROUND, { id: conv.id, around: messageGlobalId(conv.uuid, seq), first: 10, last: 10 });

  it('walks every member both ways before archiving, every text warm', async () => {
    for (const client of members()) {
      for (const direction of ['backward', 'forward'] as const) {
        before.set(`${client.userId} ${direction}`, await walk(client, direction));
      }
    }
    const alicePages = before.get('alice forward')!.pages as { edges: unknown[] }[];
    expect(alicePages.reduce((n, page) => n + page.edges.length, 0)).toBe(TOTAL);
    before.set('around 500', { pages: [(await around(alice, 500)).data], statements: [] });
  });

  it('archives all but the newest 200', async () => {
    const summary = await archiveBodies(db, store, { before: new Date(), keepNewest: KEEP_NEWEST });
    // Revoked bodies are gone already: 1,000 seqs, 7 of them revoked.
    expect([summary.messages, summary.skipped]).toEqual([993, 0]);
    const [{ warm }] = (await db.rows<{ warm: number }>(sql`select count(*)::int as warm from message_bodies where conv_id = ${conv.uuid}`)) as [{ warm: number }];
    expect(warm).toBe(KEEP_NEWEST - 2);
    expect(await storedKeys(store)).toHaveLength(1);
  });

  it('answers every page of every walk identically after archiving, at one statement more where a page reaches the archive', async () => {
    for (const client of members()) {
      for (const direction of ['backward', 'forward'] as const) {
        const key = `${client.userId} ${direction}`;
        const after = await walk(client, direction);
        expect(after.pages, key).toEqual(before.get(key)!.pages);
        // The page statement joins warm bodies; a page reaching the archive reads the rest in one more.
        expect(after.statements.map((n, i) => n - before.get(key)!.statements[i]!).every((more) => more === 0 || more === 1), key).toBe(true);
        expect(after.statements.some((n, i) => n > before.get(key)!.statements[i]!), key).toBe(true);
      }
    }
    expect((await around(alice, 500)).data).toEqual(before.get('around 500')!.pages[0]);
  });

  it('serves an archived message revoked after archiving as revoked, without its text', async () => {
    const response = await alice.gql(REVOKE, { messageId: messageGlobalId(conv.uuid, 500) });
    expect(response.errors).toBeUndefined();
    const aroundPage = (await around(bob, 500)).data.conversation.messages;
    const node = aroundPage.edges.find((e: { node: { seq: number } }) => e.node.seq === 500).node;
    expect(node.content).toEqual({ __typename: 'RevokedContent', revokedAt: expect.any(String), revokedBy: { id: 'alice' } });
    expect(JSON.stringify(aroundPage)).not.toContain('message 500 ');
  });
});
