/**
 * Reverse-DNS enrichment (`network.hostname`, `network.hostname_verified`; `include=rdns` of
 * GET /v1/ip/{ip}, docs/api.md).
 *
 * Forward-confirmed reverse DNS: the PTR name of the address, then that name's A (IPv4) or AAAA
 * (IPv6) records; the name is verified when the address is among them. Unlike the other adapters
 * in datasets/ this one does network I/O, so it is asynchronous, bounded by a timeout, cached
 * (LRU with TTLs) and single-flight per address.
 *
 * What is cached, and for how long:
 * - a PTR answer (verified true or false, forward lookup definitive): `ttlMs`;
 * - no PTR (NXDOMAIN or NODATA on the reverse name): `negativeTtlMs`;
 * - nothing else: a timeout, or a transient failure (SERVFAIL, REFUSED, connection refused,
 *   resolver timeout, anything unexpected) of either query. Those say nothing about the address,
 *   and caching them would keep serving an outage after it ended.
 */
import { LookupCache, type LookupCacheOptions, type QueryBudget } from "./lookup-cache.js";
import { Resolver } from "node:dns/promises";
import { formatIp, parseIp, type ParsedIp } from "../shared/ip.js";

/**
 * One enrichment answer.
 * - `hostname`: the first PTR name, lower-cased, without the trailing dot; null when there is no
 *   PTR record, or the lookup timed out or failed.
 * - `verified`: true when the name's A/AAAA records contain the address; false when there is a
 *   PTR name but its forward lookup finds no records, other addresses, or fails; null exactly
 *   when `hostname` is null.
 * - `outcome`: "hit" when this call caused no DNS query (served from cache, or joined a lookup
 *   already in flight for the same address); "miss" when it started the queries. GET /v1/ip/{ip}
 *   charges +1 credit for a "miss" only (docs/api.md, "GET /v1/ip/{ip}"); "test_budget" when the
 *   address was not in the cache and not looked up, the caller's budget being spent (a test-mode
 *   key; `resolved` false).
 */
export interface RdnsResult {
  hostname: string | null;
  verified: boolean | null;
  outcome: "hit" | "miss" | "test_budget";
  /**
   * true when DNS gave a definitive answer (a name, or no PTR); false when the lookup timed out
   * or failed, which the caller reports as skipped and does not charge for.
   */
  resolved: boolean;
}

/**
 * The DNS queries the resolver needs; `systemDns()` is the real one, tests pass a fake.
 * Each method resolves with the record values, or rejects with an Error whose `code` is a Node
 * dns code: ENOTFOUND (NXDOMAIN) or ENODATA (name exists, no such record) mean "no records" and
 * are cached; any other code (ESERVFAIL, EREFUSED, ETIMEOUT, ECONNREFUSED, ...) is a transient
 * failure and is not. "NXDOMAIN" is accepted as a synonym of ENOTFOUND.
 */
export interface DnsLookup {
  /** PTR names of the address (canonical IPv4 or IPv6 text); trailing dots allowed. */
  reverse(ip: string): Promise<string[]>;
  /** IPv4 addresses (A records) of a host name. */
  resolve4(host: string): Promise<string[]>;
  /** IPv6 addresses (AAAA records) of a host name, in any valid text form. */
  resolve6(host: string): Promise<string[]>;
}

/**
 * Options of RdnsResolver (durations in ms): the cache's (timeout over PTR plus forward query; an
 * answer with a PTR name kept `ttlMs`, "no PTR record" kept `negativeTtlMs`) and where the
 * queries go.
 */
export interface RdnsOptions extends LookupCacheOptions {
  dns: DnsLookup;
  /**
   * An address known to have a PTR record (FS_RDNS_CANARY, e.g. 8.8.8.8). When an address has no
   * PTR, the canary is looked up too (cached like any address); if it has none either, the
   * resolver cannot see the public DNS (an air-gapped host, a resolver answering NXDOMAIN for
   * everything) and the answer is unresolved, not "no PTR". Absent or empty: every answer is believed.
   */
  canary?: string;
}

/**
 * The answer of one lookup before it is cached or returned. `cache` says for how long it may be
 * cached: "answer" for ttlMs, "no-ptr" for negativeTtlMs, "never" for timeouts and failures.
 */
interface Answer {
  hostname: string | null;
  verified: boolean | null;
  cache: "answer" | "no-ptr" | "never";
}

/** Codes that mean "the name has no such records": a definitive answer, safe to cache. */
const NO_RECORDS = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN"]);

function isNoRecords(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && NO_RECORDS.has(code);
}

/** Shared by every lookup that times out or fails; never cached. */
const UNRESOLVED: Answer = { hostname: null, verified: null, cache: "never" };

/**
 * Forward-confirmed reverse DNS with an LRU+TTL cache and single-flight lookups.
 *
 * @example
 * const rdns = new RdnsResolver({ dns: systemDns(), timeoutMs: 1500, ttlMs: 3_600_000, negativeTtlMs: 300_000, maxEntries: 100_000 });
 * const { hostname, verified, outcome } = await rdns.lookup("8.8.8.8");
 * // hostname "dns.google", verified true, outcome "miss" (then "hit" until the entry expires)
 */
export class RdnsResolver {
  readonly #dns: DnsLookup;
  readonly #cache: LookupCache<Answer>;
  readonly #canary: { key: string; version: 4 | 6 } | null;

  constructor(opts: RdnsOptions) {
    const { dns } = opts;
    if (typeof dns?.reverse !== "function" || typeof dns.resolve4 !== "function" || typeof dns.resolve6 !== "function") {
      throw new TypeError("options.dns must implement reverse, resolve4 and resolve6");
    }
    this.#dns = dns;
    this.#cache = new LookupCache<Answer>(opts, (a) => (a.cache === "answer" ? "positive" : a.cache === "no-ptr" ? "negative" : "never"), UNRESOLVED);
    const canary = opts.canary ? parseOrThrow(opts.canary) : null;
    this.#canary = canary ? { key: formatIp(canary), version: canary.version } : null;
  }

  /** Cached addresses, including expired entries not yet looked at again. */
  get size(): number {
    return this.#cache.size;
  }

  /**
   * Resolves the address's verified host name, from cache when possible.
   * Never rejects for DNS trouble: a timeout or failure gives hostname null, verified null.
   * @param ip IPv4 or IPv6 address text; `::ffff:a.b.c.d` is treated as `a.b.c.d`.
   * @param budget a caller on a budget (a test-mode key): an address the cache cannot answer is
   *   looked up only if it allows, else answered unresolved with outcome "test_budget"
   * @throws TypeError (as a rejection) when `ip` is not an address; callers validate first.
   */
  async lookup(ip: string, budget?: QueryBudget): Promise<RdnsResult> {
    const parsed = parseOrThrow(ip);
    const key = formatIp(parsed);
    if (budget !== undefined) {
      const cached = this.peek(key);
      if (cached !== undefined) return cached;
      if (!budget()) return { hostname: null, verified: null, outcome: "test_budget", resolved: false };
    }
    const { answer: a, cache } = await this.#cache.lookup(key, () => confirm(this.#dns, key, parsed.version));
    if (a.cache === "no-ptr" && this.#canary !== null) {
      // The canary is known to have a PTR: none for it means the DNS is blind, not the address.
      const canary = this.#canary;
      const seen = key === canary.key ? a : (await this.#cache.lookup(canary.key, () => confirm(this.#dns, canary.key, canary.version))).answer;
      if (seen.hostname === null) return { hostname: null, verified: null, outcome: cache, resolved: false };
    }
    return { hostname: a.hostname, verified: a.verified, outcome: cache, resolved: a.cache !== "never" };
  }

  /**
   * The cached answer for the address, without querying or changing its LRU position.
   * @returns the result with outcome "hit", or undefined when not cached (or expired).
   * @throws TypeError when `ip` is not an address.
   */
  peek(ip: string): RdnsResult | undefined {
    const key = formatIp(parseOrThrow(ip));
    const a = this.#cache.peek(key, false);
    if (!a) return undefined;
    // As lookup(): "no PTR" counts only while the canary is known to have one.
    const blind = a.cache === "no-ptr" && this.#canary !== null && (key === this.#canary.key || !this.#cache.peek(this.#canary.key, false)?.hostname);
    return { hostname: a.hostname, verified: a.verified, outcome: "hit", resolved: !blind };
  }
}

function parseOrThrow(ip: string): ParsedIp {
  const parsed = typeof ip === "string" ? parseIp(ip) : null;
  if (!parsed) throw new TypeError(`not an IP address: ${String(ip).slice(0, 64)}`);
  return parsed;
}

/** PTR of `key` (canonical address text), then A/AAAA of the first name; classifies the answer for caching. Never rejects. */
async function confirm(dns: DnsLookup, key: string, version: 4 | 6): Promise<Answer> {
  let names: string[];
  try {
    names = await dns.reverse(key);
  } catch (err) {
    return isNoRecords(err) ? { hostname: null, verified: null, cache: "no-ptr" } : UNRESOLVED;
  }
  const hostname = normaliseName(names[0]);
  // An empty answer set, or a PTR of "." (the root), names no host: the same as no PTR.
  if (hostname === null) return { hostname: null, verified: null, cache: "no-ptr" };
  let addrs: string[];
  try {
    addrs = await (version === 4 ? dns.resolve4(hostname) : dns.resolve6(hostname));
  } catch (err) {
    // No A/AAAA records is a definitive "not confirmed"; a failed query is only "not yet".
    return { hostname, verified: false, cache: isNoRecords(err) ? "answer" : "never" };
  }
  const verified = addrs.some((a) => {
    // Compare canonical forms: "2001:DB8:0::1" and "2001:db8::1" are the same address.
    const p = typeof a === "string" ? parseIp(a) : null;
    return p !== null && formatIp(p) === key;
  });
  return { hostname, verified, cache: "answer" };
}

function normaliseName(name: string | undefined): string | null {
  if (typeof name !== "string") return null;
  const n = (name.endsWith(".") ? name.slice(0, -1) : name).toLowerCase();
  return n.length === 0 ? null : n;
}

/** Options of systemDns() besides the servers. */
export interface SystemDnsOptions {
  /** Milliseconds c-ares waits for one reply before retrying; default 1000. */
  queryTimeoutMs?: number;
  /** Attempts per server before a query fails with ETIMEOUT; default 2. */
  tries?: number;
}

/**
 * The real DnsLookup: a dedicated node:dns/promises Resolver (DNS only, never /etc/hosts).
 *
 * `reverse` queries PTR records of the in-addr.arpa / ip6.arpa name rather than calling
 * `Resolver#reverse`, because the latter answers from /etc/hosts first (it maps 127.0.0.1 to the
 * machine's own names), which is not what a client's address should be judged by.
 * Each query is bounded by `queryTimeoutMs` x `tries` per server; RdnsResolver's `timeoutMs`
 * bounds what the caller waits, this bounds how long an abandoned query keeps running.
 *
 * @param servers name servers as "ip" or "ip:port" ("[ipv6]:port"); default: the system's.
 * @throws when a server string is invalid (from `Resolver#setServers`) or an option is out of range.
 * @example systemDns(["127.0.0.1:5353"], { queryTimeoutMs: 200, tries: 1 })
 */
export function systemDns(servers?: string[], opts: SystemDnsOptions = {}): DnsLookup {
  const { queryTimeoutMs = 1000, tries = 2 } = opts;
  if (!(Number.isInteger(queryTimeoutMs) && queryTimeoutMs > 0)) {
    throw new RangeError(`queryTimeoutMs must be an integer > 0, got ${queryTimeoutMs}`);
  }
  if (!(Number.isInteger(tries) && tries >= 1)) throw new RangeError(`tries must be an integer >= 1, got ${tries}`);
  const resolver = new Resolver({ timeout: queryTimeoutMs, tries });
  if (servers !== undefined) resolver.setServers(servers);
  return {
    reverse: (ip) => resolver.resolvePtr(reverseName(ip)),
    resolve4: (host) => resolver.resolve4(host),
    resolve6: (host) => resolver.resolve6(host),
  };
}

/**
 * The DNS name whose PTR record names an address.
 * @throws TypeError when `ip` is not an address.
 * @example reverseName("192.0.2.1") // "1.2.0.192.in-addr.arpa"
 * @example reverseName("2001:db8::1") // "1.0.0.0. ... .8.b.d.0.1.0.0.2.ip6.arpa" (32 nibbles)
 */
export function reverseName(ip: string): string {
  const p = parseOrThrow(ip);
  if (p.version === 4) {
    const v = p.v4;
    return `${v & 255}.${(v >>> 8) & 255}.${(v >>> 16) & 255}.${v >>> 24}.in-addr.arpa`;
  }
  const nibbles: string[] = [];
  for (let k = 3; k >= 0; k--) {
    const w = p.words[k]!;
    for (let shift = 0; shift < 32; shift += 4) nibbles.push(((w >>> shift) & 15).toString(16));
  }
  return `${nibbles.join(".")}.ip6.arpa`;
}

/**
 * Whether a (forward-confirmed) hostname matches one of a bot operator's reverse-DNS masks, as
 * the arcjet registry writes them: `*` runs stand for one or more letters, digits or dashes
 * within a label (`crawl-***-***-***-***.googlebot.com` matches `crawl-66-249-66-1.googlebot.com`),
 * and a leading `*.` or `@.` for any subdomain (`@.baidu.com` matches `a.b.baidu.com`, not
 * `baidu.com`). Case-insensitive; compiled masks are cached.
 */
export function hostnameMatchesMask(hostname: string, masks: readonly string[]): boolean {
  const h = hostname.toLowerCase();
  for (const mask of masks) if (maskRegExp(mask).test(h)) return true;
  return false;
}

const maskCache = new Map<string, RegExp>();

function maskRegExp(mask: string): RegExp {
  let re = maskCache.get(mask);
  if (!re) {
    const m = mask.toLowerCase();
    const sub = m.startsWith("*.") || m.startsWith("@.");
    const body = (sub ? m.slice(2) : m)
      .split(/\*+/)
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join("[a-z0-9-]+");
    re = new RegExp(`^${sub ? "(?:[a-z0-9-]+\\.)+" : ""}${body}$`);
    maskCache.set(mask, re);
  }
  return re;
}
