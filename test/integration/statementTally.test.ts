/**
 * What a runner records of the statements it sends: always their count, and
 * their text only over a client that asks (the test harness does, for
 * failure messages), so a runner kept for the life of a process holds one
 * number however many statements it sends.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createRunner, type StatementTally } from '../../src/db/runner.ts';
import { backends, openTestDatabase } from '../helpers/database.ts';
import { startHarness } from '../helpers/harness.ts';
import { createGroup } from '../helpers/operations.ts';

describe.each(backends)('A statement tally (%s)', (backend) => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openTestDatabase(backend);
  });
  afterAll(() => handle.close());

  /** Sends two statements, the second in a transaction, through a runner over `client` into a fresh tally. */
  const tallyOf = async (client: DatabaseHandle['client']): Promise<StatementTally> => {
    const tally: StatementTally = { statements: 0 };
    const db = createRunner(client, tally);
    await db.rows(sql`select 1 as one`);
    await db.transaction((tx) => tx.rows(sql`select ${2}::int as two`));
    return tally;
  };

  it('counts every statement and keeps no text by default', async () => {
    expect(await tallyOf(handle.client)).toEqual({ statements: 2 });
  });

  it('keeps each text in order when the client asks', async () => {
    expect(await tallyOf({ ...handle.client, keepStatementTexts: true })).toEqual({
      statements: 2,
      texts: ['select 1 as one', 'select $1::int as two'],
    });
  });
});

describe('The test harness', () => {
  it("hands back each request's statement texts with its count", async () => {
    const harness = await startHarness('pglite');
    try {
      const alice = await harness.client('alice');
      const group = await createGroup(alice, ['bob']);
      const { stats } = await alice.gql('query ($id: ID!) { conversation(id: $id) { title } }', { id: group.id });
      expect(stats.statements).toBe(1);
      expect(stats.texts).toEqual([expect.stringContaining('from "members" "mb" join "conversations" "c"')]);
    } finally {
      await harness.close();
    }
  });
});
