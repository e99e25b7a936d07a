import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { conversationGlobalId } from '../../src/history/globalId.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type GraphQLResponse, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, SEND } from '../helpers/operations.ts';

const MAX_SEQ = `query MaxSeq($id: ID!) { conversation(id: $id) { maxSeq } }`;

const MESSAGE = `query Message($id: ID!) {
  message(id: $id) { id seq sender { id } content { __typename ... on TextContent { text } } }
}`;

const PAGE = `query Page($id: ID!, $first: Int) {
  conversation(id: $id) { messages(first: $first) { edges { node { seq sender { id } content { ... on TextContent { text } } } } } }
}`;

/** A 10,000-code-point text: mostly astral emoji (two UTF-16 units each), a skin-tone pair, and ASCII. */
const LONGEST_TEXT = `${'😀'.repeat(9_995)}👍🏽abc`;

interface SentMessage {
  id: string;
  seq: number;
  sender: { id: string };
  content: { __typename: string; text?: string };
}

describe.each(backends)('Sends messages (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;

  const sendAs = (client: Client, conversationId: string, clientMsgId: string, text: string) =>
    client.gql(SEND, { conversationId, clientMsgId, text });
  const sent = (response: GraphQLResponse): { message: SentMessage; deduplicated: boolean } => {
    expect(response.errors).toBeUndefined();
    return response.data.sendMessage;
  };
  const maxSeqOf = async (conversationId: string, client = alice): Promise<number> => {
    const response = await client.gql(MAX_SEQ, { id: conversationId });
    expect(response.errors).toBeUndefined();
    return response.data.conversation.maxSeq;
  };
  const storedCount = async (where: ReturnType<typeof sql>): Promise<number> =>
    rowsOf<{ n: number }>(await harness.database.db.execute(sql`select count(*)::int as n from messages where ${where}`))[0]!.n;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
  });
  afterAll(() => harness.close());

  describe('seq allocation', () => {
    it('numbers each conversation\'s messages densely from 1, in order of sending', async () => {
      const conv = await createGroup(alice, ['bob']);
      const other = await createGroup(alice, ['bob']);
      const seqs = [];
      seqs.push(sent(await sendAs(alice, conv.id, 'a-1', 'one')).message.seq);
      seqs.push(sent(await sendAs(bob, conv.id, 'b-1', 'two')).message.seq);
      seqs.push(sent(await sendAs(alice, conv.id, 'a-2', 'three')).message.seq);
      expect(seqs).toEqual([1, 2, 3]);
      expect(await maxSeqOf(conv.id)).toBe(3);
      // The counter is per conversation.
      expect(sent(await sendAs(alice, other.id, 'a-1', 'elsewhere')).message.seq).toBe(1);
    });

    it('gives 30 concurrent sends to one conversation exactly the seqs 1 to 30', async () => {
      const conv = await createGroup(alice, ['bob']);
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, i) => sendAs(i % 2 === 0 ? alice : bob, conv.id, `burst-${i}`, `burst ${i}`)),
      );
      const results = responses.map(sent);
      expect(results.every((r) => r.deduplicated === false)).toBe(true);
      const seqs = results.map((r) => r.message.seq).sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(await maxSeqOf(conv.id)).toBe(30);
      // Each seq holds the text of the send that was answered with it.
      const page = await alice.gql(PAGE, { id: conv.id, first: 100 });
      const stored = page.data.conversation.messages.edges.map((e: { node: SentMessage }) => [e.node.seq, e.node.content.text]);
      const answered = results.map((r) => [r.message.seq, r.message.content.text]).sort((a, b) => (a[0] as number) - (b[0] as number));
      expect(stored).toEqual(answered);
    });
  });

  describe('idempotency', () => {
    it('answers a later retry with the first message, deduplicated, with the original text, and does not move maxSeq', async () => {
      const conv = await createGroup(alice, ['bob']);
      const first = sent(await sendAs(alice, conv.id, 'retry-me', 'original text'));
      expect(first).toEqual({
        deduplicated: false,
        message: { id: expect.any(String), seq: 1, sender: { id: 'alice' }, content: { __typename: 'TextContent', text: 'original text' } },
      });
      sent(await sendAs(bob, conv.id, 'b-1', 'in between'));
      const before = await maxSeqOf(conv.id);
      expect(before).toBe(2);

      const retry = sent(await sendAs(alice, conv.id, 'retry-me', 'edited text'));
      expect(retry).toEqual({ deduplicated: true, message: first.message });
      expect(await maxSeqOf(conv.id)).toBe(before);
      const reread = await alice.gql(MESSAGE, { id: first.message.id });
      expect(reread.data.message).toEqual(first.message);
      expect(await storedCount(sql`client_msg_id = 'retry-me'`)).toBe(1);
    });

    it('lets 10 concurrent sends with one clientMsgId all succeed with the same seq, exactly one of them new', async () => {
      const conv = await createGroup(alice, ['bob']);
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) => sendAs(alice, conv.id, 'same-id', `copy ${i}`)),
      );
      const results = responses.map(sent);
      expect(results.filter((r) => r.deduplicated === false)).toHaveLength(1);
      const original = results.find((r) => r.deduplicated === false)!.message;
      expect(original.seq).toBe(1);
      for (const result of results) expect(result.message).toEqual(original);
      expect(await maxSeqOf(conv.id)).toBe(1);
      // The rolled-back duplicates used up no seq.
      expect(sent(await sendAs(alice, conv.id, 'next', 'next')).message.seq).toBe(2);
    });

    it('treats the same clientMsgId from another sender, or in another conversation, as a new message', async () => {
      const conv = await createGroup(alice, ['bob']);
      const other = await createGroup(alice, ['bob']);
      const mine = sent(await sendAs(alice, conv.id, 'shared-id', 'from alice'));
      const bobs = sent(await sendAs(bob, conv.id, 'shared-id', 'from bob'));
      const elsewhere = sent(await sendAs(alice, other.id, 'shared-id', 'from alice, elsewhere'));
      expect([mine, bobs, elsewhere].map((r) => [r.deduplicated, r.message.seq, r.message.sender.id, r.message.content.text])).toEqual([
        [false, 1, 'alice', 'from alice'],
        [false, 2, 'bob', 'from bob'],
        [false, 1, 'alice', 'from alice, elsewhere'],
      ]);
      expect(new Set([mine.message.id, bobs.message.id, elsewhere.message.id]).size).toBe(3);
    });
  });

  describe('validation', () => {
    let conv: { id: string; uuid: string };
    beforeAll(async () => {
      conv = await createGroup(alice, ['bob'], 'validation');
      sent(await sendAs(alice, conv.id, 'warm-up', 'warm up'));
    });

    it.each([
      ['empty', ''],
      ['spaces only', '   '],
      ['ideographic space, newline and tab only', '\u3000\n\t'],
      ['no-break spaces and line separators only', '\u00a0\u202f\u2028\u2029'],
      // U+0085 NEXT LINE has the Unicode White_Space property, though JavaScript's trim() keeps it.
      ['NEXT LINE (U+0085) and spaces only', ' \u0085 '],
      ['10,001 ASCII characters', 'a'.repeat(10_001)],
      ['10,001 emoji', '😀'.repeat(10_001)],
    ])('refuses text that is %s with BAD_USER_INPUT, storing nothing and using up no seq', async (_name, text) => {
      const before = await maxSeqOf(conv.id);
      const clientMsgId = `bad-${randomUUID()}`;
      const response = await sendAs(alice, conv.id, clientMsgId, text);
      expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe('text');
      expect(response.data).toBeNull();
      expect(await maxSeqOf(conv.id)).toBe(before);
      expect(await storedCount(sql`client_msg_id = ${clientMsgId}`)).toBe(0);
      // The same clientMsgId is still free, and the next send gets the next seq.
      const next = sent(await sendAs(alice, conv.id, clientMsgId, 'valid now'));
      expect(next).toMatchObject({ deduplicated: false, message: { seq: before + 1, content: { text: 'valid now' } } });
    });

    it('accepts exactly 10,000 code points, emoji included, and returns the text intact', async () => {
      expect([...LONGEST_TEXT]).toHaveLength(10_000);
      const result = sent(await sendAs(alice, conv.id, 'longest', LONGEST_TEXT));
      expect(result.message.content).toEqual({ __typename: 'TextContent', text: LONGEST_TEXT });
      const reread = await bob.gql(MESSAGE, { id: result.message.id });
      expect(reread.data.message.content.text).toBe(LONGEST_TEXT);
    });

    it.each([
      ['text', { clientMsgId: 'nul-text', text: 'a\u0000b' }],
      ['clientMsgId', { clientMsgId: 'nul-\u0000-id', text: 'hello' }],
    ])('answers a U+0000 in %s as bad input naming it, never as an internal error', async (argumentName, input) => {
      // PostgreSQL text cannot hold NUL, so the server cannot store it intact;
      // the client sent it, so the client must be told which argument is wrong.
      const before = await maxSeqOf(conv.id);
      const response = await sendAs(alice, conv.id, input.clientMsgId, input.text);
      expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe(argumentName);
      expect(await maxSeqOf(conv.id)).toBe(before);
    });

    it('answers a text with a lone surrogate either as bad input or with exactly the text later reads serve', async () => {
      const response = await sendAs(alice, conv.id, 'lone-surrogate-text', 'a\ud800b');
      let outcome: string;
      if (response.errors) {
        outcome = `${codes(response).join()}:${response.errors[0]!.extensions!.argumentName}`;
      } else {
        const answered = response.data.sendMessage.message;
        const reread = (await alice.gql(MESSAGE, { id: answered.id })).data.message.content.text;
        outcome = answered.content.text === reread ? 'consistent' : `answered ${JSON.stringify(answered.content.text)}, serves ${JSON.stringify(reread)}`;
      }
      expect(outcome).toBeOneOf(['BAD_USER_INPUT:text', 'consistent']);
    });

    it('accepts text with white space around something else, exactly as sent', async () => {
      const text = '\u3000 hi \n\t';
      const result = sent(await sendAs(alice, conv.id, 'padded', text));
      expect(result.message.content.text).toBe(text);
    });

    it.each([
      ['empty', ''],
      ['129 characters', 'c'.repeat(129)],
    ])('refuses a clientMsgId that is %s with BAD_USER_INPUT, storing nothing', async (_name, clientMsgId) => {
      const before = await maxSeqOf(conv.id);
      const response = await sendAs(alice, conv.id, clientMsgId, 'hello');
      expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe('clientMsgId');
      expect(response.data).toBeNull();
      expect(await maxSeqOf(conv.id)).toBe(before);
      expect(await storedCount(sql`client_msg_id = ${clientMsgId}`)).toBe(0);
    });

    it('accepts a clientMsgId of 1 and of 128 characters', async () => {
      const before = await maxSeqOf(conv.id);
      expect(sent(await sendAs(alice, conv.id, 'k', 'short id')).message.seq).toBe(before + 1);
      expect(sent(await sendAs(alice, conv.id, 'k'.repeat(128), 'long id')).message.seq).toBe(before + 2);
    });

    it('never merges two different clientMsgIds: ids differing only in a lone surrogate are refused or kept apart', async () => {
      // Stored as UTF-8, a lone surrogate becomes U+FFFD, so both would collapse into one key.
      const outcome = (response: GraphQLResponse) =>
        response.errors
          ? `${codes(response).join()}:${response.errors[0]!.extensions!.argumentName}`
          : `${response.data.sendMessage.deduplicated ? 'deduplicated' : 'stored'}:${response.data.sendMessage.message.content.text}`;
      const first = await sendAs(alice, conv.id, 'lone-\ud800', 'first');
      const second = await sendAs(alice, conv.id, 'lone-\udbff', 'second');
      expect([outcome(first), outcome(second)]).toBeOneOf([
        ['BAD_USER_INPUT:clientMsgId', 'BAD_USER_INPUT:clientMsgId'],
        ['stored:first', 'stored:second'],
      ]);
    });

    it('counts clientMsgId characters as code points, as for text: 128 emoji are accepted, 129 refused', async () => {
      const before = await maxSeqOf(conv.id);
      const longest = sent(await sendAs(alice, conv.id, '😀'.repeat(128), 'emoji id'));
      expect(longest.message.seq).toBe(before + 1);
      const tooLong = await sendAs(alice, conv.id, '😀'.repeat(129), 'emoji id');
      expect(codes(tooLong)).toEqual(['BAD_USER_INPUT']);
      expect(tooLong.errors![0]!.extensions!.argumentName).toBe('clientMsgId');
    });
  });

  describe('membership', () => {
    it('answers NOT_FOUND for a conversation the sender is not in, exactly as for one that does not exist, storing nothing', async () => {
      const conv = await createGroup(alice, ['bob'], 'private');
      sent(await sendAs(alice, conv.id, 'secret', 'the secret plan'));
      const missingUuid = randomUUID();
      const missing = conversationGlobalId(missingUuid);

      const notMember = await sendAs(carol, conv.id, 'carol-1', 'let me in');
      const noSuch = await sendAs(carol, missing, 'carol-1', 'let me in');
      const garbage = await sendAs(carol, 'no-such-conversation', 'carol-1', 'let me in');
      for (const response of [notMember, noSuch, garbage]) {
        expect(codes(response)).toEqual(['NOT_FOUND']);
        expect(response.data).toBeNull();
      }
      // Identical but for the echoed id: nothing tells "exists" from "does not".
      const normalized = (response: GraphQLResponse, id: string) => ({
        status: response.status,
        text: response.text.replaceAll(id, '<id>'),
      });
      expect(normalized(notMember, conv.id)).toEqual(normalized(noSuch, missing));
      expect(normalized(notMember, conv.id)).toEqual(normalized(garbage, 'no-such-conversation'));
      expect(notMember.text).not.toContain('the secret plan');

      expect(await maxSeqOf(conv.id)).toBe(1);
      expect(await storedCount(sql`sender_id = 'carol'`)).toBe(0);
      const conversationsCreated = rowsOf<{ n: number }>(
        await harness.database.db.execute(sql`select count(*)::int as n from conversations where id = ${missingUuid}`),
      )[0]!.n;
      expect(conversationsCreated).toBe(0);
    });
  });
});
