/**
 * 32-bit FNV-1a of a string's UTF-16 code units, from a seed: the shared tables of the front
 * threads (cells.ts, claims.ts) place keys with it, two seeds giving two independent words.
 */
export function fnv1a(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}
