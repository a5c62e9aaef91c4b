/**
 * The per-org storage budget for beacon observations: at most `perDay` observations of an org
 * are recorded per UTC day; past it, hits are still scored, answered as usual and update their
 * session (its count and latest verdict, which the verdicts and the session.blocked event need),
 * but their full observation is not stored (dropped and counted per project). The disk an org can fill is so bounded by the budget times
 * FS_OBSERVATION_RETENTION_DAYS (docs/operations.md, "Beacon writes and observation storage").
 *
 * Dropping, rather than sampling: the bound is exact, and which hits are kept does not depend on
 * chance. The answer does not say a hit was dropped: the browser is the side being judged, and a
 * bot must not learn that it is no longer being recorded.
 *
 * The counters live in the admission table (admission/cells.ts), under their own key per org
 * with the UTC day as the period: `used` counts the day's recorded observations, `held` the
 * dropped ones. With several front threads that table is shared, so the budget holds for the
 * process as a whole. A day's counter starts from the store's count of that day
 * (state-env.ts observationBudgets, which the writer adds each batch of observations to), so a
 * restart keeps the day's budget; on a cluster node the read may wait (StoreWait: warm it
 * where a call can be run again, as admitBeaconWrite does).
 *
 * The same count per org and day bounds the checks of test-mode keys kept in their history
 * (FS_TEST_HISTORY_PER_DAY, with its own `prefix`).
 */
import type { QuotaCell, QuotaCells } from "../admission/cells.js";
import type { ParsedIp } from "../../shared/ip.js";
import type { BudgetDay } from "../../store/records.js";
import { StoreWait } from "../../store/store-wait.js";

/** The store's day counts (LMDB's read view, or a cluster node's record loader). */
export interface StoredBudgets {
  get(key: [string, number]): BudgetDay | undefined;
}

const DAY_MS = 86_400_000;
const zero = (): number => 0;

/** An org's day: observations recorded and dropped, and the budget (null: no budget). */
export interface BudgetStanding {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  recorded: number;
  dropped: number;
  budget: number | null;
}

export class ObservationBudget {
  /** This thread's cell per org and the day it was set up for. */
  private readonly orgs = new Map<string, { day: number; cell: QuotaCell }>();
  /** Observations this thread dropped since start (GET /metrics). */
  dropped = 0;
  // The cell take() works on: set before each locked call, so the call allocates no closure.
  private cell: QuotaCell | null = null;

  /**
   * @param cells the admission table (shared by the front threads)
   * @param perDay observations recorded per org and UTC day; 0: no budget
   * @param prefix keeps these counters apart from others in the same table (the org's credits, another budget)
   */
  constructor(
    private readonly cells: QuotaCells,
    private readonly perDay: number,
    private readonly prefix = "obs:",
    private readonly stored: StoredBudgets | null = null,
  ) {}

  /** Reads the org's count of today from the store if this thread has not yet (may throw StoreWait). */
  warm(orgId: string, nowMs: number): void {
    if (this.perDay !== 0) this.cellOf(orgId, nowMs);
  }

  /** Whether the org may record one more observation at `nowMs`; counts it either way. */
  take(orgId: string, nowMs: number): boolean {
    if (this.perDay === 0) return true;
    this.cell = this.cellOf(orgId, nowMs);
    const ok = this.cells.locked(this.cell, this.count);
    if (!ok) this.dropped++;
    return ok;
  }

  /** Gives back one observation take() counted as recorded (a later budget dropped it). */
  release(orgId: string, nowMs: number): void {
    if (this.perDay === 0) return;
    this.cell = this.cellOf(orgId, nowMs);
    this.cells.locked(this.cell, this.unCount);
  }

  /** Counts one observation another budget dropped (the dashboard's "dropped today"). */
  drop(orgId: string, nowMs: number): void {
    if (this.perDay === 0) return;
    this.cell = this.cellOf(orgId, nowMs);
    this.cells.locked(this.cell, this.dropOne);
  }

  /** The org's standing today (the dashboard). */
  standing(orgId: string, nowMs: number): BudgetStanding {
    const day = new Date(Math.floor(nowMs / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
    if (this.perDay === 0) return { day, recorded: 0, dropped: 0, budget: null };
    const cell = this.cellOf(orgId, nowMs);
    return this.cells.locked(cell, () => ({ day, recorded: cell.used, dropped: cell.held, budget: this.perDay }));
  }

  private readonly count = (): boolean => {
    const c = this.cell!;
    if (c.used >= this.perDay) {
      c.held++;
      return false;
    }
    c.used++;
    return true;
  };

  private readonly unCount = (): void => {
    const c = this.cell!;
    if (c.used > 0) c.used--;
    c.held++;
  };

  private readonly dropOne = (): void => {
    this.cell!.held++;
  };

  private cellOf(orgId: string, nowMs: number): QuotaCell {
    const day = Math.floor(nowMs / DAY_MS);
    const known = this.orgs.get(orgId);
    if (known !== undefined && known.day === day) return known.cell;
    // The prefix keeps these counters apart from the org's credit counters in the same table.
    const key = this.prefix + orgId;
    let seeded: BudgetDay | undefined;
    const stored = this.stored;
    const cell = this.cells.cell(key, `day:${day}`, stored === null ? zero : () => (seeded = stored.get([key, day]))?.recorded ?? 0);
    if (seeded !== undefined && seeded.dropped > 0) {
      const dropped = seeded.dropped;
      this.cells.locked(cell, () => (cell.held += dropped));
    }
    if (known !== undefined) {
      known.day = day;
      known.cell = cell;
    } else this.orgs.set(orgId, { day, cell });
    return cell;
  }
}

/** The address prefix a hit's observation counts under (one /24 or /48 of a project). */
export interface PrefixSettings {
  /** Observations one prefix may record per project and UTC day, per front thread; 0: no share. */
  perDay: number;
  /** Prefix lengths: 8..32 for IPv4, 16..52 for IPv6. */
  v4: number;
  v6: number;
}

/**
 * The number a client address's prefix counts under: an IPv4 prefix as its number, an IPv6 one
 * as a negative number (its top `v6` bits fit a double exactly up to 52); -0.5 for an unreadable
 * address (one key for them all). No allocation.
 */
export function prefixKey(ip: ParsedIp | null, v4: number, v6: number): number {
  if (ip === null) return -0.5;
  if (ip.version === 4) return v4 === 32 ? ip.v4 : Math.floor(ip.v4 / 2 ** (32 - v4));
  const w0 = ip.words[0]!;
  if (v6 <= 32) return -1 - Math.floor(w0 / 2 ** (32 - v6));
  return -1 - (w0 * 2 ** (v6 - 32) + Math.floor(ip.words[1]! / 2 ** (64 - v6)));
}

/**
 * The beacon's budgets (BeaconServices.budget), nested: a hit's full observation is stored when
 * its address prefix has share left in its project today (per front thread), its project has
 * budget left, and its org has (the outer bound). So no group of addresses in one /24 (or /48)
 * can use a project's budget up, and no project its org's. Past any of them only the full
 * observation is dropped (the session is still updated: hits.ts). Drops are counted per
 * project for GET /metrics (plain numbers; a dropped hit costs a Map update).
 *
 * A prefix's count is kept only once it recorded something, so the table holds at most as many
 * prefixes per project as the project recorded today on this thread.
 */
export class BeaconBudget {
  /** Hits of each project (its live id) whose observation this thread dropped since start. */
  readonly droppedByProject = new Map<string, number>();
  /** Per project, this thread's observations per prefix today. */
  private readonly prefixes = new Map<string, { day: number; counts: Map<number, number> }>();

  constructor(
    private readonly org: ObservationBudget,
    private readonly project: ObservationBudget,
    private readonly prefix: PrefixSettings,
  ) {}

  /** Reads the org's and the project's counts of today (may throw StoreWait: see ObservationBudget). */
  warm(orgId: string, projectId: string, nowMs: number): void {
    this.org.warm(orgId, nowMs);
    this.project.warm(projectId, nowMs);
  }

  /** warm() for a page that reads the standings (the dashboard): waits for the store as needed. */
  async ready(orgId: string, projectIds: readonly string[], nowMs: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        this.org.warm(orgId, nowMs);
        for (const id of projectIds) this.project.warm(id, nowMs);
        return;
      } catch (err) {
        if (!(err instanceof StoreWait) || attempt >= 8) throw err;
        await err.ready;
      }
    }
  }

  /** Whether the hit's full observation may be stored; counts it either way. */
  take(orgId: string, projectId: string, ip: ParsedIp | null, nowMs: number): boolean {
    const share = this.prefix.perDay;
    let counts: Map<number, number> | null = null;
    let key = 0;
    let n = 0;
    if (share > 0) {
      const day = Math.floor(nowMs / DAY_MS);
      let p = this.prefixes.get(projectId);
      if (p === undefined) this.prefixes.set(projectId, (p = { day, counts: new Map() }));
      else if (p.day !== day) {
        p.day = day;
        p.counts.clear();
      }
      counts = p.counts;
      key = prefixKey(ip, this.prefix.v4, this.prefix.v6);
      n = counts.get(key) ?? 0;
      if (n >= share) return this.dropped(orgId, projectId, nowMs, true, true);
    }
    if (!this.project.take(projectId, nowMs)) return this.dropped(orgId, projectId, nowMs, true, false);
    if (!this.org.take(orgId, nowMs)) {
      this.project.release(projectId, nowMs);
      return this.dropped(orgId, projectId, nowMs, false, false);
    }
    if (counts !== null) counts.set(key, n + 1);
    return true;
  }

  private dropped(orgId: string, projectId: string, nowMs: number, countOrg: boolean, countProject: boolean): false {
    if (countOrg) this.org.drop(orgId, nowMs);
    if (countProject) this.project.drop(projectId, nowMs);
    this.droppedByProject.set(projectId, (this.droppedByProject.get(projectId) ?? 0) + 1);
    return false;
  }

  /** The org's standing today (the dashboard). */
  standing(orgId: string, nowMs: number): BudgetStanding {
    return this.org.standing(orgId, nowMs);
  }

  /** A project's standing today (the dashboard). */
  projectStanding(projectId: string, nowMs: number): BudgetStanding {
    return this.project.standing(projectId, nowMs);
  }
}
