/**
 * The sockets-per-user limit: how many WebSocket connections one user may
 * hold at once. On PostgreSQL the count is shared by every server process
 * (src/store/socketLeases.ts); on PGlite, which serves one process, it is
 * kept in memory.
 */
import { randomUUID } from 'node:crypto';
import { createRunner, type SqlClient } from '../db/runner.ts';
import { dropSocketLease, renewSocketLeases, takeSocketLease } from '../store/socketLeases.ts';

/** How long a lease lives without renewal: a dead process's sockets stop counting within this. */
const LEASE_SECONDS = 90;
/** How often a live process renews its leases. */
const RENEW_EVERY_MS = 30_000;

export interface SocketLimit {
  /** Takes a place for a new socket of `userId`; answers its release, or null when the user holds the most allowed. */
  take(userId: string): Promise<(() => void) | null>;
  close(): void;
}

/** The limit of `max` sockets per user over `client`. */
export function createSocketLimit(client: SqlClient, max: number, onError: (error: unknown) => void): SocketLimit {
  if (client.kind === 'pglite') {
    const open = new Map<string, number>();
    return {
      async take(userId) {
        const held = open.get(userId) ?? 0;
        if (held >= max) return null;
        open.set(userId, held + 1);
        let released = false;
        return () => {
          if (released) return;
          released = true;
          const left = (open.get(userId) ?? 1) - 1;
          if (left === 0) open.delete(userId);
          else open.set(userId, left);
        };
      },
      close() {},
    };
  }
  const serverId = randomUUID();
  // One runner for the process's lease bookkeeping: it keeps only a statement count.
  const db = createRunner(client);
  const renewal = setInterval(() => renewSocketLeases(db, serverId, LEASE_SECONDS).catch(onError), RENEW_EVERY_MS);
  renewal.unref();
  return {
    async take(userId) {
      const socketId = randomUUID();
      const taken = await takeSocketLease(db, { socketId, userId, serverId, max, ttlSeconds: LEASE_SECONDS });
      if (!taken) return null;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        dropSocketLease(db, socketId).catch(onError);
      };
    },
    close() {
      clearInterval(renewal);
    },
  };
}
