import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fnv1a32 } from '../../src/history/checksum.ts';
import { decodeCursor, encodeChangeCursor, encodeCursor } from '../../src/history/cursor.ts';
import { decodeMessageId, messageGlobalId } from '../../src/history/globalId.ts';
import { encodeOpaque, scopeTag } from '../../src/history/opaque.ts';
import { encodeSeqRun, RUN_LENGTH, seqTokenMaker } from '../../src/history/tokenRuns.ts';

const UUID = '3f2c8a9e-1b4d-4c6e-9f00-a1b2c3d4e5f6';
const OTHER = '0b1c2d3e-4f50-4617-8a9b-c0d1e2f3a4b5';

/** The token encodeOpaque makes of `prefix:scope:seq`. */
const alone = (prefix: string) => (scope: string, seq: number) => encodeOpaque(prefix, [scope, seq]);

describe('encodeSeqRun', () => {
  it('makes exactly the tokens encodeOpaque makes one by one, whatever the lead and seq lengths modulo 3', () => {
    // Leads of 3, 4 and 5 bytes, and runs across 9→10, 99→100 and 999→1000 (tokens in one run differ in length) and across 2^31 (digits by integer division, then by floating point).
    for (const scope of ['', 'a', 'ab']) {
      const lead = `t:${scope}:`;
      for (const from of [0, 90, 995, 2 ** 31 - 10, 2 ** 40]) {
        const run = encodeSeqRun(lead, fnv1a32(lead), from, 20);
        expect(run).toEqual(Array.from({ length: 20 }, (_, k) => alone('t')(scope, from + k)));
      }
    }
  });
});

describe('seqTokenMaker', () => {
  /** A maker whose lone tokens are counted. */
  function counted() {
    const calls = { single: 0 };
    const make = seqTokenMaker(
      (scope) => `t:${scope}:`,
      (scope, seq) => {
        calls.single += 1;
        return alone('t')(scope, seq);
      },
    );
    return { make, calls };
  }

  it('answers what encodeOpaque would, for any order of scopes and seqs', () => {
    const scope = fc.constantFrom('a', 'bb', 'ccc', 'é', UUID);
    // Seqs near 0 (and below, which no caller asks for) and near the largest safe integer, where runs stop.
    const start = fc.oneof(fc.integer({ min: -3, max: 300 }), fc.integer({ min: Number.MAX_SAFE_INTEGER - 100, max: Number.MAX_SAFE_INTEGER }));
    const step = fc.record({ scope, seq: start, walk: fc.integer({ min: -80, max: 80 }) });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const { make } = counted();
        for (const { scope, seq, walk } of steps) {
          // Each step walks from `seq` up or down `walk` seqs, as pages and their callers do, then jumps.
          for (let k = 0; k <= Math.abs(walk); k++) {
            const at = seq + Math.sign(walk) * k;
            if (make(scope, at) !== alone('t')(scope, at)) return false;
          }
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });

  it('makes a walk of a page, up or down, in runs rather than one by one', () => {
    const up = counted();
    for (let seq = 1_000; seq < 1_050; seq++) up.make(UUID, seq);
    expect(up.calls.single).toBe(1);

    const down = counted();
    for (let seq = 1_050; seq > 1_000; seq--) down.make(UUID, seq);
    // One alone, then one run of RUN_LENGTH down, then the next run.
    expect(down.calls.single).toBe(1);

    const long = counted();
    for (let seq = 1; seq <= 3 * RUN_LENGTH; seq++) long.make(UUID, seq);
    expect(long.calls.single).toBe(1);
  });

  it('makes tokens of a lead that is not ASCII one by one', () => {
    const { make, calls } = counted();
    for (let seq = 1; seq <= 10; seq++) expect(make('é', seq)).toBe(alone('t')('é', seq));
    expect(calls.single).toBe(10);
  });
});

describe('message ids and cursors made in runs', () => {
  it('are the tokens made one by one, and decode back, across conversations and directions', () => {
    const seqs = [...Array.from({ length: 70 }, (_, k) => 500 + k), ...Array.from({ length: 70 }, (_, k) => 900 - k), 7, 8, 9];
    for (const convId of [UUID, OTHER, UUID]) {
      for (const seq of seqs) {
        expect(messageGlobalId(convId, seq)).toBe(encodeOpaque('M', [convId, seq]));
        expect(encodeCursor(convId, seq)).toBe(encodeOpaque('c2', [scopeTag(convId), seq]));
        expect(encodeChangeCursor(convId, seq)).toBe(encodeOpaque('h2', [scopeTag(convId), seq]));
        expect(decodeMessageId(messageGlobalId(convId, seq))).toEqual({ convId, seq });
        expect(decodeCursor(convId, encodeCursor(convId, seq))).toEqual({ ok: true, seq });
      }
    }
  });
});
