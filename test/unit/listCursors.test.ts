import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/history/cursor.ts';
import {
  decodeAnnouncementCursor,
  decodeEditCursor,
  decodeMemberCursor,
  decodeMentionCursor,
  decodeReactorCursor,
  decodeStarCursor,
  encodeAnnouncementCursor,
  encodeEditCursor,
  encodeMemberCursor,
  encodeMentionCursor,
  encodeReactorCursor,
  encodeStarCursor,
} from '../../src/history/listCursors.ts';
import { fnv1a32 } from '../../src/history/checksum.ts';
import { encodeOpaque, scopeTag } from '../../src/history/opaque.ts';
import { EARLIEST_MILLIS, LATEST_MILLIS } from '../../src/history/timeRange.ts';

const CONV = '0b9b1c4e-2f43-4a57-9d8e-3c1f7a6b5d40';
const OTHER = '1c9b1c4e-2f43-4a57-9d8e-3c1f7a6b5d41';

const JOINED = '2026-11-30T12:34:56.789Z';
/** A member row's `joinedMillis` for `JOINED`. */
const JOINED_MILLIS = Date.parse(JOINED);

describe('member cursors', () => {
  it('round-trip the join time and any user id, colons and emoji included', () => {
    for (const userId of ['alice', 'auth0|x:y:z', ':', 'a::b:', '用户😀', '😀'.repeat(100)]) {
      const cursor = encodeMemberCursor(CONV, JOINED_MILLIS, userId);
      expect(decodeMemberCursor(CONV, cursor)).toEqual({ joinedMillis: JOINED_MILLIS, userId });
    }
  });

  it('name the conversation by its tag rather than its uuid', () => {
    const cursor = encodeMemberCursor(CONV, JOINED_MILLIS, 'alice');
    expect(Buffer.from(cursor, 'base64url').toString('utf8')).not.toContain(CONV);
  });

  it('spell the user id as it is, not base64url-encoded inside the cursor’s own base64url', () => {
    const cursor = encodeMemberCursor(CONV, JOINED_MILLIS, 'groups-10000-42');
    expect(Buffer.from(cursor, 'base64url').toString('utf8')).toContain(':groups-10000-42:');
    expect(cursor.length).toBeLessThanOrEqual(64);
  });

  it('refuse another conversation’s cursor, an edited one, and other kinds of cursor', () => {
    const cursor = encodeMemberCursor(CONV, JOINED_MILLIS, 'alice');
    expect(decodeMemberCursor(OTHER, cursor)).toBeNull();
    expect(decodeMemberCursor(CONV, `${cursor.slice(0, -2)}AA`)).toBeNull();
    expect(decodeMemberCursor(CONV, encodeCursor(CONV, 5))).toBeNull();
    expect(decodeMemberCursor(CONV, encodeAnnouncementCursor(5))).toBeNull();
  });

  it('still read the cursors of the previous versions, in their own conversation only', () => {
    const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
    const mb2 = encodeOpaque('mb2', [scopeTag(CONV), JOINED_MILLIS, b64('auth0|x:y')]);
    const mb1 = encodeOpaque('mb1', [CONV, JOINED_MILLIS, b64('auth0|x:y')]);
    expect([decodeMemberCursor(CONV, mb2), decodeMemberCursor(CONV, mb1)]).toEqual([
      { joinedMillis: JOINED_MILLIS, userId: 'auth0|x:y' },
      { joinedMillis: JOINED_MILLIS, userId: 'auth0|x:y' },
    ]);
    expect([decodeMemberCursor(OTHER, mb2), decodeMemberCursor(OTHER, mb1)]).toEqual([null, null]);
  });
});

const base64UserId = (userId: string) => Buffer.from(userId, 'utf8').toString('base64url');

describe.each([
  { version: 'mb3', scope: scopeTag, userIdField: (userId: string) => userId },
  { version: 'mb2', scope: scopeTag, userIdField: base64UserId },
  { version: 'mb1', scope: (convId: string) => convId, userIdField: base64UserId },
])('member cursors ($version) forged with a correct checksum (cursors are not signed)', ({ version, scope, userIdField }) => {
  const forged = (convId: string, millis: string | number, userIdText: string) => encodeOpaque(version, [scope(convId), millis, userIdText]);

  it('accept the first and last join times the API accepts, and those around the epoch', () => {
    const accepted = [EARLIEST_MILLIS, -1, 0, LATEST_MILLIS];
    expect(accepted.map((millis) => decodeMemberCursor(CONV, forged(CONV, millis, userIdField('alice'))))).toEqual(
      accepted.map((joinedMillis) => ({ joinedMillis, userId: 'alice' })),
    );
  });

  it.each([
    ['a join time past 9999-12-31', forged(CONV, 253_402_300_800_000, userIdField('alice'))],
    ['a join time past what a Date holds', forged(CONV, '8640000000000001', userIdField('alice'))],
    ['a join time beyond 2^53', forged(CONV, '99999999999999999999', userIdField('alice'))],
    ['a join time before 0001-01-01', forged(CONV, EARLIEST_MILLIS - 1, userIdField('alice'))],
    ['a join time of -0', forged(CONV, '-0', userIdField('alice'))],
    ['a negative join time with a leading zero', forged(CONV, '-01', userIdField('alice'))],
    ['a join time with a leading zero', forged(CONV, '01764547200000', userIdField('alice'))],
    ['an empty user id', forged(CONV, 0, '')],
    ['a user id with a NUL byte', forged(CONV, 0, userIdField('a\u0000b'))],
    ['a user id with a C1 control character', forged(CONV, 0, userIdField('a\u0085b'))],
    ['a user id of 201 characters', forged(CONV, 0, userIdField('x'.repeat(201)))],
    ['a conversation that is not a uuid', encodeOpaque(version, ['general', 0, userIdField('alice')])],
    ['another conversation', forged(OTHER, 0, userIdField('alice'))],
  ])('refuse %s', (_what, cursor) => {
    expect(decodeMemberCursor(CONV, cursor)).toBeNull();
  });
});

describe.each(['mb2', 'mb1'])('member cursors (%s) with the user id base64url-encoded, forged', (version) => {
  const scope = version === 'mb2' ? scopeTag(CONV) : CONV;
  it.each([
    ['a user id whose bytes are not UTF-8', Buffer.from([0x61, 0xff]).toString('base64url')],
    ['a user id in another base64 spelling', `${base64UserId('alice')}=`],
  ])('refuse %s', (_what, userIdText) => {
    expect(decodeMemberCursor(CONV, encodeOpaque(version, [scope, 0, userIdText]))).toBeNull();
  });
});

describe('mb3 member cursors made by hand', () => {
  const text = (payload: string) => `${payload}:${fnv1a32(payload).toString(36)}`;
  it.each([
    ['bytes that are not UTF-8 in the user id', Buffer.concat([Buffer.from(`mb3:${scopeTag(CONV)}:0:a`), Buffer.from([0xff]), Buffer.from(':0')])],
    ['no user id field at all', Buffer.from(text(`mb3:${scopeTag(CONV)}:0`))],
    ['a checksum that does not match', Buffer.from(`mb3:${scopeTag(CONV)}:0:alice:0`)],
    ['a user id with a lone surrogate, checksummed before UTF-8 made it U+FFFD', Buffer.from(text(`mb3:${scopeTag(CONV)}:0:a\ud800b`))],
  ])('refuse %s', (_what, bytes) => {
    expect(decodeMemberCursor(CONV, bytes.toString('base64url'))).toBeNull();
  });
});

describe('announcement cursors', () => {
  it('round-trip the id and refuse anything else', () => {
    expect(decodeAnnouncementCursor(encodeAnnouncementCursor(42))).toBe(42);
    expect(decodeAnnouncementCursor(encodeCursor(CONV, 42))).toBeNull();
    expect(decodeAnnouncementCursor('not a cursor')).toBeNull();
  });
});

describe('edit cursors', () => {
  it('round-trip the version, for the first version and the largest an int4 holds', () => {
    expect([1, 7, 2_147_483_647].map((version) => decodeEditCursor(CONV, 12, encodeEditCursor(CONV, 12, version)))).toEqual([1, 7, 2_147_483_647]);
  });

  it('refuse a cursor of another message, of the same seq in another conversation, an edited one, and other kinds of cursor', () => {
    const cursor = encodeEditCursor(CONV, 12, 3);
    expect([
      decodeEditCursor(CONV, 13, cursor),
      decodeEditCursor(OTHER, 12, cursor),
      decodeEditCursor(CONV, 12, `${cursor.slice(0, -2)}AA`),
      decodeEditCursor(CONV, 12, cursor.slice(0, -3)),
      decodeEditCursor(CONV, 12, encodeCursor(CONV, 12)),
      decodeEditCursor(CONV, 12, encodeReactorCursor(CONV, 12, '👍', { reactedMicros: 3, userId: 'alice' })),
      decodeEditCursor(CONV, 12, encodeMemberCursor(CONV, JOINED_MILLIS, 'alice')),
      decodeEditCursor(CONV, 12, ''),
    ]).toEqual([null, null, null, null, null, null, null, null]);
  });

  it.each([
    ['a version past what an int4 holds', encodeOpaque('ed1', [CONV, 12, 2_147_483_648])],
    ['a version beyond 2^53', encodeOpaque('ed1', [CONV, 12, '99999999999999999999'])],
    ['a negative version', encodeOpaque('ed1', [CONV, 12, -1])],
    ['a version with a leading zero', encodeOpaque('ed1', [CONV, 12, '03'])],
    ['a version that is not a number', encodeOpaque('ed1', [CONV, 12, 'x'])],
    ['a seq written another way', encodeOpaque('ed1', [CONV, '012', 3])],
    ['a missing field', encodeOpaque('ed1', [CONV, 12])],
  ])('refuse %s, forged with a correct checksum', (_what, cursor) => {
    expect(decodeEditCursor(CONV, 12, cursor)).toBeNull();
  });
});

describe('reactor cursors', () => {
  const at = { reactedMicros: 1_764_624_000_123_456, userId: 'alice' };

  it('round-trip the reaction time and any user id, for emoji and shortcode reactions', () => {
    const cases: [string, string][] = [
      ['👍', 'alice'],
      ['👨‍👩‍👧‍👦', 'auth0|x:y:z'],
      [':party_parrot:', '用户😀'],
      ['🇫🇷', 'bob'],
    ];
    expect(cases.map(([reaction, userId]) => decodeReactorCursor(CONV, 12, reaction, encodeReactorCursor(CONV, 12, reaction, { ...at, userId })))).toEqual(
      cases.map(([, userId]) => ({ ...at, userId })),
    );
  });

  it('round-trip the first instant and the largest safe integer as the reaction time', () => {
    expect([0, Number.MAX_SAFE_INTEGER].map((reactedMicros) => decodeReactorCursor(CONV, 12, '👍', encodeReactorCursor(CONV, 12, '👍', { ...at, reactedMicros })))).toEqual([
      { ...at, reactedMicros: 0 },
      { ...at, reactedMicros: Number.MAX_SAFE_INTEGER },
    ]);
  });

  it('refuse a cursor of another reaction, another message, another conversation, an edited one, and other kinds of cursor', () => {
    const cursor = encodeReactorCursor(CONV, 12, '👍', at);
    expect([
      decodeReactorCursor(CONV, 12, '👍🏽', cursor),
      decodeReactorCursor(CONV, 12, ':+1:', cursor),
      decodeReactorCursor(CONV, 13, '👍', cursor),
      decodeReactorCursor(OTHER, 12, '👍', cursor),
      decodeReactorCursor(CONV, 12, '👍', `${cursor.slice(0, -2)}AA`),
      decodeReactorCursor(CONV, 12, '👍', cursor.slice(0, -3)),
      decodeReactorCursor(CONV, 12, '👍', encodeEditCursor(CONV, 12, 1)),
      decodeReactorCursor(CONV, 12, '👍', encodeMemberCursor(CONV, JOINED_MILLIS, 'alice')),
      decodeReactorCursor(CONV, 12, '👍', encodeCursor(CONV, 12)),
      decodeReactorCursor(CONV, 12, '👍', ''),
    ]).toEqual([null, null, null, null, null, null, null, null, null, null]);
  });

  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
  const forged = (micros: string | number, userIdField: string, reactionField = b64('👍')) => encodeOpaque('rx1', [CONV, 12, reactionField, micros, userIdField]);

  it.each([
    ['a reaction time beyond 2^53', forged('99999999999999999999', b64('alice'))],
    ['a negative reaction time', forged(-1, b64('alice'))],
    ['a reaction time that is not a number', forged('soon', b64('alice'))],
    ['an empty user id', forged(0, '')],
    ['a user id with a NUL byte', forged(0, b64('a\u0000b'))],
    ['a user id with a C1 control character', forged(0, b64('a\u0085b'))],
    ['a user id of 201 characters', forged(0, b64('x'.repeat(201)))],
    ['a user id whose bytes are not UTF-8', forged(0, Buffer.from([0x61, 0xff]).toString('base64url'))],
    ['a user id in another base64 spelling', forged(0, `${b64('alice')}=`)],
    ['the reaction not base64url-encoded', forged(0, b64('alice'), '👍')],
  ])('refuse %s, forged with a correct checksum', (_what, cursor) => {
    expect(decodeReactorCursor(CONV, 12, '👍', cursor)).toBeNull();
  });

  it('round-trips the cursor of a long user id on a ZWJ emoji, up to the longest user id of four-byte characters', () => {
    const reaction = '👨‍👩‍👧‍👦';
    for (const userId of ['samlp|corp-connection|jane.doe@example.com', '😀'.repeat(100)]) {
      expect(decodeReactorCursor(CONV, 12, reaction, encodeReactorCursor(CONV, 12, reaction, { ...at, userId }))).toEqual({ ...at, userId });
    }
  });
});

describe('starred-list and mentions cursors', () => {
  const position = { convId: CONV, seq: 42 };

  it('round-trip the time in microseconds, the conversation and the seq', () => {
    expect(decodeStarCursor(encodeStarCursor({ ...position, starredMicros: 1_764_547_200_123_456 }))).toEqual({ ...position, starredMicros: 1_764_547_200_123_456 });
    expect(decodeMentionCursor(encodeMentionCursor({ ...position, sentMicros: 1_764_547_200_123_456 }))).toEqual({ ...position, sentMicros: 1_764_547_200_123_456 });
  });

  it("refuse each other's cursors, edited ones and other kinds of cursor", () => {
    const star = encodeStarCursor({ ...position, starredMicros: 5 });
    const mention = encodeMentionCursor({ ...position, sentMicros: 5 });
    expect([decodeMentionCursor(star), decodeStarCursor(mention)]).toEqual([null, null]);
    expect(decodeMentionCursor(`${mention.slice(0, -2)}AA`)).toBeNull();
    expect(decodeMentionCursor(encodeCursor(CONV, 5))).toBeNull();
  });

  it.each([
    ['a time past 9999-12-31', encodeOpaque('mn1', [253_402_300_800_000_000, CONV, 1])],
    ['a negative time', encodeOpaque('mn1', [-1, CONV, 1])],
    ['a conversation that is not a uuid', encodeOpaque('mn1', [5, 'general', 1])],
    ['a seq that is not a number', encodeOpaque('mn1', [5, CONV, 'x'])],
  ])('refuse a forged mentions cursor with %s', (_what, cursor) => {
    expect(decodeMentionCursor(cursor)).toBeNull();
  });
});
