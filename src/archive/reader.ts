/**
 * Reading archived bodies: a segment fetched from its store, checked
 * against what `archive_segments` recorded, decoded, and kept in an
 * in-process cache sized by decoded bytes (ARCHIVE_CACHE_MB). Concurrent
 * reads of one segment share one fetch. A read waits for a fetch at most
 * ARCHIVE_READ_TIMEOUT_MS: past it the read fails with `timeout` while the
 * fetch goes on and fills the cache, so asking again soon finds it there.
 * What a reader does is reported to an observer (the server's metrics):
 * by default the process's, which servers join with `observeArchiveReads`,
 * so this layer never imports the metrics.
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

/**
 * Every reason an archived body may not be read (the metrics show each, 0
 * included). A reader meets all but `not-configured`, which the body reads
 * answer themselves when the process has no reader.
 */
export const ARCHIVE_PROBLEMS = ['missing', 'corrupt', 'unreachable', 'not-configured', 'timeout'] as const;

/** Why an archived body could not be read. */
export type ArchiveProblem = (typeof ARCHIVE_PROBLEMS)[number];

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
  /** The store it reads: an erasure rewrites that store's segments as soon as it commits (src/store/lifecycle.ts). */
  readonly store: SegmentStore;
  /** Reads answered from the cache, and fetches from the store, so far. */
  readonly stats: { hits: number; fetches: number };
}

/**
 * What a reader reports as it reads. Every read is a cache hit or a miss
 * (a miss waits for a fetch, its own or one already under way); every
 * fetch from the store is reported once it ends, whatever its outcome; and
 * every read that could not have its segment is reported with the problem.
 */
export interface ArchiveReadObserver {
  /** A read answered from the cache. */
  cacheHit(): void;
  /** A read that had to wait for a fetch. */
  cacheMiss(): void;
  /** A fetch from the store (with its decoding and checks) ended after `seconds`. */
  fetched(seconds: number): void;
  /** A read failed: its segment could not be read for `problem`. */
  unreadable(problem: ArchiveProblem): void;
}

const processObservers = new Set<ArchiveReadObserver>();

/** The observer readers report to unless given another: every observer joined through `observeArchiveReads`. */
const processObserver: ArchiveReadObserver = {
  cacheHit: () => processObservers.forEach((o) => o.cacheHit()),
  cacheMiss: () => processObservers.forEach((o) => o.cacheMiss()),
  fetched: (seconds) => processObservers.forEach((o) => o.fetched(seconds)),
  unreadable: (problem) => processObservers.forEach((o) => o.unreadable(problem)),
};

/**
 * Reports what this process's readers do (those made without an observer
 * of their own) to `observer` too, until the returned function is called.
 * A server's metrics join at start and leave at stop.
 */
export function observeArchiveReads(observer: ArchiveReadObserver): () => void {
  processObservers.add(observer);
  return () => processObservers.delete(observer);
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
 * none), whose reads wait at most `readTimeoutMs` for a fetch, reporting
 * to `observer` (default: the process's observers).
 */
export function createArchiveReader(
  store: SegmentStore,
  cacheBytes: number,
  readTimeoutMs = DEFAULT_ARCHIVE_READ_TIMEOUT_MS,
  observer: ArchiveReadObserver = processObserver,
): ArchiveReader {
  const cache = cacheBytes > 0 ? new LRUCache<string, { texts: SegmentTexts; size: number }>({ maxSize: cacheBytes, sizeCalculation: (v) => v.size }) : null;
  const inFlight = new Map<string, Promise<SegmentTexts>>();
  const stats = { hits: 0, fetches: 0 };

  async function fetchTexts(ref: SegmentRef): Promise<SegmentTexts> {
    stats.fetches += 1;
    const started = performance.now();
    try {
      return await fetchAndDecode(ref);
    } finally {
      observer.fetched((performance.now() - started) / 1000);
    }
  }

  async function fetchAndDecode(ref: SegmentRef): Promise<SegmentTexts> {
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
    store,
    texts(ref) {
      const cached = cache?.get(ref.key);
      if (cached !== undefined) {
        stats.hits += 1;
        observer.cacheHit();
        return Promise.resolve(cached.texts);
      }
      observer.cacheMiss();
      let pending = inFlight.get(ref.key);
      if (pending === undefined) {
        pending = fetchTexts(ref).finally(() => inFlight.delete(ref.key));
        // A fetch every reader gave up on still ends in the cache; its failure is theirs to report, not the process's.
        pending.catch(() => {});
        inFlight.set(ref.key, pending);
      }
      return withDeadline(pending, readTimeoutMs, ref.key).catch((error: unknown) => {
        // Counted per read, as a page meets it: readers sharing one failed fetch each went without the segment.
        if (error instanceof ArchiveUnavailableError) observer.unreadable(error.problem);
        throw error;
      });
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
