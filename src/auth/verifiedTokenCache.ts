/**
 * A bounded cache of tokens that verified, so a client's every request does
 * not pay for HMAC verification again (it showed up at 5-9% of busy time).
 * An entry is used only until the token's own `exp`; the least recently
 * used entries are dropped first when the cache is full (lru-cache).
 * Failures are never cached.
 */
import { LRUCache } from 'lru-cache';

/** What a verified token proved. */
export interface VerifiedToken {
  userId: string;
  admin: boolean;
  /** The token's `exp`, in milliseconds since the epoch. */
  expiresAtMs: number;
}

export class VerifiedTokenCache {
  // Expiry is checked on read against the caller's clock rather than with
  // lru-cache's `ttl`, which keeps its own: the verifier's `now` is the one
  // jose judges `exp` by, and tests move it.
  private readonly entries: LRUCache<string, VerifiedToken>;

  /** Holds at most `capacity` tokens. */
  constructor(capacity: number) {
    this.entries = new LRUCache({ max: capacity });
  }

  /** The cached verification of `token` if it has not expired at `nowMs`. */
  get(token: string, nowMs: number): VerifiedToken | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= nowMs) {
      this.entries.delete(token);
      return undefined;
    }
    return entry;
  }

  /** Remembers a token that verified. */
  set(token: string, verified: VerifiedToken): void {
    this.entries.set(token, verified);
  }

  get size(): number {
    return this.entries.size;
  }
}
