/**
 * Which addresses an outbound request (a webhook delivery) may reach: public ones only, so an
 * org's endpoint URL cannot make the service call its own host, its private network or the
 * cloud's metadata service (169.254.169.254): server-side request forgery. The ranges are the
 * bogons of shared/bogon.ts (the same table GET /v1/ip's `bogon` flag uses), plus the IPv6 forms
 * that carry an IPv4 address a gateway or the host may turn into a connection to it.
 */
import { isBogon } from "./bogon.js";
import { formatIpv4, parseIp, type ParsedIp } from "./ip.js";

/** 64:ff9b::/96 (NAT64, RFC 6052): the last 32 bits are the IPv4 address a NAT64 gateway connects to. */
const NAT64 = [0x0064ff9b, 0, 0] as const;
/** 2002::/16 (6to4, RFC 3056): bits 16-47 are the IPv4 address of the relay's far end. */
const SIX_TO_FOUR = 0x2002;
/** fec0::/10: site-local (deprecated by RFC 3879, never public). */
const SITE_LOCAL = { mask: 0xffc00000, base: 0xfec00000 } as const;

/**
 * Whether `ip` is a public address: not a bogon, and for IPv6 not one whose embedded IPv4
 * address is a bogon (NAT64, 6to4), not IPv4-compatible (::/96) and not site-local. IPv4-mapped
 * addresses (::ffff:a.b.c.d) are parsed as IPv4 by parseIp and judged as such.
 * @example isPublicAddress(parseIp("64:ff9b::a9fe:a9fe")!) // false: 169.254.169.254 through NAT64
 */
export function isPublicAddress(ip: ParsedIp): boolean {
  if (isBogon(ip)) return false;
  if (ip.version === 4) return true;
  const w = ip.words;
  const w0 = w[0]!;
  const w1 = w[1]!;
  const w2 = w[2]!;
  if (w0 === 0 && w1 === 0 && w2 === 0) return false; // IPv4-compatible (::a.b.c.d), ::, ::1
  if (w0 === NAT64[0] && w1 === NAT64[1] && w2 === NAT64[2]) return isPublicAddress({ version: 4, v4: w[3]!, mapped: false });
  if (w0 >>> 16 === SIX_TO_FOUR) return isPublicAddress({ version: 4, v4: ((w0 << 16) | (w1 >>> 16)) >>> 0, mapped: false });
  return (w0 & SITE_LOCAL.mask) >>> 0 !== SITE_LOCAL.base;
}

/**
 * The first of `addresses` (as DNS answers or a URL give them) that is not public, in its
 * canonical text; null when every one is public. An address that does not parse counts as not
 * public: a connection is only made to an address this module has judged.
 * @example firstNonPublic(["93.184.215.14", "10.0.0.5"]) // "10.0.0.5"
 */
export function firstNonPublic(addresses: readonly string[]): string | null {
  for (const a of addresses) {
    const ip = parseIp(a);
    if (!ip || !isPublicAddress(ip)) return ip?.version === 4 ? formatIpv4(ip.v4) : a;
  }
  return null;
}

/**
 * What the host of `url` (parsed by the WHATWG URL parser, as the sender parses it) says before
 * any DNS lookup: `{ literal }` for an IP address (`http://2130706433/` and `http://0x7f.1/` are
 * 127.0.0.1, `[::ffff:127.0.0.1]` too), `{ refused }` for a non-public literal or a name under
 * `localhost` (RFC 6761: it always means this host), `{ name }` otherwise (to be resolved and
 * judged at connection time).
 * @example hostOf("http://0x7f.1/hook") // { refused: "127.0.0.1" }
 */
export function hostOf(url: string): { refused: string } | { literal: string } | { name: string } {
  const host = new URL(url).hostname;
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  const ip = parseIp(bare);
  if (ip) {
    const refused = firstNonPublic([bare]);
    return refused === null ? { literal: bare } : { refused };
  }
  const name = bare.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return { refused: host };
  return { name: bare };
}
