/**
 * The NOTIFY side of live events: what a writer announces on the one
 * channel every server process LISTENs to, and the payload's format.
 *
 * A payload names things by id only (conversation, kind, seqs, user): never
 * a message's text. Each subscriber loads what it may see through the
 * normal read path, so a notice can never show anyone more than a page
 * would. `pg_notify` runs inside the writing statement or transaction and is
 * delivered at commit, in commit order; a write that rolls back announces
 * nothing.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import type { Operand } from './sqlFragments.ts';
import { statement } from './statement.ts';

/** The channel every server process listens on. */
export const EVENTS_CHANNEL = 'backscroll_events';

/** What happened, as the payload names it. */
export type NoticeKind = 'sent' | 'revoked' | 'purged' | 'read' | 'member';

/**
 * One announced change. `sent`, `revoked`: the message at `seq` (`toSeq` =
 * `seq`). `purged`: `seq`..`toSeq`. `read`: `userId` moved their read cursor
 * to `seq`. `member`: `userId`'s membership changed; their subscriptions
 * re-check it (`seq` and `toSeq` are 0).
 */
export interface Notice {
  convId: string;
  kind: NoticeKind;
  seq: number;
  toSeq: number;
  userId: string | null;
}

/** A server process's liveness probe of its own LISTEN connection (see hub.ts). */
export interface Ping {
  kind: 'ping';
  nonce: string;
}

const KINDS = new Set<string>(['sent', 'revoked', 'purged', 'read', 'member']);

/**
 * The `pg_notify(...)` call announcing one notice, as an SQL expression
 * whose parts are the statement's placeholders or columns (a send knows its
 * seq only there), or constants. The payload is built by PostgreSQL from
 * these ids and nothing else.
 */
export function notifyExpression(notice: {
  convId: Operand;
  kind: Operand | NoticeKind;
  seq: Operand;
  toSeq: Operand;
  userId?: Operand | null;
}): SQL {
  const userId = notice.userId ?? null;
  return sql`pg_notify(${EVENTS_CHANNEL}, json_build_object(
    'c', ${notice.convId}::text, 'k', ${notice.kind}::text, 's', (${notice.seq})::int8, 't', (${notice.toSeq})::int8, 'u', ${userId}::text)::text)`;
}

const announceAll = statement<{ convIds: string[]; kinds: NoticeKind[]; seqs: number[]; toSeqs: number[]; userIds: (string | null)[] }>(
  (v) => sql`select ${notifyExpression({ convId: sql`n.c`, kind: sql`n.k`, seq: sql`n.s`, toSeq: sql`n.t`, userId: sql`n.u` })}
    from unnest(${v.convIds}::text[], ${v.kinds}::text[], ${v.seqs}::int8[], ${v.toSeqs}::int8[], ${v.userIds}::text[]) as n(c, k, s, t, u)`,
);

/** Announces `notices` in one statement (none: no statement); delivered when `db`'s transaction commits. */
export async function notifyAll(db: SqlRunner, notices: readonly Notice[]): Promise<void> {
  if (notices.length === 0) return;
  await db.rows(
    announceAll({
      convIds: notices.map((n) => n.convId),
      kinds: notices.map((n) => n.kind),
      seqs: notices.map((n) => n.seq),
      toSeqs: notices.map((n) => n.toSeq),
      userIds: notices.map((n) => n.userId),
    }),
  );
}

/**
 * Makes `userId`'s open subscriptions on `convId` re-check their membership
 * once `db`'s transaction commits; a subscriber who is no longer a member
 * sees the subscription end with `FORBIDDEN`. Call it from every write that
 * removes a member.
 */
export async function notifyMembershipChanged(db: SqlRunner, convId: string, userId: string): Promise<void> {
  await notifyAll(db, [{ convId, kind: 'member', seq: 0, toSeq: 0, userId }]);
}

/** The payload of a liveness probe. */
export function pingPayload(nonce: string): string {
  return JSON.stringify({ k: 'ping', n: nonce });
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** Reads a payload from the channel; null for anything that is not one of ours. */
export function parseNotice(payload: string): Notice | Ping | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { c, k, s, t, u, n } = value as Record<string, unknown>;
  if (k === 'ping') return typeof n === 'string' ? { kind: 'ping', nonce: n } : null;
  if (typeof c !== 'string' || typeof k !== 'string' || !KINDS.has(k) || !isCount(s) || !isCount(t)) return null;
  if (u !== null && u !== undefined && typeof u !== 'string') return null;
  return { convId: c.toLowerCase(), kind: k as NoticeKind, seq: s, toSeq: t, userId: u ?? null };
}
