/**
 * MX presence of an e-mail domain (POST /v1/email `signals.mx`). Like rdns.ts: network I/O, so
 * asynchronous, bounded by a timeout, cached (LRU with TTLs) and single-flight per domain.
 *
 * Outcomes (RFC 5321 section 5.1, RFC 7505):
 * - `found`: the domain has MX records (`hosts` = exchanges by preference), or it has none but has
 *   an A or AAAA record: RFC 5321's implicit MX, under which mail is delivered to the domain's own
 *   address (`implicit` true, `hosts` = [domain]). Scoring treats implicit MX as deliverable but
 *   weaker evidence than a real MX.
 * - `none`: the domain cannot receive mail: NXDOMAIN; or no MX and no A/AAAA (NODATA for all);
 *   or a null MX (one MX record with exchange ".", RFC 7505: "this domain accepts no mail").
 * - `unresolved`: the lookup timed out or failed (SERVFAIL, REFUSED, ...): nothing is known. Also
 *   a `none` while the canary domain (MxOptions.canary) looks mailless too: the DNS is not
 *   telling the truth about the public internet, so its `none` is not evidence.
 *
 * What is cached, and for how long: `found` for `ttlMs`; `none` for `negativeTtlMs`; `unresolved`
 * never (caching an outage would keep serving it after it ended).
 */
import { Resolver } from "node:dns/promises";
import { LookupCache, type LookupCacheOptions, type QueryBudget } from "./lookup-cache.js";

/** One MX record as node:dns returns it. */
export interface MxRecord {
  exchange: string;
  priority: number;
}

/**
 * The DNS queries MxResolver needs; `systemMxDns()` is the real one, tests pass a fake.
 * Each method resolves with the records, or rejects with an Error whose `code` is a Node dns code:
 * ENOTFOUND (NXDOMAIN) and ENODATA (the name exists, no such record) are definitive and cached;
 * "NXDOMAIN" is accepted as a synonym of ENOTFOUND; any other code is a transient failure.
 */
export interface MxDns {
  resolveMx(domain: string): Promise<MxRecord[]>;
  resolve4(host: string): Promise<string[]>;
  resolve6(host: string): Promise<string[]>;
}

/** found / none / unresolved: see the module comment. */
export type MxOutcome = "found" | "none" | "unresolved";

/** One MX answer. */
export interface MxResult {
  outcome: MxOutcome;
  /**
   * Mail exchangers, lower-case without the trailing dot, by preference then name, at most
   * MAX_MX_HOSTS; [domain] for an implicit MX; empty unless `found`.
   */
  hosts: string[];
  /** true when `found` rests on an A/AAAA record alone (no MX record). */
  implicit: boolean;
  /** true when the domain publishes a null MX (RFC 7505); outcome is then `none`. */
  nullMx: boolean;
  /**
   * "hit": served from cache or joined a lookup already in flight; "miss": this call queried DNS;
   * "test_budget": not in the cache and not looked up, the caller's budget being spent (outcome
   * `unresolved`).
   */
  cache: "hit" | "miss" | "test_budget";
}

/**
 * Options of MxResolver (durations in ms): the cache's (timeout over the whole lookup, MX then
 * A/AAAA; `found` kept `ttlMs`, `none` kept `negativeTtlMs`, `unresolved` never) and where the
 * queries go.
 */
export interface MxOptions extends LookupCacheOptions {
  dns: MxDns;
  /**
   * A domain known to receive mail (e.g. "gmail.com"). When a domain looks mailless (`none`),
   * the canary is looked up too (cached like any domain); if it looks mailless as well, the
   * resolver cannot see the public DNS (an air-gapped host, a resolver that answers NXDOMAIN
   * for everything) and the answer is reported `unresolved` instead, so every address is not
   * flagged `no_mx`. Omit to trust every answer.
   */
  canary?: string;
}

/** What POST /v1/email needs besides the lists: the MX resolver. AppDeps carries it as `email`. */
export interface EmailServices {
  mx: MxResolver;
}

/** Most exchanger names reported; big providers publish 5, nobody needs more than 10. */
export const MAX_MX_HOSTS = 10;

interface Answer {
  outcome: MxOutcome;
  hosts: string[];
  implicit: boolean;
  nullMx: boolean;
}


const NO_RECORDS = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN"]);
const NXDOMAIN = new Set(["ENOTFOUND", "NXDOMAIN"]);

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

const UNRESOLVED: Answer = Object.freeze({ outcome: "unresolved", hosts: [], implicit: false, nullMx: false }) as Answer;
const NONE: Answer = Object.freeze({ outcome: "none", hosts: [], implicit: false, nullMx: false }) as Answer;

/**
 * MX lookups with an LRU+TTL cache and single-flight per domain.
 *
 * @example
 * const mx = new MxResolver({ dns: systemMxDns(), timeoutMs: 1500, ttlMs: 3_600_000, negativeTtlMs: 300_000, maxEntries: 100_000 });
 * await mx.lookup("gmail.com"); // { outcome: "found", hosts: ["gmail-smtp-in.l.google.com", ...], implicit: false, nullMx: false, cache: "miss" }
 */
export class MxResolver {
  readonly #dns: MxDns;
  readonly #cache: LookupCache<Answer>;
  readonly #canary: string | null;

  constructor(opts: MxOptions) {
    const { dns } = opts;
    if (typeof dns?.resolveMx !== "function" || typeof dns.resolve4 !== "function" || typeof dns.resolve6 !== "function") {
      throw new TypeError("options.dns must implement resolveMx, resolve4 and resolve6");
    }
    this.#dns = dns;
    this.#canary = opts.canary === undefined || opts.canary === "" ? null : keyOf(opts.canary);
    this.#cache = new LookupCache<Answer>(opts, (a) => (a.outcome === "found" ? "positive" : a.outcome === "none" ? "negative" : "never"), UNRESOLVED);
  }

  /** Cached domains, including expired entries not yet looked at again. */
  get size(): number {
    return this.#cache.size;
  }

  /**
   * The MX answer for a domain, from cache when possible. Never rejects for DNS trouble: a
   * timeout or failure gives outcome "unresolved".
   * @param domain an ASCII (A-label) domain name; case and a trailing dot are ignored.
   * @param budget a caller on a budget (a test-mode key): a domain the cache cannot answer is
   *   looked up only if it allows, else answered `unresolved` with cache "test_budget"
   * @throws TypeError (as a rejection) when `domain` is not a non-empty string of at most 253
   *   characters; callers validate the address first.
   */
  async lookup(domain: string, budget?: QueryBudget): Promise<MxResult> {
    const key = keyOf(domain);
    if (budget !== undefined) {
      const cached = this.peek(domain);
      if (cached !== undefined) return cached;
      if (!budget()) return { ...copy(UNRESOLVED), cache: "test_budget" };
    }
    const { answer, cache } = await this.#cache.lookup(key, () => queryMx(this.#dns, key));
    if (answer.outcome === "none" && this.#canary !== null) {
      // The canary is known to have mail: a mailless answer for it means DNS is blind.
      if (key === this.#canary) return { ...copy(UNRESOLVED), cache };
      const canary = await this.#cache.lookup(this.#canary, () => queryMx(this.#dns, this.#canary!));
      if (canary.answer.outcome !== "found") return { ...copy(UNRESOLVED), cache };
    }
    return { ...copy(answer), cache };
  }

  /** The cached answer (cache "hit"), or undefined; does not query or change the LRU order. */
  peek(domain: string): MxResult | undefined {
    const key = keyOf(domain);
    const a = this.#cache.peek(key, false);
    if (!a) return undefined;
    // As lookup(): a mailless answer counts only while the canary is known to have mail.
    if (a.outcome === "none" && this.#canary !== null && (key === this.#canary || this.#cache.peek(this.#canary, false)?.outcome !== "found")) {
      return { ...copy(UNRESOLVED), cache: "hit" };
    }
    return { ...copy(a), cache: "hit" };
  }
}

function copy(a: Answer): Answer {
  return { outcome: a.outcome, hosts: [...a.hosts], implicit: a.implicit, nullMx: a.nullMx };
}

function keyOf(domain: string): string {
  if (typeof domain !== "string") throw new TypeError("domain must be a string");
  const key = (domain.endsWith(".") ? domain.slice(0, -1) : domain).toLowerCase();
  if (key.length === 0 || key.length > 253) throw new TypeError(`not a domain name: ${domain.slice(0, 64)}`);
  return key;
}

/** MX of the domain, then A/AAAA when it has none (implicit MX). Never rejects. */
async function queryMx(dns: MxDns, domain: string): Promise<Answer> {
  let records: MxRecord[];
  try {
    records = await dns.resolveMx(domain);
  } catch (err) {
    const code = codeOf(err);
    if (NXDOMAIN.has(code)) return NONE;
    if (code !== "ENODATA") return UNRESOLVED;
    records = [];
  }
  const hosts = exchangers(records);
  if (hosts === "null") return { outcome: "none", hosts: [], implicit: false, nullMx: true };
  if (hosts.length > 0) return { outcome: "found", hosts, implicit: false, nullMx: false };
  return implicitMx(dns, domain);
}

/** RFC 5321 5.1: without MX records, the domain's own A/AAAA address is the mail exchanger. */
async function implicitMx(dns: MxDns, domain: string): Promise<Answer> {
  const [v4, v6] = await Promise.allSettled([dns.resolve4(domain), dns.resolve6(domain)]);
  const has = (r: PromiseSettledResult<string[]>): boolean => r.status === "fulfilled" && r.value.length > 0;
  if (has(v4) || has(v6)) return { outcome: "found", hosts: [domain], implicit: true, nullMx: false };
  const definitive = (r: PromiseSettledResult<string[]>): boolean => r.status === "fulfilled" || NO_RECORDS.has(codeOf(r.reason));
  return definitive(v4) && definitive(v6) ? NONE : UNRESOLVED;
}

/**
 * Exchanger names by preference (then name), deduplicated, capped; "null" for an RFC 7505 null
 * MX (exchange "." or "", which is how node:dns reports the root name).
 */
function exchangers(records: MxRecord[]): string[] | "null" {
  const valid = records.filter((r) => r !== null && typeof r === "object" && typeof r.exchange === "string");
  if (valid.length > 0 && valid.every((r) => r.exchange === "" || r.exchange === ".")) return "null";
  const sorted = valid
    .map((r) => ({ host: (r.exchange.endsWith(".") ? r.exchange.slice(0, -1) : r.exchange).toLowerCase(), priority: Number(r.priority) || 0 }))
    .filter((r) => r.host.length > 0)
    .sort((a, b) => a.priority - b.priority || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  const out: string[] = [];
  for (const r of sorted) if (!out.includes(r.host) && out.push(r.host) >= MAX_MX_HOSTS) break;
  return out;
}

/** Options of systemMxDns() besides the servers. */
export interface SystemMxDnsOptions {
  /** Milliseconds c-ares waits for one reply before retrying; default 1000. */
  queryTimeoutMs?: number;
  /** Attempts per server before a query fails with ETIMEOUT; default 2. */
  tries?: number;
}

/**
 * The real MxDns: a dedicated node:dns/promises Resolver (DNS only, never /etc/hosts).
 * @param servers name servers as "ip" or "ip:port" ("[ipv6]:port"); default: the system's.
 * @throws when a server string is invalid (from `Resolver#setServers`) or an option is out of range.
 * @example systemMxDns(["127.0.0.1:5353"], { queryTimeoutMs: 200, tries: 1 })
 */
export function systemMxDns(servers?: string[], opts: SystemMxDnsOptions = {}): MxDns {
  const { queryTimeoutMs = 1000, tries = 2 } = opts;
  if (!(Number.isInteger(queryTimeoutMs) && queryTimeoutMs > 0)) {
    throw new RangeError(`queryTimeoutMs must be an integer > 0, got ${queryTimeoutMs}`);
  }
  if (!(Number.isInteger(tries) && tries >= 1)) throw new RangeError(`tries must be an integer >= 1, got ${tries}`);
  const resolver = new Resolver({ timeout: queryTimeoutMs, tries });
  if (servers !== undefined) resolver.setServers(servers);
  return {
    resolveMx: (domain) => resolver.resolveMx(domain),
    resolve4: (host) => resolver.resolve4(host),
    resolve6: (host) => resolver.resolve6(host),
  };
}
