import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, DELETE_FOR_ME, REVOKE, send } from '../helpers/operations.ts';

const REACTION_FIELDS = 'reactions { reaction count reactedByMe }';
const ADD = `mutation Add($messageId: ID!, $reaction: String!) {
  addReaction(input: { messageId: $messageId, reaction: $reaction }) { message { id ${REACTION_FIELDS} } }
}`;
const REMOVE = `mutation Remove($messageId: ID!, $reaction: String!) {
  removeReaction(input: { messageId: $messageId, reaction: $reaction }) { message { id ${REACTION_FIELDS} } }
}`;
const REACTIONS = `query Reactions($id: ID!, $first: Int, $after: String) {
  message(id: $id) { reactions { reaction count reactedByMe users(first: $first, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } } }
}`;
const CHANGES = `query Changes($id: ID!, $after: String) {
  conversation(id: $id) { changes(after: $after) { changes { kind fromSeq message { id ${REACTION_FIELDS} } } } }
}`;
const CURSOR = `query Cursor($id: ID!) { conversation(id: $id) { messages(last: 1) { changesCursor } } }`;
const ERASE = `mutation Erase($userId: ID!) { eraseUser(input: { userId: $userId }) { erasedCount } }`;

describe.each(backends)('Reactions (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let eve: Client;
  let group: { id: string; uuid: string };

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
    eve = await harness.client('eve');
    group = await createGroup(alice, ['bob', 'carol']);
  });
  afterAll(() => harness.close());

  const reactionsOf = async (client: Client, id: string) => {
    const response = await client.gql(REACTIONS, { id });
    expect(response.errors).toBeUndefined();
    return response.data.message.reactions;
  };

  it('groups reactions in order of first use, with counts and reactedByMe for each reader', async () => {
    const message = await send(alice, group.id, 'react to me');
    for (const [client, reaction] of [[bob, '👍'], [carol, ':tada:'], [alice, '👍'], [carol, '👍']] as const) {
      expect((await client.gql(ADD, { messageId: message.id, reaction })).errors).toBeUndefined();
    }
    const seenByBob = await reactionsOf(bob, message.id);
    expect(seenByBob.map((g: any) => [g.reaction, g.count, g.reactedByMe])).toEqual([
      ['👍', 3, true],
      [':tada:', 1, false],
    ]);
    expect(seenByBob[0].users.edges.map((e: any) => e.node.id)).toEqual(['bob', 'alice', 'carol']);
    const seenByCarol = await reactionsOf(carol, message.id);
    expect(seenByCarol.map((g: any) => g.reactedByMe)).toEqual([true, true]);
  });

  it('is idempotent both ways, and removing the last one removes the group', async () => {
    const message = await send(alice, group.id, 'twice');
    const first = await bob.gql(ADD, { messageId: message.id, reaction: '🎉' });
    const again = await bob.gql(ADD, { messageId: message.id, reaction: '🎉' });
    expect(again.data.addReaction.message.reactions).toEqual(first.data.addReaction.message.reactions);
    expect(again.data.addReaction.message.reactions).toEqual([{ reaction: '🎉', count: 1, reactedByMe: true }]);
    const removed = await bob.gql(REMOVE, { messageId: message.id, reaction: '🎉' });
    expect(removed.data.removeReaction.message.reactions).toEqual([]);
    const removedAgain = await bob.gql(REMOVE, { messageId: message.id, reaction: '🎉' });
    expect(removedAgain.errors).toBeUndefined();
    expect(removedAgain.data.removeReaction.message.reactions).toEqual([]);
  });

  it('pages a group\'s users in the order they reacted', async () => {
    const big = await createGroup(alice, ['u1', 'u2', 'u3', 'u4', 'u5']);
    const message = await send(alice, big.id, 'many');
    const users = ['u1', 'u2', 'u3', 'u4', 'u5'];
    for (const id of users) expect((await (await harness.client(id)).gql(ADD, { messageId: message.id, reaction: ':+1:' })).errors).toBeUndefined();
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const response = await alice.gql(REACTIONS, { id: message.id, first: 2, after });
      expect(response.errors).toBeUndefined();
      const page = response.data.message.reactions[0].users;
      seen.push(...page.edges.map((e: any) => e.node.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(users);
  });

  it('holds at most 20 distinct reactions, and a 21st is BAD_USER_INPUT while an existing one still adds', async () => {
    const message = await send(alice, group.id, 'crowded');
    for (let i = 0; i < 20; i++) expect((await bob.gql(ADD, { messageId: message.id, reaction: `:r${i}:` })).errors).toBeUndefined();
    const refused = await carol.gql(ADD, { messageId: message.id, reaction: ':r20:' });
    expect(codes(refused)).toEqual(['BAD_USER_INPUT']);
    expect((await carol.gql(ADD, { messageId: message.id, reaction: ':r0:' })).errors).toBeUndefined();
    expect((await reactionsOf(alice, message.id)).length).toBe(20);
  });

  it('refuses what is not one emoji or shortcode, and messages the reactor cannot read', async () => {
    const message = await send(alice, group.id, 'strict');
    for (const reaction of ['', 'a', '👍👍', ':UPPER:', 'hello']) {
      const response = await bob.gql(ADD, { messageId: message.id, reaction });
      expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe('reaction');
    }
    expect(codes(await eve.gql(ADD, { messageId: message.id, reaction: '👍' }))).toEqual(['NOT_FOUND']);
    expect((await bob.gql(DELETE_FOR_ME, { messageIds: [message.id] })).errors).toBeUndefined();
    expect(codes(await bob.gql(ADD, { messageId: message.id, reaction: '👍' }))).toEqual(['NOT_FOUND']);
    expect(await reactionsOf(alice, message.id)).toEqual([]);
  });

  it('removes the reactions of a revoked message and takes no new ones', async () => {
    const message = await send(alice, group.id, 'soon revoked');
    await bob.gql(ADD, { messageId: message.id, reaction: '👍' });
    expect((await alice.gql(REVOKE, { messageId: message.id })).errors).toBeUndefined();
    expect(await reactionsOf(bob, message.id)).toEqual([]);
    expect(codes(await bob.gql(ADD, { messageId: message.id, reaction: '👍' }))).toEqual(['BAD_USER_INPUT']);
    const left = rowsOf<{ n: number }>(
      await harness.database.db.execute(sql`select count(*)::int as n from message_reactions where conv_id = ${group.uuid} and seq = ${message.seq}`),
    );
    expect(left[0]!.n).toBe(0);
  });

  it('reports each change in the change feed with the message\'s reactions now, and erasure takes the user\'s reactions with a change', async () => {
    const conversation = await createGroup(alice, ['bob', 'dora']);
    const message = await send(alice, conversation.id, 'feed');
    const start = (await alice.gql(CURSOR, { id: conversation.id })).data.conversation.messages.changesCursor;
    const dora = await harness.client('dora');
    await dora.gql(ADD, { messageId: message.id, reaction: '😀' });
    await bob.gql(ADD, { messageId: message.id, reaction: '😀' });
    const admin = await harness.client('root', { roles: ['admin'] });
    expect((await admin.gql(ERASE, { userId: 'dora' })).errors).toBeUndefined();
    const feed = await alice.gql(CHANGES, { id: conversation.id, after: start });
    expect(feed.errors).toBeUndefined();
    const now = [{ reaction: '😀', count: 1, reactedByMe: false }];
    expect(feed.data.conversation.changes.changes).toEqual([
      { kind: 'REACTIONS_CHANGED', fromSeq: message.seq, message: { id: message.id, reactions: now } },
      { kind: 'REACTIONS_CHANGED', fromSeq: message.seq, message: { id: message.id, reactions: now } },
      { kind: 'REACTIONS_CHANGED', fromSeq: message.seq, message: { id: message.id, reactions: now } },
    ]);
  });
});
