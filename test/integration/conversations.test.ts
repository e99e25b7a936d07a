import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { decodeConversationId } from '../../src/history/globalId.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type GraphQLResponse, type Harness, startHarness } from '../helpers/harness.ts';
import { CREATE_GROUP, send } from '../helpers/operations.ts';

const CONVERSATION = `query Conversation($id: ID!) { conversation(id: $id) { id kind title maxSeq readSeq } }`;

const OPEN_DIRECT = `mutation Open($userId: ID!) {
  openDirectConversation(userId: $userId) { conversation { id kind title maxSeq readSeq } }
}`;

interface ConversationFields {
  id: string;
  kind: 'DIRECT' | 'GROUP';
  title: string | null;
  maxSeq: number;
  readSeq: number;
}

describe.each(backends)('Creates and opens conversations (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;

  const created = (response: GraphQLResponse): ConversationFields => {
    expect(response.errors).toBeUndefined();
    return response.data.createConversation.conversation;
  };
  const opened = (response: GraphQLResponse): ConversationFields => {
    expect(response.errors).toBeUndefined();
    return response.data.openDirectConversation.conversation;
  };
  const create = (client: Client, variables: { title?: string | null; memberIds: string[] }) => client.gql(CREATE_GROUP, variables);
  const open = (client: Client, userId: string) => client.gql(OPEN_DIRECT, { userId });
  const read = (client: Client, id: string) => client.gql(CONVERSATION, { id });
  /** The stored memberships of a conversation, by user id. */
  const membersOf = async (id: string) =>
    rowsOf<{ user_id: string; role: string }>(
      await harness.database.db.execute(
        sql`select user_id, role from members where conv_id = ${decodeConversationId(id)} order by user_id`,
      ),
    );
  const conversationCount = async () =>
    rowsOf<{ n: number }>(await harness.database.db.execute(sql`select count(*)::int as n from conversations`))[0]!.n;
  const expectBadInput = (response: GraphQLResponse, argumentName: string) => {
    expect(codes(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors![0]!.extensions!.argumentName).toBe(argumentName);
    expect(response.data).toBeNull();
  };

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
  });
  afterAll(() => harness.close());

  describe('createConversation', () => {
    it('creates a GROUP with the caller as owner and member, maxSeq and readSeq 0, that the caller can read', async () => {
      const conversation = created(await create(alice, { title: 'Weekend plans', memberIds: ['bob'] }));
      expect(conversation).toEqual({ id: expect.any(String), kind: 'GROUP', title: 'Weekend plans', maxSeq: 0, readSeq: 0 });
      expect((await read(alice, conversation.id)).data.conversation).toEqual(conversation);
      expect(await membersOf(conversation.id)).toEqual([
        { user_id: 'alice', role: 'owner' },
        { user_id: 'bob', role: 'member' },
      ]);
    });

    it('lets named members read it at once, though they never made a request before, and no one else', async () => {
      const dave = await harness.client('dave-never-seen-before');
      const erin = await harness.client('erin-never-seen-before');
      const conversation = created(await create(alice, { title: 'Surprise', memberIds: [dave.userId, erin.userId] }));
      for (const member of [dave, erin]) {
        const response = await read(member, conversation.id);
        expect(response.errors).toBeUndefined();
        expect(response.data.conversation).toEqual({ ...conversation, readSeq: 0 });
      }
      const outsider = await read(carol, conversation.id);
      expect(codes(outsider)).toEqual(['NOT_FOUND']);
      expect(outsider.data).toEqual({ conversation: null });
      // A member can send at once too.
      const message = await send(dave, conversation.id, 'hello from dave');
      expect(message.seq).toBe(1);
    });

    it('trims the title', async () => {
      const conversation = created(await create(alice, { title: ' \u3000 Trip to Oslo \n\t', memberIds: ['bob'] }));
      expect(conversation.title).toBe('Trip to Oslo');
      expect((await read(bob, conversation.id)).data.conversation.title).toBe('Trip to Oslo');
    });

    it('leaves the title null when it is omitted or null', async () => {
      expect(created(await create(alice, { memberIds: ['bob'] })).title).toBeNull();
      expect(created(await create(alice, { title: null, memberIds: ['bob'] })).title).toBeNull();
    });

    it('accepts a title of exactly 200 characters after trimming, emoji counted as one', async () => {
      const title = `${'🎉'.repeat(100)}${'t'.repeat(100)}`;
      expect(created(await create(alice, { title: `  ${title}  `, memberIds: [] })).title).toBe(title);
    });

    it.each([
      ['empty', ''],
      ['only spaces', '     '],
      ['only other white space', '\u3000\n\t'],
      ['201 characters', 'x'.repeat(201)],
      ['201 emoji', '🎉'.repeat(201)],
    ])('refuses a title that is %s with BAD_USER_INPUT naming title, creating nothing', async (_name, title) => {
      const before = await conversationCount();
      expectBadInput(await create(alice, { title, memberIds: ['bob'] }), 'title');
      expect(await conversationCount()).toBe(before);
    });

    it('ignores duplicate memberIds, and the caller among them', async () => {
      const conversation = created(await create(alice, { title: 'Dupes', memberIds: ['bob', 'alice', 'bob', 'carol', 'alice', 'carol'] }));
      expect(await membersOf(conversation.id)).toEqual([
        { user_id: 'alice', role: 'owner' },
        { user_id: 'bob', role: 'member' },
        { user_id: 'carol', role: 'member' },
      ]);
      for (const client of [alice, bob, carol]) expect((await read(client, conversation.id)).errors).toBeUndefined();
    });

    it('creates a group of the caller alone when memberIds is empty', async () => {
      const conversation = created(await create(alice, { title: 'Notes', memberIds: [] }));
      expect(await membersOf(conversation.id)).toEqual([{ user_id: 'alice', role: 'owner' }]);
      expect(codes(await read(bob, conversation.id))).toEqual(['NOT_FOUND']);
    });

    it('accepts 1,000 memberIds and refuses 1,001 with BAD_USER_INPUT, creating nothing', async () => {
      const thousand = Array.from({ length: 1000 }, (_, i) => `crowd-${i}`);
      const conversation = created(await create(alice, { title: 'Crowd', memberIds: thousand }));
      expect(await membersOf(conversation.id)).toHaveLength(1001);
      const last = await harness.client('crowd-999');
      expect((await read(last, conversation.id)).errors).toBeUndefined();

      const before = await conversationCount();
      expectBadInput(await create(alice, { title: 'Too many', memberIds: [...thousand, 'crowd-1000'] }), 'memberIds');
      expect(await conversationCount()).toBe(before);
    });

    it.each([
      ['empty', ''],
      ['201 characters', 'u'.repeat(201)],
    ])('refuses a member id that is %s with BAD_USER_INPUT naming memberIds', async (_name, memberId) => {
      const before = await conversationCount();
      expectBadInput(await create(alice, { title: 'Bad member', memberIds: ['bob', memberId] }), 'memberIds');
      expect(await conversationCount()).toBe(before);
    });
  });

  describe('openDirectConversation', () => {
    it('opens a DIRECT conversation without a title, maxSeq and readSeq 0, that the other user can read at once', async () => {
      const frank = await harness.client('frank');
      const grace = await harness.client('grace');
      const conversation = opened(await open(frank, grace.userId));
      expect(conversation).toEqual({ id: expect.any(String), kind: 'DIRECT', title: null, maxSeq: 0, readSeq: 0 });
      expect((await read(grace, conversation.id)).data.conversation).toEqual(conversation);
      expect(await membersOf(conversation.id)).toEqual([
        { user_id: 'frank', role: 'member' },
        { user_id: 'grace', role: 'member' },
      ]);
      expect(codes(await read(carol, conversation.id))).toEqual(['NOT_FOUND']);
    });

    it('gives both users the same conversation whichever opens it, every time', async () => {
      const first = opened(await open(alice, 'bob'));
      const again = opened(await open(alice, 'bob'));
      const fromBob = opened(await open(bob, 'alice'));
      expect(again).toEqual(first);
      expect(fromBob.id).toBe(first.id);
      // Messages sent in it are seen by both sides through either opening.
      await send(bob, first.id, 'hi alice');
      expect(opened(await open(alice, 'bob'))).toEqual({ ...first, maxSeq: 1 });
      expect(opened(await open(bob, 'alice'))).toEqual({ ...first, maxSeq: 1 });
    });

    it('gives concurrent openings from both sides one conversation', async () => {
      const henry = await harness.client('henry');
      const ivy = await harness.client('ivy');
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? open(henry, 'ivy') : open(ivy, 'henry'))),
      );
      const ids = new Set(responses.map((r) => opened(r).id));
      expect(ids.size).toBe(1);
      expect(await membersOf([...ids][0]!)).toHaveLength(2);
    });

    it('gives different pairs different conversations', async () => {
      const aliceBob = opened(await open(alice, 'bob'));
      const aliceCarol = opened(await open(alice, 'carol'));
      const bobCarol = opened(await open(bob, 'carol'));
      expect(new Set([aliceBob.id, aliceCarol.id, bobCarol.id]).size).toBe(3);
      expect(codes(await read(carol, aliceBob.id))).toEqual(['NOT_FOUND']);
    });

    it('opens a conversation with yourself that only you can read', async () => {
      const notes = opened(await open(alice, 'alice'));
      expect(notes).toEqual({ id: expect.any(String), kind: 'DIRECT', title: null, maxSeq: 0, readSeq: 0 });
      expect(opened(await open(alice, 'alice')).id).toBe(notes.id);
      expect(notes.id).not.toBe(opened(await open(alice, 'bob')).id);
      expect(await membersOf(notes.id)).toEqual([{ user_id: 'alice', role: 'member' }]);
      expect((await read(alice, notes.id)).data.conversation).toEqual(notes);
      for (const other of [bob, carol]) expect(codes(await read(other, notes.id))).toEqual(['NOT_FOUND']);
      expect((await send(alice, notes.id, 'note to self')).seq).toBe(1);
    });

    it.each([
      ['empty', ''],
      ['201 characters', 'u'.repeat(201)],
    ])('refuses a userId that is %s with BAD_USER_INPUT naming userId, creating nothing', async (_name, userId) => {
      const before = await conversationCount();
      expectBadInput(await open(alice, userId), 'userId');
      expect(await conversationCount()).toBe(before);
    });
  });
});
