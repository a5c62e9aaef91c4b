/**
 * Every message that crosses the front <-> store-writer boundary. Plain data only.
 * The writer checks PROTOCOL_VERSION from workerData at startup.
 */
import type { KeyType, Scope } from "../shared/api-keys.js";
import type { Plan, SubscriptionStatus } from "../shared/plans.js";
import type { ChargeRecord } from "./charge-journal.js";
import type { ObservationPage, SessionDelta } from "./observation-pages.js";
import type { MeterRequest, ResolveRequest } from "./bindings.js";
import type { BillingEvent } from "./billing.js";

export const PROTOCOL_VERSION = 1;

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
  bot_policy?: Record<string, unknown> | null;
  bot_policy_updated_at?: string | null;
}

/** A beacon session of one project, kept by the writer as observations arrive. */
export interface SessionRecord {
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
}

/** Usage of one org in one period, as stored by the writer. */
export interface UsageRecord {
  used: number;
  overage: number;
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

export type Intent =
  | { op: "ping" }
  /** The last intent of a clean stop: the writer flushes and marks what it must, then acks. */
  | { op: "shutdown" }
  | {
      /**
       * Apply debits already written to the charge journal (admission was decided on the front).
       * A batch at or below the last applied sequence number is skipped, so resends are harmless.
       */
      op: "charges.apply";
      /** Sums per org and period (see LedgerForwarder). */
      records: ChargeRecord[];
      /** Every journal record up to this sequence number is included. */
      upToSeq: number;
    }
  | { op: "usage.get"; orgId: string; nowMs: number }
  | { op: "org.create"; org: OrgRecord }
  | { op: "org.update"; orgId: string; patch: { plan?: Plan; name?: string } }
  | { op: "project.create"; project: ProjectRecord }
  | {
      /** Change a project's settings; `orgId` must own it. */
      op: "project.update";
      orgId: string;
      projectId: string;
      patch: { allowed_origins?: string[]; bot_policy?: Record<string, unknown> | null; bot_policy_updated_at?: string | null };
    }
  | {
      /**
       * Store beacon observations already written to the observation journal (see
       * charges.apply), as pages of journal lines plus what they change in each session (see
       * observation-pages.ts). A batch at or below the applied sequence number is skipped whole.
       */
      op: "observations.apply";
      pages: ObservationPage[];
      sessions: SessionDelta[];
      upToSeq: number;
    }
  | {
      /** Store `value` under `key` unless a value is there; answers with the stored one. */
      op: "meta.ensure";
      key: string;
      value: unknown;
    }
  | { op: "meta.get"; key: string }
  | { op: "sessions.resolve"; request: ResolveRequest }
  | { op: "billing.customer"; orgId: string; customerId: string }
  | { op: "billing.event"; event: BillingEvent; nowMs: number }
  | { op: "overage.claim"; nowMs: number }
  | { op: "overage.reported"; orgId: string; period: string; identifier: string }
  | { op: "meter.consume"; request: MeterRequest }
  | {
      /**
       * Marks a solved proof-of-work challenge as used (src/challenge). Acks `created: true` for
       * the first spend and `created: false` for a replay. `expiresAt` (epoch ms, from the signed
       * challenge) is part of the record's key, so expired records are pruned by one range scan.
       */
      op: "challenge.spend";
      id: string;
      expiresAt: number;
    }
  | { op: "key.create"; key: KeyRecord }
  | { op: "key.disable"; keyId: string; nowMs: number }
  | {
      /**
       * First start: if the store has never been initialised, write the demo org, its project and
       * keys, and the admin token hash. Otherwise change nothing and report the stored admin hash.
       */
      op: "init";
      adminTokenHash: string;
      /** The hash comes from FS_ADMIN_TOKEN: it replaces any stored one, so an older token stops working. */
      adminTokenFromEnv: boolean;
      org: OrgRecord;
      project: ProjectRecord;
      keys: KeyRecord[];
      /** The demo page's project and publishable key (publishable keys are public by design). */
      demo: DemoInfo;
    };

/** Stored at first start so GET /demo can embed the beacon with the demo project's key. */
export interface DemoInfo {
  org_id: string;
  project_id: string;
  publishable_key: string;
}

export type AckError = "NOT_FOUND" | "CONFLICT" | "STORE_FAILED";

export type Ack =
  | { ok: true; usage?: UsageStanding; org?: OrgRecord; project?: ProjectRecord; key?: KeyRecord; created?: boolean; adminTokenHash?: string; value?: unknown }
  | { ok: false; error: AckError; message: string };

/** Front -> writer: one message per event-loop turn carrying every intent of that turn. */
export interface IntentBatch {
  kind: "intents";
  items: Array<{ id: number; intent: Intent }>;
}

/** Writer -> front: one message per committed transaction, acknowledging each intent. */
export interface AckBatch {
  kind: "acks";
  items: Array<{ id: number; ack: Ack }>;
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
}

export type WriterMessage = AckBatch | WriterReady;

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
}
