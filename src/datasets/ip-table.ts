/**
 * Range tables: sorted, non-overlapping, inclusive address ranges, each mapped to a value index.
 *
 * Lookup is a floor binary search over the starts (narrowed by an optional 16-bit bucket index),
 * then one comparison against that range's end. The tables are plain typed arrays so a lookup
 * touches no objects and allocates nothing; an lmdb range cursor over the same data is ~20x slower
 * (bench/micro/ip-lookup.bench.ts).
 * Pure functions only; reading and writing the bytes is left to the caller.
 */

/** IPv4 ranges: `starts[i]..ends[i]` (inclusive, uint32) maps to `values[i]`. Sorted by start, disjoint. */
export interface Ipv4Table {
  readonly starts: Uint32Array;
  readonly ends: Uint32Array;
  readonly values: Int32Array;
  /** Optional first-level index from indexTable(); lookups give the same answers without it. */
  readonly buckets?: Uint32Array;
}

/**
 * IPv6 ranges: range i spans words `4i..4i+3` of `starts` and `ends` (big-endian words, most
 * significant first; inclusive) and maps to `values[i]`. Sorted by start, disjoint.
 */
export interface Ipv6Table {
  readonly starts: Uint32Array;
  readonly ends: Uint32Array;
  readonly values: Int32Array;
  /** Optional first-level index from indexTable(); lookups give the same answers without it. */
  readonly buckets?: Uint32Array;
  /**
   * Optional second level for dense first-level buckets (IPv6 only): `fineAt[h]` is -1 or the
   * offset in `fine` of FINE_SLOTS + 1 counts, keyed by bits 16..27 of the first word, with the
   * same meaning as `buckets`.
   */
  readonly fineAt?: Int32Array;
  readonly fine?: Uint32Array;
}

/** Buckets are keyed by the top 16 bits of the address (of the first word for IPv6). */
const BUCKET_SHIFT = 16;
const BUCKETS = 1 << (32 - BUCKET_SHIFT);
/** IPv6 second level: bits 16..27 of the first word (a /28), for buckets holding more than FINE_MIN ranges. */
const FINE_SHIFT = 4;
const FINE_SLOTS = 1 << (BUCKET_SHIFT - FINE_SHIFT);
const FINE_MIN = 64;

/**
 * Adds a first-level index: `buckets[h]` is the number of ranges whose start lies below `h << 16`
 * (for IPv6: whose first word does), so a lookup searches only `[buckets[h] - 1, buckets[h + 1])`.
 * A plain binary search over 620k IPv4 ranges takes ~200 ns on our 2-core EPYC machines, mostly
 * cache misses; with this 256 KiB index it takes ~50 ns (IPv6: ~245 -> ~145 ns).
 */
export function indexTable<T extends Ipv4Table | Ipv6Table>(table: T, width: 1 | 4): T & { buckets: Uint32Array } {
  const n = table.values.length;
  const buckets = new Uint32Array(BUCKETS + 1);
  let i = 0;
  for (let h = 0; h <= BUCKETS; h++) {
    while (i < n && table.starts[i * width]! >>> BUCKET_SHIFT < h) i++;
    buckets[h] = i;
  }
  if (width === 1) return { ...table, buckets };
  return { ...table, buckets, ...fineIndex(table.starts, buckets) };
}

/**
 * IPv6 addresses crowd into a few /16s (2a01::/16 and 2001::/16 hold ~40k ranges each), where the
 * first level still leaves ~15 four-word comparisons. Dense buckets get a second level keyed by
 * the next 12 bits; on the 2026 build this takes the IPv6 lookup from ~190 to ~110 ns for ~0.5 MiB.
 */
function fineIndex(starts: Uint32Array, buckets: Uint32Array): { fineAt: Int32Array; fine: Uint32Array } {
  const fineAt = new Int32Array(BUCKETS).fill(-1);
  const dense: number[] = [];
  for (let h = 0; h < BUCKETS; h++) if (buckets[h + 1]! - buckets[h]! > FINE_MIN) dense.push(h);
  const fine = new Uint32Array(dense.length * (FINE_SLOTS + 1));
  dense.forEach((h, d) => {
    const at = d * (FINE_SLOTS + 1);
    fineAt[h] = at;
    let i = buckets[h]!;
    const end = buckets[h + 1]!;
    // fine[at + k]: ranges starting below (h << 16) | (k << 4) in the first word, as for buckets.
    for (let k = 0; k <= FINE_SLOTS; k++) {
      while (i < end && ((starts[i * 4]! >>> FINE_SHIFT) & (FINE_SLOTS - 1)) < k) i++;
      fine[at + k] = k === FINE_SLOTS ? end : i;
    }
  });
  return { fineAt, fine };
}

/** Returned by the finders when no range contains the address. */
export const NOT_FOUND = -1;

/**
 * Finds the value of the IPv4 range containing `ip`.
 * @param ip address as uint32 (a non-negative number below 2^32)
 * @returns the range's value, or NOT_FOUND (-1) before the first range, after the last, or in a gap.
 */
export function findIpv4(table: Ipv4Table, ip: number): number {
  const starts = table.starts;
  const buckets = table.buckets;
  // Invariant: starts[lo] <= ip < starts[hi] (with virtual starts[-1] = -inf, starts[n] = +inf).
  // Every range before buckets[h] starts at or below ip, and every range from buckets[h + 1] on
  // starts above it, so the bucket narrows the search without breaking the invariant.
  let lo = -1;
  let hi = starts.length;
  if (buckets) {
    const h = ip >>> BUCKET_SHIFT;
    lo = buckets[h]! - 1;
    hi = buckets[h + 1]!;
  }
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! <= ip) lo = mid;
    else hi = mid;
  }
  if (lo < 0 || table.ends[lo]! < ip) return NOT_FOUND;
  return table.values[lo]!;
}

/**
 * Compares the address `w0..w3` with the 4-word address stored at `arr[4i..4i+3]`.
 * @returns negative, zero or positive like a comparator.
 */
function compareAt(arr: Uint32Array, i: number, w0: number, w1: number, w2: number, w3: number): number {
  const b = i << 2;
  const a0 = arr[b]!;
  if (a0 !== w0) return w0 - a0;
  const a1 = arr[b + 1]!;
  if (a1 !== w1) return w1 - a1;
  const a2 = arr[b + 2]!;
  if (a2 !== w2) return w2 - a2;
  return w3 - arr[b + 3]!;
}

/**
 * Finds the value of the IPv6 range containing the address.
 * @param words four big-endian 32-bit words, as in `ParsedIp`
 * @returns the range's value, or NOT_FOUND (-1).
 */
export function findIpv6(table: Ipv6Table, words: Uint32Array): number {
  const w0 = words[0]!;
  const w1 = words[1]!;
  const w2 = words[2]!;
  const w3 = words[3]!;
  const starts = table.starts;
  const buckets = table.buckets;
  let lo = -1;
  let hi = table.values.length;
  if (buckets) {
    const h = w0 >>> BUCKET_SHIFT;
    const f = table.fineAt ? table.fineAt[h]! : -1;
    if (f >= 0) {
      // Same invariant one level down: the slot's ranges all start at or below the address.
      const k = f + ((w0 >>> FINE_SHIFT) & (FINE_SLOTS - 1));
      lo = table.fine![k]! - 1;
      hi = table.fine![k + 1]!;
    } else {
      lo = buckets[h]! - 1;
      hi = buckets[h + 1]!;
    }
  }
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (compareAt(starts, mid, w0, w1, w2, w3) >= 0) lo = mid;
    else hi = mid;
  }
  if (lo < 0 || compareAt(table.ends, lo, w0, w1, w2, w3) > 0) return NOT_FOUND;
  return table.values[lo]!;
}

/**
 * Checks that a table is well formed: equal lengths, start <= end, sorted and disjoint.
 * Called by the builder before writing and by the reader after loading, so a corrupt or
 * hand-edited table fails loudly instead of answering wrongly.
 * @returns null when valid, otherwise a description of the first problem.
 */
export function validateTable(table: Ipv4Table | Ipv6Table, width: 1 | 4): string | null {
  const n = table.values.length;
  if (table.starts.length !== n * width || table.ends.length !== n * width) {
    return `length mismatch: ${table.starts.length} starts, ${table.ends.length} ends, ${n} values (width ${width})`;
  }
  for (let i = 0; i < n; i++) {
    if (compareWords(table.starts, i, table.ends, i, width) > 0) return `range ${i} ends before it starts`;
    if (i > 0 && compareWords(table.ends, i - 1, table.starts, i, width) >= 0) {
      return `range ${i} is out of order or overlaps range ${i - 1}`;
    }
  }
  return null;
}

function compareWords(a: Uint32Array, i: number, b: Uint32Array, j: number, width: number): number {
  for (let k = 0; k < width; k++) {
    const x = a[i * width + k]!;
    const y = b[j * width + k]!;
    if (x !== y) return x - y;
  }
  return 0;
}

/** A range with bigint bounds (inclusive), the builder's working form for both families. */
export interface BigRange {
  start: bigint;
  end: bigint;
  value: number;
}

/**
 * Joins touching ranges that carry the same value (the country tree splits one country into
 * many CIDR blocks; one range per run is enough). Input must be sorted and disjoint.
 */
export function coalesceRanges(ranges: readonly BigRange[]): BigRange[] {
  const out: BigRange[] = [];
  for (const r of ranges) {
    const last = out[out.length - 1];
    if (last && last.value === r.value && last.end + 1n === r.start) last.end = r.end;
    else out.push({ ...r });
  }
  return out;
}

/**
 * Overlays two sorted, disjoint range lists into one list whose ranges each lie inside at most
 * one range of `a` and one of `b`, so a single lookup answers both. Each output value is
 * `combine(aValue, bValue)` with NOT_FOUND for the side that has no range there. Addresses in
 * neither list, and pieces for which `combine` returns NOT_FOUND, stay uncovered (so the same
 * function also subtracts one list from another). Touching pieces with equal values are joined.
 */
export function overlayRanges(
  a: readonly BigRange[],
  b: readonly BigRange[],
  combine: (aValue: number, bValue: number) => number,
): BigRange[] {
  const out: BigRange[] = [];
  let i = 0;
  let j = 0;
  let pos = 0n; // everything below pos has been emitted
  while (i < a.length || j < b.length) {
    const ra = a[i];
    const rb = b[j];
    // Skip ranges (or parts of ranges) that lie wholly below pos.
    if (ra && ra.end < pos) {
      i++;
      continue;
    }
    if (rb && rb.end < pos) {
      j++;
      continue;
    }
    const aStart = ra ? (ra.start > pos ? ra.start : pos) : -1n;
    const bStart = rb ? (rb.start > pos ? rb.start : pos) : -1n;
    // The next piece starts at the earliest address covered by either list.
    const start = !rb || (ra && aStart <= bStart) ? aStart : bStart;
    const inA = ra !== undefined && aStart === start;
    const inB = rb !== undefined && bStart === start;
    // It ends where the covering range(s) end or where the other list's next range begins.
    let end = inA ? ra.end : rb!.end;
    if (inB && rb.end < end) end = rb.end;
    if (!inA && ra && ra.start - 1n < end) end = ra.start - 1n;
    if (!inB && rb && rb.start - 1n < end) end = rb.start - 1n;
    const value = combine(inA ? ra.value : NOT_FOUND, inB ? rb!.value : NOT_FOUND);
    if (value !== NOT_FOUND) {
      const last = out[out.length - 1];
      if (last && last.value === value && last.end + 1n === start) last.end = end;
      else out.push({ start, end, value });
    }
    pos = end + 1n;
  }
  return out;
}

const TABLE_MAGIC = 0x31545049; // "IPT1" read as a little-endian uint32
const HEADER_WORDS = 4; // magic, width, count, reserved

// Tables are stored as the host's typed-array bytes. Every platform Node ships for is
// little-endian; refuse to run elsewhere rather than misread every address.
function assertLittleEndian(): void {
  if (new Uint8Array(Uint32Array.of(1).buffer)[0] !== 1) {
    throw new Error("IP range tables are stored little-endian; this host is big-endian");
  }
}

/**
 * Serialises a table to bytes: a 16-byte header (magic "IPT1", width, count, 0), then starts,
 * ends and values as little-endian 32-bit integers.
 * @param width 1 for IPv4 tables, 4 for IPv6 tables
 */
export function encodeTable(table: Ipv4Table | Ipv6Table, width: 1 | 4): Uint8Array {
  assertLittleEndian();
  const n = table.values.length;
  const out = new Uint32Array(HEADER_WORDS + n * (2 * width + 1));
  out.set([TABLE_MAGIC, width, n, 0]);
  out.set(table.starts, HEADER_WORDS);
  out.set(table.ends, HEADER_WORDS + n * width);
  out.set(new Uint32Array(table.values.buffer, table.values.byteOffset, n), HEADER_WORDS + 2 * n * width);
  return new Uint8Array(out.buffer);
}

/**
 * Reads a table written by encodeTable, copying the bytes into fresh, aligned typed arrays
 * (the source buffer may be a reused or unaligned lmdb buffer).
 * @throws Error when the bytes are not a table of the expected width.
 */
export function decodeTable(bytes: Uint8Array, width: 1 | 4): Ipv4Table | Ipv6Table {
  assertLittleEndian();
  if (bytes.byteLength < HEADER_WORDS * 4 || bytes.byteLength % 4 !== 0) {
    throw new Error(`range table has an invalid size (${bytes.byteLength} bytes)`);
  }
  const words = new Uint32Array(bytes.byteLength / 4);
  new Uint8Array(words.buffer).set(bytes);
  const [magic, storedWidth, n = 0] = words;
  if (magic !== TABLE_MAGIC || storedWidth !== width) {
    throw new Error(`range table header mismatch (magic ${magic}, width ${storedWidth}, expected ${width})`);
  }
  if (words.length !== HEADER_WORDS + n * (2 * width + 1)) {
    throw new Error(`range table holds ${words.length} words, header says ${n} ranges of width ${width}`);
  }
  const startsAt = HEADER_WORDS;
  const endsAt = startsAt + n * width;
  const valuesAt = endsAt + n * width;
  return {
    starts: words.subarray(startsAt, endsAt),
    ends: words.subarray(endsAt, valuesAt),
    values: new Int32Array(words.buffer, valuesAt * 4, n),
  };
}

/**
 * Builds a table from bigint ranges (builder side).
 * @param width 1 for IPv4 (bounds below 2^32), 4 for IPv6 (bounds below 2^128)
 */
export function tableFromRanges(ranges: readonly BigRange[], width: 1 | 4): Ipv4Table | Ipv6Table {
  const n = ranges.length;
  const starts = new Uint32Array(n * width);
  const ends = new Uint32Array(n * width);
  const values = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const r = ranges[i]!;
    writeWords(starts, i * width, r.start, width);
    writeWords(ends, i * width, r.end, width);
    values[i] = r.value;
  }
  return { starts, ends, values };
}

function writeWords(arr: Uint32Array, at: number, v: bigint, width: number): void {
  for (let k = width - 1; k >= 0; k--) {
    arr[at + k] = Number(v & 0xffffffffn);
    v >>= 32n;
  }
  if (v !== 0n) throw new RangeError(`address does not fit in ${width * 32} bits`);
}
