import { describe, expect, it } from 'vitest';
import { formatWalPosition, laterPosition, parseWalPosition, readConsistencyToken } from '../../src/history/walPosition.ts';

describe('WAL positions as consistency tokens', () => {
  it('reads a position as PostgreSQL prints it, high half and low half', () => {
    expect(parseWalPosition('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(parseWalPosition('0/0')).toBe(0n);
    expect(parseWalPosition('0/1')).toBe(1n);
    expect(parseWalPosition('FFFFFFFF/FFFFFFFF')).toBe((1n << 64n) - 1n);
  });

  it('reads lower case and leading zeros as the same position', () => {
    expect(parseWalPosition('16/b374d848')).toBe(parseWalPosition('16/B374D848'));
    expect(parseWalPosition('00000016/0B374D84')).toBe(parseWalPosition('16/B374D84'));
  });

  it('refuses what is not a position', () => {
    for (const text of ['', '16', '/1', '1/', '16/B374D848/1', '123456789/0', '0/123456789', 'G/0', '-1/0', ' 0/1', '0x16/1', '1.5/2']) {
      expect([text, parseWalPosition(text)]).toEqual([text, null]);
    }
  });

  it('prints a position the way PostgreSQL does, and reads back what it prints', () => {
    expect(formatWalPosition((0x16n << 32n) | 0xb374d848n)).toBe('16/B374D848');
    expect(formatWalPosition(0n)).toBe('0/0');
    expect(formatWalPosition(0x3000148n)).toBe('0/3000148');
    for (const text of ['0/0', '0/3000148', '16/B374D848', 'FFFFFFFF/FFFFFFFF']) expect(formatWalPosition(parseWalPosition(text)!)).toBe(text);
  });

  it('compares by the whole position, not by the text', () => {
    // As text "9/..." sorts after "10/...": the numbers must decide.
    expect(parseWalPosition('9/FFFFFFFF')! < parseWalPosition('A/0')!).toBe(true);
    expect(parseWalPosition('0/FFFFFFFF')! < parseWalPosition('1/0')!).toBe(true);
    expect(parseWalPosition('16/B374D848')! > parseWalPosition('16/B374D847')!).toBe(true);
  });

  it('takes the later of two positions, and either when the other is unknown', () => {
    expect(laterPosition(1n, 2n)).toBe(2n);
    expect(laterPosition(3n, 2n)).toBe(3n);
    expect(laterPosition(null, 2n)).toBe(2n);
    expect(laterPosition(2n, null)).toBe(2n);
    expect(laterPosition(null, null)).toBe(null);
  });
});

describe('The Backscroll-Consistency request header', () => {
  it('asks for nothing when absent or empty', () => {
    expect(readConsistencyToken(undefined)).toEqual({ ok: true, position: null });
    expect(readConsistencyToken('')).toEqual({ ok: true, position: null });
    expect(readConsistencyToken('  ')).toEqual({ ok: true, position: null });
  });

  it('asks for the position it names, around white space', () => {
    expect(readConsistencyToken('16/B374D848')).toEqual({ ok: true, position: (0x16n << 32n) | 0xb374d848n });
    expect(readConsistencyToken(' 0/3000148 ')).toEqual({ ok: true, position: 0x3000148n });
  });

  it('refuses a malformed token, naming the header and echoing the value', () => {
    expect(readConsistencyToken('yesterday')).toEqual({
      ok: false,
      problem: 'The Backscroll-Consistency header must be a token from an earlier response, a WAL position such as 16/B374D848, got "yesterday".',
    });
  });

  it('echoes no more than 40 characters of a long bad value', () => {
    const reading = readConsistencyToken('x'.repeat(500));
    expect(reading.ok).toBe(false);
    expect(!reading.ok && reading.problem).toContain(`got "${'x'.repeat(40)}…".`);
  });
});
