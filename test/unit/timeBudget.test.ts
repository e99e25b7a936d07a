import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { DatabaseTimeoutError } from '../../src/db/errors.ts';
import type { SqlRunner } from '../../src/db/runner.ts';
import { withTimeBudget } from '../../src/db/timeBudget.ts';

/** A runner whose every statement takes `statementMs` on the fake clock, recording what ran. */
function fakeRunner(clock: { now: number }, statementMs: number, ran: string[]): SqlRunner {
  const runner: SqlRunner = {
    async rows<Row>() {
      ran.push('statement');
      clock.now += statementMs;
      return [] as Row[];
    },
    async transaction(work) {
      ran.push('transaction');
      return work(runner);
    },
  };
  return runner;
}

describe('A request’s database time budget', () => {
  it('runs statements until the budget is spent, then refuses the next with a timeout', async () => {
    const clock = { now: 0 };
    const ran: string[] = [];
    const budgeted = withTimeBudget(fakeRunner(clock, 40, ran), 100, () => clock.now);
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await budgeted.rows(sql`select 1`).then(() => 'ran', (e) => (e instanceof DatabaseTimeoutError ? 'timeout' : 'other')));
    // 40 + 40 + 40 = 120 ms spent after the third: the fourth never reaches the database.
    expect([outcomes, ran.length]).toEqual([['ran', 'ran', 'ran', 'timeout'], 3]);
  });

  it('counts a transaction as one span, statements inside included', async () => {
    const clock = { now: 0 };
    const ran: string[] = [];
    const budgeted = withTimeBudget(fakeRunner(clock, 30, ran), 50, () => clock.now);
    await budgeted.transaction(async (tx) => {
      await tx.rows(sql`select 1`);
      await tx.rows(sql`select 2`);
    });
    await expect(budgeted.rows(sql`select 3`)).rejects.toBeInstanceOf(DatabaseTimeoutError);
  });
});
