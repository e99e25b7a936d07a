/**
 * Open WebSocket connections per user, counted in PostgreSQL so the limit
 * holds across every server process. A lease is taken when a socket is
 * accepted and dropped when it closes; each process renews its own leases
 * while it lives, so those of a process that died lapse by themselves.
 */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';

/**
 * Takes a lease for `socketId` unless `userId` already holds `max` live ones.
 * One transaction under a per-user advisory lock, so two processes accepting
 * the user's sockets at once cannot both take the last place.
 */
export async function takeSocketLease(
  db: SqlRunner,
  lease: { socketId: string; userId: string; serverId: string; max: number; ttlSeconds: number },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.rows(sql`select pg_advisory_xact_lock(hashtext('socket_leases'), hashtext(${lease.userId}))`);
    await tx.rows(sql`delete from socket_leases where user_id = ${lease.userId} and expires_at <= now()`);
    const taken = await tx.rows<{ socket_id: string }>(sql`insert into socket_leases (socket_id, user_id, server_id, expires_at)
        select ${lease.socketId}, ${lease.userId}, ${lease.serverId}, now() + make_interval(secs => ${lease.ttlSeconds})
        where (select count(*) from socket_leases where user_id = ${lease.userId}) < ${lease.max}
        returning socket_id`);
    return taken.length === 1;
  });
}

/** Drops the lease of a closed socket. */
export async function dropSocketLease(db: SqlRunner, socketId: string): Promise<void> {
  await db.rows(sql`delete from socket_leases where socket_id = ${socketId}`);
}

/** Extends every lease `serverId` holds by `ttlSeconds` from now: this process still holds those sockets. */
export async function renewSocketLeases(db: SqlRunner, serverId: string, ttlSeconds: number): Promise<void> {
  await db.rows(sql`update socket_leases set expires_at = now() + make_interval(secs => ${ttlSeconds}) where server_id = ${serverId}`);
}
