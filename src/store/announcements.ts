/**
 * Announcements with read fan-out: publishing writes one row however many
 * users there are; each user has one "read up to" instant, and an
 * announcement is unread for them when it was published after it.
 */
import { type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { announcementReads, announcements } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { type Aliased, bare, bareList, isoTime, type Operand, selectList } from './sqlFragments.ts';
import { type Slots, statement } from './statement.ts';

/** One announcement as `userId` sees it. */
export interface AnnouncementRow extends Pick<typeof announcements.$inferSelect, 'id' | 'title' | 'text'> {
  /** ISO 8601, UTC. */
  publishedAt: string;
  unread: boolean;
}

const a = alias(announcements, 'a');
const r = alias(announcementReads, 'r');
const excluded = alias(announcementReads, 'excluded');

/** The columns of an `AnnouncementRow` from `table`. */
function announcementColumns(table: Aliased<typeof announcements> | typeof announcements, unread: SQL<boolean>): SQL {
  return selectList<AnnouncementRow>({
    id: table.id,
    title: table.title,
    text: table.text,
    publishedAt: isoTime(table.publishedAt),
    unread,
  });
}

/** `userId`'s read-up-to instant, as a scalar subquery (the beginning of time when never set). */
const readUpTo = (userId: Operand) =>
  sql`coalesce((select ${r.readUpTo} from ${announcementReads} ${r} where ${r.userId} = ${userId}), '-infinity'::timestamptz)`;

const publish = statement<{ title: string; text: string; publisherId: string }>(
  (v) => sql`insert into ${announcements} (${bareList(announcements.title, announcements.text, announcements.publishedBy)})
      values (${v.title}, ${v.text}, ${v.publisherId})
      returning ${announcementColumns(announcements, sql<boolean>`true`)}`,
);

/** Publishes an announcement; one row. */
export async function publishAnnouncement(db: SqlRunner, publisherId: string, title: string, text: string): Promise<AnnouncementRow> {
  const [row] = await db.rows<AnnouncementRow>(publish({ title, text, publisherId }));
  return row!;
}

interface ListValues {
  userId: string;
  limit: number;
  /** The cursor, unused for the newest page. */
  beforeId: number;
}

/** A page of announcements, newest first: from the newest (`range` none) or below a cursor. */
function listStatement(range: ((v: Slots<ListValues>) => SQL) | null) {
  return statement<ListValues>(
    (v) => sql`select ${announcementColumns(a, sql<boolean>`${a.publishedAt} > u.read_up_to`)}
      from (select ${readUpTo(v.userId)} as read_up_to) u, ${announcements} ${a}
      where ${range?.(v) ?? sql`true`}
      order by ${a.id} desc limit ${v.limit}`,
  );
}

const newestAnnouncements = listStatement(null);
const olderAnnouncements = listStatement((v) => sql`${a.id} < ${v.beforeId}`);

/** Up to `limit + 1` announcements older than id `beforeId` (null: the newest), newest first, with `unread` for `userId`. */
export async function listAnnouncements(db: SqlRunner, userId: string, beforeId: number | null, limit: number): Promise<AnnouncementRow[]> {
  const values = { userId, limit: limit + 1 };
  return db.rows<AnnouncementRow>(
    beforeId === null ? newestAnnouncements({ ...values, beforeId: 0 }) : olderAnnouncements({ ...values, beforeId }),
  );
}

const countUnread = statement<{ userId: string }>(
  (v) => sql`select count(*)::int as n from ${announcements} ${a} where ${a.publishedAt} > ${readUpTo(v.userId)}`,
);

/** How many announcements are unread for `userId`. */
export async function countUnreadAnnouncements(db: SqlRunner, userId: string): Promise<number> {
  const [row] = await db.rows<{ n: number }>(countUnread({ userId }));
  return row!.n;
}

const markRead = statement<{ userId: string }>(
  (v) => sql`insert into ${announcementReads} as ${r} (${bareList(announcementReads.userId, announcementReads.readUpTo)})
      values (${v.userId}, coalesce((select max(${announcements.publishedAt}) from ${announcements}), to_timestamp(0)))
      on conflict (${bare(announcementReads.userId)}) do update set ${bare(announcementReads.readUpTo)} = greatest(${r.readUpTo}, ${excluded.readUpTo})
      returning ${isoTime(r.readUpTo)} as read_up_to`,
);

/**
 * Marks everything published so far as read for `userId`: the read-up-to
 * instant moves to the newest announcement's (never back; the epoch when
 * there is none), not to "now", so an announcement committing a moment later
 * with an earlier timestamp is not swallowed. Answers it.
 */
export async function markAnnouncementsRead(db: SqlRunner, userId: string): Promise<string> {
  const [row] = await db.rows<{ read_up_to: string }>(markRead({ userId }));
  return row!.read_up_to;
}

const oneAnnouncement = statement<{ userId: string; id: number }>(
  (v) => sql`select ${announcementColumns(a, sql<boolean>`${a.publishedAt} > ${readUpTo(v.userId)}`)}
      from ${announcements} ${a} where ${a.id} = ${v.id}`,
);

/** Announcement `id` as `userId` sees it. */
export async function findAnnouncement(
  db: SqlRunner,
  userId: string,
  id: number,
): Promise<{ kind: 'found'; announcement: AnnouncementRow } | NotFound> {
  const [row] = await db.rows<AnnouncementRow>(oneAnnouncement({ userId, id }));
  return row === undefined ? NOT_FOUND : { kind: 'found', announcement: row };
}
