import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { archiveBodies } from '../../src/archive/archiver.ts';
import { createArchiveReader, setProcessArchive } from '../../src/archive/reader.ts';
import { folderStore } from '../../src/archive/segmentStore.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { createRunner } from '../../src/db/runner.ts';
import { KEEP_EVERYTHING } from '../../src/history/retention.ts';
import { purgeExpired } from '../../src/store/purge.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, REVOKE, send } from '../helpers/operations.ts';

const EDIT = `mutation Edit($messageId: ID!, $text: String!) {
  editMessage(input: { messageId: $messageId, text: $text }) { message { id editedAt content { ... on TextContent { text } } } }
}`;
const HISTORY = `query History($id: ID!, $first: Int, $after: String) {
  message(id: $id) {
    editedAt content { __typename ... on TextContent { text } }
    edits(first: $first, after: $after) { edges { cursor node { text editedAt } } pageInfo { hasNextPage hasPreviousPage endCursor } }
  }
}`;
const SEARCH = `query Search($q: String!, $c: ID) { search(query: $q, conversationId: $c) { edges { node { id } } } }`;
const CHANGES = `query Changes($id: ID!, $after: String) {
  conversation(id: $id) { changes(after: $after) { changes { kind fromSeq message { id editedAt content { ... on TextContent { text } } } } cursor } }
}`;
const PAGE = `query Page($id: ID!) { conversation(id: $id) { messages(last: 20) { changesCursor edges { node { seq editedAt } } } } }`;
const PURGE = `mutation Purge($ids: [ID!]!) { purgeMessages(input: { messageIds: $ids }) { purgedCount } }`;
const ERASE = `mutation Erase($userId: ID!) { eraseUser(input: { userId: $userId }) { erasedCount } }`;

describe.each(backends)('Editing messages (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let eve: Client;
  let admin: Client;
  let group: { id: string; uuid: string };

  const edit = (client: Client, messageId: string, text: string) => client.gql(EDIT, { messageId, text });

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    eve = await harness.client('eve');
    admin = await harness.client('root', { roles: ['admin'] });
    group = await createGroup(alice, ['bob']);
  });
  afterAll(() => harness.close());

  it('replaces the text, stamps editedAt and keeps each earlier version, newest first, paged', async () => {
    const message = await send(alice, group.id, 'first draft');
    const before = await bob.gql(HISTORY, { id: message.id });
    expect(before.data.message.editedAt).toBeNull();
    expect(before.data.message.edits.edges).toEqual([]);

    const first = await edit(alice, message.id, 'second draft');
    expect(first.errors).toBeUndefined();
    expect(first.data.editMessage.message.content.text).toBe('second draft');
    expect(first.data.editMessage.message.editedAt).toMatch(/Z$/);
    expect((await edit(alice, message.id, 'final text')).errors).toBeUndefined();

    const seen = await bob.gql(HISTORY, { id: message.id, first: 1 });
    expect(seen.errors).toBeUndefined();
    expect(seen.data.message.content.text).toBe('final text');
    expect(seen.data.message.edits.edges.map((e: any) => e.node.text)).toEqual(['second draft']);
    expect(seen.data.message.edits.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const older = await bob.gql(HISTORY, { id: message.id, first: 5, after: seen.data.message.edits.pageInfo.endCursor });
    expect(older.data.message.edits.edges.map((e: any) => e.node.text)).toEqual(['first draft']);
    expect(older.data.message.edits.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    // Each version's editedAt is when it was replaced: the newer replacement came later.
    const [second] = seen.data.message.edits.edges;
    const [firstVersion] = older.data.message.edits.edges;
    expect(Date.parse(second.node.editedAt)).toBeGreaterThanOrEqual(Date.parse(firstVersion.node.editedAt));
    expect(seen.data.message.editedAt).toBe(second.node.editedAt);
  });

  it('answers an edit to the same text with the message and changes nothing', async () => {
    const message = await send(alice, group.id, 'unchanged words');
    const response = await edit(alice, message.id, 'unchanged words');
    expect(response.errors).toBeUndefined();
    expect(response.data.editMessage.message.editedAt).toBeNull();
    const history = await alice.gql(HISTORY, { id: message.id });
    expect(history.data.message.edits.edges).toEqual([]);
  });

  it('lets only the sender edit, and answers NOT_FOUND to someone who cannot read the message', async () => {
    const message = await send(alice, group.id, 'mine to edit');
    expect(codes(await edit(bob, message.id, 'hijacked'))).toEqual(['FORBIDDEN']);
    expect(codes(await edit(eve, message.id, 'hijacked'))).toEqual(['NOT_FOUND']);
    expect((await alice.gql(HISTORY, { id: message.id })).data.message.content.text).toBe('mine to edit');
  });

  it('refuses bad text with BAD_USER_INPUT naming the argument, and leaves the message as it was', async () => {
    const message = await send(alice, group.id, 'keep me');
    for (const text of ['', '   ', 'x'.repeat(10_001), 'nul\u0000byte']) {
      const response = await edit(alice, message.id, text);
      expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe('text');
    }
    expect((await alice.gql(HISTORY, { id: message.id })).data.message.editedAt).toBeNull();
  });

  it('refuses to edit a revoked message, and revoking deletes the edit history', async () => {
    const message = await send(alice, group.id, 'to be revoked');
    await edit(alice, message.id, 'edited before revoke');
    expect((await alice.gql(REVOKE, { messageId: message.id })).errors).toBeUndefined();
    expect(codes(await edit(alice, message.id, 'too late'))).toEqual(['FORBIDDEN']);
    const history = await bob.gql(HISTORY, { id: message.id });
    expect(history.data.message.content.__typename).toBe('RevokedContent');
    expect(history.data.message.edits.edges).toEqual([]);
    const left = rowsOf<{ n: number }>(
      await harness.database.db.execute(sql`select count(*)::int as n from message_edits where conv_id = ${group.uuid} and seq = ${message.seq}`),
    );
    expect(left[0]!.n).toBe(0);
  });

  it('lets search find the current text only', async () => {
    const message = await send(alice, group.id, 'zanzibar original');
    await edit(alice, message.id, 'timbuktu replacement');
    const found = async (q: string) => (await bob.gql(SEARCH, { q, c: group.id })).data.search.edges.map((e: any) => e.node.id);
    expect(await found('timbuktu')).toEqual([message.id]);
    expect(await found('zanzibar')).toEqual([]);
  });

  it('reports each edit in the change feed with the message as the reader sees it now, and pages show editedAt', async () => {
    const conversation = await createGroup(alice, ['bob']);
    const message = await send(alice, conversation.id, 'feed before');
    const page = await bob.gql(PAGE, { id: conversation.id });
    expect(page.data.conversation.messages.edges[0].node.editedAt).toBeNull();
    await edit(alice, message.id, 'feed after');
    const changes = await bob.gql(CHANGES, { id: conversation.id, after: page.data.conversation.messages.changesCursor });
    expect(changes.errors).toBeUndefined();
    expect(changes.data.conversation.changes.changes).toEqual([
      { kind: 'EDITED', fromSeq: message.seq, message: { id: message.id, editedAt: expect.any(String), content: { text: 'feed after' } } },
    ]);
    const after = await bob.gql(PAGE, { id: conversation.id });
    expect(after.data.conversation.messages.edges[0].node.editedAt).toBe(changes.data.conversation.changes.changes[0].message.editedAt);
  });

  it('keeps EDIT_WINDOW_SECONDS: an edit after the window is FORBIDDEN', async () => {
    const windowed = await startHarness(backend, { EDIT_WINDOW_SECONDS: '60' });
    try {
      const owner = await windowed.client('alice');
      const conversation = await createGroup(owner, []);
      const fresh = await send(owner, conversation.id, 'fresh');
      const old = await send(owner, conversation.id, 'old');
      await windowed.database.db.execute(sql`update messages set created_at = now() - interval '61 seconds' where conv_id = ${conversation.uuid} and seq = ${old.seq}`);
      expect((await owner.gql(EDIT, { messageId: fresh.id, text: 'fresh, edited' })).errors).toBeUndefined();
      const late = await owner.gql(EDIT, { messageId: old.id, text: 'old, edited' });
      expect(codes(late)).toEqual(['FORBIDDEN']);
      expect(late.errors![0]!.message).toContain('60 seconds');
    } finally {
      await windowed.close();
    }
  });

  it('deletes edit history with purges and with the sender\'s erasure', async () => {
    const conversation = await createGroup(alice, ['bob']);
    const purged = await send(alice, conversation.id, 'purge me');
    const erased = await send(bob, conversation.id, 'erase me');
    await edit(alice, purged.id, 'purge me, edited');
    await edit(bob, erased.id, 'erase me, edited');
    expect((await alice.gql(PURGE, { ids: [purged.id] })).errors).toBeUndefined();
    expect((await admin.gql(ERASE, { userId: 'bob' })).errors).toBeUndefined();
    const left = rowsOf<{ n: number }>(
      await harness.database.db.execute(sql`select count(*)::int as n from message_edits where conv_id = ${conversation.uuid}`),
    );
    expect(left[0]!.n).toBe(0);
    const history = await alice.gql(HISTORY, { id: erased.id });
    expect(history.data.message.content.__typename).toBe('PurgedContent');
    expect(history.data.message.edits.edges).toEqual([]);
    expect(codes(await edit(bob, erased.id, 'back again'))).toEqual(['FORBIDDEN']);
  });

  it('lets the retention purge take versions, reactions and thread read positions with the messages it deletes', async () => {
    const conversation = await createGroup(alice, ['bob']);
    const root = await send(alice, conversation.id, 'expiring root');
    await edit(alice, root.id, 'expiring root, edited');
    await bob.gql('mutation ($id: ID!) { addReaction(input: { messageId: $id, reaction: "👍" }) { message { id } } }', { id: root.id });
    await bob.gql('mutation ($id: ID!, $seq: Seq!) { markThreadRead(input: { messageId: $id, seq: $seq }) { message { id } } }', { id: root.id, seq: root.seq });
    const kept = await send(alice, conversation.id, 'kept');
    await edit(alice, kept.id, 'kept, edited');
    const count = async (table: string) =>
      rowsOf<{ n: number }>(await harness.database.db.execute(sql`select count(*)::int as n from ${sql.identifier(table)} where conv_id = ${conversation.uuid}`))[0]!.n;
    expect([await count('message_edits'), await count('message_reactions'), await count('thread_reads')]).toEqual([2, 1, 1]);
    // Keep only the newest seq: the root expires.
    await harness.database.db.execute(sql`update conversations set retention_max_messages = 1 where id = ${conversation.uuid}`);
    const totals = await purgeExpired(createRunner(harness.database.client), { server: KEEP_EVERYTHING, now: new Date() }, { batchSize: 100 });
    expect(totals.messages).toBeGreaterThanOrEqual(1);
    expect([await count('message_edits'), await count('message_reactions'), await count('thread_reads')]).toEqual([1, 0, 0]);
    expect((await alice.gql(HISTORY, { id: kept.id })).data.message.edits.edges.map((e: any) => e.node.text)).toEqual(['kept']);
  });
});

describe.each(backends)('Editing an archived message (%s)', (backend) => {
  it('is FORBIDDEN with reason ARCHIVED, and the archived text still reads as it was', async () => {
    const harness = await startHarness(backend);
    const dir = await mkdtemp(join(tmpdir(), 'backscroll-edit-archive-'));
    try {
      const alice = await harness.client('alice');
      const group = await createGroup(alice, []);
      const old = await send(alice, group.id, 'archived words');
      const fresh = await send(alice, group.id, 'warm words');
      const store = folderStore(dir);
      setProcessArchive(createArchiveReader(store, 1024 * 1024));
      const summary = await archiveBodies(createRunner(harness.database.client), store, {
        before: new Date(Date.now() + 60_000),
        keepNewest: 1,
        limits: { messages: 100, bytes: 256 * 1024 },
      });
      expect(summary.skipped).toBe(0);
      const refused = await alice.gql(EDIT, { messageId: old.id, text: 'rewritten' });
      expect(codes(refused)).toEqual(['FORBIDDEN']);
      expect(refused.errors![0]!.extensions!.reason).toBe('ARCHIVED');
      const read = await alice.gql(HISTORY, { id: old.id });
      expect(read.data.message).toMatchObject({ editedAt: null, content: { text: 'archived words' } });
      expect((await alice.gql(EDIT, { messageId: fresh.id, text: 'warm, edited' })).errors).toBeUndefined();
    } finally {
      setProcessArchive(null);
      await harness.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
