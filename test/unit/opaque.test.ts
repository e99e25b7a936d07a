import { describe, expect, it } from 'vitest';
import { fnv1a32 } from '../../src/history/checksum.ts';
import { decodeOpaque, encodeOpaque, encodeOpaqueAfter, encodeOpaqueAfterLead, isUuid, MAX_TOKEN_LENGTH, opaqueHead, parseSeq, tokenLead } from '../../src/history/opaque.ts';

const UUID = '3f2c8a9e-1b4d-4c6e-9f00-a1b2c3d4e5f6';
const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const token = encodeOpaque('t', [UUID, 42]);

/** A token spelled by hand from `text`, so a test can put any checksum in it. */
const spell = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** `value` with the character at `index` replaced by a different base64url character. */
const editAt = (value: string, index: number) => {
  const replacement = value[index] === 'A' ? 'B' : 'A';
  return `${value.slice(0, index)}${replacement}${value.slice(index + 1)}`;
};

describe('fnv1a32', () => {
  it('matches the published FNV-1a 32-bit test vectors for ASCII input', () => {
    expect([fnv1a32(''), fnv1a32('a'), fnv1a32('foobar')]).toEqual([0x811c9dc5, 0xe40c292c, 0xbf9cf968]);
  });

  it('answers an unsigned 32-bit integer whatever the input', () => {
    const inputs = ['', 'a', 'é', '😀', 'x'.repeat(10_000), '\u0000\uffff'];
    const outOfRange = inputs.map(fnv1a32).filter((hash) => !Number.isInteger(hash) || hash < 0 || hash > 0xffffffff);
    expect(outOfRange).toEqual([]);
  });

  it('continues from a seed: the hash of a head, then the rest, is the hash of both', () => {
    const pairs: [string, string][] = [['', 'foobar'], ['foo', 'bar'], ['M:' + UUID + ':', '42'], ['é😀', 'x']];
    expect(pairs.map(([head, rest]) => fnv1a32(rest, fnv1a32(head)))).toEqual(pairs.map(([head, rest]) => fnv1a32(head + rest)));
  });

  it('changes when one character changes, is cut off, or is appended', () => {
    const hashes = ['c1:abc:1', 'c1:abc:2', 'c1:abc:', 'c1:abc:10'].map(fnv1a32);
    expect(new Set(hashes).size).toBe(4);
  });
});

describe('encodeOpaque and decodeOpaque', () => {
  it('round-trips the fields, numbers coming back as their decimal text', () => {
    expect(decodeOpaque('t', 2, token)).toEqual([UUID, '42']);
  });

  it('round-trips one field, an empty field and non-ASCII fields', () => {
    expect([
      decodeOpaque('t', 1, encodeOpaque('t', ['only'])),
      decodeOpaque('t', 1, encodeOpaque('t', [''])),
      decodeOpaque('t', 2, encodeOpaque('t', ['émile', '😀'])),
    ]).toEqual([['only'], [''], ['émile', '😀']]);
  });

  it('spells every token as base64url of its UTF-8 text, whatever its length, one token after another', () => {
    // Tokens up to 1,024 UTF-16 units are spelled in one reused buffer, longer ones
    // are not: lengths about both edges, in characters of 1 to 4 UTF-8 bytes.
    const spelledWrong: string[] = [];
    for (const unit of ['a', 'é', '中', '😀']) {
      for (const length of [0, 1, 340, 341, 342, 500, 511, 512, 513, 1_000, 1_014, 1_015, 1_016, 1_024, 1_100]) {
        const text = unit.repeat(Math.floor(length / unit.length));
        const payload = `t:${text}:${length}`;
        if (encodeOpaque('t', [text, length]) !== spell(`${payload}:${fnv1a32(payload).toString(36)}`)) spelledWrong.push(`${length} units of ${unit}`);
      }
    }
    expect(spelledWrong).toEqual([]);
  });

  it('makes URL-safe tokens without padding', () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('makes different tokens for different prefixes and for different fields', () => {
    const tokens = [
      encodeOpaque('t', [UUID, 42]),
      encodeOpaque('u', [UUID, 42]),
      encodeOpaque('t', [UUID, 43]),
      encodeOpaque('t', [UUID, 4]),
    ];
    expect(new Set(tokens).size).toBe(4);
  });

  it('refuses a token made under another prefix', () => {
    expect(decodeOpaque('u', 2, token)).toBeNull();
  });

  it('refuses a token read with the wrong number of fields', () => {
    expect([decodeOpaque('t', 1, token), decodeOpaque('t', 3, token)]).toEqual([null, null]);
  });

  it('refuses a token whose checksum does not match its payload', () => {
    const payload = `t:${UUID}:42`;
    const wrong = ((fnv1a32(payload) + 1) >>> 0).toString(36);
    expect(decodeOpaque('t', 2, spell(`${payload}:${wrong}`))).toBeNull();
  });

  it('accepts a hand-spelled token whose checksum is right, so the refusal above is the checksum', () => {
    const payload = `t:${UUID}:42`;
    expect(decodeOpaque('t', 2, spell(`${payload}:${fnv1a32(payload).toString(36)}`))).toEqual([UUID, '42']);
  });

  it('refuses a token with one character edited, wherever the edit falls', () => {
    const decoded = Array.from(token, (_, index) => decodeOpaque('t', 2, editAt(token, index)));
    expect(decoded.filter((fields) => fields !== null)).toEqual([]);
  });

  it('refuses a token cut short or with something appended', () => {
    expect([
      decodeOpaque('t', 2, token.slice(0, -1)),
      decodeOpaque('t', 2, token.slice(0, -4)),
      decodeOpaque('t', 2, token.slice(1)),
      decodeOpaque('t', 2, `${token}A`),
      decodeOpaque('t', 2, `${token}AAAA`),
    ]).toEqual([null, null, null, null, null]);
  });

  it('refuses another base64url spelling of the same bytes', () => {
    // A token whose length is not a multiple of 4 ends in a character with unused low bits.
    const field = ['a', 'ab', 'abc'].find((text) => encodeOpaque('t', [text]).length % 4 !== 0)!;
    const ours = encodeOpaque('t', [field]);
    const last = BASE64URL_ALPHABET.indexOf(ours.at(-1)!);
    const respelled = `${ours.slice(0, -1)}${BASE64URL_ALPHABET[last ^ 1]}`;
    expect(Buffer.from(respelled, 'base64url')).toEqual(Buffer.from(ours, 'base64url'));
    expect(decodeOpaque('t', 1, respelled)).toBeNull();
  });

  it('refuses padding and the characters of the standard base64 alphabet', () => {
    expect([
      decodeOpaque('t', 2, `${token}=`),
      decodeOpaque('t', 2, `${token}==`),
      decodeOpaque('t', 2, `${token.slice(0, -1)}+`),
      decodeOpaque('t', 2, `${token.slice(0, -1)}/`),
    ]).toEqual([null, null, null, null]);
  });

  it('refuses the empty string, white space and characters outside base64url', () => {
    expect(['', ' ', ` ${token}`, `${token}\n`, 'not a token', 'abc!', 'é'].map((text) => decodeOpaque('t', 2, text))).toEqual(
      [null, null, null, null, null, null, null],
    );
  });

  it('accepts the longest one-field token up to MAX_TOKEN_LENGTH characters and refuses the shortest one past it', () => {
    const tokens = Array.from({ length: MAX_TOKEN_LENGTH }, (_, i) => encodeOpaque('t', ['x'.repeat(i + 1)]));
    const longest = tokens.filter((t) => t.length <= MAX_TOKEN_LENGTH).at(-1)!;
    const tooLong = tokens.find((t) => t.length > MAX_TOKEN_LENGTH)!;
    expect(longest.length).toBeGreaterThan(MAX_TOKEN_LENGTH - 8);
    expect(decodeOpaque('t', 1, longest)).toEqual([expect.stringMatching(/^x+$/)]);
    expect(decodeOpaque('t', 1, tooLong)).toBeNull();
  });
});

describe('isUuid', () => {
  it('accepts a lower-case canonical UUID', () => {
    expect([isUuid(UUID), isUuid('00000000-0000-0000-0000-000000000000')]).toEqual([true, true]);
  });

  it('refuses upper case, missing dashes, braces, URNs, extra characters and the empty string', () => {
    const refused = [
      UUID.toUpperCase(),
      UUID.replaceAll('-', ''),
      `{${UUID}}`,
      `urn:uuid:${UUID}`,
      `${UUID}\n`,
      ` ${UUID}`,
      `${UUID}0`,
      UUID.slice(1),
      UUID.replace('a', 'g'),
      '',
    ];
    expect(refused.map(isUuid)).toEqual(refused.map(() => false));
  });
});

describe('opaqueHead and encodeOpaqueAfter', () => {
  it('spell exactly what encodeOpaque spells, for heads of every length that is a multiple of 3', () => {
    const cases: [string, string[], number[]][] = [];
    for (const prefix of ['M', 'c2', 'xyz']) {
      for (let length = 0; length <= 40; length++) {
        const field = UUID.repeat(2).slice(0, length);
        for (const tail of [[0], [1], [42], [Number.MAX_SAFE_INTEGER], [-1], [1.5], [7, 250]]) cases.push([prefix, [field], tail]);
      }
    }
    const sharable = cases.filter(([prefix, head]) => opaqueHead(prefix, head) !== null);
    expect(sharable.length).toBe(cases.length / 3);
    const spelled = sharable.map(([prefix, head, tail]) => encodeOpaqueAfter(opaqueHead(prefix, head)!, tail));
    expect(spelled).toEqual(sharable.map(([prefix, head, tail]) => encodeOpaque(prefix, [...head, ...tail])));
  });

  it('refuse a head that is not a multiple of 3 bytes long or is not printable ASCII', () => {
    expect([opaqueHead('M', [UUID.slice(1)]), opaqueHead('M', [UUID.slice(2)]), opaqueHead('M', ['é']), opaqueHead('M', ['a\n'])]).toEqual([
      null,
      null,
      null,
      null,
    ]);
  });
});

describe('parseSeq', () => {
  it('reads canonical decimals from 0 to the largest safe integer', () => {
    expect(['0', '1', '42', '9007199254740991'].map(parseSeq)).toEqual([0, 1, 42, Number.MAX_SAFE_INTEGER]);
  });

  it('refuses integers beyond the safe range', () => {
    expect(['9007199254740992', '9999999999999999', '10000000000000000'].map(parseSeq)).toEqual([null, null, null]);
  });

  it('refuses every non-canonical spelling', () => {
    const spellings = ['', '00', '01', '-1', '-0', '+1', '1.0', '1.5', '1e3', '0x10', ' 1', '1 ', 'one', '١'];
    expect(spellings.map(parseSeq)).toEqual(spellings.map(() => null));
  });
});

describe('tokenLead and encodeOpaqueAfterLead', () => {
  it('spell exactly what encodeOpaque spells, whatever the lead and the text after it', () => {
    const leads: [string, string[]][] = [['mb3', ['zedg4']], ['x', []], ['mb3', ['a', 'b']], ['p', ['用户']]];
    const rests: string[][] = [['0', 'alice'], ['-62135596800000', 'auth0|x:y'], ['1796423919586', '用户😀'], ['7', 'z'.repeat(1100)], ['']];
    for (const [prefix, parts] of leads) {
      for (const rest of rests) {
        expect(encodeOpaqueAfterLead(tokenLead(prefix, parts), rest.join(':'))).toBe(encodeOpaque(prefix, [...parts, ...rest]));
      }
    }
  });
});
