/**
 * Filling the search index of bodies written without it: rows from before
 * search existed (the migration adds the column empty), bulk loads such as
 * the benchmark seed, or every row after a tokenizer change (`all`). Walks
 * `message_bodies` in primary-key order in short batches, computes the
 * vectors in JavaScript (the one tokenizer) and writes each batch in one
 * statement, so sends go on meanwhile. Idempotent: a run cut short is
 * finished by the next one.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { searchVector } from '../history/searchText.ts';

/** How a reindex goes. */
export interface ReindexOptions {
  /** Rewrite rows that already have a vector too (after a tokenizer change). */
  all?: boolean;
  /** Rows per batch (each batch is one read and one write statement). */
  batchSize?: number;
  /** Called after each batch with the rows written so far and how many were missing at the start. */
  onBatch?: (written: number, pending: number) => void;
  signal?: AbortSignal;
}

/** What a reindex did. */
export interface ReindexSummary {
  written: number;
  seconds: number;
  stopped: boolean;
}

/** Rows whose vector is missing: the index's backlog, 0 when search sees every body. */
export async function searchBacklog(db: SqlRunner): Promise<number> {
  const [row] = await db.rows<{ n: number }>(sql`select count(*)::int8 as n from message_bodies where search_terms is null`);
  return row!.n;
}

/** Writes the vector of every body that lacks one (or of every body, with `all`). */
export async function reindexSearch(db: SqlRunner, options: ReindexOptions = {}): Promise<ReindexSummary> {
  const started = performance.now();
  const batchSize = options.batchSize ?? 2000;
  const pending = options.all ? (await db.rows<{ n: number }>(sql`select count(*)::int8 as n from message_bodies`))[0]!.n : await searchBacklog(db);
  const missingOnly = options.all ? sql.raw('true') : sql.raw('b.search_terms is null');
  let after: { convId: string; seq: number } | null = null;
  let written = 0;
  while (!options.signal?.aborted) {
    const range: SQL = after === null ? sql.raw('true') : sql`(b.conv_id, b.seq) > (${after.convId}::uuid, ${after.seq}::int8)`;
    const batch: { conv_id: string; seq: number; text: string }[] = await db.rows(sql`select b.conv_id, b.seq, b.text
        from message_bodies b where ${range} and ${missingOnly}
        order by b.conv_id, b.seq limit ${batchSize}`);
    const last = batch.at(-1);
    if (last === undefined) break;
    await db.rows(sql`update message_bodies b set search_terms = v.terms::tsvector
        from unnest(${sql.param(batch.map((r) => r.conv_id))}::uuid[], ${sql.param(batch.map((r) => r.seq))}::int8[],
          ${sql.param(batch.map((r) => searchVector(r.conv_id, r.text)))}::text[]) as v(conv_id, seq, terms)
        where b.conv_id = v.conv_id and b.seq = v.seq`);
    written += batch.length;
    after = { convId: last.conv_id, seq: last.seq };
    options.onBatch?.(written, pending);
  }
  return { written, seconds: (performance.now() - started) / 1000, stopped: options.signal?.aborted ?? false };
}
