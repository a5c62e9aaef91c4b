/**
 * Idempotency-Keys running now, across front threads (FS_FRONT_THREADS > 1): a key claimed on one
 * thread is "in use" on every other until its answer is in the store, so a retry that reaches
 * another thread meanwhile gets 409 IDEMPOTENCY_KEY_IN_USE instead of running a second time.
 *
 * A table of `stripes` words in shared memory; a key maps to one word by a hash and claims it by
 * writing a second, independent 32-bit hash of itself there with a compare-and-swap. A word
 * taken by another key at the same moment (two running keys on one word of 65,536) leaves the
 * newcomer unguarded across threads, as with one thread it is guarded only within its own.
 */
import { fnv1a } from "./hash.js";

const DEFAULT_STRIPES = 65_536;

export type ClaimOutcome = "claimed" | "in-use" | "unguarded";

export class ClaimTable {
  private readonly words: Int32Array;

  static allocate(stripes = DEFAULT_STRIPES): SharedArrayBuffer {
    return new SharedArrayBuffer(stripes * 4);
  }

  constructor(readonly buffer: SharedArrayBuffer) {
    this.words = new Int32Array(buffer);
  }

  /** Claims `id` for this thread: "in-use" when a thread holds it already. */
  take(id: string): ClaimOutcome {
    const { at, mark } = this.slot(id);
    const was = Atomics.compareExchange(this.words, at, 0, mark);
    if (was === 0) return "claimed";
    return was === mark ? "in-use" : "unguarded";
  }

  /** Gives back a claim this thread took ("claimed"); anything else is left alone. */
  give(id: string): void {
    const { at, mark } = this.slot(id);
    Atomics.compareExchange(this.words, at, mark, 0);
  }

  private slot(id: string): { at: number; mark: number } {
    const at = (fnv1a(id, 0) >>> 0) % this.words.length;
    const mark = fnv1a(id, 0x2545f491) || 1;
    return { at, mark };
  }
}
