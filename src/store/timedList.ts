/**
 * Lists of messages across conversations in the order of a time (the
 * viewer's stars by when they starred, their mentions by when they were
 * sent), newest first, keyset-paged on (time, conversation, seq): the
 * position as a statement binds it and the fragments that compare with it.
 */
import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import type { Slots } from './statement.ts';

/** Where a page starts: strictly before this (time in microseconds since the epoch, conversation, seq). */
export interface TimedAfterValues {
  afterMicros: number;
  afterConvId: string;
  afterSeq: number;
}

/** The values of a page that starts after `after`, or at the newest (null): past every row, the year 9999 in microseconds. */
export function timedAfterValues(after: { micros: number; convId: string; seq: number } | null): TimedAfterValues {
  return {
    afterMicros: after?.micros ?? 253_402_300_800_000_000,
    afterConvId: after?.convId ?? 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    afterSeq: after?.seq ?? Number.MAX_SAFE_INTEGER,
  };
}

/** A timestamptz column in microseconds since the epoch (PostgreSQL's precision), as cursors carry it. */
export function epochMicros(time: AnyColumn): SQL<number> {
  return sql`(extract(epoch from ${time}) * 1000000)::int8`;
}

/** "Row (time, convId, seq) comes after the page's start in newest-first order": a row comparison in an index's order, so the page starts with one probe. */
export function beforeTimedStart(time: AnyColumn, convId: AnyColumn, seq: AnyColumn, v: Slots<TimedAfterValues>): SQL {
  return sql`(${time}, ${convId}, ${seq})
    < (timestamptz 'epoch' + ${v.afterMicros}::int8 * interval '1 microsecond', ${v.afterConvId}::uuid, ${v.afterSeq}::int8)`;
}
