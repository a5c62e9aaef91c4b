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
 * process as a whole; it is counted in memory, so a restart starts the day's count again.
 *
 * The same count per org and day bounds the checks of test-mode keys kept in their history
 * (FS_TEST_HISTORY_PER_DAY, with its own `prefix`).
 */
import type { QuotaCell, QuotaCells } from "../admission/cells.js";

const DAY_MS = 86_400_000;

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
  ) {}

  /** Whether the org may record one more observation at `nowMs`; counts it either way. */
  take(orgId: string, nowMs: number): boolean {
    if (this.perDay === 0) return true;
    this.cell = this.cellOf(orgId, nowMs);
    const ok = this.cells.locked(this.cell, this.count);
    if (!ok) this.dropped++;
    return ok;
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

  private cellOf(orgId: string, nowMs: number): QuotaCell {
    const day = Math.floor(nowMs / DAY_MS);
    const known = this.orgs.get(orgId);
    if (known !== undefined && known.day === day) return known.cell;
    // The prefix keeps these counters apart from the org's credit counters in the same table.
    const cell = this.cells.cell(this.prefix + orgId, `day:${day}`, () => 0);
    if (known !== undefined) {
      known.day = day;
      known.cell = cell;
    } else this.orgs.set(orgId, { day, cell });
    return cell;
  }
}

/**
 * The beacon's budgets (BeaconServices.budget): the org's day, and the drops counted per project
 * for GET /metrics (plain numbers on the hit path; a dropped hit costs a Map update).
 */
export class BeaconBudget {
  /** Hits of each project (its live id) whose observation this thread dropped since start. */
  readonly droppedByProject = new Map<string, number>();

  constructor(private readonly org: ObservationBudget) {}

  /** Observations this thread dropped since start, all projects. */
  get dropped(): number {
    return this.org.dropped;
  }

  /** Whether the hit's full observation may be stored; counts it either way. */
  take(orgId: string, projectId: string, nowMs: number): boolean {
    if (this.org.take(orgId, nowMs)) return true;
    this.droppedByProject.set(projectId, (this.droppedByProject.get(projectId) ?? 0) + 1);
    return false;
  }

  /** The org's standing today (the dashboard). */
  standing(orgId: string, nowMs: number): BudgetStanding {
    return this.org.standing(orgId, nowMs);
  }
}
