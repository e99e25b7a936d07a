/**
 * Proof that the Citus layout routes (issue 19): integration files run
 * unchanged on conversation-scoped tables hash-partitioned by conversation
 * id (test/helpers/partitionedLayout.ts), and every statement the server
 * sent is explained with its values (test/helpers/routing.ts), once for
 * each number of conversations it was given. A statement on one
 * conversation must touch one shard (one partition number across the
 * colocated tables); a loader batch keyed by (conversation, seq) only the
 * shards of the conversations in that batch; the statements that read many
 * conversations by design are listed here with the reason. All are printed
 * with their fan-out.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distributedTables, PARTITIONS } from '../helpers/partitionedLayout.ts';
import type { RoutedStatement } from '../helpers/routing.ts';

/**
 * The integration files run on the layout: between them they send every
 * statement on one conversation (pages, jumps, sends, retries, revokes,
 * hides, clears, the change feed, edits, replies, reactions, pins, stars,
 * mentions, receipts, members, archived bodies, live events) and the
 * multi-conversation ones (inbox, search, purge, erasure, lists by user,
 * sends to several conversations stored together).
 * Left out: files that assert on plans, whose relations are partitions
 * here (membership, receipts, hiddenPages, threadPageCost, searchFilters),
 * purge.test.ts, which took 4 minutes on this layout (the purge's
 * statements run in lifecycle and archiveReadPaths), and files whose
 * statements these already send (retriedSends: sends; hideRanges: views).
 */
const FILES = [
  'pages',
  'around',
  'sends',
  // Sends to several conversations stored as one statement (storeAcross).
  'sendCoalescer',
  'views',
  'conversations',
  'edits',
  'threads',
  'reactions',
  'pins',
  'stars',
  'mentions',
  'firstUnread',
  'inbox',
  'search',
  'lifecycle',
  'archiveReadPaths',
  'subscriptions',
  'announcements',
  // Every field once, the member list among them (membership.test.ts asserts on plans, which name partitions here).
  'authorizationMatrix',
  // Every keyed batch with keys of one conversation and of four at once.
  'keyedBatches',
].map((name) => `test/integration/${name}.test.ts`);

/**
 * Statements that read or write many conversations by design, by the
 * function that sends them: on Citus each is a multi-shard statement, run on
 * every shard (or those of the conversations it names) and merged.
 */
const MULTI_CONVERSATION: Record<string, string> = {
  'store/inbox.ts scanInbox': "the viewer's conversations, found by user (members_user_idx)",
  'store/inbox.ts countUnread': "unread counts of an inbox page's conversations, one batch",
  'store/inbox.ts countUnreadMentions': "unread mention counts of an inbox page's conversations, one batch",
  'store/inbox.ts findFirstUnreads': "first unread message of an inbox page's conversations, one batch",
  'store/inbox.ts findLastMessages': "last message of an inbox page's conversations, one batch",
  'store/conversations.ts findMemberConversations': "the conversation loader: a request's conversation ids, one batch",
  'search/postgresSearch.ts searchAllConversations': "search across the viewer's conversations (within one is searchOneConversation, held to one shard)",
  'store/mentions.ts scanMentions': "the viewer's mentions in every conversation, found by user",
  'store/stars.ts scanStarred': "the viewer's starred messages in every conversation, found by user",
  'store/liveHeads.ts readLiveHeads': 'the heads of every conversation a socket follows',
  'store/purge.ts scanChunk': "the retention purge's scan of every conversation",
  'archive/archiver.ts archiveBodies': "the archiver's scan of every conversation",
  'archive/emptySegments.ts dropEmptySegments': 'segments of a batch of conversations',
  'archive/rewrite.ts reconcileSegmentsIn': "the segments overlapping an erasure, in every conversation it erased from",
  'store/lifecycle.ts eraseUser': "erasure: a user's messages and reactions in every conversation",
  'store/lifecycle.ts purgeMessages': 'purge of listed messages, in any conversations',
  'store/hides.ts hideMessages': 'deleteMessagesForMe of listed messages, in any conversations',
  'store/sends.ts storeAcross':
    "a process's overlapping sends to several conversations, stored together (store/sendCoalescer.ts); each sender's membership is probed by its key, so the plan names every member shard. On Citus, a batch would be split by shard",
  'store/changes.ts recordChanges': 'change-feed entries of what one mutation did, in any conversations (hides, purges, erasure)',
};

/**
 * Loader batches keyed by (conversation, seq) arrays: a batch may span
 * conversations (a star list's or an inbox page's messages), so it may
 * touch several shards, but only those of the conversations it was given:
 * each binds its distinct conversation ids as `conv_id = any($ids)` on every
 * table it reads (a join to the unnested keys prunes nothing), so a batch
 * of one conversation routes to its shard and a batch of k to at most k
 * (on Citus, a router query or a multi-shard one on those shards alone).
 */
const KEYED_BATCHES: Record<string, string> = {
  'store/messages.ts findVisibleMessages': 'messages by key (message, node, replies, pins and stars targets)',
  'store/messages.ts findMessageBodies': 'the body loader (archived and erased bodies, single messages)',
  'store/reactions.ts findReactionGroups': "a page's reactions",
  'store/reactions.ts findReactors': "a page's reactors",
  'store/edits.ts findEdits': "a page's earlier versions",
  'store/threads.ts countThreads': "a page's reply counts",
  'store/inbox.ts countReaders': "a page's read receipts",
  'store/mentions.ts findMentions': "a page's mentions",
  'store/stars.ts findStarredByMe': "a page's stars of the viewer",
};

/**
 * Statements on one conversation that also write the inbox rows of its
 * members (`user_inbox`, distributed by user): one conversation shard, and
 * the shards of up to 50 members' users. On Citus the inbox step would be a
 * second statement in the same transaction (a multi-shard write), or a
 * fan-out queued after commit; the test checks they stay on one
 * conversation shard.
 */
const ONE_CONVERSATION_MANY_USERS: Record<string, string> = {
  'store/sends.ts sendMessage': "a send to a group of up to 50 members moves their inbox rows (store/inboxIndex.ts)",
  'store/sends.ts storeInOne': 'the same, for the sends to one conversation stored together (store/sendCoalescer.ts)',
  'store/conversations.ts createGroup': "a new group's members get their inbox rows",
  'store/members.ts addMembers': 'new members get their inbox rows',
  'store/inboxIndex.ts markLargeIfGrownPast': "a group grown past 50 members: its members' inbox rows read from the conversation from then on",
};

/** Colocation groups and their tables. */
const groups = {
  conversation: new Set(distributedTables.filter((t) => t.group === 'conversation').map((t) => t.table)),
  user: new Set(distributedTables.filter((t) => t.group === 'user').map((t) => t.table)),
};

/** The partition numbers of a group's tables that a statement's plan reads: its shards. */
function shardsRead(statement: RoutedStatement, group: keyof typeof groups): number[] {
  const shards = new Set(Object.entries(statement.reads).flatMap(([table, partitions]) => (groups[group].has(table) ? partitions : [])));
  return [...shards].sort((a, b) => a - b);
}

/** How many shards of a group a statement touches: read by its plan, or written by any one execution. */
function fanOut(statement: RoutedStatement, group: keyof typeof groups): number {
  return Math.max(shardsRead(statement, group).length, statement.mostWritten[group]);
}

/** The shards of the conversation group a statement's plan reads beyond those of the conversations it was given. */
function outsideBound(statement: RoutedStatement): number[] {
  return shardsRead(statement, 'conversation').filter((shard) => !statement.boundShards.includes(shard));
}

/** Each number of conversations the executions of one batch were given, with the most shards one of them read: `1→1 3→2 50→8`. */
function batchSizes(executions: RoutedStatement[]): string {
  const most = new Map<number, number>();
  for (const e of executions) most.set(e.conversationsBound, Math.max(most.get(e.conversationsBound) ?? 0, shardsRead(e, 'conversation').length));
  return [...most].sort(([a], [b]) => a - b).map(([given, read]) => `${given}→${read}`).join(' ');
}

/** The statement's text on one line, shortened. */
function shape(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 90 ? `${line.slice(0, 87)}...` : line;
}

/** Runs vitest on `files` with `env`; answers its exit code. */
function runVitest(files: string[], env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...files], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

describe.skipIf(!process.env.DATABASE_URL)('Routing on the Citus layout (conversation tables in hash partitions)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'backscroll-routing-'));
  let exitCode: number;
  /** Every execution explained: each statement text once per number of conversations it was given, per file. */
  const explained: RoutedStatement[] = [];
  /** Every distinct statement sent, the worst case where it was explained with other values. */
  const statements = new Map<string, RoutedStatement>();

  beforeAll(async () => {
    exitCode = await runVitest(FILES, { BACKSCROLL_TEST_LAYOUT: 'partitioned', BACKSCROLL_ROUTING_REPORT: folder });
    for (const file of readdirSync(folder)) {
      for (const statement of JSON.parse(readFileSync(join(folder, file), 'utf8')) as RoutedStatement[]) {
        explained.push(statement);
        const seen = statements.get(statement.text);
        if (seen === undefined || fanOut(statement, 'conversation') > fanOut(seen, 'conversation')) statements.set(statement.text, statement);
      }
    }
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('runs the integration files on the layout and records what they sent', () => {
    expect(exitCode).toBe(0);
    expect(readdirSync(folder).length).toBeGreaterThanOrEqual(FILES.length);
    expect(statements.size).toBeGreaterThan(0);
  });

  it('explains every statement sent', () => {
    const unexplained = [...statements.values()].filter((s) => s.error !== undefined).map((s) => `${s.caller}: ${s.error} in ${shape(s.text)}`);
    expect(unexplained).toEqual([]);
  });

  it('routes every statement on one conversation (or one user) to one shard', () => {
    const fannedOut = [...statements.values()]
      .filter((s) => !(s.caller in MULTI_CONVERSATION) && !(s.caller in KEYED_BATCHES))
      .filter((s) => fanOut(s, 'conversation') > 1 || (fanOut(s, 'user') > 1 && !(s.caller in ONE_CONVERSATION_MANY_USERS)))
      .map((s) => ({ caller: s.caller, reads: s.reads, writes: s.writes, statement: shape(s.text), values: s.values, file: s.testFile }));
    expect(fannedOut).toEqual([]);
  });

  it('routes every keyed batch to the shards of the conversations it was given, and no other', () => {
    // Read within the bound shards, so never more shards than conversations;
    // the batches write nothing, and a write would be held to the count.
    const strayed = explained
      .filter((s) => s.caller in KEYED_BATCHES)
      .filter((s) => outsideBound(s).length > 0 || fanOut(s, 'user') > 0 || s.mostWritten.conversation > s.conversationsBound)
      .map((s) => ({
        caller: s.caller,
        read: shardsRead(s, 'conversation'),
        given: s.boundShards,
        conversations: s.conversationsBound,
        reads: s.reads,
        statement: shape(s.text),
        values: s.values,
        file: s.testFile,
      }));
    expect(strayed).toEqual([]);
  });

  it('lists every statement with the shards it touched', () => {
    const rows = [...statements.values()]
      .sort((a, b) => a.caller.localeCompare(b.caller) || a.text.localeCompare(b.text))
      .map((s) => {
        const read = shardsRead(s, 'conversation').length;
        const user = shardsRead(s, 'user').length;
        const mark = s.caller in MULTI_CONVERSATION ? '*' : s.caller in KEYED_BATCHES ? 'b' : s.caller in ONE_CONVERSATION_MANY_USERS ? 'u' : ' ';
        const given = s.caller in KEYED_BATCHES ? ` given→read ${batchSizes(explained.filter((e) => e.text === s.text))}` : '';
        return `${mark} ${s.caller.padEnd(44)} read ${read}/${PARTITIONS} wrote ${s.mostWritten.conversation}${user > 0 || s.mostWritten.user > 0 ? ` user ${user}/${s.mostWritten.user}` : ''}${given}  ${shape(s.text)}`;
      });
    console.log(`Shards each statement touched, of ${PARTITIONS} (* many conversations by design, b keyed batch of the conversations given, u one conversation and its members' inbox rows):\n${rows.join('\n')}`);
    // An entry whose statement is gone (or no longer sent by these files) is dropped from the lists, not kept.
    const unused = [...Object.keys(MULTI_CONVERSATION), ...Object.keys(KEYED_BATCHES), ...Object.keys(ONE_CONVERSATION_MANY_USERS)].filter((caller) => ![...statements.values()].some((s) => s.caller === caller));
    expect(unused).toEqual([]);
  });
});
