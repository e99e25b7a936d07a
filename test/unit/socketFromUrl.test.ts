import { describe, expect, it } from 'vitest';
import { socketFromUrl } from '../../src/db/client.ts';

describe('PostgreSQL URLs naming a Unix socket (libpq style)', () => {
  it('takes ?host=/dir off the URL and answers the socket file for the port', () => {
    expect([
      socketFromUrl('postgres://postgres@localhost/app?host=/var/run/postgresql'),
      socketFromUrl('postgres://app:secret@localhost:5433/app?host=/tmp&sslmode=disable'),
    ]).toEqual([
      { url: 'postgres://postgres@localhost/app', socketPath: '/var/run/postgresql/.s.PGSQL.5432' },
      { url: 'postgres://app:secret@localhost:5433/app?sslmode=disable', socketPath: '/tmp/.s.PGSQL.5433' },
    ]);
  });

  it('leaves a TCP URL, or a host parameter that is not a path, as it is', () => {
    const urls = ['postgres://postgres@127.0.0.1:5432/app', 'postgres://postgres@localhost/app?host=db.internal'];
    expect(urls.map(socketFromUrl)).toEqual(urls.map((url) => ({ url, socketPath: null })));
  });
});
