/**
 * Announcements with read fan-out: publishing writes one row however many
 * users there are; each user has one "read up to" instant, and an
 * announcement is unread for them when it was published after it.
 */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { isoTime } from './sqlFragments.ts';

/** One announcement as `userId` sees it. */
export interface AnnouncementRow {
  id: number;
  title: string;
  text: string;
  /** ISO 8601, UTC. */
  publishedAt: string;
  unread: boolean;
}

type RawAnnouncement = { id: number; title: string; text: string; published_at: string; unread: boolean };
const toRow = (r: RawAnnouncement): AnnouncementRow => ({ id: r.id, title: r.title, text: r.text, publishedAt: r.published_at, unread: r.unread });

/** `userId`'s read-up-to instant, as a scalar subquery (the beginning of time when never set). */
const readUpTo = (userId: string) =>
  sql`coalesce((select r.read_up_to from announcement_reads r where r.user_id = ${userId}), '-infinity'::timestamptz)`;

/** Publishes an announcement; one row. */
export async function publishAnnouncement(db: SqlRunner, publisherId: string, title: string, text: string): Promise<AnnouncementRow> {
  const [row] = await db.rows<RawAnnouncement>(sql`insert into announcements (title, text, published_by)
      values (${title}, ${text}, ${publisherId})
      returning id, title, text, ${isoTime('published_at')} as published_at, true as unread`);
  return toRow(row!);
}

/** Up to `limit + 1` announcements older than id `beforeId` (null: the newest), newest first, with `unread` for `userId`. */
export async function listAnnouncements(db: SqlRunner, userId: string, beforeId: number | null, limit: number): Promise<AnnouncementRow[]> {
  const rows = await db.rows<RawAnnouncement>(sql`select a.id, a.title, a.text, ${isoTime('a.published_at')} as published_at,
        a.published_at > u.read_up_to as unread
      from (select ${readUpTo(userId)} as read_up_to) u, announcements a
      where ${beforeId === null ? sql`true` : sql`a.id < ${beforeId}`}
      order by a.id desc limit ${limit + 1}`);
  return rows.map(toRow);
}

/** How many announcements are unread for `userId`. */
export async function countUnreadAnnouncements(db: SqlRunner, userId: string): Promise<number> {
  const [row] = await db.rows<{ n: number }>(sql`select count(*)::int as n from announcements a where a.published_at > ${readUpTo(userId)}`);
  return row!.n;
}

/**
 * Marks everything published so far as read for `userId`: the read-up-to
 * instant moves to the newest announcement's (never back; the epoch when
 * there is none), not to "now", so an announcement committing a moment later
 * with an earlier timestamp is not swallowed. Answers it.
 */
export async function markAnnouncementsRead(db: SqlRunner, userId: string): Promise<string> {
  const [row] = await db.rows<{ read_up_to: string }>(sql`insert into announcement_reads as r (user_id, read_up_to)
      values (${userId}, coalesce((select max(published_at) from announcements), to_timestamp(0)))
      on conflict (user_id) do update set read_up_to = greatest(r.read_up_to, excluded.read_up_to)
      returning ${isoTime('r.read_up_to')} as read_up_to`);
  return row!.read_up_to;
}

/** Announcement `id` as `userId` sees it. */
export async function findAnnouncement(
  db: SqlRunner,
  userId: string,
  id: number,
): Promise<{ kind: 'found'; announcement: AnnouncementRow } | NotFound> {
  const [row] = await db.rows<RawAnnouncement>(sql`select a.id, a.title, a.text, ${isoTime('a.published_at')} as published_at,
        a.published_at > ${readUpTo(userId)} as unread
      from announcements a where a.id = ${id}`);
  return row === undefined ? NOT_FOUND : { kind: 'found', announcement: toRow(row) };
}
