import { PLAN_RULES } from "../shared/plans.js";
import { usagePeriod } from "../shared/billing-period.js";
import type { ChargeRecord, ObservationPage, ObservationRecord, OrgRecord, SessionDelta, UsageRecord, UsageStanding } from "./records.js";
import type { Ack, Intent } from "./messages.js";
import { groupObservations, mergeSession, pageLinesNewestFirst } from "./observation-pages.js";
import type { StateDbs } from "./state-env.js";
import { BindingIndex, DEFAULT_RETENTION_MS } from "./bindings.js";
import { BillingApplier } from "./billing.js";

/**
 * Applies intents inside the writer's write transaction. Runs only on the writer thread, so a
 * read-check-write (the quota check) needs no lock: nothing else writes between them.
 * Usage of the current period is kept in memory too, so a charge costs no lmdb read.
 */
export class IntentApplier {
  private readonly usageCache = new Map<string, UsageRecord>();
  private readonly orgCache = new Map<string, OrgRecord>();
  private readonly dirty = new Set<string>();
  private lastChallengePrune = 0;

  readonly bindings: BindingIndex;
  readonly billing: BillingApplier;

  constructor(
    private readonly dbs: StateDbs,
    bindingRetentionMs = DEFAULT_RETENTION_MS,
  ) {
    this.bindings = new BindingIndex(dbs, bindingRetentionMs);
    this.billing = new BillingApplier(dbs, (org) => this.putOrg(org), (id) => this.org(id));
  }

  /** Forget cached state (after a failed transaction the disk is the truth again). */
  reset(): void {
    this.usageCache.clear();
    this.orgCache.clear();
    this.dirty.clear();
    this.bindings.reset();
  }

  /** Applies one intent; must be called inside a write transaction. */
  apply(intent: Intent): Ack {
    switch (intent.op) {
      case "ping":
      case "shutdown":
        return { ok: true };
      case "charges.apply":
        this.applyCharges(intent.records, intent.upToSeq);
        return { ok: true };
      case "usage.get": {
        const org = this.org(intent.orgId);
        if (!org) return notFound("org", intent.orgId);
        const period = usagePeriod(org, intent.nowMs).id;
        return { ok: true, org, usage: this.standing(org, intent.nowMs, this.usage(org.id, period)), value: this.billing.overageState(org.id, period) };
      }
      case "org.create":
        if (this.org(intent.org.id)) return { ok: false, error: "CONFLICT", message: "org id already exists" };
        this.putOrg(intent.org);
        return { ok: true, org: intent.org };
      case "org.update": {
        const org = this.org(intent.orgId);
        if (!org) return notFound("org", intent.orgId);
        const next: OrgRecord = { ...org, ...definedOnly(intent.patch) };
        this.putOrg(next);
        return { ok: true, org: next };
      }
      case "project.create":
        if (!this.org(intent.project.org_id)) return notFound("org", intent.project.org_id);
        this.dbs.projects.putSync(intent.project.id, intent.project);
        return { ok: true, project: intent.project };
      case "project.update": {
        const project = this.dbs.projects.get(intent.projectId);
        if (!project || project.org_id !== intent.orgId) return notFound("project", intent.projectId);
        const next = { ...project, ...definedOnly(intent.patch) };
        this.dbs.projects.putSync(project.id, next);
        return { ok: true, project: next };
      }
      case "observations.apply":
        this.applyObservationBatch(intent.pages, intent.sessions, intent.upToSeq);
        return { ok: true };
      case "meta.ensure": {
        const stored = this.dbs.meta.get(intent.key);
        if (stored !== undefined) return { ok: true, value: stored };
        this.dbs.meta.putSync(intent.key, intent.value);
        return { ok: true, value: intent.value };
      }
      case "sessions.resolve":
        return { ok: true, value: this.bindings.resolve(intent.request) };
      case "meter.consume":
        return { ok: true, value: this.bindings.meter(intent.request) };
      case "billing.customer": {
        const org = this.billing.setCustomer(intent.orgId, intent.customerId);
        return org ? { ok: true, org } : notFound("org", intent.orgId);
      }
      case "billing.event":
        return { ok: true, value: this.billing.apply(intent.event, intent.nowMs) };
      case "overage.claim":
        return { ok: true, value: this.billing.claimOverage(intent.nowMs) };
      case "overage.reported":
        this.billing.overageReported(intent.orgId, intent.period, intent.identifier);
        return { ok: true };
      case "meta.get":
        return { ok: true, value: this.dbs.meta.get(intent.key) ?? null };
      case "challenge.spend":
        return { ok: true, created: this.spendChallenge(intent.id, intent.expiresAt, Date.now()) };
      case "key.create": {
        const { key } = intent;
        if (!this.org(key.org_id)) return notFound("org", key.org_id);
        if (key.project_id !== null) {
          const project = this.dbs.projects.get(key.project_id);
          if (!project || project.org_id !== key.org_id) return notFound("project", key.project_id);
        }
        if (this.dbs.keys.get(key.id)) return { ok: false, error: "CONFLICT", message: "key id already exists" };
        this.dbs.keys.putSync(key.id, key);
        return { ok: true, key };
      }
      case "key.disable": {
        const key = this.dbs.keys.get(intent.keyId);
        if (!key) return notFound("key", intent.keyId);
        const next = key.disabled_at === null ? { ...key, disabled_at: intent.nowMs } : key;
        this.dbs.keys.putSync(key.id, next);
        return { ok: true, key: next };
      }
      case "init":
        return this.init(intent);
    }
  }

  /**
   * Records a challenge as spent; false if it was spent before. The writer is the only thread
   * that runs this, so of two concurrent spends of one challenge exactly the first gets true.
   * Every CHALLENGE_PRUNE_EVERY_MS (writer clock) a spend also prunes expired records.
   */
  spendChallenge(id: string, expiresAt: number, nowMs: number): boolean {
    if (nowMs - this.lastChallengePrune >= CHALLENGE_PRUNE_EVERY_MS) this.pruneChallenges(nowMs);
    const key: [number, string] = [expiresAt, id];
    if (this.dbs.challenges.get(key) !== undefined) return false;
    this.dbs.challenges.putSync(key, 1);
    return true;
  }

  /**
   * Deletes spent-challenge records that expired more than CHALLENGE_PRUNE_GRACE_MS ago (at most
   * CHALLENGE_PRUNE_MAX per call, to keep the transaction short). A pruned challenge cannot be
   * replayed: verification refuses it as expired before it asks whether it was spent; the grace
   * covers a verification that passed the expiry check just before its spend reached the writer.
   * Returns how many were deleted.
   */
  pruneChallenges(nowMs: number): number {
    this.lastChallengePrune = nowMs;
    const keys = [...this.dbs.challenges.getKeys({ end: [nowMs - CHALLENGE_PRUNE_GRACE_MS], limit: CHALLENGE_PRUNE_MAX })];
    for (const k of keys) this.dbs.challenges.removeSync(k);
    return keys.length;
  }

  /** Highest journal sequence number whose charge is in the ledger. */
  appliedSeq(): number {
    const v = this.dbs.meta.get("journal_applied_seq");
    return typeof v === "number" ? v : 0;
  }

  /**
   * Adds journaled debits to the ledger. The front already decided admission, so nothing is
   * refused here; credits past a paid plan's quota are counted as overage.
   *
   * Records replayed from the journal come one by one, in order: each is skipped if at or below
   * the applied sequence number. Batches from the front (`upToSeq` set) are sums that stand for
   * every record up to `upToSeq`, all newer than anything applied: applied whole or, if already
   * applied, not at all.
   */
  applyCharges(records: ChargeRecord[], upToSeq?: number): void {
    let applied = this.appliedSeq();
    const start = applied;
    if (upToSeq !== undefined) {
      if (upToSeq <= applied) return;
      for (const r of records) this.addUsage(r);
      applied = upToSeq;
    } else {
      for (const r of records) {
        if (r.seq <= applied) continue;
        applied = r.seq;
        this.addUsage(r);
      }
    }
    // One put per touched org and period, not per charge.
    for (const k of this.dirty) this.dbs.usage.putSync(k, this.usageCache.get(k)!);
    this.dirty.clear();
    if (applied !== start) this.dbs.meta.putSync("journal_applied_seq", applied);
  }

  /** Highest observation-journal sequence number stored. */
  appliedObservationSeq(): number {
    const v = this.dbs.meta.get("observations_applied_seq");
    return typeof v === "number" ? v : 0;
  }

  /**
   * Stores a batch of journaled observations (pages) and merges its session deltas. A batch
   * whose `upToSeq` is at or below the applied sequence number was stored already: skipped whole.
   */
  applyObservationBatch(pages: ObservationPage[], sessions: SessionDelta[], upToSeq: number): void {
    if (upToSeq <= this.appliedObservationSeq()) return;
    for (const p of pages) this.dbs.observations.putSync([p.project_id, p.first_seq], p.text);
    for (const d of sessions) {
      const key: [string, string] = [d.project_id, d.session_id];
      const prev = this.dbs.sessions.get(key);
      this.dbs.sessions.putSync(key, mergeSession(prev, d));
      if (!prev) this.dbs.sessionProjects.putSync(d.session_id, d.project_id);
    }
    this.dbs.meta.putSync("observations_applied_seq", upToSeq);
  }

  private pageCursor: [string, number] | null = null;
  private sessionCursor: [string, string] | null = null;

  /**
   * Deletes observation pages whose newest observation is older than the retention, and beacon
   * sessions last seen before it. Bounded per call like BindingIndex.prune (at most `limit`
   * deletions, `limit * 20` entries examined); returns how many were removed, and whether the
   * pass stopped part-way.
   */
  pruneObservations(nowMs: number, retentionMs: number, limit = 2000): { removed: number; more: boolean } {
    const cutoff = nowMs - retentionMs;
    let removed = 0;
    let examined = 0;
    let more = false;
    for (const { key, value } of this.dbs.observations.getRange({ start: this.pageCursor ?? undefined })) {
      if (removed >= limit || examined >= limit * 20) {
        this.pageCursor = key;
        more = true;
        break;
      }
      examined++;
      const newest = pageLinesNewestFirst(value)[0];
      const ts = newest ? (JSON.parse(newest) as ObservationRecord).ts : 0;
      if (ts >= cutoff) continue;
      this.dbs.observations.removeSync(key);
      removed++;
    }
    if (!more) this.pageCursor = null;
    let moreSessions = false;
    for (const { key, value } of this.dbs.sessions.getRange({ start: this.sessionCursor ?? undefined })) {
      if (removed >= limit || examined >= limit * 40) {
        this.sessionCursor = key;
        moreSessions = true;
        break;
      }
      examined++;
      if (value.last_seen >= cutoff) continue;
      this.dbs.sessions.removeSync(key);
      if (this.dbs.sessionProjects.get(key[1]) === key[0]) this.dbs.sessionProjects.removeSync(key[1]);
      removed++;
    }
    if (!moreSessions) this.sessionCursor = null;
    return { removed, more: more || moreSessions };
  }

  /**
   * Replay: observations read back from the journal (records and their lines), of which those
   * past the applied sequence number are stored as one batch.
   */
  applyObservations(records: ObservationRecord[], lines: string[]): void {
    const applied = this.appliedObservationSeq();
    const keep = records.map((r, i) => i).filter((i) => records[i]!.seq > applied);
    if (keep.length === 0) return;
    const { pages, sessions } = groupObservations(keep.map((i) => records[i]!), keep.map((i) => lines[i]!));
    this.applyObservationBatch(pages, sessions, records[keep[keep.length - 1]!]!.seq);
  }

  private addUsage(r: ChargeRecord): void {
    const org = this.org(r.orgId);
    const usage = this.usage(r.orgId, r.period);
    const rule = org ? PLAN_RULES[org.plan] : PLAN_RULES.free;
    const quota = rule.monthlyQuota;
    const used = Math.max(0, usage.used + r.credits); // negative records are adjustments; never below zero
    this.usageCache.set(`${r.orgId}:${r.period}`, { used, overage: overageFor(used, quota, rule.hardStop) });
    this.dirty.add(`${r.orgId}:${r.period}`);
  }

  private init(intent: Extract<Intent, { op: "init" }>): Ack {
    const stored = this.dbs.meta.get("admin_token_hash");
    if (typeof stored === "string") {
      if (intent.adminTokenFromEnv && stored !== intent.adminTokenHash) this.dbs.meta.putSync("admin_token_hash", intent.adminTokenHash);
      return { ok: true, created: false, adminTokenHash: intent.adminTokenFromEnv ? intent.adminTokenHash : stored };
    }
    this.dbs.meta.putSync("admin_token_hash", intent.adminTokenHash);
    this.dbs.meta.putSync("initialized_at", new Date().toISOString());
    this.putOrg(intent.org);
    this.dbs.projects.putSync(intent.project.id, intent.project);
    for (const key of intent.keys) this.dbs.keys.putSync(key.id, key);
    this.dbs.meta.putSync("demo", intent.demo);
    return { ok: true, created: true, adminTokenHash: intent.adminTokenHash };
  }

  private org(id: string): OrgRecord | undefined {
    let org = this.orgCache.get(id);
    if (!org) {
      org = this.dbs.orgs.get(id);
      if (org) this.orgCache.set(id, org);
    }
    return org;
  }

  private putOrg(org: OrgRecord): void {
    this.dbs.orgs.putSync(org.id, org);
    this.orgCache.set(org.id, org);
  }

  private usage(orgId: string, period: string): UsageRecord {
    const k = `${orgId}:${period}`;
    let u = this.usageCache.get(k);
    if (!u) {
      u = this.dbs.usage.get(k) ?? { used: 0, overage: 0 };
      this.usageCache.set(k, u);
    }
    return u;
  }

  private putUsage(orgId: string, period: string, u: UsageRecord): void {
    const k = `${orgId}:${period}`;
    this.dbs.usage.putSync(k, u);
    this.usageCache.set(k, u);
  }

  private standing(org: OrgRecord, nowMs: number, u: UsageRecord): UsageStanding {
    return {
      plan: org.plan,
      period: usagePeriod(org, nowMs).label,
      reset: usagePeriod(org, nowMs).end,
      used: u.used,
      // From the plan now: refunds lower it, and a plan change re-bases it at once.
      overage: overageFor(u.used, PLAN_RULES[org.plan].monthlyQuota, PLAN_RULES[org.plan].hardStop),
      quota: PLAN_RULES[org.plan].monthlyQuota,
    };
  }
}

/** How often a spend also prunes expired spent-challenge records, the limit per prune, and the grace after expiry. */
const CHALLENGE_PRUNE_EVERY_MS = 60_000;
const CHALLENGE_PRUNE_MAX = 1_000;
const CHALLENGE_PRUNE_GRACE_MS = 5 * 60_000;

/** Credits used beyond the included quota of a plan that bills overage (pro, business); 0 otherwise. */
export function overageFor(used: number, quota: number | null, hardStop: boolean): number {
  return quota === null || hardStop ? 0 : Math.max(0, used - quota);
}

function notFound(what: string, id: string): Ack {
  return { ok: false, error: "NOT_FOUND", message: `No ${what} with id ${id}.` };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
