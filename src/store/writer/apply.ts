import { PLAN_RULES } from "../../shared/plans.js";
import { usagePeriod } from "../../shared/billing-period.js";
import { IDEMPOTENCY_TTL_MS, scopedId, splitScopedId, type BudgetDelta, type ChargeRecord, type DemoInfo, type KeyRecord, type ProjectRecord, type MeterRequest, type ResolveRequest, type ObservationPage, type ObservationRecord, type OrgRecord, type SessionDelta, type SessionRecord, type UsageDay, type UsageRecord, type UsageStanding } from "../records.js";
import type { AckFailure, AckOf, IntentOf, Op, OrgLimits, WebhookSettings } from "../protocol.js";
import { groupObservations, mergeSession, pageLinesNewestFirst } from "../observation-pages.js";
import type { StateDbs } from "../state-env.js";
import { BindingIndex, DEFAULT_RETENTION_MS } from "./bindings.js";
import { BillingApplier } from "./billing.js";
import { FeedbackApplier } from "./feedback.js";
import { DEFAULT_WEBHOOK_SETTINGS, WebhookStore, type WebhookEventData } from "./webhooks.js";

/**
 * Applies intents inside the writer's write transaction. Runs only on the writer thread, so a
 * read-check-write (the quota check) needs no lock: nothing else writes between them.
 * Usage of the current period is kept in memory too, so a charge costs no lmdb read.
 */
export class IntentApplier {
  private readonly usageCache = new Map<string, UsageRecord>();
  private readonly orgCache = new Map<string, OrgRecord>();
  private readonly dirty = new Set<string>();
  /** Credits of the batch being applied per [orgId, period, day], written once per batch. */
  private readonly dailyDelta = new Map<string, { key: [string, string, string]; credits: number }>();
  private lastChallengePrune = 0;

  readonly bindings: BindingIndex;
  readonly billing: BillingApplier;
  /** Check history, feedback and per-org models (feedback.ts). */
  readonly feedback: FeedbackApplier;
  /** Outbound webhooks: endpoints, and the outbox events are appended to in the commit of their change. */
  readonly webhooks: WebhookStore;

  /** Meta keys of this node's journals: each node of a cluster ships its own (docs/cluster.md). */
  private readonly chargesSeqKey: string;
  /**
   * One observation page per observation (observation-pages.ts groupObservations): in a cluster,
   * or with several front threads, whose journals' batches overlap in time.
   */
  pagePerObservation: boolean;
  private readonly observationsSeqKey: string;

  /**
   * @param nodeId set in a cluster: the applied sequence numbers are kept per node.
   */
  constructor(
    private readonly dbs: StateDbs,
    bindingRetentionMs = DEFAULT_RETENTION_MS,
    nodeId: string | null = null,
    webhookSettings: WebhookSettings = DEFAULT_WEBHOOK_SETTINGS,
    private readonly limits: OrgLimits = DEFAULT_ORG_LIMITS,
  ) {
    this.pagePerObservation = nodeId !== null;
    this.chargesSeqKey = nodeId === null ? "journal_applied_seq" : `journal_applied_seq:${nodeId}`;
    this.observationsSeqKey = nodeId === null ? "observations_applied_seq" : `observations_applied_seq:${nodeId}`;
    this.bindings = new BindingIndex(dbs, bindingRetentionMs);
    this.billing = new BillingApplier(dbs, (org) => this.changeOrg(org, Date.now()), (id) => this.org(id));
    this.feedback = new FeedbackApplier(dbs);
    this.webhooks = new WebhookStore(dbs, webhookSettings);
  }

  /** Forget cached state (after a failed transaction the disk is the truth again). */
  reset(): void {
    this.sessionsAhead.clear();
    this.usageCache.clear();
    this.orgCache.clear();
    this.dirty.clear();
    this.dailyDelta.clear();
    this.bindings.reset();
  }

  /** Reads ahead what a batch's resolves and meter decisions look up (BindingIndex.prefetch), and their beacon sessions. */
  prefetch(intents: ReadonlyArray<{ op: string }>): void {
    const resolves: ResolveRequest[] = [];
    const meters: MeterRequest[] = [];
    const sessionIds: string[] = [];
    for (const i of intents) {
      if (i.op === "sessions.resolve") {
        const r = i as IntentOf<"sessions.resolve">;
        resolves.push(r.request);
        if (r.sessionId !== undefined) sessionIds.push(r.sessionId);
      } else if (i.op === "meter.consume") meters.push((i as IntentOf<"meter.consume">).request);
    }
    if (resolves.length > 0 || meters.length > 0) this.bindings.prefetch(resolves, meters);
    if (sessionIds.length > 0) this.prefetchSessions(sessionIds);
  }

  /** Beacon sessions read ahead for this batch (prefetch): session id -> its project, the project's org, and the record. */
  private readonly sessionsAhead = new Map<string, { projectId: string | undefined; orgId: string | undefined; session: SessionRecord | undefined }>();

  /** One statement per table for the batch's sessions, their projects and those projects' records (not one round trip per resolve). */
  private prefetchSessions(ids: string[]): void {
    const { sessionProjects, sessions, projects } = this.dbs;
    if (!sessionProjects.readMany || !sessions.readMany || !projects.readMany) return; // LMDB: a get costs no round trip
    const projectIds = sessionProjects.readMany(ids);
    const known = ids.map((id, i) => [projectIds[i], id] as [string | undefined, string]).filter((k): k is [string, string] => k[0] !== undefined);
    const records = sessions.readMany(known);
    // A test key's session names its project's test scope: owned by the org's test scope (records.ts scopedId).
    const distinct = [...new Set(known.map((k) => splitScopedId(k[0]).id))];
    const owners = new Map(projects.readMany(distinct).map((p, i) => [distinct[i]!, p?.org_id]));
    ids.forEach((id, i) => this.sessionsAhead.set(id, { projectId: projectIds[i], orgId: undefined, session: undefined }));
    known.forEach((k, i) => this.sessionsAhead.set(k[1], { projectId: k[0], orgId: ownerScope(owners, k[0]), session: records[i] }));
  }

  /**
   * The beacon session a resolve names by its `_fs` id, when it is one of the org's (the state
   * this batch reads: hits answered before the resolve are stored ahead of it); undefined otherwise.
   * `orgId` is scoped for a test key's resolve, and a test key's session is owned by that scope only.
   */
  private beaconSession(orgId: string, sessionId: string): SessionRecord | undefined {
    const ahead = this.sessionsAhead.get(sessionId);
    if (ahead) return ahead.orgId === orgId ? ahead.session : undefined;
    const projectId = this.dbs.sessionProjects.get(sessionId);
    if (projectId === undefined) return undefined;
    const scope = splitScopedId(projectId);
    const owner = this.dbs.projects.get(scope.id)?.org_id;
    if (owner === undefined || scopedId(owner, scope.test) !== orgId) return undefined;
    return this.dbs.sessions.get([projectId, sessionId]);
  }

  /**
   * Applies one intent; must be called inside a write transaction. Each operation has its
   * handler (IntentApplier.handlers), typed by the protocol's StoreOps.
   */
  apply<K extends Op>(intent: IntentOf<K>): AckOf<K> {
    // TypeScript cannot tie handlers[intent.op] to K; the map's type does (Handlers).
    const handle = this.handlers[intent.op] as unknown as (i: IntentOf<K>) => AckOf<K>;
    const answer = intent.answer;
    if (answer === undefined) return handle(intent);
    // The answer to the request's Idempotency-Key commits with the effect, or neither does: a
    // retry after a crash finds the answer whenever the effect happened.
    const stored = this.dbs.idempotency.get([answer.scope, answer.key]);
    if (stored && stored.created_ms > answer.created_ms - IDEMPOTENCY_TTL_MS) return answered(answer.key);
    const ack = handle(intent);
    if (ack.ok) this.dbs.idempotency.putSync([answer.scope, answer.key], answer);
    return ack;
  }

  private readonly handlers: Handlers = {
    ping: () => OK,
    shutdown: () => OK,
    "charges.apply": (i) => {
      const j = i.journal ?? "";
      if (i.afterSeq !== undefined && i.afterSeq > this.appliedSeq(j)) return conflict(`charges after ${i.afterSeq} do not continue the ledger (at ${this.appliedSeq(j)}): an earlier batch comes first`);
      this.applyCharges(i.records, i.upToSeq, Date.now(), j);
      return OK;
    },
    "usage.get": (i) => {
      const org = this.org(i.orgId);
      if (!org) return notFound("org", i.orgId);
      const period = usagePeriod(org, i.nowMs).id;
      return { ok: true, org, usage: this.standing(org, i.nowMs, this.usage(org.id, period)), overage: this.billing.overageState(org.id, period) };
    },
    "usage.daily": (i) => {
      const org = this.org(i.orgId);
      if (!org) return notFound("org", i.orgId);
      const period = usagePeriod(org, i.nowMs);
      return { ok: true, period: { label: period.label, start: period.start, end: period.end }, days: this.dailyUsage(org.id, period) };
    },
    "org.create": (i) => {
      if (this.org(i.org.id)) return conflict("org id already exists");
      this.putOrg(i.org);
      return { ok: true, org: i.org };
    },
    "org.update": (i) => {
      const org = this.org(i.orgId);
      if (!org) return notFound("org", i.orgId);
      const next: OrgRecord = { ...org, ...definedOnly(i.patch) };
      this.changeOrg(next, Date.now());
      return { ok: true, org: next };
    },
    "project.create": (i) => {
      const orgId = i.project.org_id;
      if (!this.org(orgId)) return notFound("org", orgId);
      // Counted in this transaction, after the creates before it: of two at the cap less one, one passes.
      const cap = this.limits.projects;
      if (this.countOf(this.dbs.orgProjects, orgId, cap) >= cap) {
        return limit(`The org has ${cap} projects, the most this installation allows (FS_MAX_PROJECTS_PER_ORG); nothing was created. The operator can raise FS_MAX_PROJECTS_PER_ORG.`);
      }
      if (this.dbs.projects.get(i.project.id)) return conflict("project id already exists");
      this.putProject(i.project);
      return { ok: true, project: i.project };
    },
    "project.update": (i) => {
      const project = this.dbs.projects.get(i.projectId);
      if (!project || project.org_id !== i.orgId) return notFound("project", i.projectId);
      const next = { ...project, ...definedOnly(i.patch) };
      this.dbs.projects.putSync(project.id, next);
      return { ok: true, project: next };
    },
    "observations.apply": (i) => {
      const j = i.journal ?? "";
      if (i.afterSeq !== undefined && i.afterSeq > this.appliedObservationSeq(j)) return conflict(`observations after ${i.afterSeq} do not continue the store (at ${this.appliedObservationSeq(j)}): an earlier batch comes first`);
      this.applyObservationBatch(i.pages, i.sessions, i.upToSeq, j, i.budgets);
      return OK;
    },
    "secret.ensure": (i) => {
      const stored = this.dbs.meta.get(i.name);
      if (typeof stored === "string") return { ok: true, value: stored };
      this.dbs.meta.putSync(i.name, i.value);
      return { ok: true, value: i.value };
    },
    "demo.get": () => ({ ok: true, demo: (this.dbs.meta.get("demo") as DemoInfo | undefined) ?? null }),
    "sessions.resolve": (i) => ({ ok: true, ...this.bindings.resolve(i.request), session: i.sessionId === undefined ? undefined : this.beaconSession(i.request.orgId, i.sessionId) }),
    "meter.consume": (i) => ({ ok: true, ...this.bindings.meter(i.request) }),
    "billing.customer": (i) => {
      const org = this.billing.setCustomer(i.orgId, i.customerId);
      return org ? { ok: true, org } : notFound("org", i.orgId);
    },
    "billing.event": (i) => ({ ok: true, ...this.billing.apply(i.event, i.nowMs) }),
    "overage.claim": (i) => ({ ok: true, claims: this.billing.claimOverage(i.nowMs) }),
    "overage.reported": (i) => {
      this.billing.overageReported(i.orgId, i.period, i.identifier);
      return OK;
    },
    "challenge.spend": (i) => ({ ok: true, created: this.spendChallenge(i.id, i.expiresAt, Date.now()) }),
    "key.create": (i) => {
      const { key } = i;
      if (!this.org(key.org_id)) return notFound("org", key.org_id);
      if (key.project_id !== null) {
        const project = this.dbs.projects.get(key.project_id);
        if (!project || project.org_id !== key.org_id) return notFound("project", key.project_id);
      }
      if (this.dbs.keys.get(key.id)) return conflict("key id already exists");
      const cap = this.limits.keys;
      if (this.countOf(this.dbs.orgKeys, key.org_id, cap) >= cap) return limit(keysLimitMessage(cap));
      this.putNewKey(key);
      this.webhooks.emit(key.org_id, "key.created", keyEvent(key), Date.parse(key.created_at) || Date.now());
      return { ok: true, key };
    },
    "key.disable": (i) => {
      const ack = this.changeKey(i.keyId, (key) => (key.disabled_at === null ? { ...key, disabled_at: i.nowMs } : key));
      if (ack.ok && ack.key.disabled_at === i.nowMs) this.webhooks.emit(ack.key.org_id, "key.disabled", keyEvent(ack.key), i.nowMs);
      return ack;
    },
    "key.enable": (i) => this.changeKey(i.keyId, (key) => (key.disabled_at === null ? key : { ...key, disabled_at: null })),
    "key.rename": (i) =>
      this.changeKey(i.keyId, (key) => {
        const { name: _old, ...rest } = key;
        return i.name === null ? rest : { ...rest, name: i.name };
      }),
    "key.delete": (i) => {
      const key = this.dbs.keys.get(i.keyId);
      if (!key) return notFound("key", i.keyId);
      if (key.deleted_at !== undefined) return { ok: true, key };
      const next = { ...key, deleted_at: i.nowMs };
      this.dbs.keys.putSync(key.id, next);
      this.dbs.orgKeys.removeSync([key.org_id, key.id]); // a tombstone is listed nowhere and holds no place
      return { ok: true, key: next };
    },
    "key.roll": (i) => {
      const old = this.dbs.keys.get(i.keyId);
      if (!old || old.deleted_at !== undefined) return notFound("key", i.keyId);
      if (old.disabled_at !== null) return conflict("a disabled key cannot be rolled: enable it first, or create a new key");
      if (old.expires_at !== null && old.expires_at <= i.nowMs) return conflict("an expired key cannot be rolled: create a new key");
      if (this.dbs.keys.get(i.key.id)) return conflict("key id already exists");
      // The key rolled away counts as replaced: a roll at the cap passes, and leaves the org one
      // over it until a key is deleted (so repeated rolls cannot grow the org's keys).
      const cap = this.limits.keys;
      if (this.countOf(this.dbs.orgKeys, old.org_id, cap + 1) - 1 >= cap) return limit(keysLimitMessage(cap));
      const ending = { ...old, expires_at: old.expires_at === null ? i.oldExpiresAt : Math.min(old.expires_at, i.oldExpiresAt) };
      this.putNewKey(i.key);
      this.dbs.keys.putSync(old.id, ending);
      return { ok: true, key: i.key, old: ending };
    },
    "key.used": (i) => {
      const key = this.dbs.keys.get(i.keyId);
      if (key && key.deleted_at === undefined && (key.last_used_at ?? 0) < i.atMs) this.dbs.keys.putSync(key.id, { ...key, last_used_at: i.atMs });
      return OK;
    },
    init: (i) => this.init(i),
    "feedback.apply": (i) => this.feedback.feedback(i),
    "model.reset": (i) => (this.org(splitScopedId(i.orgId).id) ? this.feedback.resetModel(i) : notFound("org", i.orgId)),
    "history.set": (i) => (this.org(i.orgId) ? this.feedback.setHistory(i) : notFound("org", i.orgId)),
    "webhook.create": (i) => (this.org(i.endpoint.org_id) ? this.webhooks.create(i.endpoint) : notFound("org", i.endpoint.org_id)),
    "webhook.list": (i) => (this.org(i.orgId) ? { ok: true, endpoints: this.webhooks.list(i.orgId) } : notFound("org", i.orgId)),
    "webhook.get": (i) => {
      const endpoint = this.webhooks.get(i.orgId, i.id);
      return endpoint ? { ok: true, endpoint } : notFound("webhook endpoint", i.id);
    },
    "webhook.update": (i) => this.webhooks.update(i.orgId, i.id, i.patch, i.nowMs),
    "webhook.delete": (i) => this.webhooks.delete(i.orgId, i.id),
    "webhook.roll": (i) => this.webhooks.roll(i.orgId, i.id, i.secret, i.oldExpiresAt, i.nowMs),
    "webhook.deliveries": (i) => this.webhooks.deliveries(i.orgId, i.id),
    "webhook.blocked": (i) => ({ ok: true, written: this.webhooks.blocked(i) }),
  };

  /** Stores a new project with its entry in its org's index (state-env.ts orgProjects). */
  private putProject(project: ProjectRecord): void {
    this.dbs.projects.putSync(project.id, project);
    this.dbs.orgProjects.putSync([project.org_id, project.id], 1);
  }

  /** Stores a new key with its entry in its org's index (state-env.ts orgKeys); key.delete removes the entry. */
  private putNewKey(key: KeyRecord): void {
    this.dbs.keys.putSync(key.id, key);
    this.dbs.orgKeys.putSync([key.org_id, key.id], 1);
  }

  /** Entries of an org's index, counted up to `atMost` (one range read of that org's entries only). */
  private countOf(index: StateDbs["orgProjects"], orgId: string, atMost: number): number {
    let n = 0;
    for (const _ of index.getKeys({ start: [orgId], end: [orgId, END], limit: atMost })) n++;
    return n;
  }

  /**
   * Fills the org indexes (orgProjects, orgKeys) from the projects and keys of a store written
   * before them, once: the marker `org_indexes` in meta says it was done (a new store gets it at
   * its first start, with nothing to fill). Call inside a write transaction. Returns the entries written.
   */
  backfillOrgIndexes(): number {
    if (this.dbs.meta.get(ORG_INDEXES_MARKER) !== undefined) return 0;
    let n = 0;
    for (const { value: p } of this.dbs.projects.getRange()) {
      if (typeof p?.org_id !== "string") continue;
      this.dbs.orgProjects.putSync([p.org_id, p.id], 1);
      n++;
    }
    for (const { value: k } of this.dbs.keys.getRange()) {
      if (typeof k?.org_id !== "string" || k.deleted_at !== undefined) continue;
      this.dbs.orgKeys.putSync([k.org_id, k.id], 1);
      n++;
    }
    this.dbs.meta.putSync(ORG_INDEXES_MARKER, Date.now());
    return n;
  }

  /** Applies `change` to a key that exists and is not deleted (NOT_FOUND otherwise) and stores the result. */
  private changeKey(keyId: string, change: (key: KeyRecord) => KeyRecord): { ok: true; key: KeyRecord } | AckFailure {
    const key = this.dbs.keys.get(keyId);
    if (!key || key.deleted_at !== undefined) return notFound("key", keyId);
    const next = change(key);
    if (next !== key) this.dbs.keys.putSync(key.id, next);
    return { ok: true, key: next };
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

  private idemCursor: [string, string] | null = null;

  /**
   * Deletes stored Idempotency-Key answers older than IDEMPOTENCY_TTL_MS, examining at most
   * `limit` entries per call from where the last call stopped. Returns how many were deleted.
   */
  pruneIdempotency(nowMs: number, limit = 5000): number {
    const cutoff = nowMs - IDEMPOTENCY_TTL_MS;
    let examined = 0;
    let removed = 0;
    let stopped: [string, string] | null = null;
    for (const { key, value } of this.dbs.idempotency.getRange({ start: this.idemCursor ?? undefined })) {
      if (examined++ >= limit) {
        stopped = key;
        break;
      }
      if (value.created_ms >= cutoff) continue;
      this.dbs.idempotency.removeSync(key);
      removed++;
    }
    this.idemCursor = stopped;
    return removed;
  }

  /** The meta key of journal `journal`'s applied sequence number, for its charges or its observations. */
  cursorKey(kind: "charges" | "observations", journal = ""): string {
    return seqKey(kind === "charges" ? this.chargesSeqKey : this.observationsSeqKey, journal);
  }

  /** Highest sequence number of charge journal `journal` ("" the first front thread's) whose charge is in the ledger. */
  appliedSeq(journal = ""): number {
    const v = this.dbs.meta.get(seqKey(this.chargesSeqKey, journal));
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
  applyCharges(records: ChargeRecord[], upToSeq?: number, nowMs = Date.now(), journal = ""): void {
    let applied = this.appliedSeq(journal);
    const start = applied;
    const day = utcDay(nowMs);
    if (upToSeq !== undefined) {
      if (upToSeq <= applied) return;
      for (const r of records) this.addUsage(r, day);
      applied = upToSeq;
    } else {
      for (const r of records) {
        if (r.seq <= applied) continue;
        applied = r.seq;
        this.addUsage(r, day);
      }
    }
    // One put per touched org and period, not per charge.
    for (const k of this.dirty) this.dbs.usage.putSync(k, this.usageCache.get(k)!);
    this.dirty.clear();
    for (const { key, credits } of this.dailyDelta.values()) {
      const prev = this.dbs.usageDaily.get(key) ?? 0;
      this.dbs.usageDaily.putSync(key, Math.max(0, prev + credits));
    }
    this.dailyDelta.clear();
    if (applied !== start) this.dbs.meta.putSync(seqKey(this.chargesSeqKey, journal), applied);
  }

  /** Highest observation-journal sequence number stored. */
  appliedObservationSeq(journal = ""): number {
    const v = this.dbs.meta.get(seqKey(this.observationsSeqKey, journal));
    return typeof v === "number" ? v : 0;
  }

  /**
   * Stores a batch of journaled observations (pages) and merges its session deltas. A batch
   * whose `upToSeq` is at or below the applied sequence number was stored already: skipped whole.
   */
  applyObservationBatch(pages: ObservationPage[], sessions: SessionDelta[], upToSeq: number, journal = "", budgets: readonly BudgetDelta[] = []): void {
    if (upToSeq <= this.appliedObservationSeq(journal)) return;
    // The day's budget counts: one put per org and project of the batch, not one per hit.
    for (const b of budgets) {
      const key: [string, number] = [b.key, b.day];
      const prev = this.dbs.observationBudgets.get(key);
      const next = { recorded: (prev?.recorded ?? 0) + b.recorded, dropped: (prev?.dropped ?? 0) + b.dropped };
      this.dbs.observationBudgets.putSync(key, next);
      // A project dropping observations: observations.dropped, once per project and day (a marker).
      if (b.dropped > 0 && b.key.startsWith("obsp:")) this.webhooks.dropped(b.org, b.key.slice(5), b.day, next, Date.now());
    }
    for (const p of pages) this.dbs.observations.putSync([p.project_id, p.first_seq], p.text);
    for (const d of sessions) {
      const key: [string, string] = [d.project_id, d.session_id];
      const prev = this.dbs.sessions.get(key);
      this.dbs.sessions.putSync(key, mergeSession(prev, d));
      if (!prev) this.dbs.sessionProjects.putSync(d.session_id, d.project_id);
    }
    this.dbs.meta.putSync(seqKey(this.observationsSeqKey, journal), upToSeq);
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
  applyObservations(records: ObservationRecord[], lines: string[], journal = ""): void {
    const applied = this.appliedObservationSeq(journal);
    const keep = records.map((r, i) => i).filter((i) => records[i]!.seq > applied);
    if (keep.length === 0) return;
    const { pages, sessions, budgets } = groupObservations(keep.map((i) => records[i]!), keep.map((i) => lines[i]!), this.pagePerObservation);
    this.applyObservationBatch(pages, sessions, records[keep[keep.length - 1]!]!.seq, journal, budgets);
  }

  /**
   * The org's credits per UTC day of `period`, from the per-day counts applyCharges keeps. The
   * day is the writer's clock when it applied the charge (at most FS_LEDGER_FLUSH_MS after it was
   * answered; journal replay at a start applies older charges then), so a day outside the period
   * counts on the period's first or last day.
   */
  private dailyUsage(orgId: string, period: { id: string; start: number; end: number }): UsageDay[] {
    const first = utcDay(period.start);
    const last = utcDay(period.end - 1);
    const byDay = new Map<string, number>();
    for (const { key, value } of this.dbs.usageDaily.getRange({ start: [orgId, period.id], end: [orgId, period.id, "\uffff"] })) {
      const d = key[2] < first ? first : key[2] > last ? last : key[2];
      byDay.set(d, (byDay.get(d) ?? 0) + value);
    }
    return [...byDay].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([d, credits]) => ({ day: d, credits }));
  }

  private addUsage(r: ChargeRecord, day: string): void {
    if (r.idem) this.dbs.idempotency.putSync([r.idem.scope, r.idem.key], r.idem);
    if (r.history) this.feedback.keepCheck(r.history);
    if (r.credits === 0) return; // an idempotent answer that charged nothing
    const dk = `${r.orgId}\t${r.period}\t${day}`;
    const delta = this.dailyDelta.get(dk);
    if (delta) delta.credits += r.credits;
    else this.dailyDelta.set(dk, { key: [r.orgId, r.period, day], credits: r.credits });
    const org = this.org(r.orgId);
    const usage = this.usage(r.orgId, r.period);
    const rule = org ? PLAN_RULES[org.plan] : PLAN_RULES.free;
    const quota = rule.monthlyQuota;
    const used = Math.max(0, usage.used + r.credits); // negative records are adjustments; never below zero
    // Two compares on numbers at hand: the quota events cost nothing until a threshold is crossed.
    if (quota !== null && used > usage.used) this.quotaCrossed(r.orgId, r.period, usage.used, used, quota, Date.now());
    this.usageCache.set(`${r.orgId}:${r.period}`, { used, overage: overageFor(used, quota, rule.hardStop) });
    this.dirty.add(`${r.orgId}:${r.period}`);
  }

  private init(intent: IntentOf<"init">): AckOf<"init"> {
    const stored = this.dbs.meta.get("admin_token_hash");
    if (typeof stored === "string") {
      if (intent.adminTokenFromEnv && stored !== intent.adminTokenHash) this.dbs.meta.putSync("admin_token_hash", intent.adminTokenHash);
      return { ok: true, created: false, adminTokenHash: intent.adminTokenFromEnv ? intent.adminTokenHash : stored };
    }
    this.dbs.meta.putSync("admin_token_hash", intent.adminTokenHash);
    this.dbs.meta.putSync("initialized_at", new Date().toISOString());
    this.putOrg(intent.org);
    this.putProject(intent.project);
    for (const key of intent.keys) this.putNewKey(key);
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

  /**
   * Stores a changed org and appends the webhook events its change makes (plan.changed,
   * subscription.changed) to the outbox in the same transaction.
   */
  private changeOrg(org: OrgRecord, nowMs: number): void {
    const before = this.org(org.id);
    this.putOrg(org);
    if (!before) return;
    if (before.plan !== org.plan) this.webhooks.emit(org.id, "plan.changed", { org_id: org.id, plan: org.plan, previous_plan: before.plan, livemode: true }, nowMs);
    const subscription = (o: OrgRecord) => [o.subscription_status ?? null, o.stripe_subscription_id ?? null, o.cancel_at_period_end ?? false];
    if (JSON.stringify(subscription(before)) !== JSON.stringify(subscription(org))) {
      this.webhooks.emit(org.id, "subscription.changed", { org_id: org.id, plan: org.plan, subscription_id: org.stripe_subscription_id ?? null, status: org.subscription_status ?? null, previous_status: before.subscription_status ?? null, cancel_at_period_end: org.cancel_at_period_end ?? false, livemode: true }, nowMs);
    }
  }

  /**
   * Quota events: the org's usage in `period` went from `before` to `after` credits; each of 80%
   * and 100% of the quota is announced once per period (a marker in meta, read only at a crossing).
   */
  private quotaCrossed(orgId: string, period: string, before: number, after: number, quota: number, nowMs: number): void {
    for (const percent of [80, 100] as const) {
      const at = Math.ceil((quota * percent) / 100);
      if (before >= at || after < at) continue;
      const marker = `webhook_quota:${orgId}:${period}:${percent}`;
      if (this.dbs.meta.get(marker) !== undefined) continue;
      this.dbs.meta.putSync(marker, nowMs);
      this.webhooks.emit(orgId, percent === 80 ? "quota.80_percent" : "quota.100_percent", { org_id: orgId, period, used: after, quota, percent, livemode: true }, nowMs);
    }
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

/** Projects and keys per org when the writer is given no settings (the defaults of FS_MAX_PROJECTS_PER_ORG, FS_MAX_KEYS_PER_ORG). */
export const DEFAULT_ORG_LIMITS: OrgLimits = { projects: 1_000, keys: 1_000 };

/** The meta key saying the org indexes hold every project and key (backfillOrgIndexes). */
const ORG_INDEXES_MARKER = "org_indexes";

/** Above every id: the end of an org's range in an index keyed [org_id, id]. */
const END = "\uffff";

function keysLimitMessage(cap: number): string {
  return `The org has ${cap} keys, the most this installation allows (FS_MAX_KEYS_PER_ORG; disabled and expired keys count until deleted); nothing was created. Delete a key first, or the operator can raise FS_MAX_KEYS_PER_ORG.`;
}

/** How often a spend also prunes expired spent-challenge records, the limit per prune, and the grace after expiry. */
const CHALLENGE_PRUNE_EVERY_MS = 60_000;
const CHALLENGE_PRUNE_MAX = 1_000;
const CHALLENGE_PRUNE_GRACE_MS = 5 * 60_000;

/** The `data` of a key event: what the admin API shows of a key, never its hash. */
function keyEvent(key: KeyRecord): WebhookEventData {
  return { key_id: key.id, org_id: key.org_id, project_id: key.project_id, type: key.type, name: key.name ?? null, disabled: key.disabled_at !== null, livemode: key.mode !== "test" };
}

/** Credits used beyond the included quota of a plan that bills overage (pro, business); 0 otherwise. */
export function overageFor(used: number, quota: number | null, hardStop: boolean): number {
  return quota === null || hardStop ? 0 : Math.max(0, used - quota);
}

/** The meta key of a journal's applied sequence number: the first front thread's is the base key. */
function seqKey(base: string, journal: string): string {
  return journal === "" ? base : `${base}/${journal}`;
}

/** YYYY-MM-DD of an epoch ms, in UTC. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** One handler per operation, each returning that operation's acknowledgement. */
type Handlers = { [K in Op]: (intent: IntentOf<K>) => AckOf<K> };

/** The acknowledgement of an operation that answers nothing but success. */
const OK = { ok: true } as const;

function notFound(what: string, id: string): AckFailure {
  return { ok: false, error: "NOT_FOUND", message: `No ${what} with id ${id}.` };
}

function answered(key: string): AckFailure {
  return { ok: false, error: "ANSWERED", message: `Idempotency-Key '${key}' was answered meanwhile` };
}

function limit(message: string): AckFailure {
  return { ok: false, error: "LIMIT", message };
}

function conflict(message: string): AckFailure {
  return { ok: false, error: "CONFLICT", message };
}

/** The org scope owning a session stored under `projectId` (scoped for a test key's session), given the projects' orgs. */
function ownerScope(owners: Map<string, string | undefined>, projectId: string): string | undefined {
  const scope = splitScopedId(projectId);
  const owner = owners.get(scope.id);
  return owner === undefined ? undefined : scopedId(owner, scope.test);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
