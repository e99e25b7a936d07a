/**
 * The NOTIFY side of live events: what a write announces on the one channel
 * every server process LISTENs to, and the payload's format.
 *
 * A payload names things by id only (conversation, kind, seqs, user, change
 * number): never a message's text. Each subscriber loads what it may see
 * through the normal read path, so a notice can never show anyone more than
 * a page would.
 *
 * Notices are published after the write commits, never inside it: a NOTIFY
 * makes PostgreSQL serialise the commits of notifying transactions on one
 * lock, fsync included, which capped sends at one commit at a time across
 * every conversation. A write hands its notices to a `Publisher`
 * (publisher.ts batches them onto the channel); one that rolls back hands
 * over nothing. A notice lost between commit and publication is noticed by
 * the hubs' audit (src/realtime/hub.ts), which compares what they were told
 * with the database.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { statement } from './statement.ts';

/** The channel every server process listens on. */
export const EVENTS_CHANNEL = 'backscroll_events';

/** What happened, as the payload names it. */
export type NoticeKind = 'sent' | 'revoked' | 'edited' | 'reacted' | 'pinned' | 'unpinned' | 'purged' | 'read' | 'member';

/**
 * One announced change. `sent`, `revoked`, `edited`, `reacted` (its
 * reactions changed), `pinned`, `unpinned`: the message at `seq` (`toSeq` = `seq`). `purged`: `seq`..`toSeq`. `read`: `userId` moved their read cursor
 * to `seq`. `member`: `userId`'s membership changed; their subscriptions
 * re-check it (`seq` and `toSeq` are 0). `changeSeq`: the change-feed entry
 * a `revoked`, `edited`, `reacted`, `pinned`, `unpinned` or `purged` notice announces (null for the other kinds), so a
 * hub can tell which entries it was told of.
 */
export interface Notice {
  convId: string;
  kind: NoticeKind;
  seq: number;
  toSeq: number;
  userId: string | null;
  changeSeq: number | null;
  /**
   * The primary's WAL position when the notice was announced, after its
   * write committed: the consistency token of its live event, so a read
   * with it sees what the event announced. Set on notices read from the
   * channel (absent from a payload published before tokens existed).
   */
  position?: string;
}

/** Where a write hands its notices once it has committed; `publish` returns at once and never throws. */
export interface Publisher {
  publish(notices: readonly Notice[]): void;
}

/** The publisher of writes that no one can be subscribed to (the demo written before the server starts). */
export const UNPUBLISHED: Publisher = { publish: () => undefined };

/** A server process's liveness probe of its own LISTEN connection (see hub.ts). */
export interface Ping {
  kind: 'ping';
  nonce: string;
}

const KINDS = new Set<string>(['sent', 'revoked', 'edited', 'reacted', 'pinned', 'unpinned', 'purged', 'read', 'member']);

/**
 * PostgreSQL refuses a payload of 8,000 bytes or more (in its default
 * build), and the announcing statement wraps each payload in an envelope
 * with the WAL position (`{"p":"FFFFFFFF/FFFFFFFF","e":…}`, at most 30 bytes).
 */
export const MAX_PAYLOAD_BYTES = 7999 - 32;

const compact = (n: Notice) => JSON.stringify({ c: n.convId, k: n.kind, s: n.seq, t: n.toSeq, u: n.userId, h: n.changeSeq });

/**
 * The payloads announcing `notices`, in order: JSON arrays of compact
 * notices, each within PostgreSQL's payload limit (a notice is a few hundred
 * bytes at most: ids and numbers).
 */
export function noticePayloads(notices: readonly Notice[]): string[] {
  const payloads: string[] = [];
  let items: string[] = [];
  // The brackets, and a comma before every item but the first.
  let bytes = 2;
  for (const notice of notices) {
    const item = compact(notice);
    const size = Buffer.byteLength(item);
    if (items.length > 0 && bytes + 1 + size > MAX_PAYLOAD_BYTES) {
      payloads.push(`[${items.join(',')}]`);
      items = [];
      bytes = 2;
    }
    bytes += (items.length > 0 ? 1 : 0) + size;
    items.push(item);
  }
  if (items.length > 0) payloads.push(`[${items.join(',')}]`);
  return payloads;
}

/**
 * Each payload is sent in an envelope carrying `pg_current_wal_lsn()`, read
 * by the announcing statement itself: it runs after the writes it announces
 * committed, so the position is at or past each of their commits, and costs
 * no statement of its own.
 */
const enveloped = (payload: SQL) => sql`'{"p":"' || pg_current_wal_lsn()::text || '","e":' || ${payload} || '}'`;
const announceOne = statement<{ payload: string }>((v) => sql`select pg_notify(${EVENTS_CHANNEL}, ${enveloped(sql`${v.payload}::text`)})`);
const announceAll = statement<{ payloads: string[] }>(
  (v) =>
    sql`select pg_notify(${EVENTS_CHANNEL}, ${enveloped(sql`p`)}) from unnest(${v.payloads}::text[]) with ordinality as n(p, i) order by i`,
);

/**
 * Announces `notices` now, in one statement (none: no statement). Run it
 * outside any write's transaction: it is a notifying commit of its own.
 * Servers publish through publisher.ts, which batches; tests call this.
 */
export async function publishNow(db: SqlRunner, notices: readonly Notice[]): Promise<void> {
  if (notices.length === 0) return;
  const payloads = noticePayloads(notices);
  // One payload (the usual batch) needs no array to bind.
  await db.rows(payloads.length === 1 ? announceOne({ payload: payloads[0]! }) : announceAll({ payloads }));
}

/** The notice that makes `userId`'s open subscriptions on `convId` re-check their membership. */
export function membershipNotice(convId: string, userId: string): Notice {
  return { convId, kind: 'member', seq: 0, toSeq: 0, userId, changeSeq: null };
}

/** The payload of a liveness probe. */
export function pingPayload(nonce: string): string {
  return JSON.stringify({ k: 'ping', n: nonce });
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** One compact notice of a payload; null when it is not one. */
function noticeOf(value: unknown): Notice | null {
  if (typeof value !== 'object' || value === null) return null;
  const { c, k, s, t, u, h } = value as Record<string, unknown>;
  if (typeof c !== 'string' || typeof k !== 'string' || !KINDS.has(k) || !isCount(s) || !isCount(t)) return null;
  if (u !== null && u !== undefined && typeof u !== 'string') return null;
  if (h !== null && h !== undefined && !isCount(h)) return null;
  return { convId: c.toLowerCase(), kind: k as NoticeKind, seq: s, toSeq: t, userId: u ?? null, changeSeq: h ?? null };
}

/** Reads a payload from the channel: its notices in order, or a probe; null for anything that is not one of ours. */
export function parsePayload(payload: string): Notice[] | Ping | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  // Bare, as published before the envelope (a process of the previous release during a rolling deploy).
  if (Array.isArray(value)) return noticesOf(value, undefined);
  if (typeof value !== 'object' || value === null) return null;
  const { k, n, p, e } = value as Record<string, unknown>;
  if (Array.isArray(e) && typeof p === 'string') return noticesOf(e, p);
  return k === 'ping' && typeof n === 'string' ? { kind: 'ping', nonce: n } : null;
}

/** The notices of one payload's list, each with the announcing `position`; null unless every one is a notice. */
function noticesOf(items: unknown[], position: string | undefined): Notice[] | null {
  const notices = items.map(noticeOf);
  if (notices.length === 0 || notices.some((n) => n === null)) return null;
  return position === undefined ? (notices as Notice[]) : (notices as Notice[]).map((notice) => ({ ...notice, position }));
}
