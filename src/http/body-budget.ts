/**
 * A cap on the request-body bytes the front holds at once, across every connection. Bodies are
 * buffered until complete; without a cap, many clients sending large bodies slowly would make the
 * process hold all of them. Two pools: `public` for routes a caller reaches without a secret key
 * (the payment webhook, the beacon's publishable-key routes), `keyed` for the rest (their callers
 * were authenticated before a byte of the body is read). A read that does not fit is refused at
 * once with 503 OVERLOADED and Retry-After; what its client still sends is dropped as it arrives
 * (docs/operations.md, "Configuration").
 */
import { ApiError } from "./errors.js";

/** Which pool a route's bodies count against. */
export type BodyPool = "public" | "keyed";

/** Bytes a body read holds; `release()` gives them back (idempotent). */
export interface BodyLease {
  /** Grows the lease to `bytes` in total; false when the pool cannot hold that many. */
  grow(bytes: number): boolean;
  release(): void;
}

/** The two pools and what they hold now. */
export class BodyBudget {
  private readonly held: Record<BodyPool, number> = { public: 0, keyed: 0 };

  /**
   * @param limits bytes each pool may hold across all connections (positive integers)
   * @param retryAfterSeconds what a refused client is told to wait
   */
  constructor(
    private readonly limits: Readonly<Record<BodyPool, number>>,
    private readonly retryAfterSeconds = 1,
  ) {
    for (const pool of ["public", "keyed"] as const) {
      if (!Number.isSafeInteger(limits[pool]) || limits[pool] <= 0) throw new Error(`BodyBudget: ${pool} limit must be a positive integer, got ${limits[pool]}`);
    }
  }

  /** Bytes held now in `pool`. */
  holding(pool: BodyPool): number {
    return this.held[pool];
  }

  /**
   * Starts a lease of `initial` bytes (the declared Content-Length, or 0).
   * @throws ApiError OVERLOADED when the pool cannot hold them.
   */
  lease(pool: BodyPool, initial: number): BodyLease {
    let mine = 0;
    let open = true;
    const grow = (bytes: number): boolean => {
      if (!open) return false;
      if (bytes <= mine) return true;
      if (this.held[pool] - mine + bytes > this.limits[pool]) return false;
      this.held[pool] += bytes - mine;
      mine = bytes;
      return true;
    };
    if (!grow(initial)) throw this.overloaded();
    return {
      grow,
      release: () => {
        if (!open) return;
        open = false;
        this.held[pool] -= mine;
        mine = 0;
      },
    };
  }

  /** The refusal for a body that does not fit. */
  overloaded(): ApiError {
    return new ApiError("OVERLOADED", "Too many request bodies are being received at once; retry shortly.", {
      headers: { "retry-after": String(this.retryAfterSeconds) },
    });
  }
}
