/**
 * A cap on the request-body bytes the front holds at once. Bodies are buffered until complete;
 * without a cap, many clients sending bodies slowly would make the process hold all of them.
 * Bytes are counted as they arrive, never as a `Content-Length` declares them, so a client that
 * declares a large body and sends little holds little.
 *
 * Three pools: `public` for routes a caller reaches without a secret key (the beacon's
 * publishable-key routes, the dashboard's forms, the demo), `webhook` for the payment webhook (its
 * bodies are the largest a keyless caller may send, so they get a small pool of their own and
 * cannot take the beacon's and the sign-in's), `keyed` for the rest (their callers were
 * authenticated before a byte of the body is read). Within a pool, the bodies still arriving in
 * pieces are also counted per owner (a client address in `public` and `webhook`, an org in
 * `keyed`) and one owner may hold at most its share, so one client cannot take the pool others
 * need; in `public` and `webhook` they are counted per network as well (an IPv4 /24, an IPv6
 * /48), so that many addresses of one network cannot either. A body that does not fit is refused
 * at once with 503 OVERLOADED and Retry-After; what its client still sends is dropped as it
 * arrives (docs/operations.md, "Limits and abuse").
 */
import type { ParsedIp } from "../shared/ip.js";
import { ApiError } from "../shared/errors.js";

/** Which pool a route's bodies count against. */
export type BodyPool = "public" | "webhook" | "keyed";

/** Byte counts per pool. */
export type PerPool = Readonly<Record<BodyPool, number>>;

/** Bytes one body read holds; released when its answer is written or its client leaves. */
export class BodyLease {
  private mine = 0;
  private owner: string | null = null;
  private network: string | null = null;
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
    if (!this.open) return this.budget.overloaded("pool");
    if (bytes <= this.mine) return null;
    const refusal = this.budget.take(this.pool, this.owner, this.network, bytes - this.mine);
    if (refusal === null) this.mine = bytes;
    return refusal;
  }

  /**
   * Counts this lease against `owner`'s share, and `network`'s when given, from now on (a body
   * that did not arrive in one piece): null when what it holds fits the shares, else the refusal.
   */
  ownedBy(owner: string, network: string | null = null): ApiError | null {
    if (!this.open || this.owner !== null) return null;
    const refusal = this.budget.takeShare(this.pool, owner, network, this.mine);
    if (refusal === null) {
      this.owner = owner;
      this.network = network;
    }
    return refusal;
  }

  /**
   * Counts what this lease holds against `owner`'s share instead of the one it counted against
   * (a keyed body read before its key's org was known). Null when it fits, else the refusal and
   * the lease is unchanged.
   */
  moveTo(owner: string): ApiError | null {
    if (!this.open || this.owner === null || this.owner === owner) return null;
    const refusal = this.budget.takeShare(this.pool, owner, null, this.mine);
    if (refusal !== null) return refusal;
    this.budget.giveShare(this.pool, this.owner, this.mine);
    this.owner = owner;
    return null;
  }

  /** Gives the bytes back (idempotent). */
  release(): void {
    if (!this.open) return;
    this.open = false;
    this.budget.give(this.pool, this.owner, this.network, this.mine);
    this.mine = 0;
  }
}

/** The pools, what they hold now, and what each owner (and network) holds of them. */
export class BodyBudget {
  private readonly held: Record<BodyPool, number> = { public: 0, webhook: 0, keyed: 0 };
  private readonly owners: Record<BodyPool, Map<string, number>> = { public: new Map(), webhook: new Map(), keyed: new Map() };
  private readonly networks: Record<BodyPool, Map<string, number>> = { public: new Map(), webhook: new Map(), keyed: new Map() };

  /**
   * @param limits bytes each pool may hold across all connections (positive integers)
   * @param shares bytes one owner may hold of each pool in bodies still arriving (a client
   *   address, an IPv6 /64, for `public` and `webhook`; an org, or the admin, for `keyed`)
   * @param retryAfterSeconds what a refused client is told to wait
   * @param networkShare bytes one network (networkOwner: an IPv4 /24, an IPv6 /48) may hold of
   *   `public` and of `webhook` in bodies still arriving; unbounded when not given
   */
  constructor(
    private readonly limits: PerPool,
    private readonly shares: PerPool,
    private readonly retryAfterSeconds = 1,
    private readonly networkShare = Number.MAX_SAFE_INTEGER,
  ) {
    for (const pool of ["public", "webhook", "keyed"] as const) {
      if (!Number.isSafeInteger(limits[pool]) || limits[pool] <= 0) throw new Error(`BodyBudget: ${pool} limit must be a positive integer, got ${limits[pool]}`);
      if (!Number.isSafeInteger(shares[pool]) || shares[pool] <= 0) throw new Error(`BodyBudget: ${pool} share must be a positive integer, got ${shares[pool]}`);
    }
    if (!Number.isSafeInteger(networkShare) || networkShare <= 0) throw new Error(`BodyBudget: network share must be a positive integer, got ${networkShare}`);
  }

  /** Bytes held now in `pool`. */
  holding(pool: BodyPool): number {
    return this.held[pool];
  }

  /** Bytes `owner` holds now in `pool` (bodies arriving in pieces only). */
  holdingFor(pool: BodyPool, owner: string): number {
    return this.owners[pool].get(owner) ?? 0;
  }

  /** Bytes `network` (networkOwner) holds now in `pool` (bodies arriving in pieces only). */
  holdingForNetwork(pool: BodyPool, network: string): number {
    return this.networks[pool].get(network) ?? 0;
  }

  /** A lease of nothing yet; it grows as the body's bytes arrive. */
  lease(pool: BodyPool): BodyLease {
    return new BodyLease(this, pool);
  }

  /** @internal BodyLease: `bytes` more for `owner` and `network` (null: no share counted). */
  take(pool: BodyPool, owner: string | null, network: string | null, bytes: number): ApiError | null {
    if (this.held[pool] + bytes > this.limits[pool]) return this.overloaded("pool");
    if (owner !== null) {
      const refusal = this.takeShare(pool, owner, network, bytes);
      if (refusal !== null) return refusal;
    }
    this.held[pool] += bytes;
    return null;
  }

  /** @internal BodyLease: `owner` (and `network`) start counting `bytes` already held in the pool. */
  takeShare(pool: BodyPool, owner: string, network: string | null, bytes: number): ApiError | null {
    const had = this.owners[pool].get(owner) ?? 0;
    if (had + bytes > this.shares[pool]) return this.overloaded("client");
    if (network !== null) {
      const net = this.networks[pool].get(network) ?? 0;
      if (net + bytes > this.networkShare) return this.overloaded("network");
      this.networks[pool].set(network, net + bytes);
    }
    this.owners[pool].set(owner, had + bytes);
    return null;
  }

  /** @internal BodyLease: `owner` stops counting `bytes` the pool still holds. */
  giveShare(pool: BodyPool, owner: string, bytes: number): void {
    const left = (this.owners[pool].get(owner) ?? 0) - bytes;
    if (left > 0) this.owners[pool].set(owner, left);
    else this.owners[pool].delete(owner);
  }

  /** @internal BodyLease: gives back `bytes`, of `owner`'s and `network`'s shares too. */
  give(pool: BodyPool, owner: string | null, network: string | null, bytes: number): void {
    this.held[pool] -= bytes;
    if (owner === null) return;
    this.giveShare(pool, owner, bytes);
    if (network === null) return;
    const left = (this.networks[pool].get(network) ?? 0) - bytes;
    if (left > 0) this.networks[pool].set(network, left);
    else this.networks[pool].delete(network);
  }

  /** The refusal for a body that does not fit the pool, its owner's share, or its network's. */
  overloaded(full: "pool" | "client" | "network"): ApiError {
    const message =
      full === "client"
        ? "This client is sending too many request bodies at once; retry shortly."
        : full === "network"
          ? "Too many request bodies are arriving at once from this client's network; retry shortly."
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

/**
 * The network a public body also counts against: the IPv4 /24, or the IPv6 /48 (one site's usual
 * allocation), so that many addresses of one network hold at most one network's share.
 */
export function networkOwner(ip: ParsedIp | null): string {
  if (ip === null) return "?";
  return ip.version === 4 ? `4:${ip.v4 >>> 8}` : `6:${ip.words[0]}:${ip.words[1]! >>> 16}`;
}
