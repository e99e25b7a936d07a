import { describe, expect, it } from 'vitest';
import { EARLIEST_MILLIS, isAcceptedMicros, isAcceptedMillis, LATEST_MILLIS, parseDateTime } from '../../src/history/timeRange.ts';

describe('The accepted range of instants', () => {
  it('runs from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z', () => {
    expect([new Date(EARLIEST_MILLIS).toISOString(), new Date(LATEST_MILLIS).toISOString()]).toEqual([
      '0001-01-01T00:00:00.000Z',
      '9999-12-31T23:59:59.999Z',
    ]);
  });

  it('accepts its two ends and refuses one millisecond past either, fractions and what Date cannot hold', () => {
    const millis = [EARLIEST_MILLIS, LATEST_MILLIS, EARLIEST_MILLIS - 1, LATEST_MILLIS + 1, 0.5, 8_640_000_000_000_001, Number.NaN];
    expect(millis.map(isAcceptedMillis)).toEqual([true, true, false, false, false, false, false]);
  });

  it('accepts whole microseconds that are safe integers (1684 to 2255, inside the range) and refuses the rest', () => {
    const micros = [0, -1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, LATEST_MILLIS * 1000, 1.5];
    expect(micros.map(isAcceptedMicros)).toEqual([true, true, true, true, false, false, false]);
  });
});

describe('parseDateTime', () => {
  it.each([
    ['2026-01-31T12:00:00.000Z', Date.UTC(2026, 0, 31, 12)],
    ['2026-01-31T12:00:00Z', Date.UTC(2026, 0, 31, 12)],
    ['2026-01-31T13:30:00+01:30', Date.UTC(2026, 0, 31, 12)],
    ['2026-01-31T00:00:00-05:00', Date.UTC(2026, 0, 31, 5)],
    ['2026-01-31T12:00:00.123456789Z', Date.UTC(2026, 0, 31, 12, 0, 0, 123)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['2000-02-29T00:00:00Z', Date.UTC(2000, 1, 29)],
    ['2026-12-31T23:59:59Z', Date.UTC(2026, 11, 31, 23, 59, 59)],
    ['2026-01-01T00:00:00+15:59', Date.UTC(2025, 11, 31, 8, 1)],
    ['0001-01-01T00:00:00Z', EARLIEST_MILLIS],
    ['9999-12-31T23:59:59.999Z', LATEST_MILLIS],
  ])('reads %s', (text, millis) => {
    expect(parseDateTime(text)).toBe(millis);
  });

  it.each([
    ['February 30', '2026-02-30T00:00:00Z'],
    ['February 29 of a common year', '2023-02-29T00:00:00Z'],
    ['February 29 of a century that is not a leap year', '1900-02-29T00:00:00Z'],
    ['April 31', '2026-04-31T00:00:00Z'],
    ['month 0', '2026-00-10T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['day 0', '2026-01-00T00:00:00Z'],
    ['hour 24', '2026-01-01T24:00:00Z'],
    ['minute 60', '2026-01-01T00:60:00Z'],
    ['second 60', '2026-12-31T23:59:60Z'],
    ['year 0000', '0000-01-01T00:00:00Z'],
    ['an offset of 16 hours, past what PostgreSQL reads', '2026-01-01T00:00:00+16:00'],
    ['an offset minute of 60', '2026-01-01T00:00:00+01:60'],
    ['year 1 east of Greenwich, which is year 0 in UTC', '0001-01-01T00:00:00+01:00'],
    ['the last day of 9999 west of Greenwich, which is year 10000 in UTC', '9999-12-31T23:00:00-05:00'],
    ['a five-digit year', '10000-01-01T00:00:00Z'],
    ['no offset', '2026-01-01T00:00:00'],
    ['a date alone', '2026-01-01'],
    ['a lower-case t and z', '2026-01-01t00:00:00z'],
    ['ten fraction digits', '2026-01-01T00:00:00.0123456789Z'],
    ['Date.toString() output', 'Thu Jan 01 2026 00:00:00 GMT+0000'],
    ['the empty string', ''],
  ])('refuses %s', (_what, text) => {
    expect(parseDateTime(text)).toBeNull();
  });
});
