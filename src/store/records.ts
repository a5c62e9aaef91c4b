/**
 * The store's records: what it keeps (orgs, projects, keys, usage, sessions, observations,
 * bindings, billing state) and the requests and outcomes of its operations that carry them. The
 * one module that defines them: the protocol (protocol.ts), both store implementations and their
 * callers import them from here, never the other way round.
 */
import type { KeyType, Scope } from "../shared/api-keys.js";
import type { Plan, SubscriptionStatus } from "../shared/plans.js";
import type { BotPolicy } from "../scoring/bot-policy.js";
import type { ContentEvidence } from "../scoring/content/evidence.js";

export interface OrgRecord {
  id: string;
  name: string;
  plan: Plan;
  subscription_status: SubscriptionStatus;
  trial_end: string | null;
  created_at: string;
  /** Stripe (billing): set once the org has a customer / subscription. */
  stripe_customer_id?: string | null;
  stripe_subscription_id?: string | null;
  /** Epoch ms of the Stripe billing period usage is counted in; null outside a subscription. */
  billing_period_start?: number | null;
  billing_period_end?: number | null;
  /** Stripe `created` (epoch s) of the newest subscription event applied. */
  billing_state_at?: number | null;
  /** Stripe `created` (epoch s) of the newest invoice event applied (kept apart: see billing.ts). */
  invoice_state_at?: number | null;
  cancel_at_period_end?: boolean;
  /** When Stripe announced the trial's end (customer.subscription.trial_will_end), ISO 8601. */
  trial_will_end_notified_at?: string | null;
}

export interface ProjectRecord {
  id: string;
  org_id: string;
  name: string;
  created_at: string;
  /**
   * Origins (`scheme://host[:port]`, or `https://*.example.com`) whose pages may call the beacon
   * endpoints with this project's publishable key. Absent or empty: any origin.
   */
  allowed_origins?: string[];
  /** The bot policy document as the site owner last PUT it (merged over the defaults when used). */
  bot_policy?: Partial<BotPolicy> | null;
  bot_policy_updated_at?: string | null;
}

/**
 * Test-mode data (issue 29): what a test key records (beacon observations and sessions, session
 * bindings, feedback and the org model it trains) is stored under its project's or org's id with
 * this suffix, apart from live data, which keeps the plain ids. A store from before test mode
 * loads unchanged, and a read under one mode's id never finds the other mode's records.
 */
export const TEST_SCOPE_SUFFIX = ":test";

/** The id a project's or org's records of one mode are stored under (the id itself for live data). */
export function scopedId(id: string, test: boolean): string {
  return test ? id + TEST_SCOPE_SUFFIX : id;
}

/** The project or org id a stored id names, and whether it is the test scope's. */
export function splitScopedId(stored: string): { id: string; test: boolean } {
  return stored.endsWith(TEST_SCOPE_SUFFIX) ? { id: stored.slice(0, -TEST_SCOPE_SUFFIX.length), test: true } : { id: stored, test: false };
}

/** A beacon session of one project, kept by the writer as observations arrive. */
export interface SessionRecord {
  /** The project's id, scoped (scopedId) for a test key's session. */
  project_id: string;
  session_id: string;
  /** Epoch ms of the first and the latest observation. */
  first_seen: number;
  last_seen: number;
  observation_count: number;
  /** The latest observation, for verdicts. */
  last: { id: string; kind: string; score: number; decision: string; reasons: string[] };
}

export interface KeyRecord {
  id: string;
  org_id: string;
  project_id: string | null;
  type: KeyType;
  scopes: Scope[];
  /** SHA-256 hex of the plain key; the plain key is never stored. */
  hash: string;
  created_at: string;
  /** Epoch ms, or null for no expiry. */
  expires_at: number | null;
  /** Epoch ms when disabled, or null. */
  disabled_at: number | null;
  /** "test" for a test-mode key (fs_test_…, fs_pub_test_…); absent for a live key. */
  mode?: "test";
  /** A name to tell keys apart ("checkout backend"); absent when none was given. */
  name?: string;
  /** Epoch ms of a recent call with the key: recorded at most once a minute per front thread. */
  last_used_at?: number;
  /** Epoch ms when deleted: the key is refused as unknown and listed nowhere; the record stays as a tombstone. */
  deleted_at?: number;
  /** The id of the key this one replaced by a roll. */
  rolled_from?: string;
}

/** Usage of one org in one period, as stored by the writer. */
export interface UsageRecord {
  used: number;
  overage: number;
}

/** Credits charged to one org on one UTC day of a usage period (the dashboard's chart). */
export interface UsageDay {
  /** YYYY-MM-DD (UTC). */
  day: string;
  credits: number;
}

/** Answer to a charge or usage read: the org's standing after the intent. */
export interface UsageStanding {
  plan: Plan;
  period: string;
  /** Epoch ms at which the period ends. */
  reset: number;
  used: number;
  overage: number;
  /** null for unmetered plans. */
  quota: number | null;
}

/** Stored at first start so GET /demo can embed the beacon with the demo project's key. */
export interface DemoInfo {
  org_id: string;
  project_id: string;
  publishable_key: string;
}

/** One debit of the charge journal (charge-journal.ts), applied to the ledger by the store. */
export interface ChargeRecord {
  seq: number;
  orgId: string;
  credits: number;
  /** Usage period id: YYYYMM, or `b<start seconds>` for a Stripe billing period (billing-period.ts). */
  period: string;
  /**
   * The answer of a request sent with an Idempotency-Key, journaled in the same line as its
   * debit (credits may be 0), so the debit and the stored answer are durable together.
   */
  idem?: StoredAnswer;
  /** An operator's usage adjustment (POST /v1/admin/orgs/{id}/usage/adjust), not an admitted call. */
  adjust?: true;
  /** A check's record for its org's history, journaled with its debit so both are durable together. */
  history?: CheckHistoryRecord;
}

/**
 * The first answer to an Idempotency-Key (docs/api.md, "Idempotent requests"), replayed for a
 * retry with the same key and request within IDEMPOTENCY_TTL_MS. Keyed by [scope, key].
 */
export interface StoredAnswer {
  /** The caller's org id, or "admin" for the admin token. */
  scope: string;
  key: string;
  /** sha256 of the method, path, query and body of the first request. */
  fingerprint: string;
  status: number;
  /** The envelope as first sent. */
  body: string;
  headers: Record<string, string>;
  created_ms: number;
}

/** How long a stored answer is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** Kinds of beacon hits (a pageview is `page.view`). */
export type ObservationKind = "page.view" | "form.submit";

/**
 * One beacon hit as recorded (the scored observation plus where it came from). Stored by the writer under
 * [project_id, seq]; `seq` is the observation journal's sequence number, so it grows with time
 * across restarts and orders a project's observations.
 */
export interface ObservationRecord {
  seq: number;
  id: string;
  org_id: string;
  /** The project's id, scoped (scopedId) for a test key's hit: stored and listed apart from live ones. */
  project_id: string;
  session_id: string;
  kind: ObservationKind;
  action: string;
  /** Epoch ms when the service received the hit. */
  ts: number;
  score: number;
  decision: "allow" | "review" | "block";
  reasons: string[];
  ua: { browser: string | null; os: string | null; device: string | null; bot_kind: string | null; bot_name: string | null };
  bot_id: string | null;
  bot_operator: string | null;
  bot_verified: boolean | null;
  /** The policy rule that set the decision, if any. */
  policy: { action: "allow" | "block"; rule: string } | null;
  /** The policy rule in dry run that would have set it, if any (absent from records stored before dry runs). */
  dry_run?: { action: "allow" | "block"; rule: string } | null;
  /** Client address as seen by the service (after trusted proxies). */
  ip: string | null;
  /** ISO country of the address, when the datasets know it. */
  country: string | null;
  /** `location.pathname` of the page, as the beacon sent it. */
  page: string | null;
  /** The beacon's hashed fingerprint. */
  fingerprint: string | null;
  token_valid: boolean;
  /** Client automation tells the beacon reported. */
  tells: string[];
  /**
   * Past an observation budget (front/beacon/budget.ts): journaled for its session (count,
   * latest verdict) only, and stored in no page.
   */
  unrecorded?: true;
}

/**
 * Observations are stored in pages: all of one project's observations from one batch (the
 * front hands the writer a batch every FS_LEDGER_FLUSH_MS) as their journal lines, under
 * [project_id, first seq]. Storing a page is one LMDB put instead of one per observation, which
 * is what keeps the writer thread's CPU (on a 2-core machine, taken from the front and the load)
 * small at tens of thousands of hits per second. Readers parse only the lines they return.
 */
export interface ObservationPage {
  project_id: string;
  first_seq: number;
  /** Journal lines, each ending in a newline, in sequence order. */
  text: string;
}

/** An org's or project's observations of one UTC day (state-env.ts observationBudgets). */
export interface BudgetDay {
  recorded: number;
  dropped: number;
}

/** What a batch adds to one BudgetDay: `key` is `obs:<org>` or `obsp:<project>`, `day` the UTC day number. */
export interface BudgetDelta extends BudgetDay {
  key: string;
  day: number;
  /** The org the counts are of (the project's, for a project's key). */
  org: string;
}

/** What a batch changes in one session (merged into the stored SessionRecord by the writer). */
export type SessionDelta = Omit<SessionRecord, "session_id" | "project_id"> & { project_id: string; session_id: string };

/**
 * A Stripe event as the writer needs it: the front verifies the signature and reduces the
 * event to these plain fields (src/front/billing/events.ts), so the writer never parses Stripe objects.
 */
export interface BillingEvent {
  id: string;
  type: string;
  /** Stripe's `created`, epoch seconds: orders events for the out-of-order rule. */
  created: number;
  /** From the object's metadata or client_reference_id, when present. */
  orgId: string | null;
  customerId: string | null;
  subscription?: {
    id: string;
    /** Stripe's status: trialing, active, past_due, unpaid, incomplete, incomplete_expired, canceled, paused. */
    status: string;
    /** The plan its price ids (or metadata) name; null when unknown. */
    plan: Plan | null;
    trialEnd: number | null;
    periodStart: number | null;
    periodEnd: number | null;
    cancelAtPeriodEnd: boolean;
  };
  checkout?: { subscriptionId: string | null };
  invoice?: { subscriptionId: string | null };
}

export interface BillingOutcome {
  duplicate: boolean;
  /** Whether the event changed the org (false for stale or informational events). */
  applied: boolean;
  org: OrgRecord | null;
  note?: string;
}

/** Overage reporting state of one org and period (see OverageClaim). */
export interface OverageState {
  /** Credits of overage Stripe has acknowledged. */
  reported: number;
  /** A report sent or about to be sent: resent unchanged (same identifier) until acknowledged. */
  pending: { from: number; to: number; identifier: string } | null;
  /** Credits that could no longer be reported (the period started more than 35 days ago). */
  unbillable?: number;
}

/** One overage report to send to Stripe's meter. */
export interface OverageClaim {
  orgId: string;
  period: string;
  customerId: string;
  from: number;
  to: number;
  identifier: string;
  /**
   * Epoch ms for the meter event: Stripe bills a meter event into the period its timestamp falls
   * in, so a report for the current period is stamped now, one for an earlier period at its start.
   */
  timestamp: number;
}

/** What a resolve binds (hashed), and whether the IP is one many real users share. */
export interface ResolveRequest {
  orgId: string;
  user: string;
  session?: string;
  fingerprint?: string;
  ip?: string;
  prefix?: string;
  email?: string;
  /** Mobile carrier or CGNAT address: counted, but never used to link accounts. */
  sharedNetwork: boolean;
  nowMs: number;
}

/** What a binding joins accounts by (store/writer/bindings.ts keeps them; store/front/bindings-view.ts reads them). */
export type BindingKind = "session" | "fingerprint" | "ip" | "prefix" | "email" | "session_email";

/** Distinct other accounts per join key (and other emails on the session), after this binding. */
export interface ResolveCounts {
  accounts_sharing_session: number;
  accounts_sharing_fingerprint: number;
  accounts_sharing_ip: number;
  accounts_sharing_prefix: number;
  linked_emails: number;
  /** Accounts linked to this one (its cluster, minus itself). */
  linked_accounts: number;
  /** True when this account was bound to nothing before. */
  new_account: boolean;
}

export interface MeterRequest {
  orgId: string;
  resource: string;
  user?: string;
  session?: string;
  ip?: string;
  max: number;
  windowMs: number;
  cost: number;
  nowMs: number;
}

export interface MeterOutcome {
  allowed: boolean;
  /** Units used in the window before this request (and including it when allowed). */
  count: number;
  /** Accounts sharing this budget, minus one. */
  linked_identities: number;
  /** Which identity the budget is kept under. */
  budget: "account" | "session" | "ip";
  /** Epoch ms when enough of the window has passed for this request to fit; null when allowed. */
  retry_at: number | null;
}

/** What an org keeps of each check: nothing, the verdict and its hashed features, or the verdict and its text. */
export type CheckHistoryMode = "none" | "features" | "text";

/** An org's check history setting (GET/PUT /v1/orgs/{orgId}/check-history). */
export interface CheckHistorySetting {
  mode: CheckHistoryMode;
  /** Days a check is kept (1-365). */
  days: number;
}

/** The setting of an org that never chose one. */
export const DEFAULT_CHECK_HISTORY: Readonly<CheckHistorySetting> = Object.freeze({ mode: "features", days: 30 });

/**
 * One check (POST /v1/check or /v1/check/deep) in its org's history, stored under
 * [org_id, ts, request_id] (and [org_id, request_id] -> ts, to find it by its request id).
 */
export interface CheckHistoryRecord {
  request_id: string;
  org_id: string;
  /** Epoch ms of the check (the request's clock). */
  ts: number;
  form_id: string;
  score: number;
  decision: "allow" | "review" | "block";
  /** The content's spam probability as answered (the org model's, when it scored); null without text. */
  spam_probability: number | null;
  language: string | null;
  flags: string[];
  /** Version of the org model that scored the content; 0 for the global model alone. */
  org_model: number;
  email_domain: string | null;
  /** What the org model learns from when the check gets feedback; null without text. */
  evidence: ContentEvidence | null;
  /** The text the content model read (mode "text" only), else null. */
  text: string | null;
  /** The latest feedback on this check. */
  label?: FeedbackLabel;
}

export type FeedbackLabel = "spam" | "ham";

/** A feedback given (POST /v1/feedback), under [org_id, target]: `r:<request id>` or `c:<content key>`. Makes a repeat count once. */
export interface FeedbackRecord {
  label: FeedbackLabel;
  ts: number;
  request_id: string | null;
}

/** Feedback in one UTC day, and how often each model had agreed with it before learning it. */
export interface AgreementDay {
  /** YYYY-MM-DD. */
  day: string;
  n: number;
  /** Labels the org model (as it was then) agreed with (probability >= 0.5 for spam, below for ham). */
  org: number;
  /** Labels the global model agreed with. */
  global: number;
}

/**
 * An org's learning state apart from its model's weights (small; the front caches it): the check
 * history setting, the org model's version and the feedback figures the dashboard shows.
 * Stored under the org id; the model itself is a binary record beside it (scoring/org-model).
 */
export interface OrgLearningRecord {
  id: string;
  /** null: the default (DEFAULT_CHECK_HISTORY). */
  history: CheckHistorySetting | null;
  /** Feedback the org model has learned (0: no org model, checks use the global model). */
  model_version: number;
  /** Examples the model counts per label now, and feedback that changed an earlier label or repeated one. */
  feedback: { spam: number; ham: number; relabelled: number; repeated: number };
  /** The latest days with feedback, oldest first (at most AGREEMENT_DAYS). */
  agreement: AgreementDay[];
  updated_at: string | null;
  /** When the org model was last reset (POST /v1/orgs/{orgId}/model/reset); labels given before it no longer count. Absent: never. */
  model_reset_at?: string | null;
}

/** Days of agreement figures kept per org. */
export const AGREEMENT_DAYS = 90;

/** An org's learning record before it has one. */
export function emptyLearning(orgId: string): OrgLearningRecord {
  return { id: orgId, history: null, model_version: 0, feedback: { spam: 0, ham: 0, relabelled: 0, repeated: 0 }, agreement: [], updated_at: null };
}

/** The check history setting in force for an org (its own, or the default). */
export function historySetting(learning: OrgLearningRecord | null | undefined): CheckHistorySetting {
  return learning?.history ?? DEFAULT_CHECK_HISTORY;
}

/**
 * Events an org's webhook endpoints can subscribe to (docs/integrations.md, "Webhooks"). Quota
 * events are sent once per usage period each.
 */
export const WEBHOOK_EVENTS = ["quota.80_percent", "quota.100_percent", "plan.changed", "subscription.changed", "key.created", "key.disabled", "session.blocked", "account.blocked", "observations.dropped"] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** An org's webhook endpoint, key [org_id, id] (store/writer/webhooks.ts). */
export interface WebhookEndpointRecord {
  id: string;
  org_id: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  /** Standard Webhooks secret (`whsec_` + base64 of 24 random bytes): signs every delivery. */
  secret: string;
  /** Secrets rolled away from that still sign alongside `secret` until `expires_at` (epoch ms). */
  previous_secrets: Array<{ secret: string; expires_at: number }>;
  created_at: string;
  /** Outbox entries waiting for delivery to this endpoint (bounded per org: FS_WEBHOOK_OUTBOX_MAX). */
  pending: number;
}

/**
 * One event waiting for one endpoint in the outbox, key [endpoint_id, seq]: written in the same
 * commit as the change it reports. `payload` is the exact body sent (the same bytes on every
 * attempt); `msg_id` is its `webhook-id`, stable across retries and restarts.
 */
export interface WebhookOutboxEntry {
  msg_id: string;
  org_id: string;
  type: WebhookEventType;
  payload: string;
  created_ms: number;
  attempts: number;
  /** When the entry is due (it is the endpoint's head), or claimed until (a delivery in flight). */
  due_at: number | null;
}

/** One delivery attempt in an endpoint's log, key [endpoint_id, at, msg_id]. */
export interface WebhookAttempt {
  msg_id: string;
  type: WebhookEventType;
  at: number;
  /** The receiver's HTTP status; null when none came (refused, timed out, dropped). */
  status: number | null;
  error: string | null;
  /** delivered (2xx), retry (scheduled again), failed (gave up after FS_WEBHOOK_RETRY_HOURS), dropped (outbox full). */
  outcome: "delivered" | "retry" | "failed" | "dropped";
  duration_ms: number;
}
