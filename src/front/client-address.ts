import { parseIp, type ParsedIp } from "../shared/ip.js";

/** One trusted proxy network. */
interface Net {
  ip: ParsedIp;
  prefix: number;
}

/**
 * Which peer addresses are our own reverse proxies (FS_TRUSTED_PROXIES). A request from one of
 * them has its client address taken from X-Forwarded-For: the rightmost entry that is not itself
 * a trusted proxy (entries further left were written by the client and cannot be trusted).
 */
export class TrustedProxies {
  private readonly nets: Net[];

  /**
   * @param entries IP addresses or CIDR blocks, e.g. ["127.0.0.1", "10.0.0.0/8", "::1"].
   * @throws Error naming the first entry that is not an address or CIDR block.
   */
  constructor(entries: readonly string[]) {
    this.nets = entries.map((e) => {
      const net = parseNet(e);
      if (!net) throw new Error(`FS_TRUSTED_PROXIES: ${JSON.stringify(e)} is not an IP address or CIDR block`);
      return net;
    });
  }

  /** True when no proxy is trusted (X-Forwarded-For is ignored). */
  get empty(): boolean {
    return this.nets.length === 0;
  }

  has(ip: ParsedIp): boolean {
    for (const n of this.nets) if (contains(n, ip)) return true;
    return false;
  }

  /**
   * Whether a connection's peer (its address as text) is a trusted proxy, so that the request's
   * X-Forwarded-For lines are worth reading (request.ts forwardedFor); false at once when no proxy
   * is trusted.
   */
  trusts(peer: string): boolean {
    if (this.nets.length === 0) return false;
    const p = parseIp(peer);
    return p !== null && this.has(p);
  }

  /**
   * The client's address: the peer's, or, behind a trusted proxy, the rightmost untrusted
   * X-Forwarded-For entry (IPv4-mapped addresses come back as IPv4); null when the peer address
   * is unreadable. `forwardedFor` holds every X-Forwarded-For line of the request joined in
   * arrival order (request.ts forwardedFor): a proxy that appends a line of its own (HAProxy)
   * puts the address it saw after the client's own lines, as one that appends to the line does
   * (nginx, AWS ALB). Empty entries are skipped.
   */
  clientIp(peer: string, forwardedFor: string): ParsedIp | null {
    const p = parseIp(peer);
    if (!p) return null;
    if (this.nets.length === 0 || !forwardedFor || !this.has(p)) return p;
    const hops = forwardedFor.split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!.trim();
      if (hop === "") continue;
      const h = parseIp(hop);
      if (!h) return p; // a malformed hop: stop trusting the chain at our own proxy
      if (!this.has(h)) return h;
    }
    return p;
  }
}

function parseNet(text: string): Net | null {
  const slash = text.indexOf("/");
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!ip) return null;
  const max = ip.version === 4 ? 32 : 128;
  const prefix = slash < 0 ? max : Number(text.slice(slash + 1));
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (slash >= 0 && !/^\d{1,3}$/.test(text.slice(slash + 1)))) return null;
  return { ip, prefix };
}

function contains(net: Net, ip: ParsedIp): boolean {
  if (net.ip.version !== ip.version) return false;
  if (net.ip.version === 4 && ip.version === 4) {
    if (net.prefix === 0) return true;
    const shift = 32 - net.prefix;
    return shift === 0 ? net.ip.v4 === ip.v4 : net.ip.v4 >>> shift === ip.v4 >>> shift;
  }
  if (net.ip.version !== 6 || ip.version !== 6) return false;
  let bits = net.prefix;
  for (let w = 0; w < 4 && bits > 0; w++) {
    const take = Math.min(32, bits);
    const mask = take === 32 ? 0xffffffff : ~(0xffffffff >>> take) >>> 0;
    if (((net.ip.words[w]! & mask) >>> 0) !== ((ip.words[w]! & mask) >>> 0)) return false;
    bits -= take;
  }
  return true;
}
