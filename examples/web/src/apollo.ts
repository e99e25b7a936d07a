/**
 * The Apollo Client of the page: queries and mutations over HTTP, the
 * subscription over WebSocket (graphql-ws) on the same URL, split by
 * operation type, behind the link that carries consistency tokens
 * (consistencyLink.ts). Every operation is sent as the exact text of the
 * trusted-documents manifest that codegen wrote at build time.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, Observable, split } from '@apollo/client';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import { type DocumentNode, getOperationAST, parse, print } from 'graphql';
import { createClient } from 'graphql-ws';
import { consistencyLink } from './consistencyLink';
import manifest from './gql/persisted-documents.json';

/** Dispatched on `window` when the subscription socket came back after a drop. */
export const RECONNECTED = 'backscroll:reconnected';

/** Operation name -> the manifest's text of it. */
const trustedText = new Map<string, string>();
for (const text of Object.values(manifest as Record<string, string>)) {
  const name = getOperationAST(parse(text))?.name?.value;
  if (name) trustedText.set(name, text);
}

/** The manifest text of `document`'s operation; an operation missing from it is a build bug. */
function printTrusted(document: DocumentNode): string {
  const name = getOperationAST(document)?.name?.value;
  const text = name === undefined ? undefined : trustedText.get(name);
  if (text === undefined) throw new Error(`Operation ${name ?? '(anonymous)'} is not in the trusted documents manifest; run npm run codegen.`);
  return text;
}

/** A link that runs subscriptions through graphql-ws (GraphQLWsLink, sending the manifest text). */
class TrustedWsLink extends ApolloLink {
  constructor(private readonly client: ReturnType<typeof createClient>) {
    super();
  }
  override request(operation: Parameters<ApolloLink['request']>[0]) {
    return new Observable<any>((observer) =>
      this.client.subscribe(
        { operationName: operation.operationName, variables: operation.variables, query: printTrusted(operation.query) },
        {
          next: (value) => observer.next(value),
          complete: () => observer.complete(),
          error: (err) => observer.error(err instanceof Error ? err : new Error(describeSocketError(err))),
        },
      ),
    );
  }
}

function describeSocketError(err: unknown): string {
  if (Array.isArray(err)) return err.map((e) => (e as { message?: string }).message).join('; ');
  if (err && typeof err === 'object' && 'code' in err) return `WebSocket closed (${(err as CloseEvent).code} ${(err as CloseEvent).reason})`;
  return String(err);
}

export function makeApolloClient(serverUrl: string, token: string): ApolloClient<unknown> {
  const http = new HttpLink({
    uri: serverUrl,
    headers: { authorization: `Bearer ${token}` },
    print: (ast) => (ast.kind === 'Document' && getOperationAST(ast)?.name ? printTrusted(ast) : print(ast)),
  });
  const wsUrl = serverUrl.replace(/^http/, 'ws');
  const ws = new TrustedWsLink(
    createClient({
      url: wsUrl,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: Infinity,
      // After a reconnect, open views fetch what they missed (README, Real-time: the reconnect contract).
      on: { connected: (_socket, _payload, wasRetry) => void (wasRetry && window.dispatchEvent(new Event(RECONNECTED))) },
    }),
  );
  // Before the split: live events' tokens count too, so a fetch after an event reads what it announced.
  const link = ApolloLink.from([
    consistencyLink(),
    split(
      ({ query }) => {
        const definition = getMainDefinition(query);
        return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
      },
      ws,
      http,
    ),
  ]);
  return new ApolloClient({
    link,
    cache: new InMemoryCache({
      possibleTypes: { MessageContent: ['TextContent', 'RevokedContent', 'PurgedContent'], Node: ['Conversation', 'Message', 'User', 'Announcement'] },
      typePolicies: {
        Conversation: {
          fields: {
            // Pages stitch into one list, oldest first: one per opening, kept apart by
            // its arguments: at the first unread (`aroundFirstUnread`) or a permalink (`around`).
            messages: relayStylePagination(['around', 'aroundFirstUnread']),
            // All of them in one page (at most 50 exist); a pin or an unpin answers them anew.
            pinnedMessages: { merge: false },
          },
        },
        Message: {
          fields: {
            // A thread's pages stitch into one list, oldest first.
            replies: relayStylePagination(),
            // Neither has an id: an edit, a revoke or a reaction replaces them whole (a revoked text must not linger).
            content: { merge: false },
            reactions: { merge: false },
          },
        },
        Viewer: {
          fields: {
            // Connections have no id; the newest write wins.
            conversations: { merge: (_existing, incoming) => incoming },
            // Pages stitch into one list, newest first.
            starredMessages: relayStylePagination(),
            mentions: relayStylePagination(),
          },
        },
      },
    }),
  });
}
