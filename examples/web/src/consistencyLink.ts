/**
 * Read-your-writes when the server reads from replicas, without sticky
 * sessions: every backscroll response carries a consistency token (the
 * `Backscroll-Consistency` header, and `extensions.consistency`, which live
 * events over WebSocket carry too), and a request that sends the token back
 * is read from a copy at least that fresh. This link remembers the latest
 * token it has seen and sends it with every HTTP request, so a page fetched
 * after a send, or after a live event, shows what they announced.
 */
import { ApolloLink } from '@apollo/client';

const HEADER = 'backscroll-consistency';

/** A token's WAL position (`16/B374D848`) as a number, or null when it is not one. */
function positionOf(token: unknown): bigint | null {
  if (typeof token !== 'string') return null;
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(token);
  return match ? (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`) : null;
}

/**
 * Put it before the HTTP / WebSocket split, so it sees the tokens of both.
 * It keeps the latest token by position, not the last to arrive: answers
 * can come back out of order, and an older token would ask for less.
 */
export function consistencyLink(): ApolloLink {
  let latest: { token: string; position: bigint } | null = null;
  const note = (token: unknown) => {
    const position = positionOf(token);
    if (position !== null && (latest === null || position > latest.position)) latest = { token: token as string, position };
  };
  return new ApolloLink((operation, forward) => {
    if (latest !== null) {
      const token = latest.token;
      operation.setContext(({ headers = {} }: { headers?: Record<string, string> }) => ({ headers: { ...headers, [HEADER]: token } }));
    }
    return forward(operation).map((result) => {
      // HttpLink leaves the fetch Response in the context; the server exposes the header to pages (CORS).
      const response = operation.getContext().response as Response | undefined;
      note(response?.headers.get(HEADER));
      note(result.extensions?.consistency);
      return result;
    });
  });
}
