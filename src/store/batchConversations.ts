/**
 * How a statement that reads a batch of keys from several conversations
 * (a loader batch: a page's reactions, an inbox page's bodies) stays on
 * the shards of those conversations. A key's conversation comes out of an
 * unnested array, so it is known only as rows are read: neither
 * PostgreSQL's partition pruning nor Citus's router can use it, and a
 * statement that joins or correlates by it alone reads every shard. So a
 * batch binds its distinct conversation ids once (`KeyValues.convIds`) and
 * names them, as a plain `conv_id = any($ids)`, on every
 * conversation-scoped table it reads: a batch of one conversation reads
 * one shard, a batch of k at most k (test/routing/routing.test.ts).
 *
 * The bound ids are a second condition on a column the key already
 * equates, and PostgreSQL takes the two for independent ones: it expects
 * under one row of the conversation. Where the lookup is ordered, or the
 * table has one index led by the conversation, that changes nothing
 * (`oneOfBatch`). Where a lookup by key has several to choose from
 * (messages, members), every one of them then looks as cheap, and it may
 * read the whole conversation for each key; there the bound ids are the
 * index condition and the key's conversation only a filter (`keyedAmong`).
 */
import { type AnyColumn, type Placeholder, type SQL, sql } from 'drizzle-orm';

/** The distinct conversations of `keys`, in first-seen order: what a batch binds as its ids. */
export function distinctConvIds(keys: readonly { convId: string }[]): string[] {
  return [...new Set(keys.map((k) => k.convId))];
}

/**
 * A row's conversation in a statement that reads a batch: the row's own
 * column or expression, and the batch's distinct conversation ids as bound.
 * Fragments that look up by a conversation (sqlFragments.ts) take it where
 * they take a single conversation. Made by `inBatch`.
 */
export class BatchConversation {
  constructor(
    readonly row: SQL | AnyColumn,
    readonly convIds: Placeholder,
  ) {}
}

/** `row`'s conversation, one of the batch's `convIds`. */
export function inBatch(row: SQL | AnyColumn, convIds: Placeholder): BatchConversation {
  return new BatchConversation(row, convIds);
}

/** `column` is one of the conversations bound as `convIds` (a uuid array): a plain predicate, so it prunes shards. */
export function amongConversations(column: AnyColumn | SQL, convIds: Placeholder): SQL {
  return sql`${column} = any(${convIds}::uuid[])`;
}

/**
 * `column` is `conv`'s row's conversation, and one of the batch's: for a
 * lookup that stays an equality on the row's conversation, because its
 * order depends on it (the newest expired message, the nearest hidden
 * range, a page of versions) or because the table has one index led by
 * the conversation.
 */
export function oneOfBatch(column: AnyColumn, conv: BatchConversation): SQL {
  return sql`${column} = ${conv.row} and ${amongConversations(column, conv.convIds)}`;
}

/**
 * `column` is row `row`'s conversation, one of the batch's `convIds`, in a
 * lookup by key (a message by seq, a member by user) of a table with more
 * than one index led by the conversation. The bound ids are the index
 * condition and the row's conversation only a filter on what they find
 * (`is not distinct from`: never an index condition, never counted twice).
 * Both as equalities, PostgreSQL picked `messages_created_idx` for a page
 * of 50 on the bench data and read the whole conversation for each key
 * (74,000 rows, 223,000 buffers, against 500). The price: in a batch of k
 * conversations each key is looked up in all k (k descents of the index,
 * k - 1 of them empty; 50 conversations of one key each, 10,000 buffers
 * against 400).
 */
export function keyedAmong(column: AnyColumn, row: SQL | AnyColumn, convIds: Placeholder): SQL {
  return sql`${amongConversations(column, convIds)} and ${column} is not distinct from ${row}`;
}
