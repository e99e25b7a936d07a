/**
 * A statement that checks one member, by (conv_id, user_id), reads that
 * member's index entries, whatever the size of the group: the page, the
 * send and the member list, planned generic (as the server's connections
 * plan every prepared statement: plan_cache_mode force_generic_plan) and
 * custom; only the member list reads the join-order index. On the
 * benchmark database, generic plans had probed the member through the
 * join-order index (smaller than the primary key there, so a hair cheaper
 * by its estimate for the average conversation), reading every member of
 * the conversation: 86 buffers in a group of 10,000, in every page, send
 * and members request. This database does not lead the planner to that
 * choice (these tests passed before the index became partial, too); they
 * hold the plans where the partial index (db/schema.ts,
 * `listedInJoinOrder`) now keeps them whatever the statistics.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { KEEP_EVERYTHING } from '../../src/history/retention.ts';
import { listMembers } from '../../src/store/members.ts';
import { UNPUBLISHED } from '../../src/store/notify.ts';
import { scanPage } from '../../src/store/pages.ts';
import { sendMessage } from '../../src/store/sends.ts';
import { backends, openTestDatabase } from '../helpers/database.ts';
import { type LargeGroup, seedLargeGroup } from '../helpers/largeGroup.ts';
import { buffersTouched, explainRecorded, type PlanMode, type PlanNode, planShape } from '../helpers/preparedPlans.ts';

const clock = () => ({ server: KEEP_EVERYTHING, now: new Date() });
const SMALL_CONVERSATIONS = 500;

/** The indexes `plan` reads `members` through. */
const memberIndexes = (plan: PlanNode) => [...new Set(planShape(plan).flatMap((line) => line.match(/on members using (\w+)/)?.[1] ?? []))].sort();

describe.each(backends)('Member probes in a large group (%s)', (backend) => {
  let database: DatabaseHandle;
  let db: SqlRunner;
  let large: LargeGroup;
  let small: LargeGroup;

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    db = createRunner(database.client);
    await database.db.execute(sql`insert into conversations (id, kind, title, max_seq)
      select gen_random_uuid(), 'group', 'small ' || i, 0 from generate_series(1, ${SMALL_CONVERSATIONS}) i`);
    await database.db.execute(sql`insert into members (conv_id, user_id, role)
      select c.id, 'small-' || k || '-' || c.title, case when k = 0 then 'owner' else 'member' end
      from conversations c, generate_series(0, 4) k`);
    small = await seedLargeGroup(database, 5, 200);
    large = await seedLargeGroup(database, 6000, 200);
    // The indexes as on the benchmark database: the primary key split by
    // members joining in any user-id order and grown by every update of a
    // member row (read cursors: none is a HOT update), the join-order index
    // appended to in join order, densely packed and the smaller.
    for (let round = 0; round < 3; round++) await database.db.execute(sql`update members set read_seq = read_seq + 1`);
    await database.db.execute(sql`reindex index members_join_order_idx`);
    await database.db.execute(sql`vacuum analyze members`);
  }, 60_000);
  afterAll(() => database.close());

  const planOf = (work: (runner: SqlRunner) => Promise<unknown>, mode: PlanMode) => explainRecorded(db, work, mode);

  const newestPage = (group: LargeGroup) => (runner: SqlRunner) =>
    scanPage(runner, group.userId(1), clock(), group.uuid, { direction: 'backward', size: 50, beforeSeq: null });
  const send = (group: LargeGroup, mode: PlanMode) => (runner: SqlRunner) => sendMessage(runner, UNPUBLISHED, group.userId(1), group.uuid, `probe-${mode}`, 'hello');

  for (const mode of ['generic', 'custom'] as PlanMode[]) {
    it(`checks the reader of a page by one member's entries, and reads no more of a group of 6,000 than of 5 (${mode} plan)`, async () => {
      const [inLarge, inSmall] = [await planOf(newestPage(large), mode), await planOf(newestPage(small), mode)];
      // The primary key, or the reader's own memberships: either is one member's entries.
      expect(memberIndexes(inLarge)).not.toContain('members_join_order_idx');
      expect(buffersTouched(inLarge)).toBeLessThanOrEqual(buffersTouched(inSmall) + 5);
    });

    it(`checks the sender by one member's entries, and reads no more of a group of 6,000 than of 5 (${mode} plan)`, async () => {
      const [inLarge, inSmall] = [await planOf(send(large, mode), mode), await planOf(send(small, mode), mode)];
      expect(memberIndexes(inLarge)).not.toContain('members_join_order_idx');
      expect(buffersTouched(inLarge)).toBeLessThanOrEqual(buffersTouched(inSmall) + 15);
    });

    it(`lists members through the join-order index and checks the viewer by the primary key (${mode} plan)`, async () => {
      const plan = await planOf((runner) => listMembers(runner, large.userId(1), large.uuid, null, 100), mode);
      expect(memberIndexes(plan)).toEqual(['members_conv_id_user_id_pk', 'members_join_order_idx']);
      // The viewer's entry and the page's 101: a few leaf pages, not the group's 6,000 entries.
      expect(buffersTouched(plan)).toBeLessThanOrEqual(20);
    });
  }
});
