import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  NOT_FOUND,
  coalesceRanges,
  decodeTable,
  encodeTable,
  findIpv4,
  findIpv6,
  indexTable,
  overlayRanges,
  tableFromRanges,
  validateTable,
  type BigRange,
  type Ipv4Table,
  type Ipv6Table,
} from "../../src/datasets/ip-table.js";
import { ipv6WordsFromBigInt } from "../../src/shared/ip.js";

function v4Table(rows: Array<[number, number, number]>): Ipv4Table {
  return {
    starts: Uint32Array.from(rows.map((r) => r[0])),
    ends: Uint32Array.from(rows.map((r) => r[1])),
    values: Int32Array.from(rows.map((r) => r[2])),
  };
}

// Ranges with a gap (31..39), a single-address range (50), and one touching the top of the space.
const table = v4Table([
  [10, 20, 0],
  [21, 30, 1],
  [40, 49, 2],
  [50, 50, 3],
  [0xfffffff0, 0xffffffff, 4],
]);

const indexed = indexTable(table, 1);

describe("findIpv4", () => {
  it.each([
    [0, NOT_FOUND, "before the first range"],
    [9, NOT_FOUND, "just before the first range"],
    [10, 0, "exact start of the first range"],
    [15, 0, "inside"],
    [20, 0, "exact end"],
    [21, 1, "start of the adjacent range"],
    [30, 1, "end before a gap"],
    [31, NOT_FOUND, "first address of the gap"],
    [39, NOT_FOUND, "last address of the gap"],
    [40, 2, "start after a gap"],
    [50, 3, "single-address range"],
    [51, NOT_FOUND, "after a single-address range"],
    [0xffffffef, NOT_FOUND, "just below the last range"],
    [0xfffffff0, 4, "start of the last range"],
    [0xffffffff, 4, "top of the address space"],
  ])("%i -> %i (%s)", (ip, want) => {
    expect(findIpv4(table, ip)).toBe(want);
    expect(findIpv4(indexed, ip)).toBe(want);
  });

  it("returns NOT_FOUND on an empty table", () => {
    for (const t of [v4Table([]), indexTable(v4Table([]), 1)]) {
      expect(findIpv4(t, 0)).toBe(NOT_FOUND);
      expect(findIpv4(t, 0xffffffff)).toBe(NOT_FOUND);
    }
  });

  it("indexes by the top 16 bits", () => {
    // Ranges before bucket h: those starting below h << 16.
    expect(indexed.buckets[0]).toBe(0);
    expect(indexed.buckets[1]).toBe(4);
    expect(indexed.buckets[0xffff]).toBe(4);
    expect(indexed.buckets[0x10000]).toBe(5);
  });

  it("handles a single range", () => {
    const one = v4Table([[100, 200, 7]]);
    expect([99, 100, 150, 200, 201].map((ip) => findIpv4(one, ip))).toEqual([-1, 7, 7, 7, -1]);
  });

  it("agrees with a linear scan on random tables", () => {
    fc.assert(
      fc.property(fc.gen(), (g) => {
        const rand = (): number => g(fc.nat, { max: 0x7fffffff });
        const rows: Array<[number, number, number]> = [];
        let at = 0;
        for (let i = 0; i < 500 && at < 0xffff0000; i++) {
          // Sometimes touching, sometimes a small gap, sometimes a jump over whole buckets.
          const start = at + (rand() % 3) * 1000 + (rand() % 4 === 0 ? rand() % 0x2000000 : 0);
          const end = start + (rand() % 5000);
          rows.push([start, end, i]);
          at = end + 1;
        }
        const t = v4Table(rows);
        const ti = indexTable(t, 1);
        for (let k = 0; k < 1000; k++) {
          const ip = rand() % (at + 1000);
          const linear = rows.find(([s, e]) => s <= ip && ip <= e)?.[2] ?? NOT_FOUND;
          expect(findIpv4(t, ip)).toBe(linear);
          expect(findIpv4(ti, ip)).toBe(linear);
        }
      }),
      { numRuns: 10 },
    );
  });
});

describe("findIpv6", () => {
  const big = (hex: string) => BigInt(`0x${hex}`);
  const ranges: BigRange[] = [
    { start: big("20010db8000000000000000000000000"), end: big("20010db8ffffffffffffffffffffffff"), value: 0 },
    // Differs from the next only in the lowest word, to exercise every comparison level.
    { start: big("2a000000000000000000000000000001"), end: big("2a000000000000000000000000000001"), value: 1 },
    { start: big("2a000000000000000000000000000003"), end: big("2a0000000000000100000000ffffffff"), value: 2 },
    { start: big("ffffffffffffffffffffffffffffff00"), end: big("ffffffffffffffffffffffffffffffff"), value: 3 },
  ];
  const t = tableFromRanges(ranges, 4);
  const ti = indexTable(t, 4);
  const at = (hex: string) => {
    const plain = findIpv6(t, ipv6WordsFromBigInt(big(hex)));
    expect(findIpv6(ti, ipv6WordsFromBigInt(big(hex)))).toBe(plain);
    return plain;
  };

  it("is a valid table", () => {
    expect(validateTable(t, 4)).toBeNull();
  });

  it.each([
    ["00000000000000000000000000000000", NOT_FOUND],
    ["20010db7ffffffffffffffffffffffff", NOT_FOUND],
    ["20010db8000000000000000000000000", 0],
    ["20010db8123456789abcdef012345678", 0],
    ["20010db8ffffffffffffffffffffffff", 0],
    ["20010db9000000000000000000000000", NOT_FOUND],
    ["2a000000000000000000000000000000", NOT_FOUND],
    ["2a000000000000000000000000000001", 1],
    ["2a000000000000000000000000000002", NOT_FOUND],
    ["2a000000000000000000000000000003", 2],
    ["2a0000000000000000000001ffffffff", 2],
    ["2a0000000000000100000000ffffffff", 2],
    ["2a000000000000010000000100000000", NOT_FOUND],
    ["fffffffffffffffffffffffffffffeff", NOT_FOUND],
    ["ffffffffffffffffffffffffffffff00", 3],
    ["ffffffffffffffffffffffffffffffff", 3],
  ])("%s -> %i", (hex, want) => {
    expect(at(hex)).toBe(want);
  });

  it("compares words as unsigned (high bit set in every word)", () => {
    const hi = tableFromRanges([{ start: big("80000000800000008000000080000000"), end: big("80000000800000008000000080000010"), value: 9 }], 4);
    expect(findIpv6(hi, ipv6WordsFromBigInt(big("80000000800000008000000080000008")))).toBe(9);
    expect(findIpv6(hi, ipv6WordsFromBigInt(big("7fffffffffffffffffffffffffffffff")))).toBe(NOT_FOUND);
  });

  it("agrees with a linear scan where a dense /16 gets the second-level index", () => {
    // 2000 ranges crowded into 2a01::/16 (plus neighbours), with gaps, spanning /28 slots.
    fc.assert(
      fc.property(fc.gen(), (g) => denseAgrees(() => g(fc.nat, { max: 0xffffffff }))),
      { seed: 5, numRuns: 2 },
    );
  });

  function denseAgrees(rand: () => number): void {
    const dense: BigRange[] = [];
    let pos = big("2a010000000000000000000000000000");
    for (let i = 0; i < 2000; i++) {
      // Steps of 2^80 to 2^100 (a /28 slot is 2^100): empty, single and crowded slots.
      pos += BigInt(1 + (rand() % 4 === 0 ? rand() % 1_048_576 : rand() % 16)) << 80n;
      const end = pos + (BigInt(rand()) << 40n);
      dense.push({ start: pos, end, value: i });
    }
    const all = [{ start: big("20010000000000000000000000000000"), end: big("2001ffffffffffffffffffffffffffff"), value: 9999 }, ...dense];
    expect(dense[dense.length - 1]!.end < big("2a020000000000000000000000000000")).toBe(true);
    const plain = tableFromRanges(all, 4);
    const indexed = indexTable(plain, 4);
    expect(validateTable(plain, 4)).toBeNull();
    expect(Array.from((indexed as Ipv6Table).fineAt!).filter((x) => x >= 0)).toHaveLength(1);
    const linear = (v: bigint) => all.find((r) => r.start <= v && v <= r.end)?.value ?? NOT_FOUND;
    const probes = all.flatMap((r) => [r.start - 1n, r.start, (r.start + r.end) / 2n, r.end, r.end + 1n]);
    for (let k = 0; k < 2000; k++) probes.push(big("2a010000000000000000000000000000") + (((BigInt(rand()) << 96n) | (BigInt(rand()) << 64n)) % (1n << 112n)));
    for (const v of probes) {
      const words = ipv6WordsFromBigInt(v);
      expect(findIpv6(indexed, words), v.toString(16)).toBe(linear(v));
      expect(findIpv6(plain, words)).toBe(linear(v));
    }
  }
});

describe("validateTable", () => {
  it("accepts sorted, disjoint ranges", () => {
    expect(validateTable(table, 1)).toBeNull();
  });

  it.each([
    [
      "overlapping",
      [
        [1, 10, 0],
        [10, 20, 1],
      ],
      /overlaps/,
    ],
    [
      "unsorted",
      [
        [20, 30, 0],
        [1, 10, 1],
      ],
      /out of order/,
    ],
    ["inverted", [[10, 1, 0]], /ends before it starts/],
  ] as const)("rejects %s ranges", (_name, rows, message) => {
    expect(validateTable(v4Table(rows.map((r) => [...r])), 1)).toMatch(message);
  });

  it("rejects mismatched lengths", () => {
    expect(validateTable({ starts: new Uint32Array(2), ends: new Uint32Array(1), values: new Int32Array(1) }, 1)).toMatch(/length/);
  });
});

describe("encodeTable / decodeTable", () => {
  it("round-trips an IPv4 table", () => {
    const back = decodeTable(encodeTable(table, 1), 1);
    expect(back.starts).toEqual(table.starts);
    expect(back.ends).toEqual(table.ends);
    expect(back.values).toEqual(table.values);
  });

  it("copies from an unaligned buffer", () => {
    const bytes = encodeTable(table, 1);
    const shifted = new Uint8Array(bytes.length + 1);
    shifted.set(bytes, 1);
    expect(decodeTable(shifted.subarray(1), 1).values).toEqual(table.values);
  });

  it("rejects a table of the wrong width or size", () => {
    const bytes = encodeTable(table, 1);
    expect(() => decodeTable(bytes, 4)).toThrow(/header mismatch/);
    expect(() => decodeTable(bytes.subarray(0, bytes.length - 4), 1)).toThrow(/header says/);
    expect(() => decodeTable(new Uint8Array(3), 1)).toThrow(/invalid size/);
  });
});

describe("coalesceRanges", () => {
  it("joins touching ranges with the same value only", () => {
    const out = coalesceRanges([
      { start: 0n, end: 9n, value: 1 },
      { start: 10n, end: 19n, value: 1 },
      { start: 21n, end: 30n, value: 1 }, // gap: kept apart
      { start: 31n, end: 40n, value: 2 }, // other value: kept apart
    ]);
    expect(out).toEqual([
      { start: 0n, end: 19n, value: 1 },
      { start: 21n, end: 30n, value: 1 },
      { start: 31n, end: 40n, value: 2 },
    ]);
  });
});

describe("overlayRanges", () => {
  const pairOf = (a: number, b: number) => (a + 1) * 100 + (b + 1); // NOT_FOUND (-1) becomes 0 in its place

  it("splits at every boundary of either list and leaves uncovered gaps out", () => {
    const a: BigRange[] = [
      { start: 10n, end: 19n, value: 1 },
      { start: 30n, end: 39n, value: 2 },
    ];
    const b: BigRange[] = [
      { start: 0n, end: 14n, value: 5 },
      { start: 17n, end: 33n, value: 6 },
      { start: 50n, end: 50n, value: 7 },
    ];
    expect(overlayRanges(a, b, pairOf)).toEqual([
      { start: 0n, end: 9n, value: pairOf(-1, 5) },
      { start: 10n, end: 14n, value: pairOf(1, 5) },
      { start: 15n, end: 16n, value: pairOf(1, -1) },
      { start: 17n, end: 19n, value: pairOf(1, 6) },
      { start: 20n, end: 29n, value: pairOf(-1, 6) },
      { start: 30n, end: 33n, value: pairOf(2, 6) },
      { start: 34n, end: 39n, value: pairOf(2, -1) },
      { start: 50n, end: 50n, value: pairOf(-1, 7) },
    ]);
  });

  it("merges neighbours that end up with the same combined value", () => {
    const a: BigRange[] = [{ start: 0n, end: 99n, value: 1 }];
    const b: BigRange[] = [
      { start: 0n, end: 49n, value: 3 },
      { start: 50n, end: 99n, value: 3 },
    ];
    expect(overlayRanges(a, b, pairOf)).toEqual([{ start: 0n, end: 99n, value: pairOf(1, 3) }]);
  });

  it("answers like looking up both lists separately", () => {
    fc.assert(
      fc.property(fc.gen(), (g) => overlayAgrees((n) => g(fc.nat, { max: n - 1 }))),
      { seed: 7, numRuns: 5 },
    );
  });

  function overlayAgrees(rand: (n: number) => number): void {
    const a: BigRange[] = [];
    const b: BigRange[] = [];
    for (const [list, count] of [
      [a, 60],
      [b, 40],
    ] as const) {
      let at = 0;
      for (let i = 0; i < count; i++) {
        const start = at + rand(4);
        const end = start + rand(20);
        list.push({ start: BigInt(start), end: BigInt(end), value: i });
        at = end + 1;
      }
    }
    const t = tableFromRanges(overlayRanges(a, b, pairOf), 1);
    expect(validateTable(t, 1)).toBeNull();
    const find = (list: BigRange[], ip: number) => list.find((r) => r.start <= BigInt(ip) && BigInt(ip) <= r.end)?.value ?? -1;
    for (let ip = 0; ip < 1500; ip++) {
      const ia = find(a, ip);
      const ib = find(b, ip);
      expect(findIpv4(t, ip)).toBe(ia < 0 && ib < 0 ? NOT_FOUND : pairOf(ia, ib));
    }
  }
});

describe("overlayRanges as subtraction", () => {
  it("leaves out pieces whose combined value is NOT_FOUND", () => {
    const data: BigRange[] = [
      { start: 0n, end: 99n, value: 1 },
      { start: 100n, end: 199n, value: 2 },
    ];
    const mask: BigRange[] = [
      { start: 50n, end: 59n, value: 0 },
      { start: 95n, end: 104n, value: 0 },
    ];
    const out = overlayRanges(data, mask, (v, m) => (m === NOT_FOUND ? v : NOT_FOUND));
    expect(out).toEqual([
      { start: 0n, end: 49n, value: 1 },
      { start: 60n, end: 94n, value: 1 },
      { start: 105n, end: 199n, value: 2 },
    ]);
  });
});
