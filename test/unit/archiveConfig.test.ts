import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';

const archiveOf = (env: Record<string, string>) => {
  const result = readConfig(env);
  return result.ok ? { ok: true, archive: result.config.archive } : result;
};
const DEFAULTS = { afterDays: null, keepNewest: 200, intervalSeconds: null, store: { kind: 'folder', dir: null }, cacheBytes: 64 * 1024 * 1024, readTimeoutMs: 800, restRatio: 1 };

describe('Archive settings', () => {
  it('archives nothing by default, into archive/ in the data folder (dir null), with a 64 MB cache', () => {
    expect(archiveOf({})).toEqual({ ok: true, archive: DEFAULTS });
  });

  it('reads the age, the newest kept, the interval, the folder, the cache size and the read deadline', () => {
    const env = { ARCHIVE_AFTER_DAYS: '90', ARCHIVE_KEEP_NEWEST: '0', ARCHIVE_INTERVAL_SECONDS: '3600', ARCHIVE_DIR: '/srv/cold', ARCHIVE_CACHE_MB: '0', ARCHIVE_READ_TIMEOUT_MS: '2500', ARCHIVE_REST_RATIO: '0' };
    expect(archiveOf(env)).toEqual({
      ok: true,
      archive: { afterDays: 90, keepNewest: 0, intervalSeconds: 3600, store: { kind: 'folder', dir: '/srv/cold' }, cacheBytes: 0, readTimeoutMs: 2500, restRatio: 0 },
    });
  });

  it('uses the S3 bucket with the standard AWS settings when ARCHIVE_S3_BUCKET is set', () => {
    expect(archiveOf({ ARCHIVE_S3_BUCKET: 'cold' })).toEqual({
      ok: true,
      archive: { ...DEFAULTS, store: { kind: 's3', bucket: 'cold', endpoint: null, region: null, credentials: null } },
    });
    const local = { ARCHIVE_S3_BUCKET: 'cold', AWS_ENDPOINT_URL: 'http://127.0.0.1:4569', AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
    expect(archiveOf(local)).toEqual({
      ok: true,
      archive: {
        ...DEFAULTS,
        store: { kind: 's3', bucket: 'cold', endpoint: 'http://127.0.0.1:4569', region: 'eu-west-1', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } },
      },
    });
  });

  it('refuses two places, half a key pair, a bad endpoint and out-of-range numbers, echoing each value', () => {
    const result = readConfig({
      ARCHIVE_S3_BUCKET: 'cold',
      ARCHIVE_DIR: '/srv/cold',
      AWS_ACCESS_KEY_ID: 'only-the-id',
      AWS_ENDPOINT_URL: 'localhost:4569',
      ARCHIVE_AFTER_DAYS: '0',
      ARCHIVE_KEEP_NEWEST: '-1',
      ARCHIVE_CACHE_MB: 'lots',
    });
    expect(result).toEqual({
      ok: false,
      problems: [
        'ARCHIVE_AFTER_DAYS must be an integer from 1 to 36500, got "0".',
        'ARCHIVE_KEEP_NEWEST must be an integer from 0 to 1000000000, got "-1".',
        'ARCHIVE_CACHE_MB must be an integer from 0 to 1000000, got "lots".',
        'ARCHIVE_DIR and ARCHIVE_S3_BUCKET name two places for the archive; set one, got "/srv/cold" and "cold".',
        'AWS_ENDPOINT_URL must be an http(s) URL, got "localhost:4569".',
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: set both, or neither for the AWS SDK's own credentials.",
      ],
    });
  });
});
