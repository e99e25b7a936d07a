/**
 * The bad input corpus: malformed and hostile requests to the GraphQL
 * endpoint, each with the HTTP status and `extensions.code` it must answer.
 * badInput.test.ts sends every case and checks the answer, that the server
 * still serves, and that the database did not change.
 *
 * Statuses follow the GraphQL-over-HTTP draft for a client that accepts
 * `application/graphql-response+json` (the runner sends that Accept header):
 * a request that is not well-formed, or whose document fails to parse or
 * validate, or whose variables fail to coerce, answers 4xx with no `data`;
 * once execution starts (a resolver refuses an argument), the answer is 200
 * with `data` holding only nulls. Apollo Server gives 405 for a mutation over
 * GET and for other methods, 415 for a GET with a non-JSON content type; our
 * handler gives 413 for a body over 1 MiB; a request without a valid token
 * answers 401. One exception to "no data, so 4xx": Apollo answers an unknown
 * persisted-query hash with 200, which its clients read as "send the query".
 */
import { createHmac } from 'node:crypto';
import { SignJWT } from 'jose';
import { encodeOpaque } from '../../src/history/opaque.ts';
import { encodeSearchCursor, searchScopeKey } from '../../src/history/searchCursor.ts';
import { TEST_SECRET } from './harness.ts';
import { MESSAGES, SEND } from './operations.ts';

/** The `iss` and `aud` the corpus's server requires (set through JWT_ISSUER and JWT_AUDIENCE). */
export const ISSUER = 'https://auth.backscroll.test/';
export const AUDIENCE = 'backscroll-api';

/** What the corpus's requests refer to; made by the test before the corpus runs. */
export interface CorpusFixtures {
  /** `Authorization` values: a member of `convId`, and a user who is not. */
  member: string;
  outsider: string;
  /** The member's group with messages, which most cases aim at. */
  convId: string;
  /** A message of `convId`. */
  messageId: string;
  /** A cursor of `convId`. */
  cursor: string;
  /** A cursor of another group of the member's. */
  otherCursor: string;
  /** A cursor of the outsider's own group, which the member is not in. */
  foreignCursor: string;
  /** The member's group of threads, edits and reactions. */
  thread: ThreadFixtures;
}

/** What the edit, reply, thread and reaction cases aim at: all in one group of the member's, all sent by the member. */
export interface ThreadFixtures {
  convId: string;
  convUuid: string;
  /** A thread's root: edited once, with one reply and the reaction 👍 from the member. */
  rootId: string;
  rootSeq: number;
  /** The reply to `rootId`, also with 👍 from the member. */
  replyId: string;
  /** A revoked message. */
  revokedId: string;
  /** A message with the most distinct reactions a message holds (20). */
  fullId: string;
  /** The `edits` cursor of the root's one earlier version. */
  editCursor: string;
  /** The cursor of the member among the users of the root's 👍. */
  reactorCursor: string;
}

/** One raw HTTP request; the runner adds only an Accept header when it has none. */
export interface RawRequest {
  method: string;
  /** Appended to the endpoint URL, with its `?`. */
  search?: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
}

/**
 * One bad request and what it must answer: the HTTP status, the first
 * error's `extensions.code` and, where one argument is at fault, its
 * `extensions.argumentName`.
 */
export interface BadInputCase {
  category: Category;
  name: string;
  status: number;
  code: string;
  argumentName?: string;
  request(fixtures: CorpusFixtures): RawRequest | Promise<RawRequest>;
}

/** What the issue asks the corpus to cover; every category has several cases. */
export const CATEGORIES = [
  'malformed body',
  'missing or invalid query',
  'wrong content type',
  'wrong method',
  'operation selection',
  'huge strings',
  'deep nesting',
  'alias bombs',
  'fragment cycles and misuse',
  'directive floods and token limits',
  'unknown fields',
  'wrong variable types',
  'out-of-range page sizes',
  'forged and foreign cursors',
  'ids of other types',
  'made-up values',
  'reactions that are not one emoji or shortcode',
  'edits, replies and threads refused',
  'mentions refused',
  'invalid JWTs',
  'oversized bodies',
] as const;
type Category = (typeof CATEGORIES)[number];

const JSON_TYPE = { 'content-type': 'application/json' };
const PREFLIGHT = { 'apollo-require-preflight': 'true' };
const MiB = 1024 * 1024;

/** A POST with `body` as it is (a string is sent byte for byte). */
const post = (body: RawRequest['body'], headers: Record<string, string> = JSON_TYPE): RawRequest => ({ method: 'POST', headers, body });

/** A POST of `payload` as JSON, with `authorization` if given. */
const postJson = (payload: unknown, authorization?: string): RawRequest =>
  post(JSON.stringify(payload), authorization === undefined ? JSON_TYPE : { ...JSON_TYPE, authorization });

/** A GET with `params` in the query string. */
const get = (params: [string, string][], headers: Record<string, string> = PREFLIGHT): RawRequest => ({
  method: 'GET',
  search: `?${new URLSearchParams(params)}`,
  headers,
});

/** An operation sent by the member. */
const member =
  (query: string, variables?: Record<string, unknown> | ((f: CorpusFixtures) => Record<string, unknown>), operationName?: string) =>
  (f: CorpusFixtures): RawRequest =>
    postJson({ query, variables: typeof variables === 'function' ? variables(f) : variables, operationName }, f.member);

/** A page of `convId` with `args` as variables, sent by the member. */
const page = (args: (f: CorpusFixtures) => Record<string, unknown>) => member(MESSAGES, (f) => ({ id: f.convId, ...args(f) }));

/** A send to `convId` by the member with `text`. */
const sendText = (text: string) => member(SEND, (f) => ({ conversationId: f.convId, clientMsgId: 'bad-input', text }));

const VIEWER = '{ viewer { id } }';

// Selections built once: the documents are large but fixed.
const repeat = (count: number, make: (i: number) => string, separator = ' ') => Array.from({ length: count }, (_, i) => make(i)).join(separator);
const nestedMessages = (levels: number) => {
  let selection = 'id';
  for (let i = 0; i < levels; i++) selection = `conversation { messages(last: 1) { edges { node { ${selection} } } } }`;
  return `query ($id: ID!) { message(id: $id) { ${selection} } }`;
};
const deepList = (levels: number) => `${'['.repeat(levels)}"x"${']'.repeat(levels)}`;
const letter = (i: number) => String.fromCharCode(65 + i);
/** Fragments A to H, each one page deeper than the last. */
const DEEP_FRAGMENTS = `query ($id: ID!) { message(id: $id) { ...A } } ${repeat(
  8,
  (i) => `fragment ${letter(i)} on Message { conversation { messages(last: 1) { edges { node { ${i < 7 ? `...${letter(i + 1)}` : 'id'} } } } } }`,
)}`;
const DEEP_INLINE_FRAGMENTS = `query ($id: ID!) { message(id: $id) { ${'... on Message { conversation { messages(last: 1) { edges { node { '.repeat(8)} id ${'} } } } } '.repeat(8)} } }`;
const THREE_FRAGMENT_CYCLE = `query ($id: ID!) { message(id: $id) { ...A } }
  fragment A on Message { conversation { ...B } }
  fragment B on Conversation { messages { edges { node { ...C } } } }
  fragment C on Message { ...A }`;
const ALIASED_NESTED_PAGES = `query ($id: ID!) { conversation(id: $id) { ${repeat(
  15,
  (i) => `p${i}: messages(last: 100) { edges { node { conversation { messages(last: 10) { startSeq } } } } }`,
)} } }`;
const GET_QUERY_AND_MUTATION = `query Q ${VIEWER} mutation M { openDirectConversation(userId: "bob") { conversation { id } } }`;
const HIDE = 'mutation ($ids: [ID!]!) { deleteMessagesForMe(input: { messageIds: $ids }) { deletedCount } }';

// Tokens: every kind of credential that must not let a request through.
const now = () => Math.floor(Date.now() / 1000);
const WRONG_SECRET = 'another-secret-that-is-also-at-least-32-characters';
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const GOOD_CLAIMS = () => ({ sub: 'alice', iss: ISSUER, aud: AUDIENCE, exp: now() + 3600 });

/** Signs `claims` with `alg` and `secret`, adding nothing the caller did not ask for. */
export function signClaims(claims: Record<string, unknown>, { secret = TEST_SECRET, alg = 'HS256' } = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

/** A token whose header claims `alg` but whose signature is HMAC-SHA256 with our secret (key confusion). */
function hmacUnder(alg: string, claims: Record<string, unknown>): string {
  const input = `${base64url({ alg, typ: 'JWT' })}.${base64url(claims)}`;
  return `${input}.${createHmac('sha256', TEST_SECRET).update(input).digest('base64url')}`;
}

/** A send to `convId` with `authorization` (a mutation, so a wrongly accepted token would write). */
const sendWith = (authorization: string | undefined | Promise<string>) => async (f: CorpusFixtures) =>
  postJson({ query: SEND, variables: { conversationId: f.convId, clientMsgId: 'bad-token', text: 'should not be stored' } }, await authorization);
const bearer = async (token: string | Promise<string>) => `Bearer ${await token}`;

/** A page cursor of the conversation tagged `convTag` (opaque.ts) for `seq` text, with a correct checksum. */
const handmadeCursor = (convTag: string, seqText: string) => encodeOpaque('c2', [convTag, seqText]);
const cursorFields = (cursor: string) => Buffer.from(cursor, 'base64url').toString('utf8').split(':');
/** An opaque id or cursor with one character of its uuid changed and its checksum kept. */
const edited = (token: string) => {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const at = text.indexOf(':') + 3;
  return Buffer.from(`${text.slice(0, at)}${text[at] === '0' ? '1' : '0'}${text.slice(at + 1)}`).toString('base64url');
};

/**
 * A members cursor of the conversation tagged `convTag` with a correct checksum around any join time and user id (cursors are not signed):
 * `mb3` spells the user id as it is, `mb2` (still read) in base64url.
 */
const handmadeMemberCursor = (convTag: string, millisText: string, userId: string, version: 'mb3' | 'mb2' = 'mb3') =>
  encodeOpaque(version, [convTag, millisText, version === 'mb3' ? userId : Buffer.from(userId, 'utf8').toString('base64url')]);
const MEMBERS_AFTER = 'query ($id: ID!, $after: String) { conversation(id: $id) { members(first: 5, after: $after) { edges { cursor } } } }';
const MESSAGES_AT = 'query ($id: ID!, $time: DateTime!) { conversation(id: $id) { messagesAt(time: $time) { startSeq } } }';
const OPEN_DIRECT = 'mutation ($userId: ID!) { openDirectConversation(userId: $userId) { conversation { id } } }';
const ADD_MEMBERS = 'mutation ($c: ID!, $userIds: [ID!]!) { addMembers(input: { conversationId: $c, userIds: $userIds }) { addedCount } }';
/** A page of `convId`'s members after a hand-made cursor. */
const membersAfter = (millisText: string, userId: string, version: 'mb3' | 'mb2') =>
  member(MEMBERS_AFTER, (f) => ({ id: f.convId, after: handmadeMemberCursor(cursorFields(f.cursor)[1]!, millisText, userId, version) }));
const messagesAt = (time: string) => member(MESSAGES_AT, (f) => ({ id: f.convId, time }));

const SEARCH = 'query ($q: String, $c: ID, $f: MessageFilter, $after: String) { search(query: $q, conversationId: $c, filter: $f, after: $after) { edges { cursor } } }';
/** A search by the member with `variables`. */
const search = (variables: Record<string, unknown> | ((f: CorpusFixtures) => Record<string, unknown>)) => member(SEARCH, variables);
/** A well-formed cursor of `search(query: "message")` with no filter ("message" is its own key). */
const plainSearchCursor = (f: CorpusFixtures) => encodeSearchCursor(searchScopeKey('message', null), { createdMicros: 1, convId: f.thread.convUuid, seq: 1 });

export const EDIT = 'mutation ($m: ID!, $text: String!) { editMessage(input: { messageId: $m, text: $text }) { message { id } } }';
export const REACT = 'mutation ($m: ID!, $r: String!) { addReaction(input: { messageId: $m, reaction: $r }) { message { id } } }';
const UNREACT = 'mutation ($m: ID!, $r: String!) { removeReaction(input: { messageId: $m, reaction: $r }) { message { id } } }';
export const REPLY = 'mutation ($c: ID!, $m: ID!, $text: String = "a reply") { sendMessage(input: { conversationId: $c, clientMsgId: $text, text: $text, replyToMessageId: $m }) { message { id } } }';
const MARK_THREAD_READ = 'mutation ($m: ID!, $s: Seq!) { markThreadRead(input: { messageId: $m, seq: $s }) { message { id } } }';
const STAR = 'mutation ($m: ID!) { starMessage(input: { messageId: $m }) { message { starredByMe } } }';
const STARRED = 'query ($first: Int, $after: String) { viewer { starredMessages(first: $first, after: $after) { edges { node { id } } } } }';
const MENTIONS = 'query ($first: Int, $after: String) { viewer { mentions(first: $first, after: $after) { edges { node { id } } } } }';
const MENTIONING = 'mutation ($c: ID!, $ids: [ID!], $all: Boolean) { sendMessage(input: { conversationId: $c, clientMsgId: "mentioning", text: "hi", mentionUserIds: $ids, mentionEveryone: $all }) { deduplicated } }';
/** A send by the member to their group that mentions `ids` (and everyone, as `all` says). */
const mentioning = (ids: unknown, all: unknown = null) => member(MENTIONING, (f) => ({ c: f.convId, ids, all }));
const PIN = 'mutation ($m: ID!) { pinMessage(input: { messageId: $m }) { message { id } } }';
const PINS = 'query ($c: ID!, $first: Int, $after: String) { conversation(id: $c) { pinnedMessages(first: $first, after: $after) { edges { node { id } } } } }';
const SETTINGS = 'mutation ($c: ID!) { setConversationSettings(input: { conversationId: $c, membersMayPin: true }) { conversation { membersMayPin } } }';
const MARK_UNREAD = 'mutation ($m: ID!) { markUnread(input: { messageId: $m }) { conversation { readSeq } } }';
const FIRST_UNREAD_PAGE = 'query ($c: ID!, $m: ID, $first: Int, $last: Int) { conversation(id: $c) { messages(around: $m, aroundFirstUnread: true, first: $first, last: $last) { edges { node { seq } } } } }';
export const EDITS = 'query ($m: ID!, $first: Int, $after: String) { message(id: $m) { edits(first: $first, after: $after) { edges { cursor } } } }';
const REPLIES = 'query ($m: ID!, $first: Int, $after: String, $last: Int, $before: String) { message(id: $m) { replies(first: $first, after: $after, last: $last, before: $before) { edges { cursor } } } }';
export const REACTORS = 'query ($m: ID!, $first: Int, $after: String) { message(id: $m) { reactions { users(first: $first, after: $after) { edges { cursor } } } } }';
/** An edit of the member's own thread root to `text`. */
const editText = (text: string) => member(EDIT, (f) => ({ m: f.thread.rootId, text }));
/** The member's `reaction` added to their own thread root. */
const react = (reaction: string) => member(REACT, (f) => ({ m: f.thread.rootId, r: reaction }));
/** A reply sent by the member to their thread group, answering `replyTo`. */
/**
 * The member replies to `replyToId` with a client id never stored (a refused
 * reply writes nothing), so it is a new send: one with the fixture reply's
 * client id would be a retry, answered with that first copy.
 */
const replyTo = (replyToId: (f: CorpusFixtures) => string) => member(REPLY, (f) => ({ c: f.thread.convId, m: replyToId(f), text: 'a refused reply' }));
/** A page of the root's replies with `args`. */
const replies = (args: (f: CorpusFixtures) => Record<string, unknown>) => member(REPLIES, (f) => ({ m: f.thread.rootId, ...args(f) }));
/** A users cursor of the root's 👍 with a correct checksum around any reaction time and user id. */
const handmadeReactorCursor = (f: CorpusFixtures, microsText: string, userId: string) =>
  encodeOpaque('rx1', [f.thread.convUuid, f.thread.rootSeq, Buffer.from('👍', 'utf8').toString('base64url'), microsText, Buffer.from(userId, 'utf8').toString('base64url')]);
/** The member refused one reaction, naming `reaction`. */
const refusedReaction = (name: string, reaction: string): Omit<BadInputCase, 'category'> => ({
  name: reaction.length <= 40 ? `${name} (${JSON.stringify(reaction)})` : name,
  status: 200,
  code: 'BAD_USER_INPUT',
  argumentName: 'reaction',
  request: react(reaction),
});

/** A JSON body of `query` padded with white space to `bytes` bytes. */
const padded = (bytes: number) => {
  const body = JSON.stringify({ query: VIEWER });
  return `${body}${' '.repeat(bytes - body.length)}`;
};

/** A body of `bytes` bytes streamed in 64 KiB chunks, without a content-length. */
const streamed = (bytes: number): ReadableStream<Uint8Array> => {
  let sent = 0;
  const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      controller.enqueue(chunk);
      sent += chunk.length;
    },
  });
};

const cases = (category: Category, list: Omit<BadInputCase, 'category'>[]): BadInputCase[] => list.map((c) => ({ category, ...c }));

/** Every case, in the order they run. */
export const BAD_INPUT_CORPUS: BadInputCase[] = [
  ...cases('malformed body', [
    { name: 'JSON cut off before its closing brace', status: 400, code: 'BAD_REQUEST', request: () => post('{"query": "{ viewer { id } }"') },
    { name: 'a body that is not JSON at all', status: 400, code: 'BAD_REQUEST', request: () => post('query { viewer { id } }') },
    { name: 'an empty body', status: 400, code: 'BAD_REQUEST', request: () => post('') },
    { name: 'a JSON number', status: 400, code: 'BAD_REQUEST', request: () => post('42') },
    { name: 'a JSON string holding the query', status: 400, code: 'BAD_REQUEST', request: () => post(JSON.stringify(VIEWER)) },
    { name: 'JSON null', status: 400, code: 'BAD_REQUEST', request: () => post('null') },
    {
      name: 'a batch of two operations (batching is off)',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => postJson([{ query: VIEWER }, { query: VIEWER }], f.member),
    },
    { name: 'an empty batch', status: 400, code: 'BAD_REQUEST', request: (f) => postJson([], f.member) },
    { name: 'a top-level array nested 100,000 deep', status: 400, code: 'BAD_REQUEST', request: () => post(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) },
  ]),
  ...cases('missing or invalid query', [
    { name: 'an empty JSON object', status: 400, code: 'BAD_REQUEST', request: (f) => postJson({}, f.member) },
    { name: 'variables but no query', status: 400, code: 'BAD_REQUEST', request: (f) => postJson({ variables: { id: 'x' } }, f.member) },
    { name: 'an empty query string', status: 400, code: 'BAD_REQUEST', request: (f) => postJson({ query: '' }, f.member) },
    { name: 'a query of white space only', status: 400, code: 'GRAPHQL_PARSE_FAILED', request: (f) => postJson({ query: '   \n  ' }, f.member) },
    { name: 'a query that is a number', status: 400, code: 'BAD_REQUEST', request: (f) => postJson({ query: 42 }, f.member) },
    {
      name: 'a query that is a parsed AST object',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => postJson({ query: { kind: 'Document', definitions: [] } }, f.member),
    },
    { name: 'a query that is an array of strings', status: 400, code: 'BAD_REQUEST', request: (f) => postJson({ query: [VIEWER] }, f.member) },
    {
      name: 'variables as a JSON-encoded string',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => postJson({ query: VIEWER, variables: '{"id":"x"}' }, f.member),
    },
    { name: 'variables as an array', status: 400, code: 'BAD_REQUEST', request: (f) => postJson({ query: VIEWER, variables: ['x'] }, f.member) },
    { name: 'an operationName that is a number', status: 400, code: 'BAD_REQUEST', request: (f) => postJson({ query: VIEWER, operationName: 7 }, f.member) },
    { name: 'extensions as a string', status: 400, code: 'BAD_REQUEST', request: (f) => postJson({ query: VIEWER, extensions: 'x' }, f.member) },
    {
      name: 'a persisted-query hash the server never saw, without a query',
      status: 200,
      code: 'PERSISTED_QUERY_NOT_FOUND',
      request: (f) => postJson({ extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } }, f.member),
    },
    {
      name: 'a persisted-query hash that does not match the query',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => postJson({ query: VIEWER, extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } }, f.member),
    },
    {
      name: 'a persisted-query version the server does not know',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => postJson({ query: VIEWER, extensions: { persistedQuery: { version: 2, sha256Hash: 'a'.repeat(64) } } }, f.member),
    },
  ]),
  ...cases('wrong content type', [
    {
      name: 'text/plain (a CSRF-able simple request)',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => post(JSON.stringify({ query: VIEWER }), { 'content-type': 'text/plain', authorization: f.member }),
    },
    {
      name: 'application/x-www-form-urlencoded',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => post(`query=${encodeURIComponent(VIEWER)}`, { 'content-type': 'application/x-www-form-urlencoded', authorization: f.member }),
    },
    {
      name: 'multipart/form-data',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => post(`--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n${VIEWER}\r\n--x--\r\n`, { 'content-type': 'multipart/form-data; boundary=x', authorization: f.member }),
    },
    {
      name: 'no content type at all',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => post(new TextEncoder().encode(JSON.stringify({ query: VIEWER })), { authorization: f.member }),
    },
    {
      name: 'application/graphql with the bare document',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => post(VIEWER, { 'content-type': 'application/graphql', authorization: f.member }),
    },
    {
      name: 'application/xml',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => post(JSON.stringify({ query: VIEWER }), { 'content-type': 'application/xml', authorization: f.member }),
    },
    {
      name: 'text/plain with a preflight header, so past CSRF checks',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => post(JSON.stringify({ query: VIEWER }), { 'content-type': 'text/plain', ...PREFLIGHT, authorization: f.member }),
    },
  ]),
  ...cases('wrong method', [
    {
      name: 'GET carrying a mutation',
      status: 405,
      code: 'BAD_REQUEST',
      request: (f) => get([['query', 'mutation { openDirectConversation(userId: "bob") { conversation { id } } }']], { ...PREFLIGHT, authorization: f.member }),
    },
    {
      name: 'GET selecting the mutation of a document that also has a query',
      status: 405,
      code: 'BAD_REQUEST',
      request: (f) => get([['query', GET_QUERY_AND_MUTATION], ['operationName', 'M']], { ...PREFLIGHT, authorization: f.member }),
    },
    { name: 'GET without a CSRF-preventing header', status: 400, code: 'BAD_REQUEST', request: (f) => get([['query', VIEWER]], { authorization: f.member }) },
    { name: 'GET without a query', status: 400, code: 'BAD_REQUEST', request: (f) => get([], { ...PREFLIGHT, authorization: f.member }) },
    {
      name: 'GET with a non-JSON content type',
      status: 415,
      code: 'BAD_REQUEST',
      request: (f) => get([['query', VIEWER]], { 'content-type': 'application/xml', authorization: f.member }),
    },
    {
      name: 'GET with variables that are not JSON',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => get([['query', VIEWER], ['variables', '{id:']], { ...PREFLIGHT, authorization: f.member }),
    },
    {
      name: 'GET with the query given twice',
      status: 400,
      code: 'BAD_REQUEST',
      request: (f) => get([['query', VIEWER], ['query', VIEWER]], { ...PREFLIGHT, authorization: f.member }),
    },
    {
      name: 'PUT',
      status: 405,
      code: 'BAD_REQUEST',
      request: (f) => ({ method: 'PUT', headers: { ...JSON_TYPE, authorization: f.member }, body: JSON.stringify({ query: VIEWER }) }),
    },
    { name: 'DELETE', status: 405, code: 'BAD_REQUEST', request: (f) => ({ method: 'DELETE', headers: { ...PREFLIGHT, authorization: f.member } }) },
  ]),
  ...cases('operation selection', [
    {
      name: 'an operationName the document does not have',
      status: 400,
      code: 'OPERATION_RESOLUTION_FAILURE',
      request: member(`query Mine ${VIEWER}`, undefined, 'Theirs'),
    },
    {
      name: 'an operationName the document does not have, on a mutation, writing nothing',
      status: 400,
      code: 'OPERATION_RESOLUTION_FAILURE',
      request: member('mutation Mine { createConversation(input: { memberIds: ["bob"] }) { conversation { id } } }', undefined, 'Theirs'),
    },
    {
      name: 'two named operations and no operationName',
      status: 400,
      code: 'OPERATION_RESOLUTION_FAILURE',
      request: member(`query A ${VIEWER} query B ${VIEWER}`),
    },
    {
      name: 'an operationName naming a fragment',
      status: 400,
      code: 'OPERATION_RESOLUTION_FAILURE',
      request: member(`query A { viewer { ...F } } fragment F on Viewer { id }`, undefined, 'F'),
    },
    { name: 'two anonymous operations', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member(`${VIEWER} ${VIEWER}`) },
    { name: 'a document of fragments only', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('fragment F on User { id }') },
    { name: 'a subscription field that does not exist', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('subscription { viewer { id } }') },
    {
      name: 'a valid subscription over HTTP (subscriptions are WebSocket only)',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('subscription ($id: ID!) { conversationEvents(conversationId: $id) { seq } }', (f) => ({ id: f.convId })),
    },
  ]),
  ...cases('huge strings', [
    { name: 'a 200 KB message text as a variable, storing nothing', status: 200, code: 'BAD_USER_INPUT', request: sendText('x'.repeat(200_000)) },
    {
      name: 'a 200 KB message text written into the document',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: (f) => postJson({ query: `mutation { sendMessage(input: { conversationId: "${f.convId}", clientMsgId: "big", text: "${'y'.repeat(200_000)}" }) { deduplicated } }` }, f.member),
    },
    { name: 'a message text one character over 10,000', status: 200, code: 'BAD_USER_INPUT', request: sendText('z'.repeat(10_001)) },
    { name: 'an empty message text', status: 200, code: 'BAD_USER_INPUT', request: sendText('') },
    { name: 'a message text of white space and zero-width spaces only', status: 200, code: 'BAD_USER_INPUT', request: sendText(' \n\t\u200b\ufeff') },
    { name: 'a message text with a NUL character', status: 200, code: 'BAD_USER_INPUT', request: sendText('hello\u0000world') },
    { name: 'an edit text one character over 10,000', status: 200, code: 'BAD_USER_INPUT', argumentName: 'text', request: editText('z'.repeat(10_001)) },
    { name: 'a 200 KB edit text', status: 200, code: 'BAD_USER_INPUT', argumentName: 'text', request: editText('x'.repeat(200_000)) },
    { name: 'an empty edit text', status: 200, code: 'BAD_USER_INPUT', argumentName: 'text', request: editText('') },
    { name: 'an edit text of white space only', status: 200, code: 'BAD_USER_INPUT', argumentName: 'text', request: editText('   ') },
    { name: 'an edit text of white space and zero-width spaces only', status: 200, code: 'BAD_USER_INPUT', argumentName: 'text', request: editText(' \n\t\u200b\ufeff') },
    { name: 'an edit text with a NUL character', status: 200, code: 'BAD_USER_INPUT', argumentName: 'text', request: editText('hello\u0000world') },
    {
      name: 'a message text with an unpaired surrogate',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: (f) => post(`{"query":${JSON.stringify(SEND)},"variables":{"conversationId":${JSON.stringify(f.convId)},"clientMsgId":"s","text":"a\\ud800b"}}`, {
          ...JSON_TYPE,
          authorization: f.member,
        }),
    },
    {
      name: 'a 129-character clientMsgId',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: member(SEND, (f) => ({ conversationId: f.convId, clientMsgId: 'c'.repeat(129), text: 'hi' })),
    },
    {
      name: 'a 201-character group title',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: member('mutation ($t: String) { createConversation(input: { title: $t, memberIds: ["bob"] }) { conversation { id } } }', { t: 't'.repeat(201) }),
    },
    {
      name: 'a group of 1,001 members',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: member('mutation ($ids: [ID!]!) { createConversation(input: { memberIds: $ids }) { conversation { id } } }', { ids: Array.from({ length: 1001 }, (_, i) => `user-${i}`) }),
    },
    {
      name: 'a 300 KB user id to open a direct conversation with',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: member('mutation ($u: ID!) { openDirectConversation(userId: $u) { conversation { id } } }', { u: 'u'.repeat(300_000) }),
    },
    {
      name: 'a 300 KB conversation id',
      status: 200,
      code: 'NOT_FOUND',
      request: member('query ($id: ID!) { conversation(id: $id) { title } }', { id: 'C'.repeat(300_000) }),
    },
  ]),
  ...cases('deep nesting', [
    {
      name: 'a selection 13 levels deep (the limit is 12)',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member(nestedMessages(4), (f) => ({ id: f.messageId })),
    },
    { name: 'a selection 40 levels deep', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member(nestedMessages(10), (f) => ({ id: f.messageId })) },
    {
      name: 'depth hidden in nested fragments',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member(DEEP_FRAGMENTS, (f) => ({ id: f.messageId })),
    },
    {
      name: 'depth hidden in inline fragments',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member(DEEP_INLINE_FRAGMENTS, (f) => ({ id: f.messageId })),
    },
    {
      name: 'a list literal nested 500 deep where a list of ids goes',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member(`mutation { deleteMessagesForMe(input: { messageIds: ${deepList(500)} }) { deletedCount } }`),
    },
    {
      name: 'a variable nested 100,000 lists deep where a list of ids goes',
      status: 400,
      code: 'BAD_USER_INPUT',
      request: (f) => post(`{"query":${JSON.stringify(HIDE)},"variables":{"ids":${deepList(100_000)}}}`, { ...JSON_TYPE, authorization: f.member }),
    },
    {
      name: 'nested pages that could return 10,100 messages',
      status: 400,
      code: 'QUERY_TOO_COMPLEX',
      request: member('query ($id: ID!) { conversation(id: $id) { messages(last: 100) { edges { node { conversation { messages(last: 100) { startSeq } } } } } } }', (f) => ({ id: f.convId })),
    },
  ]),
  ...cases('alias bombs', [
    {
      name: '16 aliases of viewer (the limit is 15)',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member(`{ ${repeat(16, (i) => `a${i}: viewer { id }`)} }`),
    },
    { name: '300 aliases of viewer', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member(`{ ${repeat(300, (i) => `a${i}: viewer { id }`)} }`) },
    {
      name: '16 aliases spread through fragments',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member(`{ viewer { ...A ...B } } fragment A on User { ${repeat(8, (i) => `a${i}: id`)} } fragment B on User { ${repeat(8, (i) => `b${i}: id`)} }`),
    },
    {
      name: '15 aliased pages of 100 that each nest a page of 10',
      status: 400,
      code: 'QUERY_TOO_COMPLEX',
      request: member(ALIASED_NESTED_PAGES, (f) => ({ id: f.convId })),
    },
    {
      name: '16 aliases of a mutation',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member(`mutation { ${repeat(16, (i) => `m${i}: openDirectConversation(userId: "bomb-${i}") { conversation { id } }`)} }`),
    },
  ]),
  ...cases('fragment cycles and misuse', [
    {
      name: 'fragment A spreads B, which spreads A',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('{ viewer { ...A } } fragment A on User { id ...B } fragment B on User { id ...A }'),
    },
    {
      name: 'a fragment that spreads itself',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('{ viewer { ...A } } fragment A on User { id ...A }'),
    },
    {
      name: 'a three-fragment cycle through a nested field',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member(THREE_FRAGMENT_CYCLE, (f) => ({ id: f.messageId })),
    },
    { name: 'a spread of a fragment that is not defined', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('{ viewer { ...Missing } }') },
    {
      name: 'a fragment defined but never used',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('{ viewer { id } } fragment Unused on User { id }'),
    },
    {
      name: 'two fragments of the same name',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('{ viewer { ...A } } fragment A on User { id } fragment A on User { id }'),
    },
    {
      name: 'a fragment on a type that does not exist',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('{ viewer { ...A } } fragment A on Admin { id }'),
    },
    {
      name: 'a fragment spread where its type cannot apply',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('{ viewer { ...A } } fragment A on Message { seq }'),
    },
  ]),
  ...cases('directive floods and token limits', [
    {
      name: '51 directives (the limit is 50)',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member(`{ viewer { ${repeat(51, () => '__typename @include(if: true)')} } }`),
    },
    {
      name: 'the same directive twice on one field',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('{ viewer { id @skip(if: false) @skip(if: false) } }'),
    },
    { name: 'a directive that does not exist', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('{ viewer { id @admin } }') },
    { name: '@include with a string', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('{ viewer { id @include(if: "yes") } }') },
    { name: '@defer, which this schema does not define', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('{ viewer { ... @defer { id } } }') },
    {
      name: 'a document of 2,100 tokens (the limit is 2,000)',
      status: 400,
      code: 'GRAPHQL_PARSE_FAILED',
      request: member(`{ viewer { ${repeat(2100, () => '__typename')} } }`),
    },
    { name: 'a document cut off mid-selection', status: 400, code: 'GRAPHQL_PARSE_FAILED', request: member('{ viewer { id ') },
    { name: 'a string literal that never closes', status: 400, code: 'GRAPHQL_PARSE_FAILED', request: member('{ conversation(id: "abc) { id } }') },
    { name: 'characters GraphQL does not have', status: 400, code: 'GRAPHQL_PARSE_FAILED', request: member('{ viewer { id; DROP TABLE messages; -- } }') },
  ]),
  ...cases('unknown fields', [
    { name: 'a root field that does not exist', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('{ users { id } }') },
    { name: 'a field a type does not have', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('{ viewer { id email } }') },
    {
      name: 'an argument a field does not have',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('query ($id: ID!) { conversation(id: $id) { messages(last: 1, where: "1=1") { startSeq } } }', (f) => ({ id: f.convId })),
    },
    { name: 'a required argument left out', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('{ conversation { id } }') },
    { name: 'a selection on a scalar', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('{ viewer { id { value } } }') },
    { name: 'an object field without a selection', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('{ viewer }') },
    {
      name: 'an input field that does not exist, written into the document',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('mutation { markRead(input: { conversationId: "x", seq: 1, force: true }) { conversation { id } } }'),
    },
    {
      name: 'an input field that does not exist, in a variable',
      status: 400,
      code: 'BAD_USER_INPUT',
      request: member('mutation ($input: SendMessageInput!) { sendMessage(input: $input) { deduplicated } }', (f) => ({
        input: { conversationId: f.convId, clientMsgId: 'x', text: 'hi', senderId: 'bob' },
      })),
    },
  ]),
  ...cases('wrong variable types', [
    { name: 'a string for an Int', status: 400, code: 'BAD_USER_INPUT', request: page(() => ({ last: '10' })) },
    { name: 'a fraction for an Int', status: 400, code: 'BAD_USER_INPUT', request: page(() => ({ last: 1.5 })) },
    { name: 'an Int below -2^31', status: 400, code: 'BAD_USER_INPUT', request: page(() => ({ last: -(2 ** 31) - 1 })) },
    { name: 'an object for an ID', status: 400, code: 'BAD_USER_INPUT', request: page(() => ({ id: { $ne: null } })) },
    { name: 'a boolean for an ID', status: 400, code: 'BAD_USER_INPUT', request: page(() => ({ id: true })) },
    { name: 'an array for a String', status: 400, code: 'BAD_USER_INPUT', request: page(() => ({ last: 1, before: ['a', 'b'] })) },
    { name: 'a required variable left out', status: 400, code: 'BAD_USER_INPUT', request: member(MESSAGES, { last: 1 }) },
    { name: 'null for a non-null variable', status: 400, code: 'BAD_USER_INPUT', request: page(() => ({ id: null })) },
    {
      name: 'a negative Seq',
      status: 400,
      code: 'BAD_USER_INPUT',
      request: member('mutation ($c: ID!, $s: Seq!) { markRead(input: { conversationId: $c, seq: $s }) { conversation { id } } }', (f) => ({ c: f.convId, s: -1 })),
    },
    {
      name: 'a Seq as a string',
      status: 400,
      code: 'BAD_USER_INPUT',
      request: member('mutation ($c: ID!, $s: Seq!) { markRead(input: { conversationId: $c, seq: $s }) { conversation { id } } }', (f) => ({ c: f.convId, s: '5' })),
    },
    { name: 'a search filter sent after February 30', status: 400, code: 'BAD_USER_INPUT', request: search({ f: { sentAfter: '2026-02-30T00:00:00Z' } }) },
    { name: 'a search filter with mentionsMe as a string', status: 400, code: 'BAD_USER_INPUT', request: search({ f: { mentionsMe: 'yes' } }) },
    { name: 'a variable used but never declared', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', request: member('{ conversation(id: $id) { id } }') },
    {
      name: 'a variable declared with a type its position does not allow',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('query ($id: String) { conversation(id: $id) { id } }', (f) => ({ id: f.convId })),
    },
    {
      name: 'a variable of a type that does not exist',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('query ($id: Uuid!) { conversation(id: $id) { id } }'),
    },
  ]),
  ...cases('out-of-range page sizes', [
    { name: 'first: 0', status: 200, code: 'BAD_USER_INPUT', request: page(() => ({ first: 0 })) },
    { name: 'first: -1', status: 200, code: 'BAD_USER_INPUT', request: page(() => ({ first: -1 })) },
    { name: 'first: 101', status: 200, code: 'BAD_USER_INPUT', request: page(() => ({ first: 101 })) },
    // Counted at the table's maximum by the gate, then refused by the resolver naming the argument and its range.
    { name: 'last: 1,000,000,000', status: 200, code: 'BAD_USER_INPUT', request: page(() => ({ last: 1_000_000_000 })) },
    {
      name: 'last: 2^31 written into the document',
      status: 400,
      code: 'GRAPHQL_VALIDATION_FAILED',
      request: member('query ($id: ID!) { conversation(id: $id) { messages(last: 2147483648) { startSeq } } }', (f) => ({ id: f.convId })),
    },
    { name: 'first and last together', status: 200, code: 'BAD_USER_INPUT', request: page(() => ({ first: 5, last: 5 })) },
    { name: 'after and before together', status: 200, code: 'BAD_USER_INPUT', request: page((f) => ({ after: f.cursor, before: f.cursor })) },
    { name: 'edits(first: 0)', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: member(EDITS, (f) => ({ m: f.thread.rootId, first: 0 })) },
    { name: 'edits(first: 101)', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: member(EDITS, (f) => ({ m: f.thread.rootId, first: 101 })) },
    { name: 'replies(first: 0)', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: replies(() => ({ first: 0 })) },
    { name: 'replies(last: 101)', status: 200, code: 'BAD_USER_INPUT', argumentName: 'last', request: replies(() => ({ last: 101 })) },
    { name: 'replies with first and last together', status: 200, code: 'BAD_USER_INPUT', argumentName: 'last', request: replies(() => ({ first: 5, last: 5 })) },
    { name: 'users(first: 0) of a reaction', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: member(REACTORS, (f) => ({ m: f.thread.rootId, first: 0 })) },
    { name: 'users(first: 101) of a reaction', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: member(REACTORS, (f) => ({ m: f.thread.rootId, first: 101 })) },
    {
      name: 'messagesAround with before: -1',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: member('query ($id: ID!, $m: ID!) { conversation(id: $id) { messagesAround(messageId: $m, before: -1) { startSeq } } }', (f) => ({ id: f.convId, m: f.messageId })),
    },
    {
      name: 'messagesAround with after: 101',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: member('query ($id: ID!, $m: ID!) { conversation(id: $id) { messagesAround(messageId: $m, after: 101) { startSeq } } }', (f) => ({ id: f.convId, m: f.messageId })),
    },
  ]),
  ...cases('forged and foreign cursors', [
    {
      name: 'random base64url',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: page(() => ({ last: 5, before: Buffer.from('not a cursor of ours at all').toString('base64url') })),
    },
    { name: 'characters base64url does not have', status: 200, code: 'BAD_USER_INPUT', request: page(() => ({ last: 5, before: '!!!$$$' })) },
    { name: 'an empty cursor', status: 200, code: 'BAD_USER_INPUT', request: page(() => ({ first: 5, after: '' })) },
    { name: 'a real cursor with its seq edited and the old checksum kept', status: 200, code: 'BAD_USER_INPUT', request: page((f) => {
      const [prefix, convTag, seq, check] = cursorFields(f.cursor);
      return { last: 5, before: Buffer.from(`${prefix}:${convTag}:${Number(seq) + 1}:${check}`).toString('base64url') };
    }) },
    { name: 'a real cursor cut short', status: 200, code: 'BAD_USER_INPUT', request: page((f) => ({ last: 5, before: f.cursor.slice(0, -3) })) },
    { name: 'a cursor of another conversation of the member', status: 200, code: 'BAD_USER_INPUT', request: page((f) => ({ last: 5, before: f.otherCursor })) },
    {
      name: 'a cursor of a conversation the member is not in',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: page((f) => ({ first: 5, after: f.foreignCursor })),
    },
    {
      name: 'a valid cursor sent by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: MESSAGES, variables: { id: f.convId, last: 5, before: f.cursor } }, f.outsider),
    },
    { name: 'a message id where a cursor goes', status: 200, code: 'BAD_USER_INPUT', request: page((f) => ({ last: 5, before: f.messageId })) },
    {
      name: 'a well-checksummed cursor whose seq is beyond 2^53',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: page((f) => ({ last: 5, before: handmadeCursor(cursorFields(f.cursor)[1]!, '99999999999999999999') })),
    },
    { name: 'a 100 KB cursor', status: 200, code: 'BAD_USER_INPUT', request: page((f) => ({ first: 5, after: f.cursor.repeat(2000) })) },
    {
      name: 'search(after:) a cursor of the same words without the filter',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'after',
      request: search((f) => ({ q: 'message', f: { starred: false }, after: plainSearchCursor(f) })),
    },
    { name: 'edits(after:) random base64url', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(EDITS, (f) => ({ m: f.thread.rootId, after: Buffer.from('no edit cursor').toString('base64url') })) },
    { name: 'edits(after:) a cursor of another message\'s edits', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(EDITS, (f) => ({ m: f.thread.replyId, after: f.thread.editCursor })) },
    { name: 'edits(after:) a page cursor', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(EDITS, (f) => ({ m: f.thread.rootId, after: f.cursor })) },
    { name: 'edits(after:) a reaction users cursor', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(EDITS, (f) => ({ m: f.thread.rootId, after: f.thread.reactorCursor })) },
    { name: 'edits(after:) an edit cursor cut short', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(EDITS, (f) => ({ m: f.thread.rootId, after: f.thread.editCursor.slice(0, -3) })) },
    { name: 'replies(after:) characters base64url does not have', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: replies(() => ({ first: 5, after: '!!!$$$' })) },
    { name: 'replies(after:) a cursor of another conversation', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: replies((f) => ({ first: 5, after: f.cursor })) },
    { name: 'replies(before:) a cursor of a conversation the member is not in', status: 200, code: 'BAD_USER_INPUT', argumentName: 'before', request: replies((f) => ({ last: 5, before: f.foreignCursor })) },
    { name: 'replies(after:) an edit cursor', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: replies((f) => ({ first: 5, after: f.thread.editCursor })) },
    { name: 'users(after:) random base64url', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(REACTORS, (f) => ({ m: f.thread.rootId, after: Buffer.from('no users cursor').toString('base64url') })) },
    { name: 'users(after:) a cursor of the same reaction on another message', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(REACTORS, (f) => ({ m: f.thread.replyId, after: f.thread.reactorCursor })) },
    { name: 'users(after:) a members cursor', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(REACTORS, (f) => ({ m: f.thread.rootId, after: handmadeMemberCursor(f.thread.convUuid, '0', 'alice') })) },
    { name: 'users(after:) a users cursor with its last characters edited', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(REACTORS, (f) => ({ m: f.thread.rootId, after: `${f.thread.reactorCursor.slice(0, -2)}AA` })) },
  ]),
  ...cases('ids of other types', [
    {
      name: 'a message id given to conversation(id:)',
      status: 200,
      code: 'NOT_FOUND',
      request: member('query ($id: ID!) { conversation(id: $id) { title } }', (f) => ({ id: f.messageId })),
    },
    {
      name: 'a conversation id given to message(id:)',
      status: 200,
      code: 'NOT_FOUND',
      request: member('query ($id: ID!) { message(id: $id) { seq } }', (f) => ({ id: f.convId })),
    },
    { name: 'a message id as the conversation a search filter names', status: 200, code: 'NOT_FOUND', request: search((f) => ({ f: { conversationId: f.messageId } })) },
    { name: 'a user id given to conversation(id:)', status: 200, code: 'NOT_FOUND', request: member('{ conversation(id: "bob") { title } }') },
    { name: 'an empty id', status: 200, code: 'NOT_FOUND', request: member('{ conversation(id: "") { title } }') },
    { name: 'a garbage id', status: 200, code: 'NOT_FOUND', request: member(`{ message(id: "'; select pg_sleep(10); --") { seq } }`) },
    {
      name: 'an edited conversation id given to node(id:)',
      status: 200,
      code: 'NOT_FOUND',
      request: member('query ($id: ID!) { node(id: $id) { id } }', (f) => ({ id: edited(f.convId) })),
    },
    {
      name: 'a conversation id given as messagesAround(messageId:)',
      status: 200,
      code: 'NOT_FOUND',
      request: member('query ($id: ID!) { conversation(id: $id) { messagesAround(messageId: $id) { startSeq } } }', (f) => ({ id: f.convId })),
    },
    {
      name: 'a message id as the conversation to send to, storing nothing',
      status: 200,
      code: 'NOT_FOUND',
      request: member(SEND, (f) => ({ conversationId: f.messageId, clientMsgId: 'wrong-type', text: 'hello' })),
    },
    {
      name: 'a conversation id among the messages to hide, hiding nothing',
      status: 200,
      code: 'NOT_FOUND',
      request: member(HIDE, (f) => ({ ids: [f.messageId, f.convId] })),
    },
    {
      name: 'a real conversation read by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: 'query ($id: ID!) { conversation(id: $id) { title maxSeq } }', variables: { id: f.convId } }, f.outsider),
    },
    {
      name: 'a real message revoked by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: 'mutation ($m: ID!) { revokeMessage(input: { messageId: $m }) { message { id } } }', variables: { m: f.messageId } }, f.outsider),
    },
    { name: 'a garbage id to edit', status: 200, code: 'NOT_FOUND', request: member(EDIT, { m: "'; drop table message_edits; --", text: 'edited' }) },
    { name: 'an empty id to edit', status: 200, code: 'NOT_FOUND', request: member(EDIT, { m: '', text: 'edited' }) },
    { name: 'a conversation id to edit', status: 200, code: 'NOT_FOUND', request: member(EDIT, (f) => ({ m: f.thread.convId, text: 'edited' })) },
    { name: 'an edited message id to edit', status: 200, code: 'NOT_FOUND', request: member(EDIT, (f) => ({ m: edited(f.thread.rootId), text: 'edited' })) },
    { name: 'a conversation id to react to', status: 200, code: 'NOT_FOUND', request: member(REACT, (f) => ({ m: f.thread.convId, r: '👍' })) },
    { name: 'a garbage id whose thread to mark read', status: 200, code: 'NOT_FOUND', request: member(MARK_THREAD_READ, { m: 'not-an-id', s: 1 }) },
    { name: 'a garbage id to mark unread from', status: 200, code: 'NOT_FOUND', request: member(MARK_UNREAD, { m: 'not-an-id' }) },
    { name: 'a garbage id to star', status: 200, code: 'NOT_FOUND', request: member(STAR, { m: 'not-an-id' }) },
    { name: 'a garbage id to pin', status: 200, code: 'NOT_FOUND', request: member(PIN, { m: 'not-an-id' }) },
    { name: 'a garbage conversation id to change settings of', status: 200, code: 'NOT_FOUND', request: member(SETTINGS, { c: 'not-an-id' }) },
    {
      name: 'a real message pinned by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: PIN, variables: { m: f.thread.rootId } }, f.outsider),
    },
    {
      name: 'a real message starred by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: STAR, variables: { m: f.thread.rootId } }, f.outsider),
    },
    { name: 'a conversation id to mark unread from', status: 200, code: 'NOT_FOUND', request: member(MARK_UNREAD, (f) => ({ m: f.thread.convId })) },
    {
      name: 'a real message marked unread by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: MARK_UNREAD, variables: { m: f.thread.rootId } }, f.outsider),
    },
    {
      name: 'a real message edited by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: EDIT, variables: { m: f.thread.rootId, text: 'mine now' } }, f.outsider),
    },
    {
      name: 'a reaction added by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: REACT, variables: { m: f.thread.rootId, r: '👀' } }, f.outsider),
    },
    {
      name: 'a reaction removed by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: UNREACT, variables: { m: f.thread.rootId, r: '👍' } }, f.outsider),
    },
    {
      name: 'a thread marked read by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: MARK_THREAD_READ, variables: { m: f.thread.rootId, s: 1 } }, f.outsider),
    },
    {
      name: 'a send to a real conversation by a user who is not a member',
      status: 200,
      code: 'NOT_FOUND',
      request: (f) => postJson({ query: SEND, variables: { conversationId: f.convId, clientMsgId: 'intruder', text: 'let me in' } }, f.outsider),
    },
  ]),
  ...cases('made-up values', [
    ...(['mb3', 'mb2'] as const).flatMap((version) => [
      {
        name: `a well-checksummed ${version} members cursor whose join time is past what a Date holds (8640000000000001 ms)`,
        status: 200,
        code: 'BAD_USER_INPUT',
        request: membersAfter('8640000000000001', 'bob', version),
      },
      { name: `a well-checksummed ${version} members cursor whose user id holds a NUL byte`, status: 200, code: 'BAD_USER_INPUT', request: membersAfter('0', 'b\u0000b', version) },
      { name: `a well-checksummed ${version} members cursor whose user id is empty`, status: 200, code: 'BAD_USER_INPUT', request: membersAfter('0', '', version) },
    ]),
    { name: 'openDirectConversation with a user id holding a NUL byte', status: 200, code: 'BAD_USER_INPUT', request: member(OPEN_DIRECT, { userId: 'b\u0000b' }) },
    {
      name: 'openDirectConversation with a user id holding a C1 control character',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: member(OPEN_DIRECT, { userId: 'b\u0085b' }),
    },
    {
      name: 'addMembers with a user id holding a NUL byte',
      status: 200,
      code: 'BAD_USER_INPUT',
      request: member(ADD_MEMBERS, (f) => ({ c: f.convId, userIds: ['carol', 'd\u0000d'] })),
    },
    { name: 'node(id:) with a user id holding a NUL byte', status: 200, code: 'NOT_FOUND', request: member('query ($id: ID!) { node(id: $id) { id } }', { id: 'b\u0000b' }) },
    {
      name: 'a well-checksummed users cursor whose user id holds a NUL byte',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'after',
      request: member(REACTORS, (f) => ({ m: f.thread.rootId, after: handmadeReactorCursor(f, '0', 'a\u0000b') })),
    },
    {
      name: 'a well-checksummed users cursor whose reaction time is beyond 2^53',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'after',
      request: member(REACTORS, (f) => ({ m: f.thread.rootId, after: handmadeReactorCursor(f, '99999999999999999999', 'alice') })),
    },
    {
      name: 'a well-checksummed edits cursor whose version is past an int4',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'after',
      request: member(EDITS, (f) => ({ m: f.thread.rootId, after: encodeOpaque('ed1', [f.thread.convUuid, f.thread.rootSeq, 2_147_483_648]) })),
    },
    { name: 'a search filter of no senders', status: 200, code: 'BAD_USER_INPUT', argumentName: 'filter.senderIds', request: search({ q: 'message', f: { senderIds: [] } }) },
    {
      name: 'a search filter of 101 senders',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'filter.senderIds',
      request: search({ q: 'message', f: { senderIds: Array.from({ length: 101 }, (_, i) => `user-${i}`) } }),
    },
    { name: 'a search filter naming a sender id with a NUL byte', status: 200, code: 'BAD_USER_INPUT', argumentName: 'filter.senderIds', request: search({ f: { senderIds: ['b\u0000b'] } }) },
    {
      name: 'a search filter sent after the instant it is sent before',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'filter.sentBefore',
      request: search({ f: { sentAfter: '2026-01-01T00:00:00Z', sentBefore: '2026-01-01T00:00:00Z' } }),
    },
    { name: 'a search with neither words nor a condition', status: 200, code: 'BAD_USER_INPUT', argumentName: 'query', request: search({ f: { pinned: null } }) },
    {
      name: 'a search naming one conversation as its argument and another in its filter',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'filter.conversationId',
      request: search((f) => ({ q: 'message', c: f.convId, f: { conversationId: f.thread.convId } })),
    },
    { name: 'messagesAt February 30', status: 400, code: 'BAD_USER_INPUT', request: messagesAt('2026-02-30T00:00:00Z') },
    { name: 'messagesAt year 0000', status: 400, code: 'BAD_USER_INPUT', request: messagesAt('0000-01-01T00:00:00Z') },
    { name: 'messagesAt an hour 24', status: 400, code: 'BAD_USER_INPUT', request: messagesAt('2026-01-01T24:00:00Z') },
    { name: 'messagesAt a leap second', status: 400, code: 'BAD_USER_INPUT', request: messagesAt('2026-12-31T23:59:60Z') },
    { name: 'messagesAt an offset of 16 hours', status: 400, code: 'BAD_USER_INPUT', request: messagesAt('2026-01-01T00:00:00+16:00') },
    { name: 'messagesAt 9999-12-31 late in a western time zone (year 10000 in UTC)', status: 400, code: 'BAD_USER_INPUT', request: messagesAt('9999-12-31T23:00:00-05:00') },
  ]),
  ...cases('reactions that are not one emoji or shortcode', [
    refusedReaction('an empty reaction', ''),
    refusedReaction('a letter', 'a'),
    refusedReaction('two emoji', '👍👍'),
    refusedReaction('a shortcode in upper case', ':UPPER:'),
    refusedReaction('a shortcode with an empty name', '::'),
    refusedReaction('a shortcode of 33 characters', `:${'a'.repeat(33)}:`),
    refusedReaction('an emoji and a space', '👍 '),
    refusedReaction('plain text', 'great job'),
    refusedReaction('a single regional indicator', '\u{1f1eb}'),
    refusedReaction('an emoji with a NUL', '👍\u0000'),
    refusedReaction('100,000 emoji as one reaction', '👍'.repeat(100_000)),
    {
      name: 'two emoji to remove',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'reaction',
      request: member(UNREACT, (f) => ({ m: f.thread.rootId, r: '👍👍' })),
    },
    {
      name: 'a 21st distinct reaction on a message that holds 20',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'reaction',
      request: member(REACT, (f) => ({ m: f.thread.fullId, r: ':twenty_first:' })),
    },
    {
      name: 'a reaction to a revoked message',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'messageId',
      request: member(REACT, (f) => ({ m: f.thread.revokedId, r: '👍' })),
    },
  ]),
  ...cases('edits, replies and threads refused', [
    { name: 'an edit of a message another member sent', status: 200, code: 'FORBIDDEN', request: member(EDIT, (f) => ({ m: f.messageId, text: 'not mine' })) },
    { name: 'an edit of a revoked message', status: 200, code: 'FORBIDDEN', request: member(EDIT, (f) => ({ m: f.thread.revokedId, text: 'back again' })) },
    { name: 'a reply to a malformed id', status: 200, code: 'BAD_USER_INPUT', argumentName: 'replyToMessageId', request: replyTo(() => 'not-a-message-id') },
    { name: 'a reply to an empty id', status: 200, code: 'BAD_USER_INPUT', argumentName: 'replyToMessageId', request: replyTo(() => '') },
    { name: 'a reply to a message of another conversation of the member', status: 200, code: 'BAD_USER_INPUT', argumentName: 'replyToMessageId', request: replyTo((f) => f.messageId) },
    { name: 'a reply to a revoked message', status: 200, code: 'BAD_USER_INPUT', argumentName: 'replyToMessageId', request: replyTo((f) => f.thread.revokedId) },
    { name: 'a reply to a conversation id', status: 200, code: 'BAD_USER_INPUT', argumentName: 'replyToMessageId', request: replyTo((f) => f.thread.convId) },
    { name: 'a reply to a message id edited to a seq that does not exist', status: 200, code: 'BAD_USER_INPUT', argumentName: 'replyToMessageId', request: replyTo((f) => encodeOpaque('M', [f.thread.convUuid, 1_000_000])) },
    {
      name: 'a thread marked read past the conversation\'s maxSeq',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'seq',
      request: member(MARK_THREAD_READ, (f) => ({ m: f.thread.rootId, s: 1_000_000 })),
    },
    {
      name: 'a reply marked read as if it were a thread\'s root',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'messageId',
      request: member(MARK_THREAD_READ, (f) => ({ m: f.thread.replyId, s: 1 })),
    },
    { name: 'a pins list of 0', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: member(PINS, (f) => ({ c: f.thread.convId, first: 0 })) },
    { name: 'a pins list of 51', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: member(PINS, (f) => ({ c: f.thread.convId, first: 51 })) },
    { name: 'a pins list after a cursor that is not one of its own', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(PINS, (f) => ({ c: f.thread.convId, after: 'bm90LWEtY3Vyc29y' })) },
    { name: 'a starred list of 0', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: member(STARRED, { first: 0 }) },
    { name: 'a starred list of 101', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: member(STARRED, { first: 101 }) },
    { name: 'a starred list after a cursor that is not one of its own', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(STARRED, { after: 'bm90LWEtY3Vyc29y' }) },
    {
      name: 'a page centred both on a message and on the first unread',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'aroundFirstUnread',
      request: member(FIRST_UNREAD_PAGE, (f) => ({ c: f.thread.convId, m: f.thread.rootId })),
    },
    {
      name: 'a first-unread page asking for 101 older messages',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'last',
      request: member(FIRST_UNREAD_PAGE, (f) => ({ c: f.thread.convId, last: 101 })),
    },
  ]),
  ...cases('mentions refused', [
    { name: 'a mention of a user who is not a member', status: 200, code: 'BAD_USER_INPUT', argumentName: 'mentionUserIds', request: mentioning(['nobody-here']) },
    { name: 'a mention of an empty user id', status: 200, code: 'BAD_USER_INPUT', argumentName: 'mentionUserIds', request: mentioning(['']) },
    { name: 'a mention of a user id with a NUL byte', status: 200, code: 'BAD_USER_INPUT', argumentName: 'mentionUserIds', request: mentioning(['a\u0000b']) },
    {
      name: 'mentions of 51 distinct users',
      status: 200,
      code: 'BAD_USER_INPUT',
      argumentName: 'mentionUserIds',
      request: mentioning(Array.from({ length: 51 }, (_, i) => `user-${i}`)),
    },
    { name: 'mentionEveryone as a string', status: 400, code: 'BAD_USER_INPUT', request: mentioning(null, 'yes') },
    { name: 'a mentions list of 0', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: member(MENTIONS, { first: 0 }) },
    { name: 'a mentions list of 101', status: 200, code: 'BAD_USER_INPUT', argumentName: 'first', request: member(MENTIONS, { first: 101 }) },
    { name: 'a mentions list after a starred-list cursor', status: 200, code: 'BAD_USER_INPUT', argumentName: 'after', request: member(MENTIONS, (f) => ({ after: encodeOpaque('st1', [5, f.thread.convUuid, 1]) })) },
  ]),
  ...cases('invalid JWTs', [
    { name: 'no Authorization header on a mutation', status: 401, code: 'UNAUTHENTICATED', request: sendWith(undefined) },
    { name: 'a token without the Bearer scheme', status: 401, code: 'UNAUTHENTICATED', request: sendWith(signClaims(GOOD_CLAIMS())) },
    { name: 'a Basic header', status: 401, code: 'UNAUTHENTICATED', request: sendWith('Basic YWxpY2U6c2VjcmV0') },
    { name: '"Bearer" with no token', status: 401, code: 'UNAUTHENTICATED', request: sendWith('Bearer') },
    { name: 'two tokens after Bearer', status: 401, code: 'UNAUTHENTICATED', request: sendWith(bearer(signClaims(GOOD_CLAIMS()).then((t) => `${t} ${t}`))) },
    { name: 'a garbage token', status: 401, code: 'UNAUTHENTICATED', request: sendWith('Bearer not-a-jwt') },
    {
      name: 'a token of two parts',
      status: 401,
      code: 'UNAUTHENTICATED',
      request: sendWith(bearer(signClaims(GOOD_CLAIMS()).then((t) => t.split('.').slice(0, 2).join('.')))),
    },
    {
      name: 'a token signed with another secret',
      status: 401,
      code: 'UNAUTHENTICATED',
      request: sendWith(bearer(signClaims(GOOD_CLAIMS(), { secret: WRONG_SECRET }))),
    },
    { name: 'a token whose payload was swapped under a valid signature', status: 401, code: 'UNAUTHENTICATED', request: sendWith(bearer(signClaims(GOOD_CLAIMS()).then((t) => {
      const [header, , signature] = t.split('.');
      return `${header}.${base64url({ ...GOOD_CLAIMS(), sub: 'mallory' })}.${signature}`;
    }))) },
    { name: 'an expired token', status: 401, code: 'UNAUTHENTICATED', request: sendWith(bearer(signClaims({ ...GOOD_CLAIMS(), exp: now() - 60 }))) },
    { name: 'a token without exp', status: 401, code: 'UNAUTHENTICATED', request: sendWith(bearer(signClaims({ sub: 'alice', iss: ISSUER, aud: AUDIENCE }))) },
    {
      name: 'a token not valid until an hour from now (nbf)',
      status: 401,
      code: 'UNAUTHENTICATED',
      request: sendWith(bearer(signClaims({ ...GOOD_CLAIMS(), nbf: now() + 3600 }))),
    },
    {
      name: 'an alg: none token',
      status: 401,
      code: 'UNAUTHENTICATED',
      request: sendWith(`Bearer ${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(GOOD_CLAIMS())}.`),
    },
    {
      name: 'an HS512 token signed with the right secret',
      status: 401,
      code: 'UNAUTHENTICATED',
      request: sendWith(bearer(signClaims(GOOD_CLAIMS(), { alg: 'HS512' }))),
    },
    {
      name: 'an RS256 header over an HMAC signature made with the secret (key confusion)',
      status: 401,
      code: 'UNAUTHENTICATED',
      request: sendWith(bearer(hmacUnder('RS256', GOOD_CLAIMS()))),
    },
    { name: 'a token without sub', status: 401, code: 'UNAUTHENTICATED', request: sendWith(bearer(signClaims({ ...GOOD_CLAIMS(), sub: undefined }))) },
    { name: 'a token with an empty sub', status: 401, code: 'UNAUTHENTICATED', request: sendWith(bearer(signClaims({ ...GOOD_CLAIMS(), sub: '' }))) },
    { name: 'a token whose sub is a number', status: 401, code: 'UNAUTHENTICATED', request: sendWith(bearer(signClaims({ ...GOOD_CLAIMS(), sub: 42 }))) },
    {
      name: 'a token whose sub is 201 characters',
      status: 401,
      code: 'UNAUTHENTICATED',
      request: sendWith(bearer(signClaims({ ...GOOD_CLAIMS(), sub: 's'.repeat(201) }))),
    },
    {
      name: 'a token whose sub holds a C1 control character',
      status: 401,
      code: 'UNAUTHENTICATED',
      request: sendWith(bearer(signClaims({ ...GOOD_CLAIMS(), sub: 'alice\u009b' }))),
    },
    {
      name: 'a token from another issuer',
      status: 401,
      code: 'UNAUTHENTICATED',
      request: sendWith(bearer(signClaims({ ...GOOD_CLAIMS(), iss: 'https://evil.example/' }))),
    },
    {
      name: 'a token for another audience',
      status: 401,
      code: 'UNAUTHENTICATED',
      request: sendWith(bearer(signClaims({ ...GOOD_CLAIMS(), aud: 'some-other-api' }))),
    },
    { name: 'a token without iss and aud', status: 401, code: 'UNAUTHENTICATED', request: sendWith(bearer(signClaims({ sub: 'alice', exp: now() + 3600 }))) },
  ]),
  ...cases('oversized bodies', [
    {
      name: 'a JSON body one byte over 1 MiB',
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      request: (f) => post(padded(MiB + 1), { ...JSON_TYPE, authorization: f.member }),
    },
    { name: 'a JSON body of 8 MiB', status: 413, code: 'PAYLOAD_TOO_LARGE', request: (f) => post(padded(8 * MiB), { ...JSON_TYPE, authorization: f.member }) },
    {
      name: 'a 2 MiB body streamed without a content-length',
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      request: (f) => post(streamed(2 * MiB), { ...JSON_TYPE, authorization: f.member }),
    },
    { name: 'a 2 MiB text/plain body', status: 413, code: 'PAYLOAD_TOO_LARGE', request: () => post('x'.repeat(2 * MiB), { 'content-type': 'text/plain' }) },
    { name: 'a 1.5 MiB message text in a mutation', status: 413, code: 'PAYLOAD_TOO_LARGE', request: sendText('m'.repeat(1.5 * MiB)) },
  ]),
];
