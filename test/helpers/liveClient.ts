/**
 * A graphql-ws client for tests: subscriptions whose results are read one at
 * a time, with a time limit, and whose end (complete, errors, or the socket
 * closing) is a promise.
 */
import type { FormattedExecutionResult } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

/** How a subscription ended. */
type Ending = { kind: 'complete' } | { kind: 'closed'; code: number; reason: string } | { kind: 'errors'; errors: { extensions?: Record<string, unknown> }[] };

export interface LiveSubscription<Data = any> {
  /** The next result the server sent, in order; fails after `ms`. */
  next(ms?: number): Promise<FormattedExecutionResult<Data, unknown>>;
  /** Every result received so far, taken or not. */
  received: FormattedExecutionResult<Data, unknown>[];
  ended: Promise<Ending>;
  unsubscribe(): void;
}

export interface LiveClient {
  subscribe<Data = any>(query: string, variables?: Record<string, unknown>): LiveSubscription<Data>;
  dispose(): Promise<void>;
}

/** The WebSocket URL of the GraphQL endpoint at `httpUrl`. */
export function webSocketUrl(httpUrl: string): string {
  return httpUrl.replace(/^http/, 'ws');
}

/** A client of the server at `httpUrl` (its HTTP GraphQL URL) that opens its socket with `connectionParams`. */
export function liveClient(httpUrl: string, connectionParams?: Record<string, unknown>): LiveClient {
  const client = createClient({
    url: webSocketUrl(httpUrl),
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: true,
  });
  return {
    subscribe<Data>(query: string, variables: Record<string, unknown> = {}) {
      const received: FormattedExecutionResult<Data, unknown>[] = [];
      let taken = 0;
      let wake: (() => void) | null = null;
      let end!: (ending: Ending) => void;
      const ended = new Promise<Ending>((resolve) => (end = resolve));
      const unsubscribe = client.subscribe<Data>(
        { query, variables },
        {
          next: (result) => {
            received.push(result);
            wake?.();
          },
          error: (error) => {
            const close = error as { code?: number; reason?: string };
            end(
              typeof close.code === 'number'
                ? { kind: 'closed', code: close.code, reason: close.reason ?? '' }
                : { kind: 'errors', errors: error as { extensions?: Record<string, unknown> }[] },
            );
            wake?.();
          },
          complete: () => {
            end({ kind: 'complete' });
            wake?.();
          },
        },
      );
      return {
        received,
        ended,
        unsubscribe,
        async next(ms = 5000) {
          const deadline = Date.now() + ms;
          while (taken >= received.length) {
            const left = deadline - Date.now();
            if (left <= 0) throw new Error(`no result within ${ms} ms (received ${received.length}: ${JSON.stringify(received)})`);
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, left);
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            wake = null;
          }
          return received[taken++]!;
        },
      };
    },
    dispose: () => client.dispose() as Promise<void>,
  };
}

/**
 * Waits until `subscription` is registered on the server: graphql-ws has no
 * "subscribed" acknowledgement, so `poke` makes an event (answering its seq)
 * until one arrives, and every poke's event is taken before this returns.
 */
export async function untilLive(subscription: LiveSubscription, poke: () => Promise<number>, attempts = 40): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const seq = await poke();
    const deadline = Date.now() + 250;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      const result = await subscription.next(left).catch(() => null);
      if (result === null) break;
      if ((result.data as { conversationEvents?: { seq?: number } } | null)?.conversationEvents?.seq === seq) return;
    }
  }
  throw new Error(`the subscription did not go live after ${attempts} pokes (received ${JSON.stringify(subscription.received)})`);
}
