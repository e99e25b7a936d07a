import { describe, expect, it } from 'vitest';
import { segmentFate } from '../../src/archive/segmentFate.ts';

describe('segmentFate: what becomes of a segment once some of its messages are gone', () => {
  it('keeps a segment whose every entry is still live', () => {
    expect(segmentFate({ count: 1000, live: 1000, withdrawn: 0 })).toBe('keep');
    expect(segmentFate({ count: 1, live: 1, withdrawn: 0 })).toBe('keep');
  });

  it('keeps one whose withdrawn messages are not in it (revoked before it was archived)', () => {
    expect(segmentFate({ count: 999, live: 999, withdrawn: 1 })).toBe('keep');
  });

  it('drops a segment with no live message, whatever took them', () => {
    expect(segmentFate({ count: 1000, live: 0, withdrawn: 0 })).toBe('drop');
    expect(segmentFate({ count: 1000, live: 0, withdrawn: 1000 })).toBe('drop');
    expect(segmentFate({ count: 1, live: 0, withdrawn: 1 })).toBe('drop');
  });

  it('keeps a segment exactly half purged, and rewrites one more than half purged', () => {
    expect(segmentFate({ count: 1000, live: 500, withdrawn: 0 })).toBe('keep');
    expect(segmentFate({ count: 1000, live: 499, withdrawn: 0 })).toBe('rewrite');
    expect(segmentFate({ count: 3, live: 2, withdrawn: 0 })).toBe('keep');
    expect(segmentFate({ count: 3, live: 1, withdrawn: 0 })).toBe('rewrite');
  });

  it('rewrites a segment holding one stale entry when its range holds a revoked or erased message', () => {
    expect(segmentFate({ count: 1000, live: 999, withdrawn: 1 })).toBe('rewrite');
    expect(segmentFate({ count: 2, live: 1, withdrawn: 1 })).toBe('rewrite');
  });
});
