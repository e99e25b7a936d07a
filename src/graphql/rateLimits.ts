/**
 * Per-user rate limits on mutations: a token bucket per (user, mutation),
 * `sendMessage` with its own limit. A refused operation runs nothing and
 * answers `RATE_LIMITED` (HTTP 429, `Retry-After`, `extensions.retryAfterSeconds`).
 * Buckets live in this process: with several workers each keeps its own.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { HeaderMap } from '@apollo/server';
import { GraphQLError, Kind } from 'graphql';
import type { Config } from '../config.ts';
import { type Bucket, type BucketLimit, takeToken } from '../history/tokenBucket.ts';
import type { RequestContext } from './context.ts';

/** Buckets kept at most; the least recently used go first (an idle bucket is full anyway). */
const MAX_BUCKETS = 100_000;

/** The plugin enforcing `config.rateLimits`. */
export function rateLimits(config: Config, now: () => number = Date.now): ApolloServerPlugin<RequestContext> {
  const buckets = new Map<string, Bucket>();
  const limitOf = (field: string): BucketLimit => (field === 'sendMessage' ? config.rateLimits.send : config.rateLimits.otherMutations);
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, contextValue }) {
          if (operation?.operation !== 'mutation' || contextValue.auth.kind !== 'user') return;
          const nowMs = now();
          for (const selection of operation.selectionSet.selections) {
            if (selection.kind !== Kind.FIELD || selection.name.value.startsWith('__')) continue;
            const key = `${contextValue.auth.userId}\u0000${selection.name.value}`;
            const result = takeToken(buckets.get(key), nowMs, limitOf(selection.name.value));
            buckets.delete(key);
            buckets.set(key, result.bucket);
            if (buckets.size > MAX_BUCKETS) buckets.delete(buckets.keys().next().value as string);
            if (!result.allowed) {
              const retryAfterSeconds = Math.ceil(result.retryAfterMs / 1000);
              throw new GraphQLError(
                `Too many ${selection.name.value} calls: try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`,
                {
                  extensions: {
                    code: 'RATE_LIMITED',
                    retryAfterSeconds,
                    http: { status: 429, headers: new HeaderMap([['retry-after', String(retryAfterSeconds)]]) },
                  },
                },
              );
            }
          }
        },
      };
    },
  };
}
