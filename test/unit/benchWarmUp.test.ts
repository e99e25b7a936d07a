import { describe, expect, it } from 'vitest';
import { WARM_UP_SLICES, type WarmUpSlice, warmedUp } from '../../bench/warmUp.ts';

const slices = (...micros: number[]): WarmUpSlice[] => micros.map((serverMicrosPerRequest) => ({ perSecond: 1000, serverMicrosPerRequest }));

describe('Bench warm-up: when the server counts as warm', () => {
  it('runs the minimum number of slices however flat the first ones are', () => {
    expect(warmedUp(slices())).toBe(false);
    expect(warmedUp(slices(900, 900, 900, 900, 900))).toBe(false);
    expect(warmedUp(slices(900, 900, 900, 900, 900, 900))).toBe(true);
  });

  it('goes on while the last two slices cost more than 5% less than the two before them', () => {
    // A fresh two-worker server in the bench (README, Performance): one slice up again, still warming.
    expect(warmedUp(slices(3113, 2114, 1684, 1343, 1199, 1321))).toBe(false);
    expect(warmedUp(slices(3113, 2114, 1684, 1343, 1199, 1321, 1080, 1100))).toBe(false);
    expect(warmedUp(slices(3113, 2114, 1684, 1343, 1199, 1321, 1080, 1100, 1060, 1090))).toBe(true);
  });

  it('counts a pair within 5% as warm, and one just past 5% cheaper as still warming', () => {
    expect(warmedUp(slices(2000, 2000, 1000, 1000, 951, 951))).toBe(true);
    expect(warmedUp(slices(2000, 2000, 1000, 1000, 949, 949))).toBe(false);
  });

  it('stops at the maximum even while the cost still falls', () => {
    const falling = Array.from({ length: WARM_UP_SLICES.max }, (_, i) => 4000 - 200 * i);
    expect(warmedUp(slices(...falling.slice(0, -1)))).toBe(false);
    expect(warmedUp(slices(...falling))).toBe(true);
  });
});
