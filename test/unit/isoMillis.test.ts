import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoOfMillis } from '../../src/history/isoMillis.ts';
import { EARLIEST_MILLIS, LATEST_MILLIS } from '../../src/history/timeRange.ts';

/** Every millisecond a Date holds (±8.64e15), beyond what the API accepts. */
const DATE_LIMIT = 8.64e15;

describe('isoOfMillis', () => {
  it('spells any instant a Date holds as toISOString does', () => {
    fc.assert(
      fc.property(fc.integer({ min: -DATE_LIMIT, max: DATE_LIMIT }), (millis) => {
        expect(isoOfMillis(millis)).toBe(new Date(millis).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it('spells runs of nearby instants right, across midnights, the epoch and the accepted range’s ends', () => {
    // Nearby instants reuse the day's text: each must still get its own day and time.
    const starts = [EARLIEST_MILLIS, -86_400_000 - 3, -2, 0, 86_400_000 - 2, 951_782_399_998, LATEST_MILLIS - 3];
    fc.assert(
      fc.property(fc.constantFrom(...starts), fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 20 }), (start, steps) => {
        let millis = start;
        for (const step of steps) {
          millis += step;
          expect(isoOfMillis(millis)).toBe(new Date(millis).toISOString());
        }
      }),
    );
  });

  it('spells the first and last instants the API accepts', () => {
    expect([isoOfMillis(EARLIEST_MILLIS), isoOfMillis(LATEST_MILLIS)]).toEqual(['0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']);
  });
});
