/**
 * Durations as `archive --older-than` takes them: a whole number and one
 * unit, `s`, `m`, `h` or `d` (`0s`, `90d`). Pure.
 */

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** Longer than any history: 100 years. */
const MAX_MS = 100 * 365 * UNIT_MS.d;

/** `text` in milliseconds, or the problem, naming the option and echoing the value. */
export function parseDuration(option: string, text: string): { ok: true; ms: number } | { ok: false; problem: string } {
  const match = /^([0-9]{1,12})([smhd])$/.exec(text);
  const ms = match === null ? Number.NaN : Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (!(ms <= MAX_MS)) {
    return { ok: false, problem: `${option} takes a whole number and a unit, s, m, h or d, of at most 36500d (like 0s or 90d), got "${text}".` };
  }
  return { ok: true, ms };
}
