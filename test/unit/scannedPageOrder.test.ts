import { describe, expect, it } from 'vitest';
import { answering } from '../helpers/answeringRunner.ts';
import type { PageWindow } from '../../src/history/pageWindow.ts';
import { scanPage } from '../../src/store/pages.ts';

// The keyset page statements answer their rows unordered (a sort in
// PostgreSQL held every row until the last): scanPage puts them in the
// scan's order itself, whatever order the rows arrive in.
const header = { seq: null, latest_seq: 9, change_seq: 3, archived_through: 0, behind_exists: false, low_bound: null, high_bound: null, hidden_len: 0, body_text: null };
const row = (seq: number) => ({
  ...header,
  latest_seq: null,
  change_seq: null,
  archived_through: null,
  behind_exists: null,
  hidden_len: null,
  seq,
  senderId: 'u1',
  createdAt: '2026-12-06T00:00:00.000Z',
  revokedAt: null,
  revokedBy: null,
  editedAt: null,
  replyToSeq: null,
  threadRootSeq: null,
  body_text: `text ${seq}`,
});

const clock = { server: { days: null, maxMessages: null }, now: new Date('2026-12-06T00:00:00Z') };
const shuffled = [row(4), header, row(7), row(5), row(9), row(6)];

describe('scanPage orders what the statement answered', () => {
  it('newest and backward pages come newest first', async () => {
    for (const window of [{ direction: 'backward', size: 9, beforeSeq: null }, { direction: 'backward', size: 9, beforeSeq: 10 }] as PageWindow[]) {
      const page = await scanPage(answering(shuffled), 'u1', clock, 'c', window);
      expect(page.kind === 'page' && page.scanned.map((r) => r.seq)).toEqual([9, 7, 6, 5, 4]);
    }
  });

  it('forward pages come oldest first, and each row keeps its body', async () => {
    const page = await scanPage(answering(shuffled), 'u1', clock, 'c', { direction: 'forward', size: 9, afterSeq: 3 });
    expect(page.kind === 'page' && page.scanned.map((r) => r.seq)).toEqual([4, 5, 6, 7, 9]);
    expect(page.kind === 'page' && page.warmTexts.get(6)).toBe('text 6');
  });
});
