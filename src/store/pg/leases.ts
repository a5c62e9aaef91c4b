/**
 * Runs on a cluster node's front threads: credit leases of hard-stop plans (docs/cluster.md,
 * "Quotas and credit leases"), granted and renewed asynchronously, so admission never waits on
 * PostgreSQL with the event loop.
 *
 * A lease lives FS_LEASE_TTL_MS in PostgreSQL unless its node renews it: the first front thread
 * sends a heartbeat every second (or quarter of the time limit, if less), renewing every lease of the node's current chain (its
 * run of unbroken renewals). The node counts its leases only while its last renewal is younger
 * than three quarters of the time limit: a node that cannot renew in time stops admitting against
 * them before PostgreSQL could give them to another node. A node that died stops renewing, and
 * its leases count for nothing once they expired: the org gets them back.
 */
import { usageKey } from "./cluster.js";
import type { PgPool } from "./pool.js";

/** [chain, until]: the chain leases count in, and until when (epoch ms), shared by the node's front threads. */
const CHAIN = 0;
const UNTIL = 1;

/**
 * The node's chain of renewals, in shared memory: every front thread admits against the node's
 * leases, the first one renews them.
 */
export class LeaseClock {
  private readonly words: BigInt64Array;

  static allocate(): SharedArrayBuffer {
    return new SharedArrayBuffer(2 * 8);
  }

  constructor(buffer: SharedArrayBuffer) {
    this.words = new BigInt64Array(buffer);
  }

  /** The chain leases count in now, or -1 when the node did not renew them in time. */
  current(now = Date.now()): number {
    // `until` first: a new chain is written chain first, then until.
    const until = Number(Atomics.load(this.words, UNTIL));
    const chain = Number(Atomics.load(this.words, CHAIN));
    return now < until ? chain : -1;
  }

  /** Leases of `chain` count until `until`. */
  set(chain: number, until: number): void {
    Atomics.store(this.words, CHAIN, BigInt(chain));
    Atomics.store(this.words, UNTIL, BigInt(until));
  }
}

/** A node's leases as QuotaGate sees them (front/quota.ts LeaseSource). */
export class ClusterLeases {
  /** Credits below which a lease is topped up before it runs out. */
  readonly lowWater: number;
  private timer: NodeJS.Timeout | null = null;
  private beating = false;

  constructor(
    private readonly pool: PgPool,
    private readonly nodeId: string,
    private readonly clock: LeaseClock,
    private readonly ttlMs: number,
    private readonly leaseCredits: number,
  ) {
    this.lowWater = Math.max(1, Math.ceil(leaseCredits / 4));
  }

  chain(): number {
    return this.clock.current();
  }

  /**
   * Up to FS_LEASE_CREDITS more credits (at least `need`, or 0 when the quota has no room) of the
   * org's quota in the period, in the current chain. Rejects when PostgreSQL cannot grant them now.
   */
  async grant(orgId: string, period: string, quota: number, need: number): Promise<number> {
    const chain = this.clock.current();
    if (chain < 0) throw new Error("this node's leases lapsed: not renewed in time");
    const rows = await this.pool.query("SELECT fs_lease_grant($1, $2, $3, decode($4, 'hex'), $5, $6, $7, $8, $9)", [
      orgId,
      period,
      this.nodeId,
      usageKey(orgId, period).toString("hex"),
      quota,
      need,
      Math.max(need, this.leaseCredits),
      this.ttlMs,
      chain,
    ]);
    return Number(rows[0]?.[0] ?? 0);
  }

  /**
   * The first front thread: a new chain now (the writer gave every lease back at start), then a
   * heartbeat every second. `caughtUp` says whether every debit this node
   * admitted is shipped: a chain that lapsed starts again only then, so that a fresh lease never
   * leaves out credits admitted against the old one.
   */
  startHeartbeat(caughtUp: () => boolean): void {
    this.clock.set(Date.now(), Date.now() + this.validFor());
    const beat = (): void => void this.beat(caughtUp);
    // Every second (at most a quarter of the time limit), so that a lapse ends soon after the link is back.
    this.timer = setInterval(beat, Math.max(100, Math.min(1000, Math.floor(this.ttlMs / 4))));
    this.timer.unref();
  }

  /** A heartbeat now (after a lapse was noticed), unless one is on its way. */
  wake(caughtUp: () => boolean): void {
    void this.beat(caughtUp);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async beat(caughtUp: () => boolean): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    const sentAt = Date.now();
    const chain = this.clock.current(sentAt);
    try {
      if (chain >= 0) {
        await this.pool.query("SELECT fs_lease_renew($1, $2, $3)", [this.nodeId, chain, this.ttlMs]);
        // Renewed from `sentAt` on at least (PostgreSQL's clock ran the call after it was sent).
        if (this.clock.current() === chain) this.clock.set(chain, sentAt + this.validFor());
      } else if (caughtUp()) {
        // Lapsed: its leases expire in PostgreSQL; a new chain from this successful round trip.
        await this.pool.query("SELECT 1");
        this.clock.set(sentAt, sentAt + this.validFor());
      }
    } catch {
      // PostgreSQL is away: the chain lapses if this goes on; admission says NOT_READY then.
    } finally {
      this.beating = false;
    }
  }

  /** How long after a renewal was sent its leases count here: three quarters of the time limit. */
  private validFor(): number {
    return Math.floor((this.ttlMs * 3) / 4);
  }
}
