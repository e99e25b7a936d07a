import type { SQL } from 'drizzle-orm';
import type { SqlRunner } from '../../src/db/runner.ts';

/** A runner whose every statement answers `rows` as given: for code that reads in one statement, fed rows in an order of the test's choosing. */
export function answering(rows: readonly object[]): SqlRunner {
  return {
    rows: async <Row>(_query: SQL) => rows as Row[],
    transaction: async () => {
      throw new Error('this read is one statement, not a transaction');
    },
  };
}
