/**
 * The member list reads each member's join instant as the epoch
 * milliseconds PostgreSQL stores beside it (`members.joined_millis`), which
 * the API spells as ISO text and the cursor as digits. They must name the
 * instant's millisecond, truncated, at the edges of what a timestamp holds,
 * before 1970 and when the stored instant has microseconds, and the cursors
 * made from them must page through every member exactly once.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { decodeMemberCursor, encodeMemberCursor } from '../../src/history/listCursors.ts';
import { listMembers, type MemberPosition } from '../../src/store/members.ts';
import { backends, openTestDatabase } from '../helpers/database.ts';

const CONV = '00000000-0000-4000-8000-00000000a001';
const JOINED = [
  '0001-01-01 00:00:00.001+00',
  '1969-12-31 23:59:59.999+00',
  '1970-01-01 00:00:00+00',
  '2026-12-06 21:09:30.513999+00',
  '2026-12-06 21:09:30.514001+00',
  '9999-12-31 23:59:59.999999+00',
];

describe.each(backends)('Member join times in the member list (%s)', (backend) => {
  let database: DatabaseHandle;
  let db: SqlRunner;

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    db = createRunner(database.client);
    await database.db.execute(sql`insert into conversations (id, kind, title, max_seq) values (${CONV}, 'group', 'join times', 0)`);
    for (const [k, joined] of JOINED.entries()) {
      await database.db.execute(sql`insert into members (conv_id, user_id, role, joined_at)
        values (${CONV}, ${`member-${k}`}, ${k === 0 ? 'owner' : 'member'}, ${joined}::timestamptz)`);
    }
  });
  afterAll(() => database.close());

  it('reads the millisecond of each join instant, truncating microseconds', async () => {
    const page = await listMembers(db, 'member-0', CONV, null, 10);
    if (page.kind !== 'members') throw new Error('the viewer is a member');
    expect(page.rows.map((row) => new Date(row.joinedMillis).toISOString())).toEqual([
      '0001-01-01T00:00:00.001Z',
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00.000Z',
      '2026-12-06T21:09:30.513Z',
      '2026-12-06T21:09:30.514Z',
      '9999-12-31T23:59:59.999Z',
    ]);
  });

  it('pages through every member once, one at a time, by those cursors', async () => {
    const seen: string[] = [];
    let after: MemberPosition | null = null;
    for (let step = 0; step <= JOINED.length; step++) {
      const page = await listMembers(db, 'member-0', CONV, after, 1);
      if (page.kind !== 'members') throw new Error('the viewer is a member');
      const [first] = page.rows;
      if (first === undefined) break;
      seen.push(first.userId);
      // What decodeMemberCursor answers for a cursor made from this row.
      after = { joinedMillis: first.joinedMillis, userId: first.userId };
    }
    expect(seen).toEqual(JOINED.map((_, k) => `member-${k}`));
  });

  it('pages through every member once by the cursors the API makes and reads, members who joined before 1970 included', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let step = 0; step <= JOINED.length; step++) {
      const after = cursor === null ? null : decodeMemberCursor(CONV, cursor);
      if (cursor !== null && after === null) throw new Error(`the cursor after ${seen.at(-1)} was refused`);
      const page = await listMembers(db, 'member-0', CONV, after, 1);
      if (page.kind !== 'members') throw new Error('the viewer is a member');
      const [first] = page.rows;
      if (first === undefined) break;
      seen.push(first.userId);
      cursor = encodeMemberCursor(CONV, first.joinedMillis, first.userId);
    }
    expect(seen).toEqual(JOINED.map((_, k) => `member-${k}`));
  });
});
