/**
 * What `npm run bench:pgprof` makes of `perf report`: PostgreSQL's samples
 * by function, put into a few kinds of work, per request. Pure, so it is
 * tested without perf or a database.
 *
 * Debian's `postgres` binary keeps only its exported symbols: a static
 * function (the expression interpreter, to_char's formatting) shows as a
 * bare address, which is named here after the nearest exported symbol
 * below it ("near ExecEvalAggOrderedTransTuple"), enough to tell one part
 * of the executor from another.
 */

/** One line of `perf report --sort sym -n`: how many samples a function (or an address) took, and whether it is the kernel's. */
export interface SymbolSamples {
  symbol: string;
  samples: number;
  kernel: boolean;
}

/** The lines of `perf report --stdio --sort sym -n` output it can read; headers and blanks are skipped. */
export function parsePerfReport(text: string): SymbolSamples[] {
  const lines: SymbolSamples[] = [];
  for (const line of text.split('\n')) {
    // "    12.34%          567  [.] hash_search_with_hash_value"
    const match = /^\s*[\d.]+%\s+(\d+)\s+\[(.)\]\s+(.+?)\s*$/.exec(line);
    if (match === null) continue;
    lines.push({ samples: Number(match[1]), kernel: match[2] === 'k', symbol: match[3]! });
  }
  return lines;
}

/** The exported symbols of a binary from `nm -D --defined-only`, by address, ascending. */
export function parseSymbolTable(text: string): { address: number; name: string }[] {
  const table: { address: number; name: string }[] = [];
  for (const line of text.split('\n')) {
    const [address, , name] = line.trim().split(/\s+/);
    if (address === undefined || name === undefined || !/^[0-9a-f]+$/i.test(address)) continue;
    table.push({ address: Number.parseInt(address, 16), name });
  }
  return table.sort((a, b) => a.address - b.address);
}

/** A bare address's name: "near" the nearest exported symbol at or below it, or the address itself when there is none. */
export function nameOfAddress(symbol: string, table: readonly { address: number; name: string }[]): string {
  if (!/^0x[0-9a-f]+$/i.test(symbol)) return symbol;
  const address = Number.parseInt(symbol, 16);
  let low = 0;
  let high = table.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (table[middle]!.address <= address) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found < 0 ? symbol : `near ${table[found]!.name}`;
}

/** The kinds of work, in the order they are printed; a function is the first kind whose pattern it matches. */
export const KINDS = [
  { kind: 'kernel (socket, page-cache reads, scheduling)', test: (s: SymbolSamples) => s.kernel },
  {
    kind: 'executor start and end (plan nodes, expressions, relations opened and locked)',
    test: (s: SymbolSamples) =>
      /^(ExecInit|ExecEnd|ExecAssign|ExecBuild|ExecReadyExpr|ExecTypeFromTL|ExecConditionalAssign|CreateExecutorState|FreeExecutorState|ExecCreate|ExecOpenScanRelation|ExecGetRangeTableRelation|ExecCheckRTEPerms|ExecResetTupleTable|ExecAllocTableSlot|ExecSetSlotDescriptor|MakeTupleTableSlot|AllocSetContextCreate|AllocSetDelete|MemoryContextDelete|MemoryContextCreate|ExprEvalPushStep|TupleDescInit|CreateTemplateTupleDesc|CreateTupleDescCopy|expression_tree_walker|exprType|exprTypmod|exprCollation|ExecIndexBuildScanKeys|index_beginscan|RelationGetIndexScan|btbeginscan|btendscan|index_endscan|relation_open|relation_close|index_open|index_close|RelationIdGetRelation|RelationClose|LockAcquire|LockRelease|LockRelationOid|UnlockRelationId|get_typlen|fmgr_info|CheckExprStillValid|ExecInterpExprStillValid|InstrAlloc|near ExecPrepareCheck|near execCurrentOf)/.test(
        s.symbol,
      ),
  },
  { kind: 'expression evaluation (near ExecEvalAggOrderedTransTuple: the interpreter)', test: (s: SymbolSamples) => /^(ExecEval|ExecInterp|ExecJust|near ExecEvalAggOrderedTransTuple|ExecSubPlan|ExecSetParamPlan|FunctionCall)/.test(s.symbol) },
  { kind: 'time formatting (to_char, timestamptz output)', test: (s: SymbolSamples) => /^(near load_tzoffsets|timestamp|timestamptz|to_char|EncodeDateTime|j2date|dt2time|pg_ultostr|pg_ltostr|DCH_)/.test(s.symbol) },
  { kind: 'index scans (btree)', test: (s: SymbolSamples) => /^(_bt|bt[a-z]|near _bt|index_getnext|index_fetch|IndexNext|ExecIndexScan|uuid_|btint)/.test(s.symbol) },
  { kind: 'heap fetches and page pruning', test: (s: SymbolSamples) => /^(heap|HeapTuple|XidInMVCCSnapshot|TransactionIdIsCurrent|near XidInMVCCSnapshot|near HeapCheck)/.test(s.symbol) },
  {
    kind: 'shared buffers and locks',
    test: (s: SymbolSamples) => /^(hash_search|hash_bytes|ReadBuffer|LWLock|PinBuffer|UnpinBuffer|ReleaseBuffer|BufTable|near BufTable|StrategyGetBuffer|LockBuffer|ResourceOwner|near ScheduleBufferTag)/.test(s.symbol),
  },
  { kind: 'memory and strings (libc, palloc)', test: (s: SymbolSamples) => /^(__mem|__str|malloc|_int_|free|cfree|palloc|pfree|repalloc|MemoryContext|AllocSet|enlargeStringInfo|appendBinaryStringInfo|pq_)/.test(s.symbol) },
] as const;

/** Everything else, named or not. */
export const OTHER = 'other';

/** Samples by kind of work (`KINDS`, then OTHER), of lines whose bare addresses are named (`samplesBySymbol`). */
export function samplesByKind(lines: readonly SymbolSamples[]): Map<string, number> {
  const byKind = new Map<string, number>([...KINDS.map((k) => [k.kind, 0] as const), [OTHER, 0]]);
  for (const line of lines) {
    const kind = KINDS.find((k) => k.test(line))?.kind ?? OTHER;
    byKind.set(kind, byKind.get(kind)! + line.samples);
  }
  return byKind;
}

/** Samples by function, bare addresses named after `table` and those near the same symbol added together. */
export function samplesBySymbol(lines: readonly SymbolSamples[], table: readonly { address: number; name: string }[]): SymbolSamples[] {
  const merged = new Map<string, SymbolSamples>();
  for (const line of lines) {
    const symbol = nameOfAddress(line.symbol, table);
    const key = `${line.kernel}:${symbol}`;
    const known = merged.get(key);
    if (known === undefined) merged.set(key, { ...line, symbol });
    else known.samples += line.samples;
  }
  return [...merged.values()];
}

/** µs of CPU per request that `samples` taken at `frequency` Hz stand for over `requests` requests. */
export const microsPerRequest = (samples: number, frequency: number, requests: number): number => (samples / frequency / requests) * 1e6;
