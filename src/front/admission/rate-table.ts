import { ApiError } from "../../shared/errors.js";

/**
 * Request rates per key (a client address, a project) with GCRA, the generic cell rate algorithm
 * (a token bucket kept as one number): each key stores its "theoretical arrival time" (TAT), the
 * time at which its bucket would be full again. A request at `now` is allowed when
 * `max(TAT, now) + interval - now <= window`, and then moves the TAT on by one interval. So a key
 * may send `limit` requests at once, then one every `window / limit`.
 *
 * O(1) per request, one Map entry per key and no timers. The Map is bounded: past `maxKeys` the
 * key added longest ago is dropped (a Map iterates in insertion order; an update keeps a key's
 * place, which costs a third of moving it to the end). Dropping a key only forgets how much of
 * its bucket it has used, so a client can never grow the table, and one that cycles through more
 * than `maxKeys` keys gains a burst per key at most. A key whose TAT has passed is as good as
 * absent.
 */
export class RateTable<K extends string | number> {
  private readonly tat = new Map<K, number>();
  private readonly intervalMs: number;
  private readonly windowMs: number;

  /**
   * @param limit requests a key may make per window (a positive integer); also the largest burst
   * @param windowSeconds the window, e.g. 60
   * @param maxKeys most keys kept, e.g. 100_000
   * @throws RangeError naming the first bad option
   */
  constructor(
    readonly limit: number,
    readonly windowSeconds: number,
    private readonly maxKeys: number,
  ) {
    if (!Number.isSafeInteger(limit) || limit <= 0) throw new RangeError(`RateTable: limit must be a positive integer, got ${limit}`);
    if (!Number.isSafeInteger(windowSeconds) || windowSeconds <= 0) throw new RangeError(`RateTable: windowSeconds must be a positive integer, got ${windowSeconds}`);
    if (!Number.isSafeInteger(maxKeys) || maxKeys <= 0) throw new RangeError(`RateTable: maxKeys must be a positive integer, got ${maxKeys}`);
    this.windowMs = windowSeconds * 1000;
    this.intervalMs = this.windowMs / limit;
  }

  /** Keys held now (at most maxKeys). */
  get size(): number {
    return this.tat.size;
  }

  /**
   * What a request of `key` at `nowMs` would leave: the key's next TAT when it is allowed, or
   * -1 when it is not. Changes nothing (see take): a request refused by another table must not
   * use up this one.
   */
  peek(key: K, nowMs: number): number {
    const next = this.base(key, nowMs) + this.intervalMs;
    // The slack absorbs rounding when the interval is not a whole number of milliseconds.
    return next - nowMs <= this.windowMs + 1e-6 ? next : -1;
  }

  /**
   * Where a request of `key` starts from: its TAT, or now when that has passed. A TAT more than a
   * window ahead cannot come from requests (the clock went back, or a test clock jumped): now.
   */
  private base(key: K, nowMs: number): number {
    const stored = this.tat.get(key);
    return stored === undefined || stored < nowMs || stored > nowMs + this.windowMs ? nowMs : stored;
  }

  /** Records an allowed request: `next` is what peek returned for it (>= 0). */
  take(key: K, next: number): void {
    this.tat.set(key, next);
    if (this.tat.size > this.maxKeys) {
      for (const oldest of this.tat.keys()) {
        this.tat.delete(oldest);
        break;
      }
    }
  }

  /**
   * Seconds until `key` may make a request again (at least 1), for Retry-After and the
   * RateLimit header's `t` after a refusal.
   */
  retryAfterSeconds(key: K, nowMs: number): number {
    return Math.max(1, Math.ceil((this.base(key, nowMs) + this.intervalMs - this.windowMs - nowMs) / 1000));
  }

  /** Requests `key` could make at once now (0 to limit). */
  remaining(key: K, nowMs: number): number {
    return Math.max(0, Math.min(this.limit, Math.floor((this.windowMs - (this.base(key, nowMs) - nowMs)) / this.intervalMs + 1e-9)));
  }
}

/**
 * The 429 every per-caller limit answers (the beacon's, feedback's, the demo's, test mode's):
 * RATE_LIMITED in the envelope with Retry-After and the IETF httpapi RateLimit fields of the limit
 * reached, `RateLimit-Policy: "<policy>";q=<limit>;w=<window seconds>` and
 * `RateLimit: "<policy>";r=0;t=<seconds>`. Built only on a refusal: allowed calls pay nothing.
 * @param message the error's message, which should say how long to wait
 */
export function rateLimited(policy: string, limit: number, windowSeconds: number, waitSeconds: number, message: string): ApiError {
  return new ApiError("RATE_LIMITED", message, {
    headers: { "retry-after": String(waitSeconds), "ratelimit-policy": `"${policy}";q=${limit};w=${windowSeconds}`, ratelimit: `"${policy}";r=0;t=${waitSeconds}` },
  });
}

/** rateLimited() for a RateTable's refusal of `key` at `nowMs`. */
export function tableRefusal<K extends string | number>(policy: string, table: RateTable<K>, key: K, nowMs: number, what: string): ApiError {
  const wait = table.retryAfterSeconds(key, nowMs);
  return rateLimited(policy, table.limit, table.windowSeconds, wait, `${what}: at most ${table.limit} every ${table.windowSeconds} s. Retry after ${wait} s.`);
}
