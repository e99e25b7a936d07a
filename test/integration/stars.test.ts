import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { CLEAR, createGroup, DELETE_FOR_ME, REVOKE, send } from '../helpers/operations.ts';

const STAR = `mutation ($id: ID!) { starMessage(input: { messageId: $id }) { message { id starredByMe } } }`;
const UNSTAR = `mutation ($id: ID!) { unstarMessage(input: { messageId: $id }) { message { id starredByMe } } }`;
const STARRED = `query ($first: Int, $after: String) {
  viewer { starredMessages(first: $first, after: $after) {
    edges { cursor starredAt node { id starredByMe content { __typename ... on TextContent { text } } } }
    pageInfo { hasNextPage hasPreviousPage endCursor }
  } }
}`;
const BY_ME = `query ($id: ID!) { message(id: $id) { starredByMe } }`;
const CHANGES = `query ($id: ID!, $after: String) { conversation(id: $id) { changes(after: $after) { changes { kind fromSeq message { id starredByMe } } } } }`;
const CURSOR = `query ($id: ID!) { conversation(id: $id) { messages(last: 1) { changesCursor } } }`;
const PURGE = `mutation ($ids: [ID!]!) { purgeMessages(input: { messageIds: $ids }) { purgedCount } }`;

describe.each(backends)('Starred messages (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let eve: Client;
  let n = 0;
  /** A fresh user, so each test reads a starred list of its own. */
  const someone = () => harness.client(`starrer-${++n}`);

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    eve = await harness.client('eve');
  });
  afterAll(() => harness.close());

  const starredIds = async (client: Client, first = 100) => {
    const ids: string[] = [];
    let after: string | undefined;
    for (;;) {
      const response = await client.gql(STARRED, { first, after });
      expect(response.errors).toBeUndefined();
      const page = response.data.viewer.starredMessages;
      ids.push(...page.edges.map((e: any) => e.node.id));
      if (!page.pageInfo.hasNextPage) return ids;
      after = page.pageInfo.endCursor;
    }
  };

  it('lists what the viewer starred across conversations, most recently starred first, paged, private to them', async () => {
    const bob = await someone();
    const one = await createGroup(alice, [bob.userId]);
    const two = await createGroup(alice, [bob.userId]);
    const a = await send(alice, one.id, 'first star');
    const b = await send(alice, two.id, 'second star');
    const c = await send(alice, one.id, 'third star');
    for (const id of [a.id, b.id, c.id]) expect((await bob.gql(STAR, { id })).data.starMessage.message.starredByMe).toBe(true);
    expect(await starredIds(bob, 2)).toEqual([c.id, b.id, a.id]);
    expect((await alice.gql(BY_ME, { id: a.id })).data.message.starredByMe).toBe(false);
    expect(await starredIds(alice)).not.toContain(a.id);
    // Starring again changes nothing; unstarring takes it off, twice is harmless.
    await bob.gql(STAR, { id: a.id });
    expect(await starredIds(bob)).toEqual([c.id, b.id, a.id]);
    expect((await bob.gql(UNSTAR, { id: b.id })).data.unstarMessage.message.starredByMe).toBe(false);
    expect((await bob.gql(UNSTAR, { id: b.id })).errors).toBeUndefined();
    expect(await starredIds(bob)).toEqual([c.id, a.id]);
  });

  it('drops what the viewer can no longer see without leaving a page short, and shows revoked ones as revoked', async () => {
    const bob = await someone();
    const group = await createGroup(alice, [bob.userId]);
    const sent = [];
    for (let i = 0; i < 6; i++) sent.push(await send(alice, group.id, `s${i}`));
    for (const m of sent) await bob.gql(STAR, { id: m.id });
    await bob.gql(DELETE_FOR_ME, { messageIds: [sent[4]!.id] });
    expect((await alice.gql(PURGE, { ids: [sent[3]!.id] })).errors).toBeUndefined();
    await alice.gql(REVOKE, { messageId: sent[5]!.id });
    const page = await bob.gql(STARRED, { first: 3 });
    expect(page.data.viewer.starredMessages.edges.map((e: any) => [e.node.id, e.node.content.__typename])).toEqual([
      [sent[5]!.id, 'RevokedContent'],
      [sent[2]!.id, 'TextContent'],
      [sent[1]!.id, 'TextContent'],
    ]);
    expect(page.data.viewer.starredMessages.pageInfo.hasNextPage).toBe(true);
    await bob.gql(CLEAR, { conversationId: group.id });
    expect(await starredIds(bob)).toEqual([]);
    const left = rowsOf<{ n: number }>(await harness.database.db.execute(sql`select count(*)::int as n from message_stars where conv_id = ${group.uuid} and seq = ${sent[3]!.seq}`));
    expect(left[0]!.n).toBe(0);
  });

  it('answers NOT_FOUND for a message the caller cannot read, and stars nothing', async () => {
    const group = await createGroup(alice, []);
    const m = await send(alice, group.id, 'not for eve');
    expect(codes(await eve.gql(STAR, { id: m.id }))).toEqual(['NOT_FOUND']);
    expect(await starredIds(eve)).toEqual([]);
  });

  it('synchronises the viewer\'s devices through their own change feed', async () => {
    const bob = await someone();
    const group = await createGroup(alice, [bob.userId]);
    const m = await send(alice, group.id, 'synced star');
    const start = (await bob.gql(CURSOR, { id: group.id })).data.conversation.messages.changesCursor;
    await bob.gql(STAR, { id: m.id });
    await bob.gql(STAR, { id: m.id });
    await bob.gql(UNSTAR, { id: m.id });
    const mine = await bob.gql(CHANGES, { id: group.id, after: start });
    expect(mine.data.conversation.changes.changes).toEqual([
      { kind: 'STARRED', fromSeq: m.seq, message: { id: m.id, starredByMe: false } },
      { kind: 'UNSTARRED', fromSeq: m.seq, message: { id: m.id, starredByMe: false } },
    ]);
    expect((await alice.gql(CHANGES, { id: group.id, after: start })).data.conversation.changes.changes).toEqual([]);
  });

  it('reads a page of starred messages in a constant number of statements', async () => {
    const bob = await someone();
    const group = await createGroup(alice, [bob.userId]);
    for (let i = 0; i < 30; i++) await bob.gql(STAR, { id: (await send(alice, group.id, `cost ${i}`)).id });
    const small = await bob.gql(STARRED, { first: 3 });
    const large = await bob.gql(STARRED, { first: 30 });
    expect(large.data.viewer.starredMessages.edges).toHaveLength(30);
    expect(large.stats.statements).toBe(small.stats.statements);
    expect(large.stats.statements).toBeLessThanOrEqual(2);
  });
});
