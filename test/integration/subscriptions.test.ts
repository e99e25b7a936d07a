/**
 * Live events over WebSocket (graphql-ws) through the real server: each
 * member sees sends, revokes, purges and others' read cursors as they see
 * them, membership is checked at subscribe and on every event, and the
 * NOTIFY payload carries ids only.
 */
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { signToken } from '../../src/auth/tokens.ts';
import { rowsOf } from '../../src/db/rows.ts';
import { createRunner } from '../../src/db/runner.ts';
import { conversationGlobalId } from '../../src/history/globalId.ts';
import { EVENTS_CHANNEL, membershipNotice, publishNow } from '../../src/store/notify.ts';
import { backends, postgresOnly } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness, TEST_SECRET } from '../helpers/harness.ts';
import { type LiveClient, liveClient, type LiveSubscription, untilLive } from '../helpers/liveClient.ts';
import { createGroup, DELETE_FOR_ME, MARK_READ, REVOKE, send } from '../helpers/operations.ts';

const EVENTS = `subscription Events($id: ID!) {
  conversationEvents(conversationId: $id) {
    kind seq toSeq user { id }
    message { id seq sender { id } content { __typename ... on TextContent { text } ... on RevokedContent { revokedBy { id } } } }
  }
}`;
const PURGE = `mutation ($ids: [ID!]!) { purgeMessages(input: { messageIds: $ids }) { purgedCount } }`;
const GONE = { kind: 'complete' };

describe.each(backends)('Subscriptions over WebSocket (%s)', (backend) => {
  const itOnPostgres = postgresOnly(backend);
  const describeOnPostgres = backend === 'postgres' ? describe : () => undefined;
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  const sockets: LiveClient[] = [];

  /** A socket authenticated as `client`, closed after the test. */
  const socketOf = (client: Client | null, params?: Record<string, unknown>) => {
    const socket = liveClient(harness.server.url, params ?? (client ? { authorization: `Bearer ${client.token}` } : undefined));
    sockets.push(socket);
    return socket;
  };
  /** `client`'s live subscription to `group`, registered once this resolves (alice's pokes are taken). */
  const subscribed = async (client: Client, group: { id: string }) => {
    const events = socketOf(client).subscribe(EVENTS, { id: group.id });
    await untilLive(events, async () => (await send(alice, group.id, 'poke')).seq);
    return events;
  };
  /** Takes `events`' results up to and including the event at `seq`. */
  const takeThrough = async (events: LiveSubscription, seq: number) => {
    while ((await events.next()).data?.conversationEvents.seq !== seq);
  };
  const eventOf = async (events: LiveSubscription) => {
    const result = await events.next();
    expect(result.errors).toBeUndefined();
    return result.data.conversationEvents;
  };

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((s) => s.dispose()));
  });
  afterAll(async () => {
    await harness?.close();
  });

  describe('events', () => {
    it('delivers a send by another member, with its seq and the text as the subscriber sees it', async () => {
      const group = await createGroup(alice, ['bob']);
      const events = await subscribed(bob, group);
      const sent = await send(alice, group.id, 'hello bob');
      expect(await eventOf(events)).toEqual({
        kind: 'MESSAGE_SENT',
        seq: sent.seq,
        toSeq: sent.seq,
        user: null,
        message: { id: sent.id, seq: sent.seq, sender: { id: 'alice' }, content: { __typename: 'TextContent', text: 'hello bob' } },
      });
    });

    it('gives every event a cursor from which messages(after:) fills exactly what came later', async () => {
      const group = await createGroup(alice, ['bob']);
      const events = socketOf(bob).subscribe(EVENTS.replace('kind seq toSeq', 'kind seq toSeq cursor'), { id: group.id });
      await untilLive(events, async () => (await send(alice, group.id, 'poke')).seq);
      const first = await send(alice, group.id, 'seen live');
      let event;
      do event = await eventOf(events);
      while (event.seq !== first.seq);
      // The socket drops here; two messages arrive while the client is away.
      const missed = [await send(alice, group.id, 'missed 1'), await send(alice, group.id, 'missed 2')];
      const page = await bob.gql('query ($id: ID!, $after: String) { conversation(id: $id) { messages(first: 10, after: $after) { edges { node { seq } } } } }', {
        id: group.id,
        after: event.cursor,
      });
      expect(page.data.conversation.messages.edges.map((e: { node: { seq: number } }) => e.node.seq)).toEqual(missed.map((m) => m.seq));
    });

    it('says nothing about messages below the subscriber’s floor (here, history they cleared)', async () => {
      const group = await createGroup(alice, ['bob']);
      const old = await send(alice, group.id, 'before the clear');
      const events = await subscribed(bob, group);
      await bob.gql('mutation ($id: ID!) { clearHistory(input: { conversationId: $id }) { clearedThroughSeq } }', { id: group.id });
      expect((await alice.gql(REVOKE, { messageId: old.id })).errors).toBeUndefined();
      const later = await send(alice, group.id, 'after the clear');
      // The revoke of the cleared message is not announced; the next send is.
      let event = await eventOf(events);
      while (event.seq < old.seq) event = await eventOf(events);
      expect(event).toMatchObject({ kind: 'MESSAGE_SENT', seq: later.seq });
    });

    it('delivers a revoke with the revoked placeholder', async () => {
      const group = await createGroup(alice, ['bob']);
      const events = await subscribed(bob, group);
      const sent = await send(alice, group.id, 'regret');
      await eventOf(events);
      expect((await alice.gql(REVOKE, { messageId: sent.id })).errors).toBeUndefined();
      expect(await eventOf(events)).toEqual({
        kind: 'MESSAGE_REVOKED',
        seq: sent.seq,
        toSeq: sent.seq,
        user: null,
        message: { id: sent.id, seq: sent.seq, sender: { id: 'alice' }, content: { __typename: 'RevokedContent', revokedBy: { id: 'alice' } } },
      });
    });

    it('delivers an edit with the new text and a reaction change with the reactions now', async () => {
      const group = await createGroup(alice, ['bob']);
      const events = await subscribed(bob, group);
      const sent = await send(alice, group.id, 'tpyo');
      await eventOf(events);
      const edited = await alice.gql('mutation ($id: ID!) { editMessage(input: { messageId: $id, text: "typo" }) { message { id } } }', { id: sent.id });
      expect(edited.errors).toBeUndefined();
      expect(await eventOf(events)).toEqual({
        kind: 'MESSAGE_EDITED',
        seq: sent.seq,
        toSeq: sent.seq,
        user: null,
        message: { id: sent.id, seq: sent.seq, sender: { id: 'alice' }, content: { __typename: 'TextContent', text: 'typo' } },
      });
      const reacted = await alice.gql('mutation ($id: ID!) { addReaction(input: { messageId: $id, reaction: "👍" }) { message { id } } }', { id: sent.id });
      expect(reacted.errors).toBeUndefined();
      expect(await eventOf(events)).toMatchObject({ kind: 'REACTIONS_CHANGED', seq: sent.seq, message: { id: sent.id } });
    });

    it('delivers a purge as one range per run of consecutive seqs', async () => {
      const group = await createGroup(alice, ['bob']);
      const events = await subscribed(bob, group);
      const first = await send(alice, group.id, 'one');
      const second = await send(alice, group.id, 'two');
      await eventOf(events);
      await eventOf(events);
      expect((await alice.gql(PURGE, { ids: [first.id, second.id] })).data).toEqual({ purgeMessages: { purgedCount: 2 } });
      expect(await eventOf(events)).toEqual({ kind: 'MESSAGES_PURGED', seq: first.seq, toSeq: second.seq, user: null, message: null });
    });

    it("delivers other members' read cursors, not the subscriber's own", async () => {
      const group = await createGroup(alice, ['bob']);
      const events = await subscribed(bob, group);
      const sent = await send(alice, group.id, 'read me');
      await eventOf(events);
      expect((await bob.gql(MARK_READ, { conversationId: group.id, seq: sent.seq })).errors).toBeUndefined();
      expect((await alice.gql(MARK_READ, { conversationId: group.id, seq: sent.seq })).errors).toBeUndefined();
      expect(await eventOf(events)).toEqual({ kind: 'READ_MOVED', seq: sent.seq, toSeq: sent.seq, user: { id: 'alice' }, message: null });
    });

    it('does not announce a read cursor that did not move', async () => {
      const group = await createGroup(alice, ['bob']);
      const events = await subscribed(bob, group);
      const sent = await send(alice, group.id, 'read twice');
      await eventOf(events);
      await alice.gql(MARK_READ, { conversationId: group.id, seq: sent.seq });
      await alice.gql(MARK_READ, { conversationId: group.id, seq: sent.seq });
      const next = await send(alice, group.id, 'after');
      expect((await eventOf(events)).kind).toBe('READ_MOVED');
      expect(await eventOf(events)).toMatchObject({ kind: 'MESSAGE_SENT', seq: next.seq });
    });

    it('carries message null for a message the subscriber deleted for themselves', async () => {
      const group = await createGroup(alice, ['bob']);
      const events = await subscribed(bob, group);
      const sent = await send(alice, group.id, 'not for bob');
      await eventOf(events);
      expect((await bob.gql(DELETE_FOR_ME, { messageIds: [sent.id] })).data).toEqual({ deleteMessagesForMe: { deletedCount: 1 } });
      await alice.gql(REVOKE, { messageId: sent.id });
      expect(await eventOf(events)).toEqual({ kind: 'MESSAGE_REVOKED', seq: sent.seq, toSeq: sent.seq, user: null, message: null });
    });

    it("delivers the subscriber's own sends (their other devices need them)", async () => {
      const group = await createGroup(alice, ['bob']);
      const events = await subscribed(bob, group);
      const sent = await send(bob, group.id, 'from my phone');
      expect(await eventOf(events)).toMatchObject({ kind: 'MESSAGE_SENT', seq: sent.seq, message: { sender: { id: 'bob' } } });
    });
  });

  describe('membership', () => {
    it('answers NOT_FOUND to a non-member and to a malformed or unknown id, and ends the subscription', async () => {
      const group = await createGroup(alice, ['bob']);
      const socket = socketOf(carol);
      for (const id of [group.id, 'not-an-id', conversationGlobalId('00000000-0000-4000-8000-000000000000')]) {
        const events = socket.subscribe(EVENTS, { id });
        // graphql-js answers a subscribe that fails before its stream exists without `data`.
        expect(await events.next()).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND' } }] });
        expect(events.received[0]!.data).toBeUndefined();
        expect(await events.ended).toEqual(GONE);
      }
    });

    it('ends with FORBIDDEN when the subscriber is removed (the membership notice)', async () => {
      const group = await createGroup(alice, ['bob', 'carol']);
      const events = await subscribed(bob, group);
      const others = await subscribed(carol, group);
      await takeThrough(events, (await send(alice, group.id, 'both live')).seq);
      await takeThrough(others, events.received.at(-1)!.data.conversationEvents.seq);
      await harness.database.db.execute(sql`delete from members where conv_id = ${group.uuid} and user_id = 'bob'`);
      await publishNow(createRunner(harness.database.client), [membershipNotice(group.uuid, 'bob')]);
      expect(await events.next()).toEqual({
        data: null,
        errors: [{ message: expect.any(String), locations: [{ line: 2, column: 3 }], path: ['conversationEvents'], extensions: { code: 'FORBIDDEN' } }],
      });
      expect(await events.ended).toEqual(GONE);
      // Carol's subscription is untouched by bob's removal.
      const sent = await send(alice, group.id, 'still here');
      expect(await eventOf(others)).toMatchObject({ kind: 'MESSAGE_SENT', seq: sent.seq });
    });

    it('ends with FORBIDDEN when the owner removes the subscriber, and when a subscriber leaves', async () => {
      const group = await createGroup(alice, ['bob', 'carol']);
      const bobs = await subscribed(bob, group);
      const carols = await subscribed(carol, group);
      const removed = await alice.gql('mutation ($id: ID!) { removeMember(input: { conversationId: $id, userId: "bob" }) { conversation { id } } }', { id: group.id });
      expect(removed.errors).toBeUndefined();
      // Events from before the removal (carol's subscribe poke) may still be queued ahead of the end.
      const endOf = async (events: LiveSubscription) => {
        let result = await events.next();
        while (result.data?.conversationEvents) result = await events.next();
        return result;
      };
      expect(await endOf(bobs)).toMatchObject({ data: null, errors: [{ extensions: { code: 'FORBIDDEN' } }] });
      expect(await bobs.ended).toEqual(GONE);
      const left = await carol.gql('mutation ($id: ID!) { leaveConversation(input: { conversationId: $id }) { conversationId } }', { id: group.id });
      expect(left.errors).toBeUndefined();
      expect(await endOf(carols)).toMatchObject({ data: null, errors: [{ extensions: { code: 'FORBIDDEN' } }] });
    });

    it('ends with FORBIDDEN at the next event when a removal sent no notice', async () => {
      const group = await createGroup(alice, ['bob']);
      const events = await subscribed(bob, group);
      await harness.database.db.execute(sql`delete from members where conv_id = ${group.uuid} and user_id = 'bob'`);
      await send(alice, group.id, 'bob must not see this');
      const result = await events.next();
      expect(result).toMatchObject({ data: null, errors: [{ extensions: { code: 'FORBIDDEN' } }] });
      expect(JSON.stringify(events.received)).not.toContain('bob must not see this');
      expect(await events.ended).toEqual(GONE);
    });
  });

  describe('authentication and protocol', () => {
    it('closes the socket with 4401 without a token, with an invalid one, and with one that is not a bearer token', async () => {
      const group = await createGroup(alice, ['bob']);
      for (const params of [undefined, { authorization: 'Bearer not.a.token' }, { Authorization: bob.token }]) {
        const events = socketOf(null, params).subscribe(EVENTS, { id: group.id });
        expect(await events.ended).toMatchObject({ kind: 'closed', code: 4401 });
        expect(events.received).toEqual([]);
      }
    });

    it('closes the socket with 4401 when its token expires', async () => {
      const group = await createGroup(alice, ['bob']);
      const token = await signToken(TEST_SECRET, 'bob', 2);
      const events = socketOf(null, { authorization: `Bearer ${token}` }).subscribe(EVENTS, { id: group.id });
      await untilLive(events, async () => (await send(alice, group.id, 'poke')).seq);
      expect(await events.ended).toEqual({ kind: 'closed', code: 4401, reason: 'The token has expired.' });
    });

    it('accepts the token under `Authorization` as well', async () => {
      const group = await createGroup(alice, ['bob']);
      const events = socketOf(null, { Authorization: `Bearer ${bob.token}` }).subscribe(EVENTS, { id: group.id });
      await untilLive(events, async () => (await send(alice, group.id, 'poke')).seq);
    });

    it('refuses queries and mutations with BAD_REQUEST: they go over HTTP', async () => {
      const events = socketOf(bob).subscribe('{ viewer { id } }');
      expect(await events.ended).toMatchObject({ kind: 'errors', errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
      expect(events.received).toEqual([]);
    });

    it('answers a subscription sent over HTTP with 400 GRAPHQL_VALIDATION_FAILED', async () => {
      const group = await createGroup(alice, ['bob']);
      const response = await bob.gql(EVENTS, { id: group.id });
      expect({ status: response.status, codes: codes(response) }).toEqual({ status: 400, codes: ['GRAPHQL_VALIDATION_FAILED'] });
    });

    it('refuses an invalid subscription with GRAPHQL_VALIDATION_FAILED', async () => {
      const events = socketOf(bob).subscribe('subscription { conversationEvents(conversationId: "x") { nope } }');
      expect(await events.ended).toMatchObject({ kind: 'errors', errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] });
    });
  });

  // PostgreSQL only (a LISTEN connection of its own that can drop); not registered on PGlite.
  describeOnPostgres('missed events', () => {
    itOnPostgres('closes sockets with 1012 when the LISTEN connection was lost, so clients reconnect and fill the gap', async () => {
      const group = await createGroup(alice, ['bob']);
      const events = await subscribed(bob, group);
      const [terminated] = rowsOf<{ n: number }>(
        await harness.database.db.execute(sql`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
          where datname = current_database() and query ilike ${`listen "${EVENTS_CHANNEL}"`}`),
      );
      expect(terminated).toEqual({ n: 1 });
      expect(await events.ended).toMatchObject({ kind: 'closed', code: 1012 });
      // Listening again: a new subscription receives events.
      await subscribed(bob, group);
    });
  });

  describe('the NOTIFY payload', () => {
    it('names ids only, never the text', async () => {
      const group = await createGroup(alice, ['bob']);
      const payloads: string[] = [];
      const client = harness.database.client;
      const stop =
        client.kind === 'pglite'
          ? await client.pglite.listen(EVENTS_CHANNEL, (p) => payloads.push(p))
          : (await client.sql.listen(EVENTS_CHANNEL, (p) => payloads.push(p))).unlisten;
      try {
        const sent = await send(alice, group.id, 'a secret only members may read');
        await alice.gql(MARK_READ, { conversationId: group.id, seq: sent.seq });
        await vi.waitFor(
          () =>
            // Each payload is an envelope: the WAL position it was announced at (`p`), and its notices (`e`); probes have neither.
            expect(payloads.flatMap((p) => JSON.parse(p).e ?? []).filter((n: { c?: string }) => n.c === group.uuid)).toEqual([
              { c: group.uuid, k: 'sent', s: sent.seq, t: sent.seq, u: null, h: null },
              { c: group.uuid, k: 'read', s: sent.seq, t: sent.seq, u: 'alice', h: null },
            ]),
          { timeout: 5000 },
        );
        expect(payloads.join('\n')).not.toContain('secret');
        for (const payload of payloads.map((p) => JSON.parse(p)).filter((p) => p.e !== undefined)) expect(payload.p).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      } finally {
        await stop();
      }
    });
  });
});
