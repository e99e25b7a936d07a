import { describe, expect, it } from 'vitest';
import { answering } from '../helpers/answeringRunner.ts';
import { listMembers } from '../../src/store/members.ts';

// The members page statement answers its rows unordered (a sort in
// PostgreSQL cost a tenth of the member list's execution): listMembers puts
// them in join order itself, whatever order they arrive in, and keeps the
// statement's order among members who joined in the same millisecond.
const member = (userId: string, joinedMillis: number) => ({
  userId,
  role: 'member',
  joinedMillis,
  readSeq: 0,
});

describe('listMembers orders what the statement answered', () => {
  it('puts members in join order, numerically', async () => {
    // 999999999999 has 12 digits: compared as text it would sort after 1000000000001.
    const rows = [member('c', 1000000000002), member('a', 999999999999), member('b', 1000000000001)];
    const page = await listMembers(answering(rows), 'u0', 'conv', null, 10);
    expect(page.kind === 'members' && page.rows.map((r) => r.userId)).toEqual(['a', 'b', 'c']);
  });

  it('keeps the order the statement gave members who joined in the same millisecond', async () => {
    // Within one millisecond the index orders by user id in the database's collation, which JavaScript's `<` may not share.
    const rows = [member('z', 1000), member('B', 2000), member('a', 2000), member('y', 1000)];
    const page = await listMembers(answering(rows), 'u0', 'conv', null, 10);
    expect(page.kind === 'members' && page.rows.map((r) => r.userId)).toEqual(['z', 'y', 'B', 'a']);
  });
});
