/**
 * Bogons: addresses of the IANA special-purpose registries (RFC 6890 and its updates) that are not
 * globally reachable: private networks, loopback, link-local, shared address space, documentation,
 * benchmarking, multicast and reserved space. No public dataset has anything to say about them, so
 * an IP answer flags them (`bogon`) instead of returning an empty record as if it were a finding.
 * The dataset builder masks the same ranges out of every upstream table (scripts/sources/npm.ts).
 */
import type { ParsedIp } from "./ip.js";

/** The ranges, as CIDR text. */
export const SPECIAL_PURPOSE_RANGES: Record<4 | 6, readonly string[]> = {
  4: [
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
    "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
  ],
  6: [
    "::/128", "::1/128", "::ffff:0:0/96", "64:ff9b:1::/48", "100::/64", "2001:2::/48", "2001:db8::/32",
    "3fff::/20", "fc00::/7", "fe80::/10", "ff00::/8",
  ],
};

/** A CIDR as masked words: an address is inside when (word & mask) equals base, for each of its words. */
interface Block {
  base: number[];
  mask: number[];
}

function block(cidr: string, words: number): Block {
  const [addr = "", len = ""] = cidr.split("/");
  const prefix = Number(len);
  const base: number[] = [];
  const mask: number[] = [];
  const v = addr.includes(":") ? ipv6Words(addr) : [ipv4Word(addr)];
  for (let i = 0; i < words; i++) {
    const bits = Math.max(0, Math.min(32, prefix - 32 * i));
    const m = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    mask.push(m);
    base.push((v[i]! & m) >>> 0);
  }
  return { base, mask };
}

function ipv4Word(addr: string): number {
  return addr.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
}

/** The four 32-bit words of an IPv6 address in the `::` forms this list uses. */
function ipv6Words(addr: string): number[] {
  const [head = "", tail = ""] = addr.split("::");
  const parse = (s: string): number[] => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)));
  const h = parse(head);
  const t = parse(tail);
  const groups = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  return [0, 1, 2, 3].map((i) => (groups[2 * i]! * 0x10000 + groups[2 * i + 1]!) >>> 0);
}

const V4 = SPECIAL_PURPOSE_RANGES[4].map((c) => block(c, 1));
// IPv4-mapped addresses are parsed as IPv4 (shared/ip.ts) and judged by the IPv4 list.
const V6 = SPECIAL_PURPOSE_RANGES[6].filter((c) => !c.startsWith("::ffff:")).map((c) => block(c, 4));

/** Whether the address is a bogon (see the module comment). A few integer comparisons. */
export function isBogon(ip: ParsedIp): boolean {
  if (ip.version === 4) {
    for (const b of V4) if ((ip.v4 & b.mask[0]!) >>> 0 === b.base[0]) return true;
    return false;
  }
  const w = ip.words;
  outer: for (const b of V6) {
    for (let i = 0; i < 4; i++) if ((w[i]! & b.mask[i]!) >>> 0 !== b.base[i]) continue outer;
    return true;
  }
  return false;
}
