/**
 * Open WebSocket connections per user, counted in PostgreSQL so the limit
 * holds across every server process. A lease is taken when a socket is
 * accepted and dropped when it closes; each process renews its own leases
 * while it lives, so those of a process that died lapse by themselves.
 */
import { sql } from 'drizzle-orm';
import { socketLeases } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { bare, bareList } from './sqlFragments.ts';
import { statement } from './statement.ts';

// The lock's namespace is a name of its own, not a reference to the table.
const lockUser = statement<{ userId: string }>((v) => sql`select pg_advisory_xact_lock(hashtext('socket_leases'), hashtext(${v.userId}))`);

const dropLapsed = statement<{ userId: string }>(
  (v) => sql`delete from ${socketLeases} where ${socketLeases.userId} = ${v.userId} and ${socketLeases.expiresAt} <= now()`,
);

const take = statement<{ socketId: string; userId: string; serverId: string; ttlSeconds: number; max: number }>(
  (v) => sql`insert into ${socketLeases} (${bareList(socketLeases.socketId, socketLeases.userId, socketLeases.serverId, socketLeases.expiresAt)})
        select ${v.socketId}, ${v.userId}, ${v.serverId}, now() + make_interval(secs => ${v.ttlSeconds})
        where (select count(*) from ${socketLeases} where ${socketLeases.userId} = ${v.userId}) < ${v.max}
        returning ${socketLeases.socketId} as socket_id`,
);

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
    await tx.rows(lockUser({ userId: lease.userId }));
    await tx.rows(dropLapsed({ userId: lease.userId }));
    const taken = await tx.rows<{ socket_id: string }>(take(lease));
    return taken.length === 1;
  });
}

const drop = statement<{ socketId: string }>((v) => sql`delete from ${socketLeases} where ${socketLeases.socketId} = ${v.socketId}`);

/** Drops the lease of a closed socket. */
export async function dropSocketLease(db: SqlRunner, socketId: string): Promise<void> {
  await db.rows(drop({ socketId }));
}

const renew = statement<{ serverId: string; ttlSeconds: number }>(
  (v) => sql`update ${socketLeases} set ${bare(socketLeases.expiresAt)} = now() + make_interval(secs => ${v.ttlSeconds})
    where ${socketLeases.serverId} = ${v.serverId}`,
);

/** Extends every lease `serverId` holds by `ttlSeconds` from now: this process still holds those sockets. */
export async function renewSocketLeases(db: SqlRunner, serverId: string, ttlSeconds: number): Promise<void> {
  await db.rows(renew({ serverId, ttlSeconds }));
}
