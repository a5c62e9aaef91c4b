import { describe, expect, it } from "vitest";
import { isBogon, SPECIAL_PURPOSE_RANGES } from "../../src/shared/bogon.js";
import { cidrRanges } from "../../scripts/data-build.js";
import { ipv6WordsFromBigInt, parseIp, formatIpv4, formatIpv6 } from "../../src/shared/ip.js";

const text = (v: bigint, family: 4 | 6): string => (family === 4 ? formatIpv4(Number(v)) : formatIpv6(ipv6WordsFromBigInt(v)));
const bogon = (s: string): boolean => isBogon(parseIp(s)!);

describe("bogons (src/shared/bogon.ts)", () => {
  it("are exactly the special-purpose ranges: each range's first and last address in, the addresses beside it out", () => {
    for (const family of [4, 6] as const) {
      const ranges = cidrRanges(SPECIAL_PURPOSE_RANGES[family], family);
      const inside = (v: bigint) => ranges.some((r) => r.start <= v && v <= r.end);
      for (const r of ranges) {
        // ::ffff:0:0/96 is judged as the IPv4 address it carries (below).
        if (family === 6 && r.start === 0xffff00000000n) continue;
        expect(bogon(text(r.start, family)), text(r.start, family)).toBe(true);
        expect(bogon(text(r.end, family)), text(r.end, family)).toBe(true);
        for (const beside of [r.start - 1n, r.end + 1n]) {
          if (beside < 0n || beside >= 1n << (family === 4 ? 32n : 128n) || inside(beside)) continue;
          if (family === 6 && beside >> 32n === 0xffffn) continue;
          expect(bogon(text(beside, family)), text(beside, family)).toBe(false);
        }
      }
    }
  });

  it("judges an IPv4-mapped IPv6 address by the IPv4 address it carries", () => {
    expect(bogon("::ffff:10.1.2.3")).toBe(true);
    expect(bogon("::ffff:8.8.8.8")).toBe(false);
  });

  it("leaves public addresses alone", () => {
    for (const ip of ["8.8.8.8", "1.1.1.1", "35.180.1.1", "2001:4860:4860::8888", "2606:4700::1111"]) expect(bogon(ip), ip).toBe(false);
  });
});
