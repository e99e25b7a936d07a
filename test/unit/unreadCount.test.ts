import { describe, expect, it } from 'vitest';
import { UNREAD_CAP, UNREAD_SCAN_LIMIT, unreadCountOf } from '../../src/history/unreadCount.ts';

describe('Unread count: what the inbox reports for what the store found', () => {
  it('counts one past the cap, so exactly 99 and more than 99 can be told apart', () => {
    expect([UNREAD_CAP, UNREAD_SCAN_LIMIT]).toEqual([99, 100]);
  });

  it('reports nothing unread exactly', () => {
    expect(unreadCountOf(0)).toEqual({ count: 0, capped: false });
  });

  it('reports counts up to and including 99 exactly', () => {
    expect([1, 98, 99].map(unreadCountOf)).toEqual([
      { count: 1, capped: false },
      { count: 98, capped: false },
      { count: 99, capped: false },
    ]);
  });

  it('reports 99 and capped when the store found the one past the cap', () => {
    expect(unreadCountOf(100)).toEqual({ count: 99, capped: true });
  });
});
