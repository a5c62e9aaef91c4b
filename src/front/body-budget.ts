/**
 * A cap on the request-body bytes the front holds at once. Bodies are buffered until complete;
 * without a cap, many clients sending bodies slowly would make the process hold all of them.
 * Bytes are counted as they arrive, never as a `Content-Length` declares them, so a client that
 * declares a large body and sends little holds little.
 *
 * Two pools: `public` for routes a caller reaches without a secret key (the payment webhook, the
 * beacon's publishable-key routes, the dashboard's forms, the demo), `keyed` for the rest (their
 * callers were authenticated before a byte of the body is read). Within a pool, the bodies still
 * arriving in pieces are also counted per owner (a client address in `public`, an org in `keyed`)
 * and one owner may hold at most its share, so one client cannot take the pool others need. A
 * body that does not fit is refused at once with 503 OVERLOADED and Retry-After; what its client
 * still sends is dropped as it arrives (docs/operations.md, "Limits and abuse").
 */
import type { ParsedIp } from "../shared/ip.js";
import { ApiError } from "../shared/errors.js";

/** Which pool a route's bodies count against. */
export type BodyPool = "public" | "keyed";

/** Byte counts per pool. */
export type PerPool = Readonly<Record<BodyPool, number>>;

/** Bytes one body read holds; released when its answer is written or its client leaves. */
export class BodyLease {
  private mine = 0;
  private owner: string | null = null;
  private open = true;

  constructor(
    private readonly budget: BodyBudget,
    readonly pool: BodyPool,
  ) {}

  /**
   * Grows the lease to `bytes` in total. Null when they fit; otherwise the refusal (503
   * OVERLOADED) and the lease is unchanged.
   */
  grow(bytes: number): ApiError | null {
    if (!this.open) return this.budget.overloaded(false);
    if (bytes <= this.mine) return null;
    const refusal = this.budget.take(this.pool, this.owner, bytes - this.mine);
    if (refusal === null) this.mine = bytes;
    return refusal;
  }

  /**
   * Counts this lease against `owner`'s share from now on (a body that did not arrive in one
   * piece): null when what it holds fits the share, else the refusal.
   */
  ownedBy(owner: string): ApiError | null {
    if (!this.open || this.owner !== null) return null;
    const refusal = this.budget.takeShare(this.pool, owner, this.mine);
    if (refusal === null) this.owner = owner;
    return refusal;
  }

  /**
   * Counts what this lease holds against `owner`'s share instead of the one it counted against
   * (a keyed body read before its key's org was known). Null when it fits, else the refusal and
   * the lease is unchanged.
   */
  moveTo(owner: string): ApiError | null {
    if (!this.open || this.owner === null || this.owner === owner) return null;
    const refusal = this.budget.takeShare(this.pool, owner, this.mine);
    if (refusal !== null) return refusal;
    this.budget.giveShare(this.pool, this.owner, this.mine);
    this.owner = owner;
    return null;
  }

  /** Gives the bytes back (idempotent). */
  release(): void {
    if (!this.open) return;
    this.open = false;
    this.budget.give(this.pool, this.owner, this.mine);
    this.mine = 0;
  }
}

/** The two pools, what they hold now, and what each owner holds of them. */
export class BodyBudget {
  private readonly held: Record<BodyPool, number> = { public: 0, keyed: 0 };
  private readonly owners: Record<BodyPool, Map<string, number>> = { public: new Map(), keyed: new Map() };

  /**
   * @param limits bytes each pool may hold across all connections (positive integers)
   * @param shares bytes one owner may hold of each pool in bodies still arriving (a client
   *   address, an IPv6 /64, for `public`; an org, or the admin, for `keyed`)
   * @param retryAfterSeconds what a refused client is told to wait
   */
  constructor(
    private readonly limits: PerPool,
    private readonly shares: PerPool,
    private readonly retryAfterSeconds = 1,
  ) {
    for (const pool of ["public", "keyed"] as const) {
      if (!Number.isSafeInteger(limits[pool]) || limits[pool] <= 0) throw new Error(`BodyBudget: ${pool} limit must be a positive integer, got ${limits[pool]}`);
      if (!Number.isSafeInteger(shares[pool]) || shares[pool] <= 0) throw new Error(`BodyBudget: ${pool} share must be a positive integer, got ${shares[pool]}`);
    }
  }

  /** Bytes held now in `pool`. */
  holding(pool: BodyPool): number {
    return this.held[pool];
  }

  /** Bytes `owner` holds now in `pool` (bodies arriving in pieces only). */
  holdingFor(pool: BodyPool, owner: string): number {
    return this.owners[pool].get(owner) ?? 0;
  }

  /** A lease of nothing yet; it grows as the body's bytes arrive. */
  lease(pool: BodyPool): BodyLease {
    return new BodyLease(this, pool);
  }

  /** @internal BodyLease: `bytes` more for `owner` (null: no share counted). */
  take(pool: BodyPool, owner: string | null, bytes: number): ApiError | null {
    if (this.held[pool] + bytes > this.limits[pool]) return this.overloaded(false);
    if (owner !== null) {
      const had = this.owners[pool].get(owner) ?? 0;
      if (had + bytes > this.shares[pool]) return this.overloaded(true);
      this.owners[pool].set(owner, had + bytes);
    }
    this.held[pool] += bytes;
    return null;
  }

  /** @internal BodyLease: `owner` starts counting `bytes` already held in the pool. */
  takeShare(pool: BodyPool, owner: string, bytes: number): ApiError | null {
    const had = this.owners[pool].get(owner) ?? 0;
    if (had + bytes > this.shares[pool]) return this.overloaded(true);
    this.owners[pool].set(owner, had + bytes);
    return null;
  }

  /** @internal BodyLease: `owner` stops counting `bytes` the pool still holds. */
  giveShare(pool: BodyPool, owner: string, bytes: number): void {
    const left = (this.owners[pool].get(owner) ?? 0) - bytes;
    if (left > 0) this.owners[pool].set(owner, left);
    else this.owners[pool].delete(owner);
  }

  /** @internal BodyLease: gives back `bytes`, of `owner`'s share too. */
  give(pool: BodyPool, owner: string | null, bytes: number): void {
    this.held[pool] -= bytes;
    if (owner === null) return;
    const left = (this.owners[pool].get(owner) ?? 0) - bytes;
    if (left > 0) this.owners[pool].set(owner, left);
    else this.owners[pool].delete(owner);
  }

  /** The refusal for a body that does not fit the pool, or its owner's share. */
  overloaded(ownShare: boolean): ApiError {
    const message = ownShare
      ? "This client is sending too many request bodies at once; retry shortly."
      : "Too many request bodies are being received at once; retry shortly.";
    return new ApiError("OVERLOADED", message, { headers: { "retry-after": String(this.retryAfterSeconds) } });
  }
}

/**
 * The owner a public body counts against: the client's address, or for IPv6 its /64 (one
 * subscriber's usual allocation, so a client cannot take a share per address it holds).
 * `null` (an unreadable peer address) is one owner for all such clients.
 */
export function addressOwner(ip: ParsedIp | null): string {
  if (ip === null) return "?";
  return ip.version === 4 ? `4:${ip.v4}` : `6:${ip.words[0]}:${ip.words[1]}`;
}
