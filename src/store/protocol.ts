/**
 * The store's protocol: every operation with its request and its typed acknowledgement
 * (StoreOps), and the messages that carry them across the front <-> writer-thread boundary.
 * Plain data only; the records it carries are defined in records.ts. The writer checks
 * PROTOCOL_VERSION from workerData at startup.
 */
import type { BotPolicy } from "../scoring/bot-policy.js";
import type { ContentEvidence } from "../scoring/content/evidence.js";
import type { Config } from "../config/index.js";
import type { PgSettings } from "./pg/cluster.js";
import type { Plan } from "../shared/plans.js";
import type {
  BillingEvent, BillingOutcome, ChargeRecord, CheckHistorySetting, DemoInfo, FeedbackLabel, KeyRecord, OrgLearningRecord, MeterOutcome, MeterRequest, ObservationPage, OrgRecord, OverageClaim,
  BudgetDelta, OverageState, ProjectRecord, ResolveCounts, ResolveRequest, SessionDelta, SessionRecord, StoredAnswer, UsageDay, UsageStanding, WebhookAttempt, WebhookEndpointRecord, WebhookEventType,
} from "./records.js";

export const PROTOCOL_VERSION = 2;

/** A secret the store generates once and keeps (meta key -> its use). */
export type SecretName = "beacon_secret" | "identifier_secret" | "challenge_secret";

/**
 * Every operation of the store: the request (the fields of its intent beside `op`) and what a
 * success acknowledges. `send(intent)` returns `AckOf<op>`, so callers read typed fields and never
 * cast. A failure of any operation is an `AckFailure`.
 */
export interface StoreOps {
  ping: { req: {}; ack: {} };
  /** The last intent of a clean stop: the writer flushes and marks what it must, then acks. */
  shutdown: { req: { keepLeases?: boolean }; ack: {} };
  /**
   * Apply debits already written to the charge journal (admission was decided on the front).
   * A batch at or below the last applied sequence number is skipped, so resends are harmless.
   * `records` are sums per org and period (see LedgerForwarder); every journal record up to
   * `upToSeq` is included. With `afterSeq` (the last sequence number of the previous batch), a
   * batch that does not continue what was applied is refused (CONFLICT): an earlier one failed
   * and must be applied first (front/shipper.ts). `journal` names the front thread's journal the
   * records come from ("" or absent: the first thread's; `f1`, `f2`...: journal/f1/...).
   */
  "charges.apply": { req: { records: ChargeRecord[]; upToSeq: number; afterSeq?: number; journal?: string }; ack: {} };
  /** The org's standing in the period of `nowMs`, and its overage reporting state. */
  "usage.get": { req: { orgId: string; nowMs: number }; ack: { org: OrgRecord; usage: UsageStanding; overage: OverageState } };
  /**
   * Credits charged per UTC day in the org's period of `nowMs` (days without charges left out), in
   * day order, with the period's bounds (epoch ms). A charge counts on the day the writer applied
   * it, kept within its period (IntentApplier.applyCharges).
   */
  "usage.daily": { req: { orgId: string; nowMs: number }; ack: { period: { label: string; start: number; end: number }; days: UsageDay[] } };
  "org.create": { req: { org: OrgRecord }; ack: { org: OrgRecord } };
  "org.update": { req: { orgId: string; patch: { plan?: Plan; name?: string } }; ack: { org: OrgRecord } };
  "project.create": { req: { project: ProjectRecord }; ack: { project: ProjectRecord } };
  /** Change a project's settings; `orgId` must own it. */
  "project.update": {
    req: { orgId: string; projectId: string; patch: { allowed_origins?: string[]; bot_policy?: Partial<BotPolicy> | null; bot_policy_updated_at?: string | null } };
    ack: { project: ProjectRecord };
  };
  /**
   * Store beacon observations already written to the observation journal (see charges.apply),
   * as pages of journal lines plus what they change in each session (see observation-pages.ts).
   * A batch at or below the applied sequence number is skipped whole.
   */
  "observations.apply": { req: { pages: ObservationPage[]; sessions: SessionDelta[]; budgets?: BudgetDelta[]; upToSeq: number; afterSeq?: number; journal?: string }; ack: {} };
  /** Store `value` under the secret's name unless one is there; answers with the stored one. */
  "secret.ensure": { req: { name: SecretName; value: string }; ack: { value: string } };
  /** The demo org's page settings stored at first start (null when the store has none). */
  "demo.get": { req: {}; ack: { demo: DemoInfo | null } };
  /** `sessionId`: the caller's beacon session id (not hashed); the ack carries that session when it is the org's. */
  "sessions.resolve": { req: { request: ResolveRequest; sessionId?: string }; ack: ResolveCounts & { session?: SessionRecord } };
  "billing.customer": { req: { orgId: string; customerId: string }; ack: { org: OrgRecord } };
  "billing.event": { req: { event: BillingEvent; nowMs: number }; ack: BillingOutcome };
  "overage.claim": { req: { nowMs: number }; ack: { claims: OverageClaim[] } };
  "overage.reported": { req: { orgId: string; period: string; identifier: string }; ack: {} };
  "meter.consume": { req: { request: MeterRequest }; ack: MeterOutcome };
  /**
   * Marks a solved proof-of-work challenge as used (src/front/challenge): `created` is true for the
   * first spend and false for a replay. `expiresAt` (epoch ms, from the signed challenge) is part
   * of the record's key, so expired records are pruned by one range scan.
   */
  "challenge.spend": { req: { id: string; expiresAt: number }; ack: { created: boolean } };
  /**
   * Feedback on a check of the org's history (`request`) or on content sent again (`content`,
   * with its evidence and a key derived from it): stored once per target, learned by the org's
   * model (writer/feedback.ts). NOT_FOUND: no such check in the org's history; CONFLICT: the check
   * had no text. `model` is the org model as stored now (its binary record), null when unchanged.
   */
  "feedback.apply": {
    req: { orgId: string; label: FeedbackLabel; target: { kind: "request"; requestId: string } | { kind: "content"; key: string; evidence: ContentEvidence }; nowMs: number };
    ack: { outcome: "recorded" | "relabelled" | "repeated"; learning: OrgLearningRecord; model: Uint8Array | null };
  };
  /**
   * Resets the org's own model (live, or a test scope's id): its model is deleted and its feedback
   * figures start again from 0, so its checks are scored by the global model alone, as a fresh
   * org's. Labels given before it no longer count as given (a label again is learned anew).
   */
  "model.reset": { req: { orgId: string; nowMs: number }; ack: { learning: OrgLearningRecord } };
  /** Sets what the org keeps of its checks; history past the new setting is deleted at once (bounded, the rest by the retention pass). */
  "history.set": { req: { orgId: string; setting: CheckHistorySetting; nowMs: number }; ack: { learning: OrgLearningRecord } };
  "key.create": { req: { key: KeyRecord }; ack: { key: KeyRecord } };
  "key.disable": { req: { keyId: string; nowMs: number }; ack: { key: KeyRecord } };
  /** Re-enables a disabled key (a deleted one is NOT_FOUND). */
  "key.enable": { req: { keyId: string }; ack: { key: KeyRecord } };
  /** Sets or clears a key's name. */
  "key.rename": { req: { keyId: string; name: string | null }; ack: { key: KeyRecord } };
  /** Marks a key deleted (a tombstone: refused as unknown, listed nowhere); deleting it again changes nothing. */
  "key.delete": { req: { keyId: string; nowMs: number }; ack: { key: KeyRecord } };
  /**
   * Rolls a key: stores `key` (a new secret with the old key's org, project, type, scopes, mode and
   * name) and makes the old one expire at `oldExpiresAt` unless it expires sooner. NOT_FOUND for a
   * deleted or unknown key, CONFLICT for a disabled or expired one.
   */
  "key.roll": { req: { keyId: string; key: KeyRecord; oldExpiresAt: number; nowMs: number }; ack: { key: KeyRecord; old: KeyRecord } };
  /** A call with the key at `atMs` (last_used_at only moves forward; an unknown key is ignored). */
  "key.used": { req: { keyId: string; atMs: number }; ack: {} };
  /** Outbound webhooks (writer/webhooks.ts): an org's endpoints; NOT_FOUND for another org's or a missing one. */
  "webhook.create": { req: { endpoint: WebhookEndpointRecord }; ack: { endpoint: WebhookEndpointRecord } };
  "webhook.list": { req: { orgId: string }; ack: { endpoints: WebhookEndpointRecord[] } };
  "webhook.get": { req: { orgId: string; id: string }; ack: { endpoint: WebhookEndpointRecord } };
  "webhook.update": { req: { orgId: string; id: string; patch: { url?: string; events?: WebhookEventType[]; enabled?: boolean }; nowMs: number }; ack: { endpoint: WebhookEndpointRecord } };
  "webhook.delete": { req: { orgId: string; id: string }; ack: { endpoint: WebhookEndpointRecord } };
  /**
   * A session or account of a project judged `block` (the front's verdict, after the store's
   * answer): the event, once per (project, subject) and period, for the org's subscribed
   * endpoints; nothing is written when none subscribed. `written`: outbox entries written.
   */
  "webhook.blocked": { req: WebhookBlock; ack: { written: number } };
  /** A new secret; the old one keeps signing alongside until `oldExpiresAt` (epoch ms). */
  "webhook.roll": { req: { orgId: string; id: string; secret: string; oldExpiresAt: number; nowMs: number }; ack: { endpoint: WebhookEndpointRecord } };
  /** The endpoint's delivery log, newest first. */
  "webhook.deliveries": { req: { orgId: string; id: string }; ack: { attempts: WebhookAttempt[] } };
  /**
   * First start: if the store has never been initialised, write the demo org, its project and
   * keys, the demo page's settings and the admin token hash. Otherwise change nothing and report
   * the stored admin hash. `adminTokenFromEnv`: the hash comes from FS_ADMIN_TOKEN and replaces
   * any stored one, so an older token stops working.
   */
  init: {
    req: { adminTokenHash: string; adminTokenFromEnv: boolean; org: OrgRecord; project: ProjectRecord; keys: KeyRecord[]; demo: DemoInfo };
    ack: { created: boolean; adminTokenHash: string };
  };
}

/** The name of an operation. */
export type Op = keyof StoreOps;

/**
 * The intent of one operation: its name and request fields, and, for the request of a client
 * that sent an Idempotency-Key (admin POSTs), the answer to store for that key: the writer stores
 * it in the same transaction as the operation's effect, only if the operation succeeds, and
 * refuses the operation (ANSWERED) when the key already has an answer.
 */
export type IntentOf<K extends Op> = { op: K; answer?: StoredAnswer } & StoreOps[K]["req"];

/** Any intent, as it crosses the boundary. */
export type Intent = { [K in Op]: IntentOf<K> }[Op];

/**
 * ANSWERED: the intent's Idempotency-Key has a stored answer already (another thread or node was first).
 * LIMIT: the org holds as many of the records as its cap allows (OrgLimits, FS_WEBHOOK_ENDPOINTS_MAX).
 */
export type AckError = "NOT_FOUND" | "CONFLICT" | "STORE_FAILED" | "ANSWERED" | "LIMIT";

/** A refused operation: nothing of it was written. */
export interface AckFailure {
  ok: false;
  error: AckError;
  message: string;
}

/** The acknowledgement of one operation: its typed success, or a failure. */
export type AckOf<K extends Op> = ({ ok: true } & StoreOps[K]["ack"]) | AckFailure;

/** Any acknowledgement, as it crosses the boundary. */
export type Ack = { [K in Op]: AckOf<K> }[Op];

/** Front -> writer: one message per event-loop turn carrying every intent of that turn. */
export interface IntentBatch {
  kind: "intents";
  items: Array<{ id: number; intent: Intent }>;
}

/** Writer -> front: one message per committed transaction, acknowledging each intent. */
export interface AckBatch {
  kind: "acks";
  items: Array<{ id: number; ack: Ack }>;
  /** The commit that applied these intents: how many it held and how long it took (GET /metrics). */
  commit: { intents: number; ms: number };
}

/** Writer -> front, once: the environment is open and every named database exists. */
export interface WriterReady {
  kind: "ready";
  protocolVersion: number;
  /** Highest charge-journal sequence number applied (after replaying the journal). */
  journalSeq: number;
  /** Records replayed from the journal at this start (0 after a clean stop). */
  replayed: number;
  /** Highest observation-journal sequence number anywhere (journal or store). */
  observationSeq: number;
  /** Observations replayed from their journal at this start. */
  observationsReplayed: number;
  /** The meter windows were discarded: an OS restart followed an unclean stop (meters-env.ts). */
  metersDiscarded: boolean;
  /** Meter windows moved from the state environment into their own at this start (upgrade). */
  metersMigrated: number;
  /** Windows of merged accounts folded into their cluster's at this start (after a kill between commits). */
  budgetsRepaired: number;
  /** Every front thread's journals ("" the first's, `f1`...): the sequence numbers to continue after. */
  journals: Record<string, { journalSeq: number; observationSeq: number }>;
  /** On PostgreSQL: this node's index in the cluster (pg/cluster.ts) and the migrations applied at this start. */
  cluster: { nodeIndex: number; migrated: number[] } | null;
}

export type WriterMessage = AckBatch | WriterReady;

/** Main -> writer: the port of another front thread, whose intents the writer takes from now on. */
export interface WriterPort {
  kind: "port";
  port: import("node:worker_threads").MessagePort;
}

/** Settings handed to the writer thread through workerData. */
export interface WriterData {
  protocolVersion: number;
  stateDir: string;
  journalDir: string;
  /** How long session-resolution bindings count (FS_BINDING_RETENTION_DAYS). */
  bindingRetentionMs?: number;
  /** How long observations and beacon sessions are kept (FS_OBSERVATION_RETENTION_DAYS). */
  observationRetentionMs?: number;
  /** FS_LOG_LEVEL: the writer logs every write it refuses, with the reason. */
  logLevel?: "error" | "warn" | "info" | "debug";
  /** How the writer's log lines print (the main thread's resolved FS_LOG_FORMAT). */
  logFormat?: "json" | "pretty";
  /** FS_FRONT_THREADS: the writer replays and keeps one journal per front thread. */
  frontThreads?: number;
  /** FS_STORE=postgres: the shared store; absent for the embedded LMDB store. */
  postgres?: PgSettings;
  /** Outbound webhooks' bounds and timings (FS_WEBHOOK_*); absent: the defaults. */
  webhooks?: WebhookSettings;
  /** Projects and keys per org (FS_MAX_PROJECTS_PER_ORG, FS_MAX_KEYS_PER_ORG); absent: the defaults. */
  orgLimits?: OrgLimits;
}

/**
 * What one org may hold, checked by the writer in the transaction that creates the record (so two
 * creates at the cap less one give exactly one success, on either store).
 */
export interface OrgLimits {
  /** Projects per org. */
  projects: number;
  /** Keys per org that are not deleted (secret and publishable, live and test, disabled and expired included). */
  keys: number;
}

/** The writer's per-org caps from the settings. */
export function orgLimitsOf(config: Config): OrgLimits {
  return { projects: config.FS_MAX_PROJECTS_PER_ORG, keys: config.FS_MAX_KEYS_PER_ORG };
}

/** A session or account judged `block` by a key of `livemode` (false for a test key): the request of `webhook.blocked`. */
export interface WebhookBlock {
  orgId: string;
  projectId: string | null;
  type: "session.blocked" | "account.blocked";
  subject: string;
  reasons: string[];
  /** False when a test key (fs_test_…, fs_pub_test_…) made the verdict: the event says so (`data.livemode`). */
  livemode: boolean;
  nowMs: number;
}

/** Bounds and timings of outbound webhooks (FS_WEBHOOK_* settings, docs/operations.md). */
export interface WebhookSettings {
  /** Deliveries in flight at once, over all endpoints. */
  concurrency: number;
  /** Milliseconds one attempt may take before it counts as failed. */
  timeoutMs: number;
  /** Waits before the 1st, 2nd... retry (ms); the last one repeats. */
  backoffMs: number[];
  /** An entry not delivered this long after its event is marked failed and dropped (ms). */
  retryForMs: number;
  /** Entries waiting per org, over its endpoints; past it new events are dropped (logged). */
  outboxMax: number;
  /** Attempts kept in each endpoint's delivery log. */
  logMax: number;
  /** Endpoints per org. */
  endpointsMax: number;
  /** How often the deliverer looks for due entries another node (or a retry) left (ms). */
  pollMs: number;
  /** Deliver to non-public addresses too (FS_WEBHOOK_ALLOW_PRIVATE); otherwise such an attempt fails. */
  allowPrivate: boolean;
}

/** The writer's webhook bounds and timings from the FS_WEBHOOK_* settings. */
export function webhookSettingsOf(config: Config): WebhookSettings {
  return {
    concurrency: config.FS_WEBHOOK_CONCURRENCY,
    timeoutMs: config.FS_WEBHOOK_TIMEOUT_MS,
    backoffMs: [...config.FS_WEBHOOK_BACKOFF_MS],
    retryForMs: config.FS_WEBHOOK_RETRY_HOURS * 3_600_000,
    outboxMax: config.FS_WEBHOOK_OUTBOX_MAX,
    logMax: config.FS_WEBHOOK_LOG_MAX,
    endpointsMax: config.FS_WEBHOOK_ENDPOINTS_MAX,
    pollMs: config.FS_WEBHOOK_POLL_MS,
    allowPrivate: config.FS_WEBHOOK_ALLOW_PRIVATE,
  };
}
