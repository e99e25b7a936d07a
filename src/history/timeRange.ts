/**
 * The instants the API takes in, from a `DateTime` argument or from a
 * cursor: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z. JavaScript's Date
 * (±8.64e15 ms) and PostgreSQL's timestamptz (4713 BC to 294276 AD) both hold
 * every one of them, and each prints with a four-digit year that both read
 * back (PostgreSQL refuses the year 0000 that Date prints for 1 BC, and Date
 * throws on instants past its range), so no accepted time can fail later.
 */

/** 0001-01-01T00:00:00.000Z in milliseconds since the Unix epoch. */
export const EARLIEST_MILLIS = -62_135_596_800_000;
/** 9999-12-31T23:59:59.999Z in milliseconds since the Unix epoch. */
export const LATEST_MILLIS = 253_402_300_799_999;

/**
 * `text` as milliseconds since the Unix epoch, in canonical decimal (a minus
 * before 1970, no leading zeros, no `-0`), when inside the accepted range;
 * else null.
 */
export function parseAcceptedMillis(text: string): number | null {
  if (!/^(0|-?[1-9][0-9]{0,14})$/.test(text)) return null;
  const millis = Number(text);
  return isAcceptedMillis(millis) ? millis : null;
}

/** Whether `millis` (since the Unix epoch) is a whole number inside the accepted range. */
export function isAcceptedMillis(millis: number): boolean {
  return Number.isInteger(millis) && millis >= EARLIEST_MILLIS && millis <= LATEST_MILLIS;
}

/**
 * Whether `micros` (since the Unix epoch, PostgreSQL's precision) is a safe
 * integer inside the accepted range. Safe integers of microseconds only reach
 * from 1684 to 2255, so cursors carrying them cannot name a time outside it.
 */
export function isAcceptedMicros(micros: number): boolean {
  return Number.isSafeInteger(micros) && isAcceptedMillis(Math.floor(micros / 1000));
}

// RFC 3339's date-time, with an upper-case T and Z, as the schema's examples write it.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** PostgreSQL refuses a UTC offset of more than 15:59 hours. */
const MAX_OFFSET_HOURS = 15;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * The instant an RFC 3339 date-time names, in milliseconds since the Unix
 * epoch, or null when it is not one or names a day or time that does not
 * exist (February 30, hour 24, second 60: JavaScript rolls some of these over
 * where PostgreSQL refuses them) or lies outside the accepted range, as
 * written or in UTC.
 */
export function parseDateTime(text: string): number | null {
  const match = DATE_TIME.exec(text);
  if (match === null) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offsetHours = match[8] === undefined ? 0 : Number(match[8]);
  const offsetMinutes = match[9] === undefined ? 0 : Number(match[9]);
  const exists =
    year >= 1 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= MAX_OFFSET_HOURS &&
    offsetMinutes <= 59;
  if (!exists) return null;
  const millis = Date.parse(text);
  return isAcceptedMillis(millis) ? millis : null;
}
