/**
 * Trusted documents: the operations a first-party client was built with,
 * from a manifest `{ "<id>": "<document>" }` (what GraphQL Code Generator's
 * client preset writes with `persistedDocuments: true`; ids are
 * `sha256:<hex>`, or bare hex as in Apollo's `sha256Hash`). A request names
 * one by `documentId` (GraphQL over HTTP, Appendix A) or by
 * `extensions.persistedQuery.sha256Hash` (Apollo's APQ shape), and runs as
 * if it had sent that document. With `only`, nothing else runs: a free-form
 * `query` is refused unless its text is itself in the manifest (or it is
 * introspection and introspection is on).
 *
 * The decision is made before Apollo sees the request, so an untrusted
 * document is never parsed, validated or answered with schema details.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Kind, parse } from 'graphql';
import type { Config } from '../config.ts';
import { onlyIntrospects } from './gate/analyseOperation.ts';

/** Trusted documents by the lower-case hex sha256 of their text. */
export type TrustedDocuments = ReadonlyMap<string, string>;

/** How the manifest is enforced. */
export interface TrustedDocumentsPolicy {
  /** Refuse every operation that is not in the manifest. */
  only: boolean;
  /** Let unlisted introspection-only operations through (BACKSCROLL_INTROSPECTION). */
  introspection: boolean;
  /** The parse limit applied to a free-form query checked for introspection. */
  maxTokens: number;
}

/** What one request asked for, wherever it came from (POST body, GET query string, subscribe message). */
export interface DocumentParams {
  documentId?: unknown;
  query?: unknown;
  extensions?: unknown;
}

/** A refusal, with the status an HTTP request answers. */
export type Refusal = { ok: false; status: number; code: string; message: string };

/**
 * The outcome for one request: run `query` (null: leave the request as it
 * is, for Apollo to answer), or the refusal.
 */
export type Admission = { ok: true; query: string | null } | Refusal;

/** The lower-case hex sha256 of `text`'s UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const HEX_ID = /^(?:sha256:)?([0-9a-f]{64})$/;

/**
 * Reads and checks a manifest file. Every id must be the sha256 of its
 * document's exact text (`sha256:<hex>` or `<hex>`): a manifest made with
 * another hash would silently match nothing, so it is refused here.
 */
function readTrustedDocuments(path: string): { ok: true; documents: TrustedDocuments } | { ok: false; problem: string } {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return { ok: false, problem: `TRUSTED_DOCUMENTS must name a readable JSON file, but ${path} is not: ${(error as Error).message}` };
  }
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) {
    return { ok: false, problem: `TRUSTED_DOCUMENTS must hold a JSON object of id to document, but ${path} does not.` };
  }
  const documents = new Map<string, string>();
  for (const [id, document] of Object.entries(manifest)) {
    const hex = HEX_ID.exec(id)?.[1];
    if (typeof document !== 'string' || hex === undefined || sha256Hex(document) !== hex) {
      return {
        ok: false,
        problem: `Every TRUSTED_DOCUMENTS entry must be keyed by the sha256 of its document ("sha256:<hex>" or "<hex>"), but ${JSON.stringify(id).slice(0, 90)} in ${path} is not.`,
      };
    }
    documents.set(hex, document);
  }
  return { ok: true, documents };
}

const refusal = (code: string, message: string): Refusal => ({ ok: false, status: 400, code, message });

/** The id a request names its document by, if any: `documentId` first, then the APQ hash. */
function documentIdOf(params: DocumentParams): { id: unknown; apq: boolean } | null {
  if (params.documentId !== undefined && params.documentId !== null) return { id: params.documentId, apq: false };
  const persisted = (params.extensions as { persistedQuery?: { sha256Hash?: unknown } } | null | undefined)?.persistedQuery;
  if (persisted !== undefined && persisted !== null) return { id: persisted.sha256Hash, apq: true };
  return null;
}

/** Whether `query` parses to operations that only introspect. */
function isIntrospection(query: string, maxTokens: number): boolean {
  try {
    const document = parse(query, { maxTokens });
    return document.definitions.every(
      (d) => d.kind !== Kind.OPERATION_DEFINITION || (d.operation === 'query' && onlyIntrospects(d, document)),
    );
  } catch {
    return false;
  }
}

/** Decides one request: which document it runs, or why it is refused. */
export function admit(documents: TrustedDocuments, policy: TrustedDocumentsPolicy, params: DocumentParams): Admission {
  const named = documentIdOf(params);
  if (named !== null) {
    const hex = typeof named.id === 'string' ? HEX_ID.exec(named.id)?.[1] : undefined;
    const document = hex === undefined ? undefined : documents.get(hex);
    // The id wins over any text sent with it: clients that send both (graphql-ws
    // links always send the text) run the trusted document, never their own.
    if (document !== undefined) return { ok: true, query: document };
    // Not ours: without `only`, an APQ hash goes on to Apollo's own persisted queries (registration included).
    if (named.apq && !policy.only) return { ok: true, query: null };
    return refusal(
      'PERSISTED_QUERY_NOT_IN_LIST',
      `The document id ${JSON.stringify(named.id)?.slice(0, 90)} is not one of this server's trusted documents; the client may be older or newer than the server.`,
    );
  }
  if (!policy.only || typeof params.query !== 'string') return { ok: true, query: null };
  if (documents.has(sha256Hex(params.query))) return { ok: true, query: null };
  if (policy.introspection && isIntrospection(params.query, policy.maxTokens)) return { ok: true, query: null };
  return refusal(
    'QUERY_NOT_IN_SAFELIST',
    'This server runs only its trusted documents: send `documentId` (or `extensions.persistedQuery.sha256Hash`) naming one, not a `query` of your own.',
  );
}

/** An HTTP GraphQL request as the handler holds it before Apollo. */
export interface HttpParams {
  method: string;
  body: unknown;
  search: string;
}

/**
 * Applies `admit` to an HTTP request: answers the request Apollo should run
 * (the trusted document as `query`, the id removed) or the refusal. Bodies
 * that are not one JSON object (batches, plain text) pass untouched, for
 * Apollo to refuse.
 */
export function admitHttpRequest(documents: TrustedDocuments, policy: TrustedDocumentsPolicy, request: HttpParams): { ok: true; body: unknown; search: string } | Refusal {
  if (request.method === 'GET') {
    const search = new URLSearchParams(request.search);
    let extensions: unknown;
    try {
      extensions = search.has('extensions') ? JSON.parse(search.get('extensions')!) : undefined;
    } catch {
      return { ok: true, body: request.body, search: request.search };
    }
    const admission = admit(documents, policy, { documentId: search.get('documentId') ?? undefined, query: search.get('query') ?? undefined, extensions });
    if (!admission.ok) return admission;
    if (admission.query === null) return { ok: true, body: request.body, search: request.search };
    search.set('query', admission.query);
    search.delete('documentId');
    const rest = withoutPersistedQuery(extensions);
    if (rest === undefined) search.delete('extensions');
    else search.set('extensions', JSON.stringify(rest));
    return { ok: true, body: request.body, search: `?${search.toString()}` };
  }
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: true, body, search: request.search };
  const admission = admit(documents, policy, body as DocumentParams);
  if (!admission.ok) return admission;
  if (admission.query === null) return { ok: true, body, search: request.search };
  const { documentId: _id, extensions, ...rest } = body as DocumentParams & Record<string, unknown>;
  const remaining = withoutPersistedQuery(extensions);
  return { ok: true, body: { ...rest, query: admission.query, ...(remaining === undefined ? {} : { extensions: remaining }) }, search: request.search };
}

/** `extensions` without `persistedQuery`; undefined when nothing else is left. */
function withoutPersistedQuery(extensions: unknown): Record<string, unknown> | undefined {
  if (typeof extensions !== 'object' || extensions === null) return undefined;
  const { persistedQuery: _persisted, ...rest } = extensions as Record<string, unknown>;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** The server's trusted-document rules, built from its configuration. */
export interface TrustedDocumentsGate {
  /** For the HTTP handler's `admit` option. */
  admitHttp(request: HttpParams): { ok: true; body: unknown; search: string } | Refusal;
  /** For a subscription's subscribe message (WebSocket). */
  admitSubscription(payload: DocumentParams): Admission;
  /** Apollo's `persistedQueries` option: off under `only` (nothing may register), Apollo's default otherwise. */
  persistedQueries: false | undefined;
}

/**
 * Reads `config.trustedDocuments`' manifest; null when none is configured.
 * Throws when the manifest cannot be used: a server must not start open
 * when it was told to run only trusted documents.
 */
export function trustedDocumentsGate(config: Pick<Config, 'trustedDocuments' | 'introspection' | 'queryLimits'>): TrustedDocumentsGate | null {
  if (config.trustedDocuments === null) return null;
  const read = readTrustedDocuments(config.trustedDocuments.path);
  if (!read.ok) throw new Error(read.problem);
  const policy: TrustedDocumentsPolicy = {
    only: config.trustedDocuments.only,
    introspection: config.introspection,
    maxTokens: config.queryLimits.tokens,
  };
  return {
    admitHttp: (request) => admitHttpRequest(read.documents, policy, request),
    admitSubscription: (payload) => admit(read.documents, policy, payload),
    persistedQueries: policy.only ? false : undefined,
  };
}
