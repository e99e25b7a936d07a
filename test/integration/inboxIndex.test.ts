/**
 * The inbox index (`user_inbox`, src/store/inboxIndex.ts) is a faster way to
 * the same page: the inbox it serves must be exactly the one the old
 * statement answered (every membership, by the conversation's last
 * activity, then id, newest first) after any mix of joins, leaves,
 * removals, sends, clears, read marks and hides, in groups that stay small
 * and groups that grow past `LARGE_GROUP_MEMBERS`. Also: a send to a large
 * group writes no inbox row, a page reads its own entries however many
 * conversations the viewer is in, and migration 0016 builds the index from
 * the data it finds.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import type { InboxPosition } from '../../src/history/inboxCursor.ts';
import { LARGE_GROUP_MEMBERS } from '../../src/history/inboxFanout.ts';
import { KEEP_EVERYTHING } from '../../src/history/retention.ts';
import { clearHistory, createGroup, markRead, openDirect } from '../../src/store/conversations.ts';
import { hideMessages } from '../../src/store/hides.ts';
import { scanInbox } from '../../src/store/inbox.ts';
import { reindexInbox } from '../../src/store/inboxIndex.ts';
import { addMembers, leaveConversation, removeMember } from '../../src/store/members.ts';
import { UNPUBLISHED } from '../../src/store/notify.ts';
import { sendMessage } from '../../src/store/sends.ts';
import { backends, openTestDatabase } from '../helpers/database.ts';
import { buffersTouched, explainPrepared, explainRecorded, type PlanMode, recordStatements, rowsRead } from '../helpers/preparedPlans.ts';

const MIGRATION = readFileSync(new URL('../../drizzle/0016_inbox_index_data.sql', import.meta.url), 'utf8');

/** One inbox entry as both ways of reading it answer: the conversation and its activity in microseconds. */
interface Entry {
  convId: string;
  activityMicros: number;
}

const clock = () => ({ server: KEEP_EVERYTHING, now: new Date() });
const nothing = async () => {};

/** What the model test does, by index into its users and the conversations made so far. */
type Command =
  | { kind: 'group'; owner: number; members: number[] }
  | { kind: 'direct'; a: number; b: number }
  | { kind: 'send'; user: number; conv: number }
  | { kind: 'add'; conv: number; users: number[] }
  | { kind: 'crowd'; conv: number }
  | { kind: 'remove'; conv: number; user: number }
  | { kind: 'leave'; conv: number; user: number }
  | { kind: 'clear'; conv: number; user: number }
  | { kind: 'read'; conv: number; user: number }
  | { kind: 'hide'; conv: number; user: number };

const USERS = 4;
const user = fc.nat({ max: USERS - 1 });
const conv = fc.nat({ max: 20 });
const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('group' as const), owner: user, members: fc.array(user, { maxLength: 3 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('direct' as const), a: user, b: user }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('send' as const), user, conv }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('add' as const), conv, users: fc.array(user, { minLength: 1, maxLength: 2 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('crowd' as const), conv }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), conv, user }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('leave' as const), conv, user }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('clear' as const), conv, user }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('read' as const), conv, user }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('hide' as const), conv, user }), weight: 1 },
);

describe.each(backends)('The inbox index (%s)', (backend) => {
  let database: DatabaseHandle;
  let db: SqlRunner;
  let world = 0;

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    db = createRunner(database.client);
  });
  afterAll(() => database.close());

  /** The inbox as the statement before the index read it: every membership, by the conversation's activity. */
  const oldInbox = async (userId: string): Promise<Entry[]> => {
    const rows = await db.rows<{ conv_id: string; micros: number }>(sql`
      select c.id as conv_id, (extract(epoch from c.last_activity_at) * 1000000)::int8 as micros
      from members mb join conversations c on c.id = mb.conv_id
      where mb.user_id = ${userId}
      order by c.last_activity_at desc, c.id desc`);
    return rows.map((r) => ({ convId: r.conv_id, activityMicros: Number(r.micros) }));
  };

  /** The whole inbox through `scanInbox`, `size` at a time, following its cursors. */
  const walkInbox = async (userId: string, size: number): Promise<Entry[]> => {
    const entries: Entry[] = [];
    let after: InboxPosition | null = null;
    for (;;) {
      const page = await scanInbox(db, userId, clock(), after, size);
      entries.push(...page.entries.map((e) => ({ convId: e.conversation.id, activityMicros: e.position.activityMicros })));
      expect(page.entries.length).toBe(page.hasNextPage ? size : page.entries.length);
      if (!page.hasNextPage) return entries;
      after = page.entries.at(-1)!.position;
    }
  };

  const ownerOf = async (convId: string): Promise<string | undefined> => {
    const [row] = await db.rows<{ user_id: string }>(sql`select user_id from members where conv_id = ${convId} and role = 'owner'`);
    return row?.user_id;
  };

  /** Runs `c` in a world whose user k is `users[k]`, `convs` the conversations made so far. */
  const run = async (c: Command, users: string[], convs: string[], sent: { n: number }) => {
    const convAt = (k: number) => convs[k % convs.length]!;
    switch (c.kind) {
      case 'group':
        convs.push(await createGroup(db, users[c.owner]!, 'g', c.members.map((k) => users[k]!)));
        return;
      case 'direct': {
        const id = await openDirect(db, users[c.a]!, users[c.b]!);
        if (!convs.includes(id)) convs.push(id);
        return;
      }
    }
    if (convs.length === 0) return;
    const convId = convAt(c.conv);
    switch (c.kind) {
      case 'send':
        await sendMessage(db, UNPUBLISHED, users[c.user]!, convId, `m-${sent.n++}`, 'hello');
        return;
      case 'add':
      case 'crowd': {
        const owner = await ownerOf(convId);
        if (owner === undefined) return;
        const added =
          c.kind === 'add' ? c.users.map((k) => users[k]!) : Array.from({ length: LARGE_GROUP_MEMBERS }, (_, k) => `${users[0]}-crowd-${k}`);
        await addMembers(db, owner, convId, added);
        return;
      }
      case 'remove': {
        const owner = await ownerOf(convId);
        if (owner !== undefined) await removeMember(db, owner, convId, users[c.user]!, nothing);
        return;
      }
      case 'leave':
        await leaveConversation(db, users[c.user]!, convId, nothing);
        return;
      case 'clear':
        await clearHistory(db, users[c.user]!, convId);
        return;
      case 'read': {
        const [row] = await db.rows<{ max_seq: number }>(sql`select max_seq from conversations where id = ${convId}`);
        await markRead(db, UNPUBLISHED, users[c.user]!, convId, Number(row!.max_seq));
        return;
      }
      case 'hide': {
        const [row] = await db.rows<{ seq: number }>(sql`select max(seq) as seq from messages where conv_id = ${convId}`);
        if (row?.seq != null) await hideMessages(db, users[c.user]!, clock(), [{ convId, seq: Number(row.seq) }]);
        return;
      }
    }
  };

  it('pages every inbox exactly as the old statement ordered it, across joins, leaves, removals, sends, clears, reads, hides and groups growing large', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 4 }), async (commands, size) => {
        const prefix = `w${world++}`;
        const users = Array.from({ length: USERS }, (_, k) => `${prefix}-u${k}`);
        const convs: string[] = [];
        const sent = { n: 0 };
        for (const c of commands) await run(c, users, convs, sent);
        // One of the crowd too, if there is one: a member of large groups only.
        for (const userId of [...users, `${users[0]}-crowd-0`]) {
          const expected = await oldInbox(userId);
          expect(await walkInbox(userId, size)).toEqual(expected);
          expect(await walkInbox(userId, 50)).toEqual(expected);
        }
      }),
      { numRuns: backend === 'pglite' ? 60 : 40 },
    );
  });

  it('keeps one row per membership: a small conversation\'s activity (or null, read from it), null for a large one', async () => {
    // The model test's worlds, all of them: rows and members agree as sets.
    const rows = await db.rows<{ stray: number; missing: number; wrong: number; unsorted: number }>(sql`
      select
        (select count(*)::int from user_inbox ui where not exists (select 1 from members mb where mb.conv_id = ui.conv_id and mb.user_id = ui.user_id)) as stray,
        (select count(*)::int from members mb where not exists (select 1 from user_inbox ui where ui.conv_id = mb.conv_id and ui.user_id = mb.user_id)) as missing,
        (select count(*)::int from user_inbox ui join conversations c on c.id = ui.conv_id
          where ui.activity_at is not null and (c.large or ui.activity_at <> c.last_activity_at)) as wrong,
        (select count(*)::int from user_inbox ui join conversations c on c.id = ui.conv_id where ui.activity_at is null and not c.large) as unsorted`);
    // `unsorted`: members who joined a small group since its last send.
    expect(rows).toEqual([{ stray: 0, missing: 0, wrong: 0, unsorted: expect.any(Number) }]);
  });

  it('reads a newcomer\'s small group from the conversation until its next send, which files it', async () => {
    const owner = `newcomer-owner-${randomUUID().slice(0, 8)}`;
    const older = await createGroup(db, owner, 'older', []);
    const group = await createGroup(db, owner, 'small', []);
    await sendMessage(db, UNPUBLISHED, owner, group, 'n-1', 'before the newcomer');
    await createGroup(db, 'someone-else', 'newer', [`${owner}-newcomer`]);
    await addMembers(db, owner, older, [`${owner}-newcomer`]);
    await addMembers(db, owner, group, [`${owner}-newcomer`]);
    const row = async () => db.rows<{ filed: boolean }>(sql`select activity_at is not null as filed from user_inbox where user_id = ${`${owner}-newcomer`} and conv_id = ${group}`);
    expect(await row()).toEqual([{ filed: false }]);
    expect(await walkInbox(`${owner}-newcomer`, 1)).toEqual(await oldInbox(`${owner}-newcomer`));
    await sendMessage(db, UNPUBLISHED, owner, group, 'n-2', 'after');
    expect(await row()).toEqual([{ filed: true }]);
    const expected = await oldInbox(`${owner}-newcomer`);
    expect(expected[0]!.convId).toBe(group);
    expect(await walkInbox(`${owner}-newcomer`, 1)).toEqual(expected);
  });

  it('makes a group large once it passes the limit, and a send to it then rewrites no inbox row while it still moves up the inbox', async () => {
    const owner = `big-owner-${randomUUID().slice(0, 8)}`;
    const others = Array.from({ length: LARGE_GROUP_MEMBERS - 1 }, (_, k) => `${owner}-m${k}`);
    const group = await createGroup(db, owner, 'big', others);
    const quiet = await createGroup(db, owner, 'quiet', []);
    const large = async () => (await db.rows<{ large: boolean }>(sql`select large from conversations where id = ${group}`))[0]!.large;
    expect(await large()).toBe(false);
    await addMembers(db, owner, group, [`${owner}-last`]);
    expect(await large()).toBe(true);
    const versions = async () =>
      db.rows<{ user_id: string; version: string; activity_at: string | null }>(
        sql`select user_id, xmin::text as version, activity_at from user_inbox where conv_id = ${group} order by user_id`,
      );
    const before = await versions();
    expect(before).toHaveLength(LARGE_GROUP_MEMBERS + 1);
    expect(before.every((row) => row.activity_at === null)).toBe(true);
    await sendMessage(db, UNPUBLISHED, owner, quiet, 'q-1', 'first');
    await sendMessage(db, UNPUBLISHED, `${owner}-m0`, group, 'g-1', 'to everyone');
    expect(await versions()).toEqual(before);
    expect((await scanInbox(db, owner, clock(), null, 2)).entries.map((e) => e.conversation.id)).toEqual([group, quiet]);
    expect((await scanInbox(db, `${owner}-last`, clock(), null, 2)).entries.map((e) => e.conversation.id)).toEqual([group]);
  });

  for (const mode of ['custom', 'generic'] as PlanMode[]) {
    it(`sends to a large group without reading its members or their inbox rows (${mode} plan)`, async () => {
      const owner = `wide-owner-${randomUUID().slice(0, 8)}`;
      const group = await createGroup(db, owner, 'wide', Array.from({ length: LARGE_GROUP_MEMBERS }, (_, k) => `${owner}-m${k}`));
      // The send's statement as the store sends it, recorded in a transaction rolled back, then explained (and run) once.
      const plan = await explainRecorded(db, (runner) => sendMessage(runner, UNPUBLISHED, owner, group, `w-${mode}`, 'to everyone'), mode);
      // The sender's own member row, nothing else: the inbox step is decided before any member is read.
      expect(rowsRead(plan, 'members')).toBeLessThanOrEqual(1);
      expect(rowsRead(plan, 'user_inbox')).toBe(0);
    });
  }

  it('creates a group of more than the limit large, adds a member with no activity of their own, and takes it away when they leave', async () => {
    const owner = `crowd-owner-${randomUUID().slice(0, 8)}`;
    const group = await createGroup(db, owner, 'crowd', Array.from({ length: LARGE_GROUP_MEMBERS }, (_, k) => `${owner}-m${k}`));
    expect(await db.rows(sql`select large from conversations where id = ${group}`)).toEqual([{ large: true }]);
    expect(await db.rows(sql`select count(*)::int as n from user_inbox where conv_id = ${group} and activity_at is not null`)).toEqual([{ n: 0 }]);
    await addMembers(db, owner, group, ['crowd-newcomer']);
    expect(await db.rows(sql`select activity_at from user_inbox where user_id = 'crowd-newcomer' and conv_id = ${group}`)).toEqual([{ activity_at: null }]);
    expect((await scanInbox(db, 'crowd-newcomer', clock(), null, 5)).entries.map((e) => e.conversation.id)).toEqual([group]);
    await leaveConversation(db, 'crowd-newcomer', group, nothing);
    expect(await db.rows(sql`select 1 from user_inbox where user_id = 'crowd-newcomer'`)).toEqual([]);
    expect((await scanInbox(db, 'crowd-newcomer', clock(), null, 5)).entries).toEqual([]);
  });

  describe('A member of thousands of conversations', () => {
    const viewer = 'many-member';
    const SMALL = 3000;
    const LARGE = 3;

    beforeAll(async () => {
      // Set-based, with activity one second apart; the large ones fall among them.
      const small = Array.from({ length: SMALL }, () => randomUUID());
      const large = Array.from({ length: LARGE }, () => randomUUID());
      await database.db.transaction(async (tx) => {
        await tx.execute(sql`insert into conversations (id, kind, last_activity_at)
          select c.id, 'group', timestamptz '2026-06-01T00:00:00Z' - c.k * interval '1 second'
          from unnest(${sql.param(small)}::uuid[]) with ordinality as c(id, k)`);
        await tx.execute(sql`insert into conversations (id, kind, last_activity_at)
          select c.id, 'group', timestamptz '2026-06-01T00:00:00Z' - (c.k * 1000 - 500) * interval '1 second'
          from unnest(${sql.param(large)}::uuid[]) with ordinality as c(id, k)`);
        await tx.execute(sql`insert into members (conv_id, user_id) select id, ${viewer} from unnest(${sql.param([...small, ...large])}::uuid[]) as c(id)`);
        await tx.execute(sql`insert into members (conv_id, user_id)
          select c.id, 'many-crowd-' || k from unnest(${sql.param(large)}::uuid[]) as c(id), generate_series(1, ${LARGE_GROUP_MEMBERS}) k`);
        await tx.execute(reindexInbox([...small, ...large]));
      });
      await database.db.execute(sql`vacuum analyze user_inbox, members, conversations`);
    });

    it('pages the same conversations as the old statement', async () => {
      const expected = await oldInbox(viewer);
      expect(expected).toHaveLength(SMALL + LARGE);
      expect(await walkInbox(viewer, 100)).toEqual(expected);
    });

    for (const mode of ['custom', 'generic'] as PlanMode[]) {
      it(`reads the page's own entries and the large groups, not every membership (${mode} plan)`, async () => {
        for (const after of [null, { activityMicros: Date.parse('2026-05-31T23:00:00Z') * 1000, convId: randomUUID() }]) {
          const [statement] = await recordStatements(db, (runner) => scanInbox(runner, viewer, clock(), after, 20));
          const plan = await explainPrepared(db, statement!, mode);
          // 21 entries of the index range and 3 large ones; a member row and a conversation per row of the page.
          expect(rowsRead(plan, 'user_inbox')).toBeLessThanOrEqual(21 + LARGE);
          expect(rowsRead(plan, 'members')).toBeLessThanOrEqual(21);
          expect(buffersTouched(plan)).toBeLessThan(400);
        }
      });
    }
  });

  describe('Migration 0016', () => {
    it('names the same limit as LARGE_GROUP_MEMBERS', () => {
      expect(MIGRATION).toContain(`> ${LARGE_GROUP_MEMBERS};`);
    });

    it('builds the index from the memberships it finds: large groups null, the rest their activity, and the inbox reads as before', async () => {
      const statements = MIGRATION.split('--> statement-breakpoint');
      const small = randomUUID();
      const big = randomUUID();
      await database.db.transaction(async (tx) => {
        await tx.execute(sql`insert into conversations (id, kind, last_activity_at) values
          (${small}, 'group', timestamptz '2026-03-01T00:00:00.123456Z'), (${big}, 'group', timestamptz '2026-02-01T00:00:00Z')`);
        await tx.execute(sql`insert into members (conv_id, user_id) values (${small}, 'migrated-a'), (${small}, 'migrated-b'), (${big}, 'migrated-a')`);
        await tx.execute(sql`insert into members (conv_id, user_id) select ${big}, 'migrated-crowd-' || k from generate_series(1, ${LARGE_GROUP_MEMBERS}) k`);
      });
      expect(await db.rows(sql`select 1 from user_inbox where conv_id in (${small}, ${big})`)).toEqual([]);
      for (const statement of statements) await database.db.execute(sql.raw(statement));
      expect(await db.rows(sql`select id, large from conversations where id in (${small}, ${big}) order by large`)).toEqual([
        { id: small, large: false },
        { id: big, large: true },
      ]);
      expect(await db.rows(sql`select count(*)::int as n from user_inbox where conv_id = ${big} and activity_at is null`)).toEqual([{ n: LARGE_GROUP_MEMBERS + 1 }]);
      expect(await walkInbox('migrated-a', 1)).toEqual(await oldInbox('migrated-a'));
      expect((await oldInbox('migrated-a')).map((e) => e.convId)).toEqual([small, big]);
    });
  });
});
