/**
 * Applying the migrations in `drizzle/` and telling whether a database is
 * behind them (the server refuses to start on a database that is).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import type { DatabaseHandle } from './client.ts';
import { rowsOf } from './rows.ts';

const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Where a database stands against the migrations shipped with this code. */
export interface MigrationStatus {
  applied: number;
  shipped: number;
  behind: boolean;
  /** The names of the migrations not applied yet, oldest first (`0004_keyed_search`). */
  pending: string[];
}

/** The shipped migrations' names and timestamps, from drizzle-kit's journal. */
function journal(): { tag: string; when: number }[] {
  const path = fileURLToPath(new URL('../../drizzle/meta/_journal.json', import.meta.url));
  return (JSON.parse(readFileSync(path, 'utf8')) as { entries: { tag: string; when: number }[] }).entries;
}

/** Applies every migration the database has not had yet, in one transaction. */
export async function applyMigrations(handle: DatabaseHandle): Promise<void> {
  // Both migrators take the same folder; the cast picks the driver-specific one.
  const config = { migrationsFolder };
  if (handle.kind === 'pglite') await migratePglite(handle.db as never, config);
  else await migratePostgres(handle.db as never, config);
}

/** Compares the migrations recorded in the database with those in `drizzle/`. */
export async function migrationStatus(handle: DatabaseHandle): Promise<MigrationStatus> {
  const shipped = readMigrationFiles({ migrationsFolder });
  const latestShipped = Math.max(0, ...shipped.map((m) => m.folderMillis));
  const table = rowsOf<{ exists: boolean }>(
    await handle.db.execute(sql`select to_regclass('drizzle.__drizzle_migrations') is not null as exists`),
  );
  const pendingAfter = (latest: number) => journal().filter((entry) => entry.when > latest).map((entry) => entry.tag);
  if (!table[0]?.exists) return { applied: 0, shipped: shipped.length, behind: shipped.length > 0, pending: pendingAfter(0) };
  const [row] = rowsOf<{ applied: number; latest: number | null }>(
    await handle.db.execute(
      sql`select count(*)::int8 as applied, max(created_at)::int8 as latest from drizzle.__drizzle_migrations`,
    ),
  );
  const applied = row?.applied ?? 0;
  return { applied, shipped: shipped.length, behind: (row?.latest ?? 0) < latestShipped, pending: pendingAfter(row?.latest ?? 0) };
}
