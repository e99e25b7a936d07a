/**
 * The "Done means" walk: alice pages through a 1,000-message
 * conversation to one end while another client keeps writing to it, and
 * every message that existed at the start and stayed visible to her shows up
 * exactly once, in order.
 *
 * The writer runs concurrently with the walk (its requests overlap the
 * walker's), but the two are kept at a steady ratio by counting each other's
 * progress, never by sleeping: without that, a walk of ten pages of 100 could
 * end before the writer did anything, and the writer could out-send a forward
 * walk. Causality is judged on a logical clock: a hide or revoke whose
 * response arrived before a page request was sent must show on that page,
 * one still in flight may show either way, and a page may leave a message
 * out only if alice had asked to hide it before that page was answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/history/cursor.ts';
import { messageGlobalId } from '../../src/history/globalId.ts';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { createGroup, DELETE_FOR_ME, type Edge, MESSAGES_WITH_GAPS, REVOKE, SEND } from '../helpers/operations.ts';

const SEEDED = 1000;
/** A walk that needs more pages than this is not ending: fail instead of looping. */
const MAX_PAGES = 3000;

type Direction = 'backward' | 'forward';

/** One walk: its direction, its page size, and (forward only) the seq it resumes after instead of starting at `first: N`. */
interface WalkPlan {
  label: string;
  direction: Direction;
  size: number;
  resumeAfter: number | null;
}

interface PageInfo {
  hasPreviousPage: boolean;
  hasNextPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

interface Connection {
  edges: (Edge & { node: Edge['node'] & { content: { revokedBy?: { id: string } } } })[];
  pageInfo: PageInfo;
  startSeq: number | null;
  endSeq: number | null;
  gaps: { from: number; to: number }[];
  latestSeq: number;
}

/** One page of the walk, with the logical times its request was sent and answered. */
interface WalkedPage {
  sentAt: number;
  answeredAt: number;
  connection: Connection;
}

/** A count another loop can wait on; `stop` releases every waiter for good. */
class Progress {
  value = 0;
  private stopped = false;
  private waiters: { target: number; resolve(): void }[] = [];

  advance(): void {
    this.value += 1;
    this.release();
  }

  stop(): void {
    this.stopped = true;
    this.release();
  }

  /** Resolves once the count reaches `target` or the progress is stopped. */
  until(target: number): Promise<void> {
    if (this.stopped || this.value >= target) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ target, resolve }));
  }

  private release(): void {
    const ready = this.waiters.filter((w) => this.stopped || this.value >= w.target);
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }
}

/** A small seeded PRNG (mulberry32), so the writer's choices repeat from run to run. */
function randomSource(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

/**
 * Writer operations per walker page, per page size: enough that a short walk
 * still sees every kind of write between its pages, few enough that the
 * 1,000-request walks stay quick.
 */
const OPS_PER_PAGE: Record<number, number> = { 1: 1 / 3, 7: 1, 100: 4 };

/** What the writer did, as the checks need it. */
interface WriterLog {
  /** Seqs alice asked to hide, with the logical time the first request went out. */
  hideRequested: Map<number, number>;
  /** Logical time the first hide of each seq was acknowledged. */
  hiddenAt: Map<number, number>;
  /** Seqs someone asked to revoke, with who asked first. */
  revokeRequested: Map<number, string>;
  /** Logical time each revoke was acknowledged. */
  revokedAt: Map<number, number>;
  /** bob's new messages by seq: their text and when the send was acknowledged. */
  sent: Map<number, { text: string; at: number }>;
  counts: { sends: number; hides: number; revokes: number };
}

describe.each(backends)('Walks a 1,000-message conversation while another client writes to it (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
  });
  afterAll(() => harness.close());

  /** Walks one fresh conversation to its far end; returns the pages and the writer's log. */
  async function walkWhileWriting({ direction, size, resumeAfter }: WalkPlan) {
    // Each walk gets its own conversation: hides from an earlier walk would blur "existed at the start".
    const conv = await createGroup(alice, ['bob'], `walk ${direction} ${size}`);
    await seedMessages(harness, conv.uuid, 'alice', SEEDED);

    let clock = 0;
    const now = () => ++clock;
    const random = randomSource(size * 2 + (direction === 'forward' ? 1 : 0));
    const opsPerPage = OPS_PER_PAGE[size]!;
    const pagesStarted = new Progress();
    const opsDone = new Progress();
    let walking = true;
    /** The seq the walker's next cursor points at: the writer aims just ahead of it. */
    let frontier = direction === 'backward' ? SEEDED : (resumeAfter ?? 0) + 1;
    let knownMaxSeq = SEEDED;
    /** bob's first new message is never hidden, so a forward walk must meet at least one new message. */
    let sentinelSeq: number | null = null;
    const log: WriterLog = {
      hideRequested: new Map(),
      hiddenAt: new Map(),
      revokeRequested: new Map(),
      revokedAt: new Map(),
      sent: new Map(),
      counts: { sends: 0, hides: 0, revokes: 0 },
    };
    const bobUnrevoked: number[] = [];

    const idOf = (seq: number) => messageGlobalId(conv.uuid, seq);
    const clampSeq = (seq: number) => Math.min(Math.max(seq, 1), knownMaxSeq);
    /** A seq at the walker's cursor or within the next three pages ahead of it. */
    const nearFrontier = () => {
      const ahead = random(3 * size + 1);
      return clampSeq(direction === 'backward' ? frontier - ahead : frontier + ahead);
    };
    const anywhere = () => 1 + random(knownMaxSeq);

    const expectOk = (what: string, response: { errors?: unknown[] }) => {
      if (response.errors) throw new Error(`${what} failed: ${JSON.stringify(response.errors)}`);
    };

    const sendAsBob = async () => {
      const text = `bob's message ${log.counts.sends + 1} during the ${direction} walk`;
      const response = await bob.gql(SEND, { conversationId: conv.id, clientMsgId: `walk-${log.counts.sends + 1}`, text });
      expectOk('sendMessage', response);
      const seq = response.data.sendMessage.message.seq as number;
      log.sent.set(seq, { text, at: now() });
      log.counts.sends += 1;
      knownMaxSeq = Math.max(knownMaxSeq, seq);
      sentinelSeq ??= seq;
      bobUnrevoked.push(seq);
    };

    const hideAsAlice = async (pick: () => number) => {
      const seqs = [...new Set(Array.from({ length: 1 + random(3) }, pick))].filter((s) => s !== sentinelSeq);
      if (seqs.length === 0) return;
      const requestedAt = now();
      for (const seq of seqs) if (!log.hideRequested.has(seq)) log.hideRequested.set(seq, requestedAt);
      expectOk('deleteMessagesForMe', await alice.gql(DELETE_FOR_ME, { messageIds: seqs.map(idOf) }));
      const at = now();
      for (const seq of seqs) if (!log.hiddenAt.has(seq)) log.hiddenAt.set(seq, at);
      log.counts.hides += 1;
    };

    const revoke = async (client: Client, seq: number) => {
      if (!log.revokeRequested.has(seq)) log.revokeRequested.set(seq, client.userId);
      const response = await client.gql(REVOKE, { messageId: idOf(seq) });
      expectOk('revokeMessage', response);
      if (response.data.revokeMessage.message.content.__typename !== 'RevokedContent') {
        throw new Error(`revokeMessage of seq ${seq} answered ${JSON.stringify(response.data)}`);
      }
      if (!log.revokedAt.has(seq)) log.revokedAt.set(seq, now());
      log.counts.revokes += 1;
    };

    /** alice owns the group, so she may revoke any message she can still read. */
    const revokeAsOwner = async (pick: () => number) => {
      for (let attempt = 0; attempt < 10; attempt++) {
        const seq = pick();
        if (!log.hideRequested.has(seq)) return revoke(alice, seq);
      }
    };

    /** bob may revoke only his own messages, within the window. */
    const revokeAsSender = async () => {
      const seq = bobUnrevoked.pop();
      if (seq === undefined) return revokeAsOwner(anywhere);
      return revoke(bob, seq);
    };

    const actions = [
      sendAsBob,
      () => hideAsAlice(nearFrontier),
      () => revokeAsOwner(nearFrontier),
      sendAsBob,
      () => hideAsAlice(anywhere),
      revokeAsSender,
    ];

    const writer = (async () => {
      for (let op = 0; ; op++) {
        await pagesStarted.until(Math.floor(op / opsPerPage));
        if (!walking) return;
        await actions[op % actions.length]!();
        opsDone.advance();
      }
    })();
    // If the writer fails, the walker must not wait for it forever.
    writer.catch(() => opsDone.stop());

    const pages: WalkedPage[] = [];
    try {
      let cursor: string | null = resumeAfter === null ? null : encodeCursor(conv.uuid, resumeAfter);
      for (;;) {
        // Keeps the writer from falling behind: one operation of slack.
        await opsDone.until(Math.floor(pages.length * opsPerPage) - 1);
        const variables = direction === 'backward' ? { last: size, before: cursor } : { first: size, after: cursor };
        const sentAt = now();
        pagesStarted.advance();
        const response = await alice.gql(MESSAGES_WITH_GAPS, { id: conv.id, ...variables });
        expectOk(`page ${pages.length} (${JSON.stringify(variables)})`, response);
        const answeredAt = now();
        const connection = response.data.conversation.messages as Connection;
        pages.push({ sentAt, answeredAt, connection });
        const more = direction === 'backward' ? connection.pageInfo.hasPreviousPage : connection.pageInfo.hasNextPage;
        if (!more) break;
        if (pages.length >= MAX_PAGES) throw new Error(`the walk did not end after ${MAX_PAGES} pages`);
        cursor = direction === 'backward' ? connection.pageInfo.startCursor : connection.pageInfo.endCursor;
        if (cursor === null) throw new Error(`page ${pages.length - 1} says there is more but has no cursor`);
        frontier = (direction === 'backward' ? connection.edges[0]?.node.seq : connection.edges.at(-1)?.node.seq) ?? frontier;
      }
    } finally {
      walking = false;
      pagesStarted.stop();
      await writer.catch(() => {});
    }
    await writer;
    return { pages, log, sentinelSeq };
  }

  /** Everything that must hold for one walk; returns the broken rules as sentences (none expected). */
  function violationsOf({ direction, size, resumeAfter }: WalkPlan, pages: WalkedPage[], log: WriterLog, sentinelSeq: number | null) {
    const problems: string[] = [];
    const chronological = direction === 'backward' ? [...pages].reverse() : pages;
    const walked = chronological.flatMap((p) => p.connection.edges.map((e) => e.node.seq));
    const seen = new Set(walked);

    // In order, and no seq twice.
    if (seen.size !== walked.length) {
      const twice = walked.filter((s, i) => walked.indexOf(s) !== i);
      problems.push(`seqs appeared more than once: ${twice.slice(0, 10).join(', ')}`);
    }
    walked.forEach((seq, i) => {
      if (i > 0 && seq <= walked[i - 1]!) problems.push(`seq ${seq} follows seq ${walked[i - 1]} in walk order`);
    });

    // Each page on its own: full while there is more, flags exact, seqs summarised right.
    // What lies behind each page's cursor: what the walk returned so far, and what it resumed after.
    const returnedSoFar: number[] = Array.from({ length: resumeAfter ?? 0 }, (_, i) => i + 1);
    pages.forEach(({ sentAt, connection }, index) => {
      const seqs = connection.edges.map((e) => e.node.seq);
      const { pageInfo } = connection;
      const more = direction === 'backward' ? pageInfo.hasPreviousPage : pageInfo.hasNextPage;
      const back = direction === 'backward' ? pageInfo.hasNextPage : pageInfo.hasPreviousPage;
      if (more && seqs.length !== size) problems.push(`page ${index} has ${seqs.length} edges but says there is more`);
      if (seqs.length > 0 && connection.latestSeq < seqs.at(-1)!) {
        problems.push(`page ${index} has latestSeq ${connection.latestSeq} below its seq ${seqs.at(-1)}`);
      }
      // A message returned earlier in the walk and never hidden lies behind the cursor.
      const stillBehind = returnedSoFar.some((s) => !log.hideRequested.has(s));
      if (index === 0 && resumeAfter === null && back) problems.push('the first page says there is something behind where the walk starts');
      if (index > 0 && stillBehind && !back) problems.push(`page ${index} says nothing lies behind its cursor`);
      returnedSoFar.push(...seqs);

      for (const { node } of connection.edges) {
        const { seq, content } = node;
        const hiddenAt = log.hiddenAt.get(seq);
        if (hiddenAt !== undefined && hiddenAt < sentAt) problems.push(`seq ${seq} was on page ${index} after its hide was acknowledged`);
        const revokedAt = log.revokedAt.get(seq);
        const newMessage = log.sent.get(seq);
        if (seq > SEEDED && newMessage === undefined) problems.push(`seq ${seq} is neither seeded nor sent by bob`);
        const expected = newMessage ? { sender: 'bob', text: newMessage.text } : { sender: 'alice', text: `message ${seq}` };
        if (node.sender.id !== expected.sender) problems.push(`seq ${seq} has sender ${node.sender.id}`);
        if (content.__typename === 'TextContent') {
          if (revokedAt !== undefined && revokedAt < sentAt) problems.push(`seq ${seq} showed its text on page ${index} after its revoke was acknowledged`);
          if (content.text !== expected.text) problems.push(`seq ${seq} has text ${JSON.stringify(content.text)}`);
        } else if (content.__typename === 'RevokedContent') {
          const revoker = log.revokeRequested.get(seq);
          if (revoker === undefined) problems.push(`seq ${seq} shows as revoked but nobody revoked it`);
          else if (content.revokedBy?.id !== revoker) problems.push(`seq ${seq} revoked by ${content.revokedBy?.id}, not ${revoker}`);
        } else {
          problems.push(`seq ${seq} has content ${JSON.stringify(content)}`);
        }
      }
    });

    // Nothing is skipped unless alice asked to hide it before the page that skipped it was answered.
    // A page skips the seqs between its cursor and its far edge that it did not return, and the
    // last page also everything beyond it (backward: down to 1; forward: up to its latestSeq).
    // That span is what the page must report as startSeq..endSeq, with the skipped seqs as its
    // gaps: the spans of the walk's pages then tile the history with nothing between them.
    let cursorSeq: number | null = resumeAfter;
    pages.forEach(({ answeredAt, connection }, index) => {
      const edgeSeqs = connection.edges.map((e) => e.node.seq);
      const seqs = new Set(edgeSeqs);
      const last = index === pages.length - 1;
      const [low, high] =
        direction === 'backward'
          ? [last ? 1 : (edgeSeqs[0] ?? 1), Math.min((cursorSeq ?? connection.latestSeq + 1) - 1, connection.latestSeq)]
          : [(cursorSeq ?? 0) + 1, last ? connection.latestSeq : (edgeSeqs.at(-1) ?? connection.latestSeq)];
      const skipped: number[] = [];
      for (let seq = low; seq <= high; seq++) {
        if (seqs.has(seq)) continue;
        skipped.push(seq);
        const asked = log.hideRequested.get(seq);
        if (asked === undefined || asked > answeredAt) problems.push(`page ${index} skipped seq ${seq}, which alice had not asked to hide`);
      }
      const expectedSpan = low <= high ? [low, high] : [null, null];
      if (connection.startSeq !== expectedSpan[0] || connection.endSeq !== expectedSpan[1]) {
        problems.push(`page ${index} reports the span ${connection.startSeq}..${connection.endSeq}, not ${expectedSpan[0]}..${expectedSpan[1]}`);
      }
      const gapSeqs = connection.gaps.flatMap((g) => Array.from({ length: g.to - g.from + 1 }, (_, k) => g.from + k));
      if (JSON.stringify(gapSeqs) !== JSON.stringify(skipped)) {
        problems.push(`page ${index} reports gaps ${JSON.stringify(connection.gaps)} but skipped ${skipped.join(', ')}`);
      }
      cursorSeq = (direction === 'backward' ? edgeSeqs[0] : edgeSeqs.at(-1)) ?? cursorSeq;
    });

    // Every message that existed at the start (and, walking forward, every new one sent before the
    // last page was asked for) and was never hidden appears; revoked ones included.
    const lastPage = pages.at(-1)!;
    const firstPage = pages[0]!;
    const sentBefore = direction === 'forward' ? lastPage.sentAt : firstPage.sentAt;
    const from = resumeAfter ?? 0;
    const mustAppear = [
      ...Array.from({ length: SEEDED - from }, (_, i) => from + i + 1),
      ...[...log.sent].filter(([, s]) => s.at < sentBefore).map(([seq]) => seq),
    ].filter((seq) => !log.hideRequested.has(seq));
    const missing = mustAppear.filter((seq) => !seen.has(seq));
    if (missing.length > 0) problems.push(`visible messages never appeared: ${missing.slice(0, 20).join(', ')}`);
    const revokedMissing = [...log.revokeRequested.keys()].filter(
      (seq) => !log.hideRequested.has(seq) && mustAppear.includes(seq) && !seen.has(seq),
    );
    if (revokedMissing.length > 0) problems.push(`revoked messages disappeared: ${revokedMissing.join(', ')}`);

    const beforeStart = walked.filter((seq) => seq <= from);
    if (beforeStart.length > 0) problems.push(`the walk returned seqs at or before the cursor it resumed after: ${beforeStart.join(', ')}`);
    if (direction === 'backward') {
      const beyond = walked.filter((seq) => seq > firstPage.connection.latestSeq);
      if (beyond.length > 0) problems.push(`the backward walk returned seqs newer than its start: ${beyond.join(', ')}`);
    } else if (sentinelSeq === null || !seen.has(sentinelSeq)) {
      problems.push(`the forward walk did not reach bob's first new message (seq ${sentinelSeq})`);
    }
    return problems;
  }

  // Pages of 1 cost one request per message (~15 ms each on PGlite, writer included): the walk backward
  // covers the whole history, the walk forward resumes after seq 750 (a client continuing from a saved
  // cursor) so the file stays well under a minute; pages of 7 and 100 cover the whole history both ways.
  // The time limit is only a safety net.
  const plans: WalkPlan[] = [
    { label: 'backward from the newest message in pages of 1', direction: 'backward', size: 1, resumeAfter: null },
    { label: 'forward from seq 750 in pages of 1', direction: 'forward', size: 1, resumeAfter: 750 },
    { label: 'backward from the newest message in pages of 7', direction: 'backward', size: 7, resumeAfter: null },
    { label: 'forward from the oldest message in pages of 7', direction: 'forward', size: 7, resumeAfter: null },
    { label: 'backward from the newest message in pages of 100', direction: 'backward', size: 100, resumeAfter: null },
    { label: 'forward from the oldest message in pages of 100', direction: 'forward', size: 100, resumeAfter: null },
  ];
  for (const plan of plans) {
    it(`walks ${plan.label} and sees every message that stayed visible exactly once, in order`, { timeout: 120_000 }, async () => {
      const { pages, log, sentinelSeq } = await walkWhileWriting(plan);
      expect(violationsOf(plan, pages, log, sentinelSeq)).toEqual([]);
      // The writer really wrote during the walk: every kind of write happened.
      expect(log.counts.sends).toBeGreaterThan(0);
      expect(log.counts.hides).toBeGreaterThan(0);
      expect(log.counts.revokes).toBeGreaterThan(0);
    });
  }
});
