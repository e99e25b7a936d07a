/**
 * The two segment stores answer the same contract: a folder, and S3 through
 * the real AWS SDK against s3rver on a free local port.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderStore, type SegmentStore, s3Store } from '../../src/archive/segmentStore.ts';
import { type LocalS3, startLocalS3 } from '../helpers/localS3.ts';

const A = 'c0ffee00-0000-4000-8000-000000000001/1-1000-aaaaaaaaaaaaaaaa.seg';
const B = 'c0ffee00-0000-4000-8000-000000000001/1001-1500-bbbbbbbbbbbbbbbb.seg';
const C = 'c0ffee00-0000-4000-8000-000000000002/7-9-cccccccccccccccc.seg';

async function listed(store: SegmentStore) {
  const objects = [];
  for await (const object of store.list()) objects.push(object);
  return objects.sort((x, y) => x.key.localeCompare(y.key));
}

let s3: LocalS3;
let folder: string;
beforeAll(async () => {
  s3 = await startLocalS3();
  folder = await mkdtemp(join(tmpdir(), 'backscroll-archive-'));
});
afterAll(async () => {
  await s3.close();
  await rm(folder, { recursive: true, force: true });
});

const stores: [string, () => Promise<SegmentStore>][] = [
  ['folder', async () => folderStore(join(folder, 'archive'))],
  ['s3', async () => s3Store(await s3.bucket('segments'))],
];

describe.each(stores)('A segment store (%s)', (_kind, make) => {
  let store: SegmentStore;
  beforeAll(async () => {
    store = await make();
  });

  it('lists nothing, and answers null for a key it does not hold, when empty', async () => {
    expect(await listed(store)).toEqual([]);
    expect(await store.get(A)).toBeNull();
  });

  it('gives back what was put, byte for byte, and lists each object with its size and time', async () => {
    const before = Date.now() - 2000;
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
    await store.put(A, bytes);
    await store.put(B, Buffer.from('second'));
    await store.put(C, new Uint8Array(70_000).fill(7));
    expect(Buffer.from((await store.get(A))!)).toEqual(bytes);
    expect(Buffer.from((await store.get(C))!)).toEqual(Buffer.alloc(70_000, 7));
    const objects = await listed(store);
    expect(objects.map(({ key, bytes }) => ({ key, bytes }))).toEqual([
      { key: A, bytes: 7 },
      { key: B, bytes: 6 },
      { key: C, bytes: 70_000 },
    ]);
    for (const object of objects) expect(object.modifiedAt.getTime()).toBeGreaterThan(before);
  });

  it('replaces an object put again under the same key', async () => {
    await store.put(B, Buffer.from('replaced'));
    expect(Buffer.from((await store.get(B))!).toString()).toBe('replaced');
  });

  it('deletes an object, and deleting one that is not there is no error', async () => {
    await store.delete(A);
    await store.delete(A);
    expect(await store.get(A)).toBeNull();
    expect((await listed(store)).map((o) => o.key)).toEqual([B, C]);
  });

  it('refuses keys that could leave the store', async () => {
    for (const key of ['../escape.seg', '/absolute.seg', 'a/../../b', 'a//b', '', 'a b']) {
      await expect(store.put(key, Buffer.from('x'))).rejects.toThrow(`got "${key}"`);
    }
  });
});

describe('The folder store', () => {
  it('writes through a hidden file, so no half-written object is ever under a key', async () => {
    const dir = join(folder, 'atomic');
    const store = folderStore(dir);
    await store.put(C, Buffer.alloc(1000, 1));
    expect(await readdir(join(dir, 'c0ffee00-0000-4000-8000-000000000002'))).toEqual(['7-9-cccccccccccccccc.seg']);
  });

  it('lists a file a crash left half-written under its own name, so it can be removed', async () => {
    const dir = join(folder, 'crashed');
    const store = folderStore(dir);
    await store.put(C, Buffer.from('whole'));
    await writeFile(join(dir, 'c0ffee00-0000-4000-8000-000000000002', '.partial-0123456789ab'), 'half');
    expect((await listed(store)).map((o) => o.key)).toEqual(['c0ffee00-0000-4000-8000-000000000002/.partial-0123456789ab', C]);
    await store.delete('c0ffee00-0000-4000-8000-000000000002/.partial-0123456789ab');
    expect((await listed(store)).map((o) => o.key)).toEqual([C]);
  });

  it('lists nothing when its folder does not exist yet', async () => {
    expect(await listed(folderStore(join(folder, 'never-made')))).toEqual([]);
  });
});
