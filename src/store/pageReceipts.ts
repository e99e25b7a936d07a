/**
 * Read receipts inside a page statement: a page (of messages, pages.ts, or
 * of a thread's replies, threads.ts) that asks each message for its
 * `readCount` gets them from the statement that scans it, so it is one
 * round trip, not a page statement and then a receipts statement
 * (`countReaders`, src/store/inbox.ts) for the keys it found. The second
 * round trip was most of what receipts cost: the page with `readCount`
 * served at 0.6 of the page's rate in a group of 10 members, where
 * counting is nearly free.
 *
 * The counting is `countReaders`' own, for one conversation: the page's
 * rows and a histogram of the members' read positions at or above its
 * lowest seq go through one running sum from the highest position down,
 * so each row's sum counts the members whose read cursor is at or past it
 * (equal positions are peers of one window row); the sender is then taken
 * back out when their own cursor reached the message. The histogram is one
 * index-only range of `members_read_seq_idx`, read by the bound
 * conversation id (a Citus shard), whatever the page size.
 */
import { type Placeholder, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { members } from '../db/schema.ts';

const r = alias(members, 'r');
const sender = alias(members, 'sender');

/**
 * `page` (a page statement whose message columns are `seq` and `senderId`,
 * without its `order by`) with each scanned row's read count as `readers`
 * (null on the row of an empty page), in `order` by seq when given.
 */
export function withReadCounts(page: SQL, convId: Placeholder, order: 'asc' | 'desc' | null): SQL {
  return sql`with page as (${page})
    select page.*, receipts.readers from page
    left join (
      select t.seq, t.at_or_above - coalesce((select (${sender.readSeq} >= t.seq)::int from ${members} ${sender}
          where ${sender.convId} = ${convId} and ${sender.userId} = t.sender_id), 0) as readers
      from (select u.seq, u.sender_id, u.scanned, (sum(u.n) over (order by u.seq desc))::int8 as at_or_above
        from (select p.seq, p."senderId" as sender_id, true as scanned, 0::int8 as n from page p where p.seq is not null
          union all
          select ${r.readSeq}, null, false, count(*) from ${members} ${r}
            where ${r.convId} = ${convId} and ${r.readSeq} >= (select min(p.seq) from page p)
            group by ${r.readSeq}) u) t
      where t.scanned) receipts on receipts.seq = page.seq
    ${order === null ? sql`` : sql`order by page.seq ${sql.raw(order)}`}`;
}
