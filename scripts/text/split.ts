/**
 * Deterministic splitting helpers for the content-model builder: a seeded PRNG, a seeded
 * shuffle, and a split keyed by a hash of the normalised text so that texts which normalise
 * the same (template spam, duplicates) always land in the same split.
 */
import { createHash } from "node:crypto";

/** mulberry32: a small seeded PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A shuffled copy (Fisher–Yates with seededRandom(seed)). */
export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  const out = items.slice();
  const rand = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A stable number in [0, 1) from a key and a salt (sha256; independent of row order). */
export function unitHash(key: string, salt: string): number {
  return createHash("sha256").update(salt).update("\0").update(key).digest().readUInt32BE(0) / 4294967296;
}
