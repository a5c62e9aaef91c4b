import { LRUCache } from "lru-cache";

/**
 * Single-flight lookups under a timeout, with an LRU+TTL cache (lru-cache): what the reverse-DNS
 * and the MX resolvers share. A positive answer is kept `ttlMs`, a negative one `negativeTtlMs`, an
 * unresolved one (timeout, server failure) never; concurrent lookups of one key share one query.
 */
export interface LookupCacheOptions {
  /** Bound on one whole lookup, > 0. Example: 1500. */
  timeoutMs: number;
  /** How long a positive answer is cached, >= 0 (served while its age is at most this); 0 caches nothing. */
  ttlMs: number;
  /** How long a negative answer is cached, >= 0; 0 caches nothing. */
  negativeTtlMs: number;
  /** Most cached keys, an integer >= 0; least recently used goes first; 0 disables the cache. */
  maxEntries: number;
  /** Clock for cache expiry (epoch ms); defaults to Date.now. The timeout uses real timers. */
  now?: () => number;
}

/**
 * A caller's allowance of DNS queries (test-mode keys, front/test-mode-budget.ts): called once for
 * each lookup the cache cannot answer, before it is sent; false means the lookup is not made.
 */
export type QueryBudget = () => boolean;

/** How long an answer may be kept. */
export type Cacheability = "positive" | "negative" | "never";

export class LookupCache<A> {
  readonly #timeoutMs: number;
  readonly #ttlMs: number;
  readonly #negativeTtlMs: number;
  /** null when maxEntries is 0: nothing is cached. */
  readonly #cache: LRUCache<string, { answer: A }> | null;
  readonly #inFlight = new Map<string, Promise<A>>();

  /**
   * @param cacheability how long an answer may be kept
   * @param unresolved the answer given when the timeout passes first
   * @throws RangeError / TypeError naming the first bad option
   */
  constructor(
    opts: LookupCacheOptions,
    private readonly cacheability: (a: A) => Cacheability,
    private readonly unresolved: A,
  ) {
    const { timeoutMs, ttlMs, negativeTtlMs, maxEntries, now } = opts;
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new RangeError(`options.timeoutMs must be a finite number > 0, got ${timeoutMs}`);
    if (!(Number.isFinite(ttlMs) && ttlMs >= 0)) throw new RangeError(`options.ttlMs must be a finite number >= 0, got ${ttlMs}`);
    if (!(Number.isFinite(negativeTtlMs) && negativeTtlMs >= 0)) {
      throw new RangeError(`options.negativeTtlMs must be a finite number >= 0, got ${negativeTtlMs}`);
    }
    if (!(Number.isInteger(maxEntries) && maxEntries >= 0)) throw new RangeError(`options.maxEntries must be an integer >= 0, got ${maxEntries}`);
    if (now !== undefined && typeof now !== "function") throw new TypeError("options.now must be a function");
    this.#timeoutMs = timeoutMs;
    this.#ttlMs = ttlMs;
    this.#negativeTtlMs = negativeTtlMs;
    // ttlResolution 0: expiry is checked against the clock at every read (an injected clock moves in jumps).
    this.#cache = maxEntries === 0 ? null : new LRUCache<string, { answer: A }>({ max: maxEntries, ttlResolution: 0, ...(now ? { perf: { now } } : {}) });
  }

  /** Cached keys, including expired entries not yet looked at again. */
  get size(): number {
    return this.#cache?.size ?? 0;
  }

  /** The cached answer, or undefined (absent or expired); `touch` moves it to most recently used. */
  peek(key: string, touch: boolean): A | undefined {
    const cache = this.#cache;
    if (!cache) return undefined;
    const e = touch ? cache.get(key) : cache.peek(key);
    // peek leaves an expired entry in place; drop it as get does.
    if (!e && !touch) cache.delete(key);
    return e?.answer;
  }

  /**
   * The answer for `key`: from the cache or a lookup already in flight ("hit"), else from
   * `query` under the timeout ("miss"). After a timeout the query runs on; its late answer is
   * dropped, not cached: callers were already told "unresolved".
   */
  async lookup(key: string, query: () => Promise<A>): Promise<{ answer: A; cache: "hit" | "miss" }> {
    const cached = this.peek(key, true);
    if (cached !== undefined) return { answer: cached, cache: "hit" };
    const pending = this.#inFlight.get(key);
    if (pending) return { answer: await pending, cache: "hit" };
    const flight = this.#resolve(key, query).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, flight);
    return { answer: await flight, cache: "miss" };
  }

  async #resolve(key: string, query: () => Promise<A>): Promise<A> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<A>((res) => {
      timer = setTimeout(() => res(this.unresolved), this.#timeoutMs);
      // A slow DNS server must not keep the process alive (e.g. during shutdown).
      timer.unref();
    });
    const a = await Promise.race([query(), timedOut]);
    clearTimeout(timer);
    const kind = this.cacheability(a);
    const ttl = kind === "positive" ? this.#ttlMs : kind === "negative" ? this.#negativeTtlMs : 0;
    if (ttl > 0) this.#cache?.set(key, { answer: a }, { ttl });
    return a;
  }
}
