/**
 * Where a message sits in its conversation, as the search index knows it:
 * besides its words (`search_terms`), every body row is indexed under its
 * seq bucket, `<conversation key>:<seq / BUCKET_SEQS>`, the second column of
 * the GIN index (`seqBuckets`, an expression, so no writer fills it in and
 * no row can lack it). A search asks "these words in this bucket of this
 * conversation" in one index scan, which visits only the matching rows of
 * those 32 seqs, and goes down a bucket at a time (postgresSearch.ts). The
 * walk it replaces tested every row on the way; with 138 messages atop each
 * conversation that did not match, it then read every match of the
 * conversation.
 */
import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import { SEARCH_KEY_BYTES } from '../history/searchText.ts';

/**
 * Seqs per bucket. A bucket's lookup visits every match of the words in it
 * (at most 32 rows) and costs a few index pages when none is there.
 */
export const BUCKET_SEQS = 32;

/** `conversationSearchKey` (searchText.ts) in SQL, of the uuid `column`. */
export function searchKeySql(column: AnyColumn | SQL): SQL {
  return sql`encode(substring(decode(md5(${column}::text), 'hex') from 1 for ${sql.raw(String(SEARCH_KEY_BYTES))}), 'base64')`;
}

/** The name of bucket `bucket` of the conversation whose search key is `key`. */
function bucketName(key: SQL, bucket: SQL): SQL {
  return sql`${key} || ':' || (${bucket})::text`;
}

/** The bucket `seq` is in. */
export function bucketOf(seq: SQL): SQL {
  return sql`(${seq} / ${sql.raw(String(BUCKET_SEQS))})`;
}

/** The first seq of bucket `bucket`. */
export function bucketStart(bucket: SQL): SQL {
  return sql`((${bucket}) * ${sql.raw(String(BUCKET_SEQS))})`;
}

/**
 * The index's second column: a one-element `text[]` naming the row's
 * bucket. A query must repeat it exactly (`seqBuckets(b.conv_id, b.seq)`)
 * for PostgreSQL to read it from the index.
 */
export function seqBuckets(convId: AnyColumn | SQL, seq: AnyColumn | SQL): SQL {
  return sql`(array[${bucketName(searchKeySql(convId), bucketOf(sql`${seq}`))}])`;
}

/** The names of buckets `from` to `to` (inclusive), for `seqBuckets(…) && …`: PostgreSQL makes the array once per scan. */
export function bucketRange(key: SQL, from: SQL, to: SQL): SQL {
  return sql`array(select ${bucketName(key, sql`g`)} from generate_series(${from}, ${to}) g)`;
}
