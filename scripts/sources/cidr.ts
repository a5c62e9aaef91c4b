/**
 * CIDR and address text to inclusive bigint ranges, with the runtime's strict address parser
 * (src/shared/ip.ts), so the builder accepts exactly the addresses the service accepts.
 */
import { ipv6WordsToBigInt, parseIp } from "../../src/shared/ip.js";

/** One parsed CIDR or single address. */
export interface CidrRange {
  family: 4 | 6;
  start: bigint;
  end: bigint;
  /** Prefix length (32 or 128 for a single address). */
  prefix: number;
}

/**
 * Parses `1.2.3.0/24`, `1.2.3.4`, `2001:db8::/32` or `2001:db8::1`.
 * @returns the range, or a reason string when the text is not a CIDR: host bits set, prefix out
 *   of range, IPv4-mapped IPv6 (ambiguous in a list), or not an address.
 */
export function parseCidr(text: string): CidrRange | string {
  const slash = text.indexOf("/");
  const addr = slash < 0 ? text : text.slice(0, slash);
  const len = slash < 0 ? "" : text.slice(slash + 1);
  const ip = parseIp(addr);
  if (!ip) return `not an address: ${text.slice(0, 60)}`;
  if (ip.version === 4 && ip.mapped) return `IPv4-mapped IPv6 in a list: ${text.slice(0, 60)}`;
  const bits = ip.version === 4 ? 32 : 128;
  let prefix = bits;
  if (slash >= 0) {
    if (!/^\d{1,3}$/.test(len) || Number(len) > bits) return `bad prefix length: ${text.slice(0, 60)}`;
    prefix = Number(len);
  }
  const start = ip.version === 4 ? BigInt(ip.v4) : ipv6WordsToBigInt(ip.words);
  const size = 1n << BigInt(bits - prefix);
  if (start % size !== 0n) return `host bits set: ${text.slice(0, 60)}`;
  return { family: ip.version, start, end: start + size - 1n, prefix };
}
