import { PLAN_RULES, type Plan } from "../shared/plans.js";
import { usagePeriod, type BillingPeriodSource } from "../shared/billing-period.js";
import { JournalClosedError, type ChargeJournal, type Liveness } from "../store/charge-journal.js";
import type { StateDbs } from "../store/state-env.js";
import type { CheckHistoryRecord, OrgRecord, StoredAnswer } from "../store/records.js";
import { mayWait, StoreWait } from "../store/store-wait.js";
import { ApiError } from "../shared/errors.js";
import { countQuotaRefusal } from "./counters.js";
import { LocalQuotaCells, type QuotaCell, type QuotaCells } from "./admission/cells.js";

interface OrgStanding {
  orgId: string;
  plan: Plan;
  period: string;
  /** Epoch ms when this period's usage resets. */
  end: number;
  billing: BillingPeriodSource;
  /**
   * The period's counters (admission/cells.ts), shared by every front thread: `used`, credits
   * charged (as journaled); `held`, credits held by calls in progress, not yet charged or
   * released; `lease`, in a cluster for a hard-stop plan, credits of this node's lease not yet
   * charged or held. Read and changed only under `cells.locked`.
   */
  c: QuotaCell;
  /** In a cluster, this thread's grant of more lease on its way, if any. */
  pending: Promise<void> | null;
  /** After a failed grant, none is tried before this time (epoch ms): 503 at once. */
  retryAt: number;
  /** After a grant found the quota full, none is tried before this time: 429 at once. */
  fullUntil: number;
}

/**
 * A cluster's shared quota (FS_STORE=postgres; docs/cluster.md, pg/leases.ts): grants this node
 * part of a hard-stop org's quota, asynchronously, one round trip per grant.
 */
export interface LeaseSource {
  /** The chain of renewals the node's leases count in now; -1 when they lapsed (not renewed in time). */
  chain(): number;
  /**
   * Up to FS_LEASE_CREDITS more credits (at least `need`, or 0 when the quota has no room) of the
   * org's quota in the period, in the current chain. Rejects when the shared store cannot grant.
   */
  grant(orgId: string, period: string, quota: number, need: number): Promise<number>;
  /** Credits below which a lease is topped up before it runs out. */
  readonly lowWater: number;
  /** The leases lapsed: renew them as soon as possible. */
  wake?(): void;
}

/** Credits set aside by QuotaGate.hold for one call in progress; see there. */
/** An org's usage after an operator's adjustment (POST /v1/admin/orgs/{orgId}/usage/adjust). */
export interface UsageAfterAdjust {
  period: string;
  used: number;
  quota: number | null;
}

export interface Hold {
  readonly credits: number;
  /** The standing the credits were added to; null once charged or released. */
  standing: OrgStanding | null;
}

/**
 * Admission and debit of credits, on the front thread.
 *
 * The front is one thread, so checking `used + credits <= quota` and adding the credits happen
 * with nothing in between: with 9,990 of 10,000 used, 100 concurrent 1-credit calls admit exactly
 * 10. An admitted debit goes to the charge journal and the response waits for that write, not
 * for the writer's LMDB commit (see store/charge-journal.ts for why).
 *
 * Counters start from the ledger (read-only LMDB) the first time an org is seen and are kept
 * here afterwards: the writer's copy may trail by the batch in flight.
 */
export class QuotaGate {
  private readonly orgs = new Map<string, OrgStanding>();

  /**
   * @param leases set in a cluster: hard-stop plans admit against this node's lease of the quota
   *   instead of the org's whole quota.
   */
  constructor(
    private readonly dbs: { orgs: Pick<StateDbs["orgs"], "get">; usage: Pick<StateDbs["usage"], "get"> },
    private readonly journal: ChargeJournal,
    private readonly leases: LeaseSource | null = null,
    /** In a cluster: resolves once the journal record `seq` is in the shared ledger (or a bound passed). */
    private readonly shipped: ((seq: number) => Promise<void>) | null = null,
    /** The counters: this thread's own, or shared with the other front threads (FS_FRONT_THREADS). */
    private readonly cells: QuotaCells = new LocalQuotaCells(),
  ) {}

  /**
   * Sets `credits` aside for a call about to do its work, or throws 429 QUOTA_EXCEEDED when the
   * org has no room for them now. Held credits count against the quota for every later
   * admission, so with 10 credits left exactly five concurrent 2-credit calls get past here, and
   * the others are refused before they record anything (a binding, a meter decision, a spent
   * challenge). The hold ends exactly once: `charge` turns it into the debit, `release` gives it
   * back (the call failed, the client left, or it charged nothing). Null for an unknown org.
   * @throws ApiError QUOTA_EXCEEDED (429); NOT_READY (503) once the service is stopping.
   */
  hold(orgId: string, credits: number, nowMs: number): Hold | null {
    // Stopping: the charge could not be journaled, so refuse before the call records anything.
    if (this.journal.isClosed) throw unavailable();
    const s = this.standing(orgId, nowMs);
    if (!s) return null;
    return this.cells.locked(s.c, () => {
      if (!this.fits(s, credits, 0)) throw quotaExceeded(s, credits, nowMs, this.leased(s));
      s.c.held += credits;
      if (this.leased(s)) s.c.lease -= credits;
      return { credits, standing: s };
    });
  }

  /** Gives a hold's credits back. A hold already charged or released is left alone. */
  release(hold: Hold): void {
    const s = hold.standing;
    if (!s) return;
    hold.standing = null;
    // A hold of a period that has ended since: its counters started over, nothing to give back.
    if (this.orgs.get(s.orgId) !== s) return;
    this.cells.locked(s.c, () => {
      s.c.held -= hold.credits;
      if (this.leased(s)) s.c.lease += hold.credits;
    });
  }

  /**
   * Debits `credits` for a successful call: refused with 429 (thrown at once, nothing debited)
   * past a hard-stop quota unless `neverBlock` (beacon endpoints). Credits held for this call
   * (`hold`) are covered: only what it charges beyond them is checked against the quota, so a
   * call admitted by `hold` is not refused after its work for those credits. (A hold taken in a
   * period that has ended since covers nothing: the call is checked in full in the new one.)
   * The hold ends here, also when this throws. `onCharged` runs once the debit is in the
   * journal file. A callback, not a promise: this runs once per metered request.
   * `live` is the request: if its client has left by the time the debit would be written (a
   * connection uWS closed for a pipelined request, a client that disconnected), nothing is
   * charged and `onCharged` gets an error, as for a failed write. `history`: a check's record
   * for its org's history, journaled in the debit's line.
   */
  charge(orgId: string, credits: number, nowMs: number, neverBlock: boolean, onCharged: (err?: ApiError, seq?: number) => void, hold: Hold | null = null, idem?: StoredAnswer, live?: Liveness, history?: CheckHistoryRecord): void {
    const s = this.standing(orgId, nowMs);
    const own = hold !== null && hold.standing !== null && hold.standing === s;
    if (hold !== null && !own) this.release(hold); // a hold of another period covers nothing
    if (!s) throw new ApiError("NOT_FOUND", `No org with id ${orgId}.`);
    const leased = this.leased(s);
    // Under the lock: the hold becomes part of this debit, the rest is checked, the debit counted.
    this.cells.locked(s.c, () => {
      const held = own ? hold!.credits : 0;
      if (own) {
        s.c.held -= held;
        if (leased) s.c.lease += held;
      }
      let fits = true;
      try {
        if (!neverBlock && credits > held) fits = this.fits(s, credits - held, held);
      } catch (err) {
        // Waiting for more lease: the hold stands, and the charge is made again once it came.
        if (own && err instanceof StoreWait) {
          s.c.held += held;
          if (leased) s.c.lease -= held;
        } else if (own) hold!.standing = null;
        throw err;
      }
      if (own) hold!.standing = null;
      if (!fits) throw quotaExceeded(s, credits, nowMs, leased);
      s.c.used += credits;
      // A beacon hit past the quota may take the lease below zero.
      if (leased) s.c.lease -= credits;
    });
    const giveBack = (): void =>
      this.cells.locked(s.c, () => {
        s.c.used -= credits;
        if (leased) s.c.lease += credits;
      });
    try {
      const seq = this.journal.append(orgId, credits, s.period, (err) => {
        if (!err) return onCharged(undefined, seq);
        giveBack(); // not durable (or withdrawn), not charged: give the room back
        onCharged(unavailable());
      }, idem, false, live, history);
    } catch (err) {
      giveBack();
      if (err instanceof JournalClosedError) throw unavailable();
      throw err;
    }
  }

  /**
   * The quota headers of a metered answer, after its charge (IETF httpapi RateLimit fields,
   * draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: "monthly";q=<credits>;w=<period
   * seconds>` and `RateLimit: "monthly";r=<credits left>;t=<seconds to the reset>`. Undefined
   * for an unmetered plan or an org this gate has not seen.
   */
  rateLimitHeaders(orgId: string, nowMs: number): Record<string, string> | undefined {
    const s = this.orgs.get(orgId);
    const quota = s ? PLAN_RULES[s.plan].monthlyQuota : null;
    if (!s || quota === null) return undefined;
    const remaining = Math.max(0, quota - s.c.used - s.c.held);
    const resetIn = Math.max(0, Math.ceil((s.end - nowMs) / 1000));
    return { "ratelimit-policy": policyHeader(s, quota), ratelimit: `"monthly";r=${remaining};t=${resetIn}` };
  }

  /** Ids of the orgs this gate keeps a standing for (a cluster re-reads them: pg/refresh.ts). */
  orgIds(): string[] {
    return [...this.orgs.keys()];
  }

  /**
   * The org as stored now, maybe changed on another node of a cluster: a new plan or billing
   * period applies from the next admission.
   */
  orgChanged(org: OrgRecord): void {
    const s = this.orgs.get(org.id);
    if (!s) return;
    const start = org.billing_period_start ?? null;
    const end = org.billing_period_end ?? null;
    if (s.plan === org.plan && s.billing.billing_period_start === start && s.billing.billing_period_end === end) return;
    this.setBilling(org.id, org.plan, { billing_period_start: start, billing_period_end: end });
  }

  /** The org's plan as this gate knows it (undefined for an org it has not seen). */
  planOf(orgId: string): Plan | undefined {
    return this.orgs.get(orgId)?.plan;
  }

  /** A plan changed (admin or billing): later admissions use it. */
  setPlan(orgId: string, plan: Plan): void {
    const s = this.orgs.get(orgId);
    if (s) s.plan = plan;
  }

  /**
   * Billing changed an org (plan, and the Stripe billing period its usage is counted in): later
   * admissions use both; a new period starts from the ledger's count for it.
   */
  setBilling(orgId: string, plan: Plan, billing: BillingPeriodSource): void {
    const s = this.orgs.get(orgId);
    if (!s) return;
    s.plan = plan;
    s.billing = { billing_period_start: billing.billing_period_start ?? null, billing_period_end: billing.billing_period_end ?? null };
    s.end = 0; // recompute the period at the next call
  }

  /**
   * An operator's correction of the current period's usage by `delta` credits (negative gives
   * credits back). It travels through the journal like a charge, so the front's counter and the
   * ledger can never count it twice. Resolves with the new standing once journaled, and the
   * adjustment's journal sequence number.
   * @param answerFor the stored answer of the request's Idempotency-Key for the standing the
   *   adjustment leads to: journaled in the adjustment's own line, so both are durable or neither.
   */
  async adjust(orgId: string, delta: number, nowMs: number, answerFor?: (after: UsageAfterAdjust) => StoredAnswer): Promise<UsageAfterAdjust & { seq: number }> {
    const s = await this.standingRead(orgId, nowMs);
    if (!s) throw new ApiError("NOT_FOUND", `No org with id ${orgId}.`);
    const quota = PLAN_RULES[s.plan].monthlyQuota;
    const idem = answerFor?.({ period: s.period, used: this.cells.locked(s.c, () => Math.max(0, s.c.used + delta)), quota });
    let seq = 0;
    try {
      await new Promise<void>((resolve, reject) => {
        seq = this.journal.append(orgId, delta, s.period, (err) => (err ? reject(err) : resolve()), idem, true);
      });
    } catch (err) {
      throw err instanceof JournalClosedError ? unavailable() : err;
    }
    // A cluster's other nodes see it once shipped: answer then, so what follows counts it.
    if (this.shipped) await this.shipped(seq);
    const used = this.cells.locked(s.c, () => (s.c.used = Math.max(0, s.c.used + delta)));
    return { period: s.period, used, quota, seq };
  }

  /** The org's standing, waiting for the store's records on a cluster node if need be. */
  private async standingRead(orgId: string, nowMs: number): Promise<OrgStanding | null> {
    for (let waits = 0; ; waits++) {
      try {
        return mayWait(() => this.standing(orgId, nowMs));
      } catch (err) {
        if (!(err instanceof StoreWait) || waits >= 4) throw err;
        await err.ready;
      }
    }
  }

  /**
   * The org's standing, read from the store now if this thread has none: on a cluster node
   * without blocking (StoreWait), before a call does anything. Null for an unknown org.
   */
  prepare(orgId: string, nowMs: number): void {
    this.standing(orgId, nowMs);
  }

  /**
   * Room for `credits` more, counting every hold but `ownHeld` (the caller's own, just released).
   * In a cluster a hard-stop plan has room when this node's lease covers the credits (`ownHeld`
   * went back to the lease when the hold was released); otherwise the call waits (StoreWait) for
   * a grant, asynchronously. A lease is topped up before it runs out (below `lowWater`), so calls
   * rarely wait. Runs under the cell's lock.
   * @throws ApiError NOT_READY (503) when the lease cannot grow because the shared store is away.
   */
  private fits(s: OrgStanding, credits: number, ownHeld: number): boolean {
    const rule = PLAN_RULES[s.plan];
    if (!rule.hardStop || rule.monthlyQuota === null) return true;
    if (!this.leases) return s.c.used + s.c.held + ownHeld + credits <= rule.monthlyQuota;
    // The caller's own hold went back to the lease when it was released: the charge takes it again.
    const need = credits + ownHeld;
    const chain = this.leases.chain();
    if (chain < 0) {
      // Not renewed in time: PostgreSQL may give these credits to another node soon.
      this.leases.wake?.();
      throw storeAway();
    }
    if (s.c.chain !== chain) {
      // Granted in a chain that lapsed since: it counts for nothing (what was spent beyond it stays spent).
      s.c.lease = Math.min(s.c.lease, 0);
      s.c.chain = chain;
    }
    const now = Date.now();
    if (s.c.lease >= need) {
      if (s.c.lease - need < this.leases.lowWater && !s.pending && now >= s.retryAt && now >= s.fullUntil) void this.moreLease(s, rule.monthlyQuota, 1);
      return true;
    }
    if (now < s.retryAt) throw storeAway();
    if (now < s.fullUntil) return false;
    throw new StoreWait(this.moreLease(s, rule.monthlyQuota, need - Math.max(0, s.c.lease)));
  }

  /** Asks for more lease (one request at a time per standing); settles once the answer is counted. */
  private moreLease(s: OrgStanding, quota: number, need: number): Promise<void> {
    if (s.pending) return s.pending;
    const leases = this.leases!;
    const chain = leases.chain();
    const pending = leases.grant(s.orgId, s.period, quota, need).then(
      (granted) => {
        this.cells.locked(s.c, () => {
          if (s.c.chain === chain && leases.chain() === chain) s.c.lease += granted;
        });
        if (granted === 0) s.fullUntil = Date.now() + LEASE_RETRY_MS;
      },
      () => {
        s.retryAt = Date.now() + LEASE_RETRY_MS;
      },
    );
    s.pending = pending.finally(() => {
      s.pending = null;
    });
    return s.pending;
  }

  /** Whether the standing admits against a cluster lease. */
  private leased(s: OrgStanding): boolean {
    return this.leases !== null && PLAN_RULES[s.plan].hardStop && PLAN_RULES[s.plan].monthlyQuota !== null;
  }

  private standing(orgId: string, nowMs: number): OrgStanding | null {
    let s = this.orgs.get(orgId);
    if (s && nowMs < s.end) return s;
    let plan = s?.plan;
    let billing = s?.billing;
    if (!plan || !billing) {
      const org = this.dbs.orgs.get(orgId);
      if (!org) return null;
      plan = org.plan;
      billing = { billing_period_start: org.billing_period_start ?? null, billing_period_end: org.billing_period_end ?? null };
    }
    const p = usagePeriod(billing, nowMs);
    if (s && s.period === p.id) {
      s.end = p.end;
      return s;
    }
    s = { orgId, plan, period: p.id, end: p.end, billing, c: this.cells.cell(orgId, p.id, () => this.dbs.usage.get(`${orgId}:${p.id}`)?.used ?? 0), pending: null, retryAt: 0, fullUntil: 0 };
    this.orgs.set(orgId, s);
    return s;
  }
}

/** `RateLimit-Policy` of a standing, built once per plan and period (compared field by field: no key is built per answer). */
const policies = new WeakMap<OrgStanding, { quota: number; period: string; end: number; value: string }>();
function policyHeader(s: OrgStanding, quota: number): string {
  let p = policies.get(s);
  if (!p || p.quota !== quota || p.period !== s.period || p.end !== s.end) {
    const start = usagePeriod(s.billing, s.end - 1).start;
    p = { quota, period: s.period, end: s.end, value: `"monthly";q=${quota};w=${Math.round((s.end - start) / 1000)}` };
    policies.set(s, p);
  }
  return p.value;
}

/**
 * After a grant failed, how long admissions that need one answer 503 at once instead of trying
 * again; after a grant found the quota full, how long they answer 429 at once.
 */
const LEASE_RETRY_MS = 1000;

/** A hard-stop org's lease ran out and the shared store cannot grant more now. */
function storeAway(): ApiError {
  return new ApiError("NOT_READY", "This node's share of the org's quota is spent and the shared store cannot grant more right now; nothing was charged. Retry shortly.", {
    headers: { "retry-after": "1" },
  });
}

/** The charge could not be made durable (disk failure, or the service is stopping). */
function unavailable(): ApiError {
  return new ApiError("NOT_READY", "The service cannot record charges right now (stopping or storage failure); nothing was charged. Retry shortly.", {
    headers: { "retry-after": "1" },
  });
}

/**
 * 429 with metadata.ratelimit, plus Retry-After (docs/api.md, "429 and metadata.ratelimit"). When only credits held by calls
 * in progress stand in the way (they may fail and give them back within milliseconds), Retry-After
 * says 1 second instead of the time until the period resets.
 */
function quotaExceeded(s: OrgStanding, credits: number, nowMs: number, leased = false): ApiError {
  const limit = PLAN_RULES[s.plan].monthlyQuota ?? 0;
  const reset = s.end;
  const resetIn = Math.max(0, Math.ceil((reset - nowMs) / 1000));
  // In a cluster the node cannot tell: the rest of the quota may be held by other nodes' leases.
  const onlyHeld = !leased && s.c.used + credits <= limit;
  const remaining = Math.max(0, limit - s.c.used - s.c.held);
  const resets = `it resets at ${new Date(reset).toISOString()}`;
  countQuotaRefusal(s.plan);
  return new ApiError(
    "QUOTA_EXCEEDED",
    onlyHeld
      ? `Monthly quota of ${limit} credits for plan ${s.plan} is fully taken by calls in progress; retry in a moment.`
      : remaining > 0
        ? `This call needs ${credits} credits and ${remaining} of the monthly quota of ${limit} for plan ${s.plan} remain; ${resets}.`
        : `Monthly quota of ${limit} credits reached for plan ${s.plan}; ${resets}.`,
    {
      headers: { "retry-after": onlyHeld ? "1" : String(resetIn), "ratelimit-policy": policyHeader(s, limit), ratelimit: `"monthly";r=${remaining};t=${resetIn}` },
      metadata: { ratelimit: { limit, remaining, reset, reset_in_seconds: resetIn } },
    },
  );
}
