/**
 * The Citus layout, stood in for by native partitions: every
 * conversation-scoped table rebuilt as `PARTITION BY HASH` on its
 * conversation id, and the tables read by user on the user id. Citus routes
 * a statement to one shard exactly when PostgreSQL prunes it to one
 * partition, and it has the same rule for keys: a primary or unique key
 * must include the distribution column. Partitions of the same number hold
 * the same conversations in every table (same type, same hash, same
 * modulus), as colocated shards do.
 */
import type postgres from 'postgres';

/** A table spread across shards by `column`, in colocation group `group`. */
export interface DistributedTable {
  table: string;
  column: string;
  /** Tables of one group hold the same keys in partitions of the same number. */
  group: 'conversation' | 'user';
}

const byConversation = (table: string, column = 'conv_id'): DistributedTable => ({ table, column, group: 'conversation' });

/**
 * Every table distributed in the partitioned run. `message_hides` is written
 * by nothing now but still deleted from by the purge. `announcement_reads`
 * and `user_inbox` are read by user; `announcements` would
 * be a reference table, `rate_limits` and `socket_leases` local to the
 * coordinator (see the README).
 */
export const distributedTables: readonly DistributedTable[] = [
  byConversation('conversations', 'id'),
  ...[
    'members',
    'messages',
    'message_bodies',
    'message_hides',
    'message_hide_ranges',
    'conversation_changes',
    'message_edits',
    'message_reactions',
    'thread_reads',
    'message_pins',
    'message_stars',
    'message_mentions',
    'archive_segments',
  ].map((table) => byConversation(table)),
  { table: 'announcement_reads', column: 'user_id', group: 'user' },
  // The inbox index: one row per membership, read by user (store/inboxIndex.ts).
  { table: 'user_inbox', column: 'user_id', group: 'user' },
];

/** Partitions per table: enough that a statement reading "all" is told apart from one reading a few. */
export const PARTITIONS = 8;

/** The name of partition `index` of `table`. */
function partitionName(table: string, index: number): string {
  return `${table}_p${index}`;
}

/** Table and partition number of a partition's name, or null for any other relation. */
export function partitionOf(relation: string): { table: DistributedTable; index: number } | null {
  const match = /^(.+)_p(\d+)$/.exec(relation);
  const table = match && distributedTables.find((t) => t.table === match[1]);
  return table ? { table, index: Number(match[2]) } : null;
}

/** What a table must keep when it is rebuilt: keys and indexes, as PostgreSQL writes them. */
interface TableParts {
  /** `alter table … add constraint` clauses of its primary and unique keys. */
  keys: { name: string; definition: string }[];
  /** `create index` statements of the indexes that back no key. */
  indexes: string[];
}

async function partsOf(sql: postgres.TransactionSql, table: string): Promise<TableParts> {
  const keys = await sql<{ name: string; definition: string }[]>`
    select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint
    where conrelid = ${`public.${table}`}::regclass and contype in ('p', 'u', 'x') order by conname`;
  const indexes = await sql<{ definition: string }[]>`
    select pg_get_indexdef(i.indexrelid) as definition from pg_index i
    where i.indrelid = ${`public.${table}`}::regclass
      and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
    order by i.indexrelid`;
  return { keys: [...keys], indexes: indexes.map((i) => i.definition) };
}

/**
 * Rebuilds each of `tables` (empty, just migrated) as a hash-partitioned
 * table of `PARTITIONS` partitions on its column, keeping its columns,
 * defaults, checks, keys and indexes under their own names. Throws when a
 * table with a `conv_id` column is missing from `tables` (a new
 * conversation-scoped table must be distributed too), and when a key does
 * not include the distribution column (Citus refuses it as well).
 */
export async function partitionTables(sql: postgres.Sql, tables: readonly DistributedTable[] = distributedTables): Promise<void> {
  await sql.begin(async (tx) => {
    const scoped = await tx<{ table: string }[]>`
      select table_name as table from information_schema.columns
      where table_schema = 'public' and column_name = 'conv_id' order by table_name`;
    const missing = scoped.map((s) => s.table).filter((name) => !tables.some((t) => t.table === name));
    if (missing.length > 0) {
      throw new Error(`Conversation-scoped tables must be distributed in the partitioned layout (test/helpers/partitionedLayout.ts), but these are not: ${missing.join(', ')}.`);
    }
    for (const { table, column } of tables) {
      const parts = await partsOf(tx, table);
      const heap = `${table}__heap`;
      await tx.unsafe(`alter table public.${table} rename to ${heap}`);
      // Checks and not-null keep their names through LIKE; keys and indexes are made again below.
      await tx.unsafe(
        `create table public.${table} (like public.${heap} including defaults including constraints including generated including identity including storage)
         partition by hash (${column})`,
      );
      for (let i = 0; i < PARTITIONS; i++) {
        await tx.unsafe(`create table public.${partitionName(table, i)} partition of public.${table} for values with (modulus ${PARTITIONS}, remainder ${i})`);
      }
      // Generated columns (members.joined_millis) are made again, never copied.
      const copied = await tx<{ name: string }[]>`
        select column_name as name from information_schema.columns
        where table_schema = 'public' and table_name = ${heap} and is_generated = 'NEVER' order by ordinal_position`;
      const columns = copied.map((c) => `"${c.name}"`).join(', ');
      await tx.unsafe(`insert into public.${table} (${columns}) select ${columns} from public.${heap}`);
      await tx.unsafe(`drop table public.${heap}`);
      for (const key of parts.keys) {
        try {
          await tx.unsafe(`alter table public.${table} add constraint ${key.name} ${key.definition}`);
        } catch (error) {
          throw new Error(`${table}: key ${key.name} (${key.definition}) cannot be kept on a table distributed by ${column}: ${(error as Error).message}`);
        }
      }
      for (const index of parts.indexes) await tx.unsafe(index);
    }
  });
}

/**
 * Makes every write to a distributed table leave a row in `routing_writes`:
 * which partition, by which statement text (`current_query()`, the text the
 * server prepared), in which execution (backend and statement start). A
 * row-level trigger on the partitioned table is cloned to each partition,
 * where `TG_TABLE_NAME` names the partition. The log has no key, so writers
 * never wait on each other for it.
 */
export async function logWrites(sql: postgres.Sql, tables: readonly DistributedTable[] = distributedTables): Promise<void> {
  await sql.begin(async (tx) => {
    await tx.unsafe(`create unlogged table public.routing_writes (pid int not null, started_at timestamptz not null, query text not null, relation text not null)`);
    await tx.unsafe(`create function public.routing_note_write() returns trigger language plpgsql as $$
      begin
        insert into public.routing_writes values (pg_backend_pid(), statement_timestamp(), current_query(), TG_TABLE_NAME);
        return null;
      end $$`);
    for (const { table } of tables) {
      await tx.unsafe(`create trigger routing_writes after insert or update or delete on public.${table} for each row execute function public.routing_note_write()`);
    }
  });
}
