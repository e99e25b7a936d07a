/**
 * A local S3-compatible server for the archive's tests: s3rver on a free
 * port of 127.0.0.1 with a temporary folder, reached through the real AWS
 * SDK and HTTP. The bucket is made by the test, as an operator would.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import type { SegmentStoreSettings } from '../../src/config.ts';

/** s3rver's built-in account. */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface LocalS3 {
  /** The settings of a store on a bucket made for this call. */
  bucket(name: string): Promise<Extract<SegmentStoreSettings, { kind: 's3' }>>;
  /** The same settings as environment variables, for a `backscroll` process. */
  env(settings: Extract<SegmentStoreSettings, { kind: 's3' }>): Record<string, string>;
  close(): Promise<void>;
}

export async function startLocalS3(): Promise<LocalS3> {
  const directory = await mkdtemp(join(tmpdir(), 'backscroll-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const admin = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: CREDENTIALS });
  return {
    async bucket(name) {
      await admin.send(new CreateBucketCommand({ Bucket: name }));
      return { kind: 's3', bucket: name, endpoint, region: 'us-east-1', credentials: CREDENTIALS };
    },
    env: (settings) => ({
      ARCHIVE_S3_BUCKET: settings.bucket,
      AWS_ENDPOINT_URL: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    }),
    async close() {
      admin.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
