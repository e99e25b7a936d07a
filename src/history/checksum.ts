const FNV_OFFSET = 0x811c9dc5;

/**
 * FNV-1a, 32 bits: a cheap check that a cursor or id was not edited or cut.
 * Not a secret and not a security boundary: every read re-checks membership,
 * and every decoded field is validated (opaque.ts), so a forged cursor can
 * only point at rows the viewer may see anyway.
 *
 * `seed` continues a hash: `fnv1a32(b, fnv1a32(a))` is `fnv1a32(a + b)`, so
 * tokens that share a head hash it once (opaque.ts).
 */
export function fnv1a32(text: string, seed: number = FNV_OFFSET): number {
  let hash = seed;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
