/**
 * In development without `JWT_SECRET`, tokens are signed with a random secret
 * kept in the data folder, so dev tokens survive restarts and no secret ships
 * in the code. Production refuses to start without `JWT_SECRET` instead.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Reads the development secret from `dataDir`, creating it on first use. */
export function developmentSecret(dataDir: string): string {
  const file = join(dataDir, 'dev-jwt-secret');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    mkdirSync(dataDir, { recursive: true });
    const secret = randomBytes(32).toString('base64url');
    try {
      writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
      return secret;
    } catch {
      // Another process created it first: use theirs.
      return readFileSync(file, 'utf8').trim();
    }
  }
}
