/**
 * The counters admission decides on (src/front/quota.ts): per org and usage period, the credits
 * charged, held by calls in progress, and left in a cluster's lease. A check and its update run
 * under the cell's lock, so no two admissions interleave between them.
 *
 * Two implementations: LocalQuotaCells for one front thread (plain objects; the lock costs
 * nothing), and SharedQuotaCells, a fixed-size hash table in a SharedArrayBuffer that several
 * front threads use at once: the lock is a compare-and-swap on the cell's lock word (Atomics),
 * so the hard stop is exact with any number of threads, with no message between them.
 */
import { fnv1a } from "./hash.js";

export interface QuotaCell {
  used: number;
  held: number;
  lease: number;
  /** The node's lease chain `lease` was granted in (pg/leases.ts); -1 before any grant. */
  chain: number;
}

export interface QuotaCells {
  /**
   * The org's cell in `period`. A cell last used in another period (or never) starts over: `used`
   * from `ledger()` (what the store has charged in the period), nothing held, no lease.
   */
  cell(orgId: string, period: string, ledger: () => number): QuotaCell;
  /** Runs `action` with the cell to itself: other threads' admissions of the org wait. */
  locked<T>(cell: QuotaCell, action: () => T): T;
}

/** One front thread: plain counters. */
export class LocalQuotaCells implements QuotaCells {
  private readonly cells = new Map<string, { period: string; cell: QuotaCell }>();

  cell(orgId: string, period: string, ledger: () => number): QuotaCell {
    const c = this.cells.get(orgId);
    if (c && c.period === period) return c.cell;
    const cell = { used: ledger(), held: 0, lease: 0, chain: -1 };
    this.cells.set(orgId, { period, cell });
    return cell;
  }

  locked<T>(_cell: QuotaCell, action: () => T): T {
    return action();
  }
}

/** Int32 words per slot: lock, key (two words), period, then padding to 32 bytes. */
const INTS = 8;
/** Float64 words per slot: used, held, lease, chain. */
const FLOATS = 4;
const LOCK = 0;
const KEY_A = 1;
const KEY_B = 2;
const PERIOD = 3;

/** Orgs a shared table holds by default (FS_FRONT_THREADS > 1): 64 bytes each, 4 MiB. */
export const DEFAULT_CAPACITY = 65_536;

/** Lock attempts spun before the thread sleeps on the lock word (Atomics.wait) between attempts. */
const SPINS = 64;

class SharedCell implements QuotaCell {
  constructor(
    private readonly f64: Float64Array,
    readonly slot: number,
  ) {}
  get used(): number {
    return this.f64[this.slot * FLOATS]!;
  }
  set used(v: number) {
    this.f64[this.slot * FLOATS] = v;
  }
  get held(): number {
    return this.f64[this.slot * FLOATS + 1]!;
  }
  set held(v: number) {
    this.f64[this.slot * FLOATS + 1] = v;
  }
  get lease(): number {
    return this.f64[this.slot * FLOATS + 2]!;
  }
  set lease(v: number) {
    this.f64[this.slot * FLOATS + 2] = v;
  }
  get chain(): number {
    return this.f64[this.slot * FLOATS + 3]!;
  }
  set chain(v: number) {
    this.f64[this.slot * FLOATS + 3] = v;
  }
}

/**
 * Cells in shared memory, for several front threads (each constructs one over the same buffer).
 * Open addressing on a 64-bit hash of the org id (two FNV-1a words); a slot, once given to an
 * org, stays its own. The counters are plain Float64 words written only under the slot's lock:
 * the lock's Atomics operations order them between threads.
 */
export class SharedQuotaCells implements QuotaCells {
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly capacity: number;
  /** This thread's cell objects by org id, and the slot's period they were last set up for. */
  private readonly mine = new Map<string, { period: number; cell: SharedCell }>();

  static allocate(capacity = DEFAULT_CAPACITY): SharedArrayBuffer {
    return new SharedArrayBuffer(capacity * (INTS * 4 + FLOATS * 8));
  }

  constructor(readonly buffer: SharedArrayBuffer) {
    this.capacity = buffer.byteLength / (INTS * 4 + FLOATS * 8);
    if (!Number.isInteger(this.capacity) || this.capacity < 1) throw new Error("not a quota cell table");
    this.i32 = new Int32Array(buffer, 0, this.capacity * INTS);
    this.f64 = new Float64Array(buffer, this.capacity * INTS * 4, this.capacity * FLOATS);
  }

  cell(orgId: string, period: string, ledger: () => number): QuotaCell {
    const p = fnv1a(period, 0x5bd1e995);
    const known = this.mine.get(orgId);
    const cell = known?.cell ?? new SharedCell(this.f64, this.slotOf(orgId));
    if (known && known.period === p && Atomics.load(this.i32, cell.slot * INTS + PERIOD) === p) return cell;
    this.locked(cell, () => {
      // Another thread may have started the period already: only the first resets.
      if (Atomics.load(this.i32, cell.slot * INTS + PERIOD) !== p) {
        cell.used = ledger();
        cell.held = 0;
        cell.lease = 0;
        cell.chain = -1;
        Atomics.store(this.i32, cell.slot * INTS + PERIOD, p);
      }
    });
    this.mine.set(orgId, { period: p, cell });
    return cell;
  }

  locked<T>(cell: QuotaCell, action: () => T): T {
    const at = (cell as SharedCell).slot * INTS + LOCK;
    this.acquire(at);
    try {
      return action();
    } finally {
      Atomics.store(this.i32, at, 0);
      Atomics.notify(this.i32, at, 1);
    }
  }

  private acquire(at: number): void {
    let spins = 0;
    while (Atomics.compareExchange(this.i32, at, 0, 1) !== 0) {
      // Held for a few hundred nanoseconds, or for a lease grant's round trip: sleep on it then.
      if (++spins > SPINS) Atomics.wait(this.i32, at, 1, 1);
    }
  }

  /** The org's slot: found by probing from its hash, or claimed at the first empty slot. */
  private slotOf(orgId: string): number {
    let a = fnv1a(orgId, 0);
    const b = fnv1a(orgId, 0x27d4eb2f);
    if (a === 0 && b === 0) a = 1; // (0, 0) marks an empty slot
    const start = (a >>> 0) % this.capacity;
    for (let n = 0; n < this.capacity; n++) {
      const slot = (start + n) % this.capacity;
      const base = slot * INTS;
      const ka = Atomics.load(this.i32, base + KEY_A);
      const kb = Atomics.load(this.i32, base + KEY_B);
      if (ka === a && kb === b) return slot;
      if (ka !== 0 || kb !== 0) continue;
      // Empty: claim it under its lock, unless another thread claimed it meanwhile.
      this.acquire(base + LOCK);
      let mine = false;
      try {
        if (Atomics.load(this.i32, base + KEY_A) === 0 && Atomics.load(this.i32, base + KEY_B) === 0) {
          Atomics.store(this.i32, base + KEY_B, b);
          Atomics.store(this.i32, base + KEY_A, a);
          mine = true;
        }
      } finally {
        Atomics.store(this.i32, base + LOCK, 0);
        Atomics.notify(this.i32, base + LOCK, 1);
      }
      if (mine || (Atomics.load(this.i32, base + KEY_A) === a && Atomics.load(this.i32, base + KEY_B) === b)) return slot;
    }
    throw new Error(`the shared quota table is full (${this.capacity} orgs)`);
  }
}
