/**
 * Where archive segments live, behind one interface: a folder (the
 * default, ARCHIVE_DIR) or an S3 bucket (ARCHIVE_S3_BUCKET, any
 * S3-compatible server through AWS_ENDPOINT_URL). A store keeps bytes under
 * keys and knows nothing of segments: the archiver decides what to write,
 * and `archive_segments` says which objects count.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, paginateListObjectsV2, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { SegmentStoreSettings } from '../config.ts';

/** An object a store holds. */
interface StoredObject {
  key: string;
  bytes: number;
  modifiedAt: Date;
}

/** Bytes under keys (`a/b.seg`: path segments of letters, digits, `.`, `_` and `-`, never `.` or `..`). */
export interface SegmentStore {
  /** Where the objects are, for messages: `folder /srv/archive`, `s3://bucket`. */
  readonly location: string;
  /** Stores `bytes` under `key` durably (on disk or acknowledged by the server) before resolving. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The object's bytes; null when there is no such object. */
  get(key: string): Promise<Uint8Array | null>;
  /** Removes the object; removing one that is not there is not an error. */
  delete(key: string): Promise<void>;
  /** Every object, in no particular order. */
  list(): AsyncIterable<StoredObject>;
}

const KEY = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

function checkKey(key: string): void {
  if (!KEY.test(key) || key.split('/').some((part) => part === '.' || part === '..')) {
    throw new Error(`A segment store key is path segments of letters, digits, ".", "_" and "-" (never "." or ".."), got "${key}".`);
  }
}

/** The store `settings` name; a folder without a `dir` is archive/ in `dataDir`. */
export function openSegmentStore(settings: SegmentStoreSettings, dataDir: string): SegmentStore {
  if (settings.kind === 'folder') return folderStore(settings.dir ?? join(dataDir, 'archive'));
  return s3Store(settings);
}

/** Where a put writes before its rename: hidden, and no name the archiver gives a segment. */
const PARTIAL_PREFIX = '.partial-';

/**
 * Objects as files under `dir`. A put writes a hidden file beside the
 * target, flushes it to disk, renames it into place and flushes the folder,
 * so an object is there whole or not at all, and there once `put` resolves.
 * Files a crash left half-written are listed under their own (hidden)
 * names, so the archiver's cleanup removes them like any object it never
 * recorded.
 */
export function folderStore(dir: string): SegmentStore {
  const root = resolve(dir);
  const pathOf = (key: string) => {
    checkKey(key);
    return join(root, ...key.split('/'));
  };
  return {
    location: `folder ${root}`,
    async put(key, bytes) {
      const target = pathOf(key);
      const folder = dirname(target);
      await mkdir(folder, { recursive: true });
      const partial = join(folder, `${PARTIAL_PREFIX}${randomBytes(6).toString('hex')}`);
      const file = await open(partial, 'w');
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(partial, target);
      const folderHandle = await open(folder, 'r');
      try {
        await folderHandle.sync();
      } finally {
        await folderHandle.close();
      }
    },
    async get(key) {
      try {
        return await readFile(pathOf(key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
    async *list() {
      let entries;
      try {
        entries = await readdir(root, { recursive: true, withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
      for (const entry of entries) {
        if (!entry.isFile()) continue;
        const path = join(entry.parentPath, entry.name);
        const info = await stat(path).catch(() => null);
        if (info === null) continue;
        yield { key: relative(root, path).split(sep).join('/'), bytes: info.size, modifiedAt: info.mtime };
      }
    },
  };
}

/** How long an S3 request may take before it fails (and the SDK's retries, 3 attempts in all, take over). */
const S3_CONNECT_TIMEOUT_MS = 3000;
const S3_REQUEST_TIMEOUT_MS = 30_000;

/** Objects in an S3 bucket. With an endpoint (an S3-compatible server), buckets are addressed by path, as such servers expect. */
export function s3Store(settings: Extract<SegmentStoreSettings, { kind: 's3' }>): SegmentStore {
  const client = new S3Client({
    ...(settings.endpoint === null ? {} : { endpoint: settings.endpoint, forcePathStyle: true }),
    ...(settings.region === null ? {} : { region: settings.region }),
    ...(settings.credentials === null ? {} : { credentials: settings.credentials }),
    // Segments carry their own sha256, checked on every read; the SDK's
    // default CRC32 headers are not understood by every S3-compatible server.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: S3_CONNECT_TIMEOUT_MS, requestTimeout: S3_REQUEST_TIMEOUT_MS },
  });
  const Bucket = settings.bucket;
  return {
    location: `s3://${Bucket}${settings.endpoint === null ? '' : ` at ${settings.endpoint}`}`,
    async put(key, bytes) {
      checkKey(key);
      await client.send(new PutObjectCommand({ Bucket, Key: key, Body: bytes, ContentLength: bytes.byteLength }));
    },
    async get(key) {
      checkKey(key);
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        return answer.Body === undefined ? new Uint8Array() : await answer.Body.transformToByteArray();
      } catch (error) {
        if (error instanceof NoSuchKey) return null;
        throw error;
      }
    },
    async delete(key) {
      checkKey(key);
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
    async *list() {
      for await (const page of paginateListObjectsV2({ client }, { Bucket })) {
        for (const object of page.Contents ?? []) {
          if (object.Key === undefined) continue;
          yield { key: object.Key, bytes: object.Size ?? 0, modifiedAt: object.LastModified ?? new Date(0) };
        }
      }
    },
  };
}
