import { isBogon } from "../../src/shared/bogon.js";
import { formatIpv4, parseIp } from "../../src/shared/ip.js";

/** Well-known resolvers, first in every sample so a glance at a response shows a familiar answer. */
const WELL_KNOWN = ["8.8.8.8", "1.1.1.1", "9.9.9.9", "208.67.222.222", "2001:4860:4860::8888", "2606:4700:4700::1111"];

/**
 * A deterministic mix of public addresses (three IPv4 to one IPv6 in 2000::/4; bogons, which cost
 * nothing, are drawn again), the same on every run so that runs compare. Starts with a few
 * well-known resolvers.
 */
export function sampleAddresses(n: number): string[] {
  let seed = 20260617;
  const rand = (): number => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
  const hex16 = (): string => (rand() & 0xffff).toString(16);
  const out = WELL_KNOWN.slice(0, n);
  for (let i = out.length; i < n; ) {
    const ip = i % 4 === 3 ? `2${(rand() % 0x1000).toString(16).padStart(3, "0")}:${hex16()}:${hex16()}::${hex16()}` : formatIpv4(((1 + (rand() % 223)) << 24) | (rand() & 0xffffff));
    if (isBogon(parseIp(ip)!)) continue;
    out.push(ip);
    i++;
  }
  return out;
}
