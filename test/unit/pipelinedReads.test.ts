import { describe, expect, it } from 'vitest';
import { READ_PIPELINE_DEPTH, readPoolHasRoom } from '../../src/db/pipelinedReads.ts';

describe('readPoolHasRoom', () => {
  it('takes statements until each connection holds READ_PIPELINE_DEPTH of them', () => {
    for (const size of [1, 2, 5]) {
      const full = size * READ_PIPELINE_DEPTH;
      expect([0, full - 1, full, full + 3].map((inFlight) => readPoolHasRoom({ inFlight, size }))).toEqual([true, true, false, false]);
    }
  });
});
