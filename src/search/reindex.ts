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
import { alias } from 'drizzle-orm/pg-core';
import { messageBodies } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { searchVector } from '../history/searchText.ts';
import type { MessageRow } from '../store/rows.ts';
import { bare, selectList } from '../store/sqlFragments.ts';
import { type Slots, statement } from '../store/statement.ts';

const b = alias(messageBodies, 'b');

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

const countBacklog = statement<Record<never, never>>(
  () => sql`select count(*)::int8 as n from ${messageBodies} where ${messageBodies.searchTerms} is null`,
);
const countBodies = statement<Record<never, never>>(() => sql`select count(*)::int8 as n from ${messageBodies}`);

/** Rows whose vector is missing: the index's backlog, 0 when search sees every body. */
async function searchBacklog(db: SqlRunner): Promise<number> {
  const [row] = await db.rows<{ n: number }>(countBacklog({}));
  return row!.n;
}

/** A body to index. */
type BodyToIndex = Pick<typeof messageBodies.$inferSelect, 'convId' | 'seq' | 'text'>;

interface BatchValues {
  batchSize: number;
  /** Where the walk stands; unused for the first batch. */
  afterConvId: string;
  afterSeq: number;
}

/** The next batch of bodies in primary-key order: after a position (or from the start), missing vectors only (or all). */
function batchStatement(paged: boolean, missingOnly: boolean) {
  return statement<BatchValues>((v: Slots<BatchValues>) => {
    const range: SQL = paged ? sql`(${b.convId}, ${b.seq}) > (${v.afterConvId}::uuid, ${v.afterSeq}::int8)` : sql`true`;
    const missing: SQL = missingOnly ? sql`${b.searchTerms} is null` : sql`true`;
    return sql`select ${selectList<BodyToIndex>({ convId: b.convId, seq: b.seq, text: b.text })}
        from ${messageBodies} ${b} where ${range} and ${missing}
        order by ${b.convId}, ${b.seq} limit ${v.batchSize}`;
  });
}

const batches = {
  missing: { first: batchStatement(false, true), after: batchStatement(true, true) },
  all: { first: batchStatement(false, false), after: batchStatement(true, false) },
};

const writeVectors = statement<{ convIds: string[]; seqs: number[]; terms: string[] }>(
  (v) => sql`update ${messageBodies} ${b} set ${bare(b.searchTerms)} = v.terms::tsvector
        from unnest(${v.convIds}::uuid[], ${v.seqs}::int8[], ${v.terms}::text[]) as v(conv_id, seq, terms)
        where ${b.convId} = v.conv_id and ${b.seq} = v.seq`,
);

/** Writes the vector of every body that lacks one (or of every body, with `all`). */
export async function reindexSearch(db: SqlRunner, options: ReindexOptions = {}): Promise<ReindexSummary> {
  const started = performance.now();
  const batchSize = options.batchSize ?? 2000;
  const pending = options.all ? (await db.rows<{ n: number }>(countBodies({})))[0]!.n : await searchBacklog(db);
  const shapes = options.all ? batches.all : batches.missing;
  let after: Pick<MessageRow, 'convId' | 'seq'> | null = null;
  let written = 0;
  while (!options.signal?.aborted) {
    const batch: BodyToIndex[] = await db.rows<BodyToIndex>(
      after === null
        ? shapes.first({ batchSize, afterConvId: '', afterSeq: 0 })
        : shapes.after({ batchSize, afterConvId: after.convId, afterSeq: after.seq }),
    );
    const last = batch.at(-1);
    if (last === undefined) break;
    await db.rows(
      writeVectors({
        convIds: batch.map((r) => r.convId),
        seqs: batch.map((r) => r.seq),
        terms: batch.map((r) => searchVector(r.convId, r.text)),
      }),
    );
    written += batch.length;
    after = { convId: last.convId, seq: last.seq };
    options.onBatch?.(written, pending);
  }
  return { written, seconds: (performance.now() - started) / 1000, stopped: options.signal?.aborted ?? false };
}
