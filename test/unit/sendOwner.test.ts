import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sendOwnerSlot } from '../../src/history/sendOwner.ts';

describe('sendOwnerSlot', () => {
  const ids = Array.from({ length: 2000 }, () => randomUUID());

  it('gives every conversation one slot among the workers, the same each time', () => {
    for (const workers of [1, 2, 3, 8]) {
      for (const id of ids) {
        const slot = sendOwnerSlot(id, workers);
        expect(Number.isInteger(slot) && slot >= 0 && slot < workers).toBe(true);
        expect(sendOwnerSlot(id, workers)).toBe(slot);
      }
    }
  });

  it('spreads conversations evenly, so each worker stores about its share of sends', () => {
    for (const workers of [2, 3, 8]) {
      const counts = new Array<number>(workers).fill(0);
      for (const id of ids) counts[sendOwnerSlot(id, workers)]! += 1;
      const share = ids.length / workers;
      // Binomial spread at 2,000 ids is a few percent; 20% off a fair share would be a bad hash.
      for (const count of counts) expect(Math.abs(count - share)).toBeLessThan(share * 0.2);
    }
  });
});
