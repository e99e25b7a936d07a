/**
 * A streaming replica of a throwaway cluster (throwawayCluster.ts), on a
 * port of its own: `pg_basebackup -R` copies the primary and writes
 * standby.signal and primary_conninfo, and the copy starts as a hot standby
 * that replays the primary's WAL as it streams in.
 */
import { appendFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './benchServer.ts';
import { clusterFolder, pg, startCluster, type ThrowawayCluster } from './throwawayCluster.ts';

/** A replica and the one knob the tests and the bench turn. */
export interface StreamingReplica extends ThrowawayCluster {
  /** Sets `recovery_min_apply_delay` (0: none) and reloads: commits are replayed that long after they were made. */
  setApplyDelay(ms: number): Promise<void>;
}

/** Copies `primary` and starts the copy as its streaming replica. */
export async function createStreamingReplica(primary: ThrowawayCluster): Promise<StreamingReplica> {
  const folder = await clusterFolder();
  const dataDir = join(folder, 'data');
  let cluster: ThrowawayCluster;
  try {
    // `-c fast`: the backup starts with an immediate checkpoint. The default spreads it over
    // most of checkpoint_timeout once the primary holds some data (a freshly seeded one: minutes).
    await pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync']);
    cluster = await startCluster(folder, await freePort());
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    ...cluster,
    async setApplyDelay(ms) {
      // postgresql.auto.conf, as ALTER SYSTEM writes it (the last line wins); a reload applies it.
      appendFileSync(join(dataDir, 'postgresql.auto.conf'), `recovery_min_apply_delay = '${ms}ms'\n`);
      await pg('pg_ctl', ['-D', dataDir, 'reload']);
    },
  };
}
