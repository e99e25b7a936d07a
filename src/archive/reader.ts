/**
 * Reading archived bodies: a segment fetched from its store, checked
 * against what `archive_segments` recorded, decoded, and kept in an
 * in-process cache sized by decoded bytes (ARCHIVE_CACHE_MB). Concurrent
 * reads of one segment share one fetch. A read waits for a fetch at most
 * ARCHIVE_READ_TIMEOUT_MS: past it the read fails with `timeout` while the
 * fetch goes on and fills the cache, so asking again soon finds it there.
 */
import { LRUCache } from 'lru-cache';
import { decodeSegment, type SegmentEntry } from './segment.ts';
import type { SegmentStore } from './segmentStore.ts';

/** A segment as `archive_segments` records it: what a read needs to fetch and check it. */
export interface SegmentRef {
  convId: string;
  fromSeq: number;
  toSeq: number;
  key: string;
  count: number;
  checksum: string;
}

/** Why an archived body could not be read. */
export type ArchiveProblem = 'missing' | 'corrupt' | 'unreachable' | 'not-configured' | 'timeout';

/**
 * An archived body could not be read: its segment is not in the store,
 * fails its checks, the store did not answer, or this process has no
 * archive. `code` is stable; the message names the segment and the cause.
 */
export class ArchiveUnavailableError extends Error {
  readonly code = 'ARCHIVE_UNAVAILABLE';
  constructor(
    readonly segmentKey: string,
    readonly problem: ArchiveProblem,
    detail: string,
  ) {
    super(`Archived messages in segment ${segmentKey} cannot be read: ${detail}.`);
    this.name = 'ArchiveUnavailableError';
  }
}

/** A decoded segment's texts by seq. */
export type SegmentTexts = ReadonlyMap<number, string>;

/** Reads segments through the cache. */
export interface ArchiveReader {
  /** `ref`'s texts by seq; throws `ArchiveUnavailableError`. */
  texts(ref: SegmentRef): Promise<SegmentTexts>;
  /** Reads answered from the cache, and fetches from the store, so far. */
  readonly stats: { hits: number; fetches: number };
}

/** What a decoded segment takes in memory, roughly: UTF-16 text and a map entry per message. */
function decodedSize(entries: readonly SegmentEntry[]): number {
  let size = 64;
  for (const entry of entries) size += 48 + entry.text.length * 2;
  return size;
}

/** ARCHIVE_READ_TIMEOUT_MS's default: how long a read waits for a segment that is not cached. */
const DEFAULT_ARCHIVE_READ_TIMEOUT_MS = 800;

/** `fetch`, or a `timeout` failure once `ms` have passed; the fetch itself is not abandoned. */
function withDeadline(fetch: Promise<SegmentTexts>, ms: number, key: string): Promise<SegmentTexts> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ArchiveUnavailableError(key, 'timeout', `the archive did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([fetch, deadline]).finally(() => clearTimeout(timer));
}

/**
 * A reader of `store` keeping up to `cacheBytes` of decoded segments (0:
 * none), whose reads wait at most `readTimeoutMs` for a fetch.
 */
export function createArchiveReader(store: SegmentStore, cacheBytes: number, readTimeoutMs = DEFAULT_ARCHIVE_READ_TIMEOUT_MS): ArchiveReader {
  const cache = cacheBytes > 0 ? new LRUCache<string, { texts: SegmentTexts; size: number }>({ maxSize: cacheBytes, sizeCalculation: (v) => v.size }) : null;
  const inFlight = new Map<string, Promise<SegmentTexts>>();
  const stats = { hits: 0, fetches: 0 };

  async function fetchTexts(ref: SegmentRef): Promise<SegmentTexts> {
    stats.fetches += 1;
    let bytes: Uint8Array | null;
    try {
      bytes = await store.get(ref.key);
    } catch (error) {
      throw new ArchiveUnavailableError(ref.key, 'unreachable', `${store.location} did not answer (${(error as Error).message})`);
    }
    if (bytes === null) throw new ArchiveUnavailableError(ref.key, 'missing', `${store.location} has no such object`);
    const decoded = await decodeSegment(bytes);
    if (!decoded.ok) throw new ArchiveUnavailableError(ref.key, 'corrupt', decoded.problem);
    const h = decoded.header;
    if (h.conversation !== ref.convId || h.fromSeq !== ref.fromSeq || h.toSeq !== ref.toSeq || h.count !== ref.count || h.checksum !== ref.checksum) {
      throw new ArchiveUnavailableError(ref.key, 'corrupt', 'its header is not the segment archive_segments recorded under that key');
    }
    const texts = new Map(decoded.entries.map((e) => [e.seq, e.text]));
    cache?.set(ref.key, { texts, size: decodedSize(decoded.entries) });
    return texts;
  }

  return {
    stats,
    texts(ref) {
      const cached = cache?.get(ref.key);
      if (cached !== undefined) {
        stats.hits += 1;
        return Promise.resolve(cached.texts);
      }
      let pending = inFlight.get(ref.key);
      if (pending === undefined) {
        pending = fetchTexts(ref).finally(() => inFlight.delete(ref.key));
        // A fetch every reader gave up on still ends in the cache; its failure is theirs to report, not the process's.
        pending.catch(() => {});
        inFlight.set(ref.key, pending);
      }
      return withDeadline(pending, readTimeoutMs, ref.key);
    },
  };
}

let processReader: ArchiveReader | null = null;

/**
 * Sets the reader this process's body reads use (`findMessageBodies`):
 * the server sets it once at start, from its configuration; tests set
 * their own. Null: no archive, and reading an archived body fails.
 */
export function setProcessArchive(reader: ArchiveReader | null): void {
  processReader = reader;
}

/** The reader set by `setProcessArchive`, or null. */
export function processArchive(): ArchiveReader | null {
  return processReader;
}
