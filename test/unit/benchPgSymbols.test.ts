import { describe, expect, it } from 'vitest';
import { KINDS, microsPerRequest, nameOfAddress, OTHER, parsePerfReport, parseSymbolTable, samplesByKind, samplesBySymbol } from '../../bench/pgSymbols.ts';

const REPORT = `# Samples: 19K of event 'cpu-clock:ppp'
#
# Overhead       Samples  Symbol
# ........  ............  ........................................
#
     1.50%           299  [.] hash_search_with_hash_value
     0.53%           106  [.] 0x0000000000446bf2
     0.29%            58  [.] 0x0000000000446c10
     0.22%            44  [k] xas_load
     0.10%            20  [.] ExecInitNode

`;
const NM = `0000000000446a00 T ExecEvalAggOrderedTransTuple
00000000000a0000 T hash_search_with_hash_value
0000000000500000 T load_tzoffsets
`;

describe('npm run bench:pgprof: what it makes of perf report', () => {
  it('reads each function line with its samples and whether it is the kernel', () => {
    expect(parsePerfReport(REPORT)).toEqual([
      { symbol: 'hash_search_with_hash_value', samples: 299, kernel: false },
      { symbol: '0x0000000000446bf2', samples: 106, kernel: false },
      { symbol: '0x0000000000446c10', samples: 58, kernel: false },
      { symbol: 'xas_load', samples: 44, kernel: true },
      { symbol: 'ExecInitNode', samples: 20, kernel: false },
    ]);
  });

  it('names a bare address after the nearest exported symbol at or below it', () => {
    const table = parseSymbolTable(NM);
    expect(table.map((s) => s.name)).toEqual(['hash_search_with_hash_value', 'ExecEvalAggOrderedTransTuple', 'load_tzoffsets']);
    expect(nameOfAddress('0x0000000000446bf2', table)).toBe('near ExecEvalAggOrderedTransTuple');
    expect(nameOfAddress('0x0000000000600000', table)).toBe('near load_tzoffsets');
    expect(nameOfAddress('0x0000000000000010', table)).toBe('0x0000000000000010');
    expect(nameOfAddress('ExecInitNode', table)).toBe('ExecInitNode');
  });

  it('adds up addresses near the same symbol, then sorts every function into one kind of work', () => {
    const merged = samplesBySymbol(parsePerfReport(REPORT), parseSymbolTable(NM));
    expect(merged.find((s) => s.symbol === 'near ExecEvalAggOrderedTransTuple')?.samples).toBe(164);
    const byKind = samplesByKind(merged);
    const kind = (prefix: string) => byKind.get(KINDS.find((k) => k.kind.startsWith(prefix))!.kind);
    expect(kind('kernel')).toBe(44);
    expect(kind('executor start')).toBe(20);
    expect(kind('expression evaluation')).toBe(164);
    expect(kind('shared buffers')).toBe(299);
    expect(byKind.get(OTHER)).toBe(0);
    expect([...byKind.values()].reduce((a, b) => a + b, 0)).toBe(299 + 106 + 58 + 44 + 20);
  });

  it('turns samples into µs per request', () => {
    // 999 samples at 999 Hz are one second of CPU; over 1,000 requests, 1,000 µs each.
    expect(microsPerRequest(999, 999, 1000)).toBeCloseTo(1000);
  });
});
