/**
 * Every message that crosses the front <-> store-writer boundary. Plain data only.
 * The writer checks PROTOCOL_VERSION from workerData at startup.
 */
import type { KeyType, Scope } from "../shared/api-keys.js";
import type { Plan, SubscriptionStatus } from "../shared/plans.js";
import type { BillingEvent, ChargeRecord, MeterRequest, ObservationPage, ResolveRequest, SessionDelta } from "./records.js";
import type { DemoInfo, KeyRecord, OrgRecord, ProjectRecord, UsageStanding } from "./records.js";

export const PROTOCOL_VERSION = 1;

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
