import fc from "fast-check";
import { isIPv4, isIPv6 } from "node:net";
import { describe, expect, it } from "vitest";
import {
  formatIp,
  formatIpv4,
  formatIpv6,
  ipv6WordsFromBigInt,
  ipv6WordsToBigInt,
  parseIp,
  type ParsedIp,
} from "../../src/shared/ip.js";

function v6(s: string): string {
  const ip = parseIp(s);
  if (!ip || ip.version !== 6) throw new Error(`expected IPv6 for ${s}, got ${JSON.stringify(ip)}`);
  return formatIpv6(ip.words);
}

describe("parseIp: IPv4", () => {
  it.each([
    ["0.0.0.0", 0],
    ["1.2.3.4", 0x01020304],
    ["8.8.8.8", 0x08080808],
    ["10.0.0.1", 0x0a000001],
    ["192.168.100.200", 0xc0a864c8],
    ["255.255.255.255", 0xffffffff],
    ["100.64.0.0", 0x64400000],
  ])("parses %s", (s, v4) => {
    expect(parseIp(s)).toEqual({ version: 4, v4, mapped: false });
  });

  it("returns v4 as an unsigned number", () => {
    const ip = parseIp("200.1.2.3") as Extract<ParsedIp, { version: 4 }>;
    expect(ip.v4).toBe(3355509251);
    expect(ip.v4).toBeGreaterThan(0);
  });

  it.each([
    "",
    "1",
    "1.2",
    "1.2.3",
    "1.2.3.4.5",
    "01.2.3.4", // leading zero: octal in some parsers
    "1.2.3.04",
    "1.02.3.4",
    "00.0.0.0",
    "256.0.0.0",
    "1.2.3.256",
    "999.1.1.1",
    "1000.1.1.1",
    "0x1.2.3.4",
    "0x01020304",
    "16909060", // integer form
    "1.2.3.4.",
    ".1.2.3.4",
    "1..3.4",
    "1.2.3.-4",
    "+1.2.3.4",
    " 1.2.3.4",
    "1.2.3.4 ",
    "1.2.3.4\n",
    "1.2.3.4/24",
    "1.2.3.a",
    "１.2.3.4", // full-width digit
  ])("rejects %j", (s) => {
    expect(parseIp(s)).toBeNull();
  });
});

describe("parseIp: IPv6", () => {
  it.each([
    ["::", "::"],
    ["::1", "::1"],
    ["1::", "1::"],
    ["2001:db8::1", "2001:db8::1"],
    ["2001:DB8::1", "2001:db8::1"],
    ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"],
    ["1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"],
    ["::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"],
    ["1::8", "1::8"],
    ["1:2::7:8", "1:2::7:8"],
    ["fe80::1", "fe80::1"],
    ["FFFF:ffff:FFFF:ffff:FFFF:ffff:FFFF:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
    ["2001:4860:4860::8888", "2001:4860:4860::8888"],
    ["64:ff9b::1.2.3.4", "64:ff9b::102:304"],
    ["::1.2.3.4", "::102:304"], // IPv4-compatible (deprecated): stays IPv6
    ["::ffff:0:1.2.3.4", "::ffff:0:102:304"], // IPv4-translated: not mapped
    ["1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"],
    ["ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
    ["::ffff", "::ffff"],
    ["0:0:0:0:0:1:0:0", "::1:0:0"],
  ])("parses %s as %s", (s, canonical) => {
    expect(v6(s)).toBe(canonical);
  });

  it("returns four big-endian words", () => {
    expect(parseIp("2001:db8:1:2:3:4:5:6")).toEqual({
      version: 6,
      words: Uint32Array.of(0x20010db8, 0x00010002, 0x00030004, 0x00050006),
    });
  });

  it.each([
    ":",
    ":::",
    "::::",
    ":1::",
    "1::2:",
    "1:",
    ":1",
    "1::2::3",
    "::1::",
    "1:2:3:4:5:6:7",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7:8::",
    "::1:2:3:4:5:6:7:8",
    "1:2:3:4::5:6:7:8",
    "12345::1",
    "1:2:3:4:5:6:7:1.2.3.4", // IPv4 tail needs two groups
    "::1:2:3:4:5:6:1.2.3.4", // "::" must stand for at least one group
    "1.2.3.4::",
    "::1.2.3.4:1",
    "::1.2.3",
    "::1.2.3.04",
    "::01.2.3.4",
    "::256.1.1.1",
    "::ffff:1.2.3.4.5",
    "g::1",
    "fe80::1%eth0", // zone id
    "fe80::1%1",
    "[::1]",
    "[2001:db8::1]:443",
    " ::1",
    "::1 ",
    ":: 1",
    "2001:db8::1/64",
    "0000:0000:0000:0000:0000:0000:0000:0000:0", // over 45 characters
    "::ffff:1.2.3.4 ",
  ])("rejects %j", (s) => {
    expect(parseIp(s)).toBeNull();
  });

  it("accepts the longest valid form (45 characters) and rejects longer input up front", () => {
    expect(parseIp("0000:0000:0000:0000:0000:fffe:255.255.255.255")?.version).toBe(6);
    expect(parseIp(`::${"1".repeat(100_000)}`)).toBeNull();
  });
});

describe("parseIp: IPv4-mapped IPv6", () => {
  it.each([
    ["::ffff:1.2.3.4", 0x01020304],
    ["::FFFF:8.8.8.8", 0x08080808],
    ["::ffff:102:304", 0x01020304],
    ["0:0:0:0:0:ffff:0102:0304", 0x01020304],
    ["0::ffff:255.255.255.255", 0xffffffff],
    ["::ffff:0.0.0.0", 0],
  ])("maps %s to IPv4", (s, v4) => {
    expect(parseIp(s)).toEqual({ version: 4, v4, mapped: true });
  });

  it("does not map ::fffe:1.2.3.4 or 1::ffff:1.2.3.4", () => {
    expect(parseIp("::fffe:1.2.3.4")?.version).toBe(6);
    expect(parseIp("1::ffff:1.2.3.4")?.version).toBe(6);
  });
});

describe("formatting", () => {
  it("formats IPv4", () => {
    expect(formatIpv4(0)).toBe("0.0.0.0");
    expect(formatIpv4(0xffffffff)).toBe("255.255.255.255");
    expect(formatIpv4(0x08080404)).toBe("8.8.4.4");
  });

  it("follows RFC 5952 for IPv6: longest zero run, first on a tie, no single-group compression", () => {
    expect(formatIpv6(Uint32Array.of(0, 0, 0, 0))).toBe("::");
    expect(formatIpv6(Uint32Array.of(0x20010db8, 0, 1, 0))).toBe("2001:db8::1:0:0");
    expect(formatIpv6(Uint32Array.of(0x20010000, 0x00010000, 0x00010000, 0x00010000))).toBe("2001:0:1:0:1:0:1:0");
    expect(formatIpv6(Uint32Array.of(0x20010000, 0x00000001, 0x00000000, 0x00000001))).toBe("2001:0:0:1::1");
    expect(formatIpv6(Uint32Array.of(0x20010db8, 0, 0x00010000, 0x00000001))).toBe("2001:db8::1:0:0:1");
  });

  it("writes mapped addresses as dotted quads", () => {
    expect(formatIp(parseIp("::ffff:1.2.3.4")!)).toBe("1.2.3.4");
  });

  it("round-trips canonical text", () => {
    for (const s of ["2001:db8::1", "::", "::1", "1::", "fe80::1:2", "1:2:3:4:5:6:7:8", "8.8.8.8"]) {
      expect(formatIp(parseIp(s)!)).toBe(s);
    }
  });

  it("converts words to and from bigint", () => {
    const words = Uint32Array.of(0x20010db8, 1, 2, 0xffffffff);
    const big = ipv6WordsToBigInt(words);
    expect(big).toBe(0x20010db8_00000001_00000002_ffffffffn);
    expect(ipv6WordsFromBigInt(big)).toEqual(words);
    expect(() => ipv6WordsFromBigInt(1n << 128n)).toThrow(RangeError);
    expect(() => ipv6WordsFromBigInt(-1n)).toThrow(RangeError);
  });
});

describe("parseIp against independent parsers", () => {
  // Random near-valid text: real addresses written in assorted legal forms, then sometimes
  // mutated by one character. node:net decides validity (it forbids IPv4 leading zeros too) and
  // the WHATWG URL host parser gives the canonical IPv6 text.
  // fast-check draws the choices (fc.gen), so a failure is reported with its seed and replays.
  function candidate(g: fc.GeneratorValue): string {
    const rand = (n: number): number => g(fc.nat, { max: n - 1 });
    const hexGroup = () => (rand(4) === 0 ? 0 : rand(4) === 0 ? rand(16) : rand(0x10000)).toString(16);
    if (rand(5) === 0) return [rand(300), rand(300), rand(300), rand(300)].map(String).join(".");
    const groups = Array.from({ length: 8 }, hexGroup);
    if (rand(6) === 0) groups.splice(0, 6, "0", "0", "0", "0", "0", "ffff");
    let text: string;
    if (rand(4) === 0) {
      const tail = [rand(256), rand(256), rand(256), rand(256)].join(".");
      text = `${groups.slice(0, 6).join(":")}:${tail}`;
    } else {
      text = groups.map((g) => (rand(5) === 0 ? g.padStart(4, "0") : g)).join(":");
    }
    if (rand(2) === 0) {
      // Compress some run of groups (zero or not: non-zero runs give different addresses, still valid text).
      const parts = text.split(":");
      const from = rand(parts.length);
      const len = 1 + rand(Math.min(4, parts.length - from));
      parts.splice(from, len, from === 0 ? ":" : "");
      text = parts.join(":").replace(/^:::/, "::");
      if (text.endsWith(":") && !text.endsWith("::")) text += ":";
    }
    if (rand(3) === 0) text = text.toUpperCase();
    if (rand(3) === 0) {
      const at = rand(text.length + 1);
      const chars = "0123456789abcdef:.%g ";
      text = rand(2) === 0 ? text.slice(0, at) + chars[rand(chars.length)] + text.slice(at) : text.slice(0, at) + text.slice(at + 1);
    }
    return text;
  }

  it("accepts exactly what node:net accepts and reads the same address", () => {
    let valid = 0;
    fc.assert(
      fc.property(fc.gen(), (g) => {
        const text = candidate(g);
        const got = parseIp(text);
        const nodeSays = isIPv4(text) || (isIPv6(text) && !text.includes("%"));
        expect(got !== null, text).toBe(nodeSays);
        if (!got) return;
        valid++;
        if (got.version === 4 && !got.mapped) {
          expect(formatIpv4(got.v4)).toBe(text);
        } else {
          const host = new URL(`http://[${text}]/`).hostname.slice(1, -1);
          const words = got.version === 6 ? got.words : Uint32Array.of(0, 0, 0xffff, got.v4);
          expect(formatIpv6(words), text).toBe(host);
        }
      }),
      { numRuns: 20_000 },
    );
    expect(valid).toBeGreaterThan(5_000);
  });
});
