import { join } from "node:path";
import { open, type Database as LmdbDatabase, type Key as LmdbKey, type RootDatabase } from "lmdb";
import type { KvStore } from "./pg/kv.js";
import { ensurePrivateDir, PRIVATE_FILE_MODE, restrictFiles } from "./private-files.js";
import type { BudgetDay, CheckHistoryRecord, FeedbackRecord, KeyRecord, OrgLearningRecord, OrgRecord, OverageState, ProjectRecord, SessionRecord, StoredAnswer, UsageRecord, WebhookAttempt, WebhookEndpointRecord, WebhookOutboxEntry } from "./records.js";

/** Named databases of the state environment. The writer creates all of them before readers open. */
export const STATE_DBS = ["orgs", "projects", "keys", "usage", "meta", "observations", "sessions", "challenges", "bindings", "binding_keys", "clusters", "session_projects", "stripe_events", "stripe_customers", "overage", "idempotency", "usage_daily", "checks", "check_ids", "feedback", "org_learning", "org_models", "webhook_endpoints", "webhook_outbox", "webhook_due", "webhook_log", "org_projects", "org_keys", "observation_budgets"] as const;

/**
 * One set of environment options for every opener in the process: lmdb reuses an environment
 * already open at the same path, so options given by a later open may silently not apply.
 */
function envOptions(stateDir: string) {
  return { path: stateDir, maxDbs: 32, mapSize: 2 * 1024 ** 3, ...CREATE_PRIVATE } as const;
}

/**
 * Mode of the files LMDB creates (its default is 0664): lmdb-js passes `permissionsMode` to
 * mdb_env_open but its typings do not list it.
 */
const CREATE_PRIVATE = { permissionsMode: PRIVATE_FILE_MODE } as const;

/** Bounds of a key range (LMDB's getRange options): start inclusive, end exclusive, or the other way round with `reverse`. */
export interface RangeOptions {
  start?: unknown;
  end?: unknown;
  reverse?: boolean;
  limit?: number;
}

/**
 * One named database of the store, as the writer and the front's reads use it: what an LMDB
 * `Database` offers and the PostgreSQL store (pg/kv.ts) implements the same way.
 */
export interface KvDatabase<V, K> {
  get(key: K): V | undefined;
  /**
   * Several keys in one read, in the order given (PostgreSQL: one statement instead of one per
   * key). Absent where a read costs no round trip (LMDB): callers then read key by key.
   */
  readMany?(keys: K[]): Array<V | undefined>;
  putSync(key: K, value: V): unknown;
  removeSync(key: K): unknown;
  getRange(options?: RangeOptions): Iterable<{ key: K; value: V }>;
  getKeys(options?: RangeOptions): Iterable<K>;
}

/** The environment holding the databases: one write transaction at a time, and read snapshots. */
export interface KvRoot {
  transactionSync<T>(action: () => T): T;
  /** Drops the current read snapshot so the next read sees the latest commit. */
  resetReadTxn(): void;
}

type Database<V, K> = KvDatabase<V, K>;

export interface StateDbs {
  root: KvRoot;
  /** The meter windows' own environment, `state/meters/` (see meters-env.ts); `meters` lives here. */
  metersRoot: KvRoot;
  orgs: Database<OrgRecord, string>;
  projects: Database<ProjectRecord, string>;
  keys: Database<KeyRecord, string>;
  /** key `${orgId}:${YYYYMM}` */
  usage: Database<UsageRecord, string>;
  /** key [orgId, usage period id, YYYY-MM-DD]: credits charged that UTC day (applyCharges). */
  usageDaily: Database<number, [string, string, string]>;
  meta: Database<unknown, string>;
  /**
   * key [project_id, first seq]: pages of a project's observations in arrival order, each the
   * JSON lines of one batch (observation-pages.ts).
   */
  observations: Database<string, [string, number]>;
  /** key [project_id, session_id] */
  sessions: Database<SessionRecord, [string, string]>;
  /**
   * Spent proof-of-work challenges, key [expires_at epoch ms, challenge id] -> 1. Ordered by
   * expiry so the writer prunes expired ones with one range scan (src/front/challenge).
   */
  challenges: Database<number, [number, string]>;
  /** Session resolution and metering (see bindings.ts). */
  bindings: Database<number, [string, string, string, string]>;
  bindingKeys: Database<{ count: number; rep: string }, [string, string, string]>;
  clusters: Database<{ parent: string; size: number }, [string, string]>;
  /** In `metersRoot`, not `root`: commits that write it go through stateTransaction(). */
  meters: Database<Buffer, [string, string, string]>;
  /** session_id -> project_id of the beacon session (sessions are keyed by project). */
  sessionProjects: Database<string, string>;
  /** Billing (see billing.ts): processed Stripe events, customer -> org, overage reporting. */
  stripeEvents: Database<{ type: string; created: number; applied: boolean }, string>;
  stripeCustomers: Database<string, string>;
  overage: Database<OverageState, string>;
  /** Answers to Idempotency-Keys, key [scope, key] (records.ts StoredAnswer). */
  idempotency: Database<StoredAnswer, [string, string]>;
  /** Check history (writer/feedback.ts): [org_id, ts, request_id] -> the check; [org_id, request_id] -> its ts. */
  checks: Database<CheckHistoryRecord, [string, number, string]>;
  checkIds: Database<number, [string, string]>;
  /** Feedback given, [org_id, target] (records.ts FeedbackRecord). */
  feedback: Database<FeedbackRecord, [string, string]>;
  /** Per org: its learning state, and its model (binary, scoring/org-model/codec.ts). */
  orgLearning: Database<OrgLearningRecord, string>;
  orgModels: Database<Buffer, string>;
  /** Outbound webhooks (writer/webhooks.ts): endpoints [org_id, id]; outbox [endpoint_id, seq]. */
  webhookEndpoints: Database<WebhookEndpointRecord, [string, string]>;
  webhookOutbox: Database<WebhookOutboxEntry, [string, number]>;
  /** Each endpoint's head entry by when it is due: [due_at, org_id, endpoint_id] -> its seq. */
  webhookDue: Database<number, [number, string, string]>;
  /** Delivery attempts, [endpoint_id, at, msg_id]; the last FS_WEBHOOK_LOG_MAX per endpoint. */
  webhookLog: Database<WebhookAttempt, [string, number, string]>;
  /**
   * Indexes by org, kept by the writer in the transaction that writes the record (apply.ts):
   * [org_id, project_id] -> 1 for every project; [org_id, key_id] -> 1 for every key not deleted.
   * An org's listing and its cap read its own range, never a page of every org's records.
   */
  orgProjects: Database<1, [string, string]>;
  orgKeys: Database<1, [string, string]>;
  /**
   * key [budget key, UTC day number]: the day's observations recorded and dropped of an org
   * (`obs:<org>`) or project (`obsp:<project>`), added by each observations.apply
   * (front/beacon/budget.ts seeds its counts from them, so a restart keeps the day's budget).
   */
  observationBudgets: Database<BudgetDay, [string, number]>;
}

/** The embedded store's databases: the same, with all of LMDB's API (the writer's LMDB-only steps, tests, benchmarks). */
export type LmdbStateDbs = {
  [K in keyof StateDbs]: StateDbs[K] extends KvDatabase<infer V, infer Key extends LmdbKey> ? LmdbDatabase<V, Key> : StateDbs[K];
} & { root: RootDatabase; metersRoot: RootDatabase };

/** Path of the state environment under DATA_DIR. */
export function stateDirOf(dataDir: string): string {
  return join(dataDir, "state");
}

/**
 * Opens the state environment and the meters environment beside it. Only the writer thread
 * passes `readOnly: false`; it also decides `metersNoSync` (meters-env.ts: prepareMetersDir).
 */
export function openState(stateDir: string, readOnly: boolean, metersNoSync = false): LmdbStateDbs {
  const metersDir = join(stateDir, "meters");
  if (!readOnly) {
    ensurePrivateDir(stateDir);
    ensurePrivateDir(metersDir);
  }
  const root = open({ ...envOptions(stateDir), readOnly });
  const metersRoot = open({ path: metersDir, maxDbs: 1, mapSize: 2 * 1024 ** 3, noSync: metersNoSync, readOnly, ...CREATE_PRIVATE });
  if (!readOnly) {
    // LMDB created its files with 0600 less the umask; files of an older version may be looser.
    restrictFiles(stateDir);
    restrictFiles(metersDir);
  }
  return {
    root,
    orgs: root.openDB<OrgRecord, string>({ name: "orgs" }),
    projects: root.openDB<ProjectRecord, string>({ name: "projects" }),
    keys: root.openDB<KeyRecord, string>({ name: "keys" }),
    usage: root.openDB<UsageRecord, string>({ name: "usage" }),
    usageDaily: root.openDB<number, [string, string, string]>({ name: "usage_daily" }),
    meta: root.openDB<unknown, string>({ name: "meta" }),
    observations: root.openDB<string, [string, number]>({ name: "observation_pages", encoding: "string" }),
    sessions: root.openDB<SessionRecord, [string, string]>({ name: "sessions" }),
    challenges: root.openDB<number, [number, string]>({ name: "challenges" }),
    bindings: root.openDB<number, [string, string, string, string]>({ name: "bindings" }),
    bindingKeys: root.openDB<{ count: number; rep: string }, [string, string, string]>({ name: "binding_keys" }),
    clusters: root.openDB<{ parent: string; size: number }, [string, string]>({ name: "clusters" }),
    metersRoot,
    meters: metersRoot.openDB<Buffer, [string, string, string]>({ name: "meters", encoding: "binary" }),
    sessionProjects: root.openDB<string, string>({ name: "session_projects", encoding: "string" }),
    stripeEvents: root.openDB<{ type: string; created: number; applied: boolean }, string>({ name: "stripe_events" }),
    stripeCustomers: root.openDB<string, string>({ name: "stripe_customers", encoding: "string" }),
    overage: root.openDB<OverageState, string>({ name: "overage" }),
    idempotency: root.openDB<StoredAnswer, [string, string]>({ name: "idempotency" }),
    checks: root.openDB<CheckHistoryRecord, [string, number, string]>({ name: "checks" }),
    checkIds: root.openDB<number, [string, string]>({ name: "check_ids" }),
    feedback: root.openDB<FeedbackRecord, [string, string]>({ name: "feedback" }),
    orgLearning: root.openDB<OrgLearningRecord, string>({ name: "org_learning" }),
    orgModels: root.openDB<Buffer, string>({ name: "org_models", encoding: "binary" }),
    webhookEndpoints: root.openDB<WebhookEndpointRecord, [string, string]>({ name: "webhook_endpoints" }),
    webhookOutbox: root.openDB<WebhookOutboxEntry, [string, number]>({ name: "webhook_outbox" }),
    webhookDue: root.openDB<number, [number, string, string]>({ name: "webhook_due" }),
    webhookLog: root.openDB<WebhookAttempt, [string, number, string]>({ name: "webhook_log" }),
    orgProjects: root.openDB<1, [string, string]>({ name: "org_projects" }),
    orgKeys: root.openDB<1, [string, string]>({ name: "org_keys" }),
    observationBudgets: root.openDB<BudgetDay, [string, number]>({ name: "observation_budgets" }),
  };
}

/**
 * The same databases held in PostgreSQL (pg/kv.ts), one table each; the meter windows share the
 * one transaction of the writer's commit.
 */
/** The named databases (every member of StateDbs but its environments). */
export type DbName = Exclude<keyof StateDbs, "root" | "metersRoot">;

/** Each database's table in PostgreSQL (`fs_` + this), and whether its values are bytes. */
export const PG_TABLES: { readonly [D in DbName]: readonly [table: string, binary?: true] } = {
  orgs: ["orgs"],
  projects: ["projects"],
  keys: ["keys"],
  usage: ["usage"],
  usageDaily: ["usage_daily"],
  meta: ["meta"],
  observations: ["observation_pages"],
  sessions: ["sessions"],
  challenges: ["challenges"],
  bindings: ["bindings"],
  bindingKeys: ["binding_keys"],
  clusters: ["clusters"],
  meters: ["meters", true],
  sessionProjects: ["session_projects"],
  stripeEvents: ["stripe_events"],
  stripeCustomers: ["stripe_customers"],
  overage: ["overage"],
  idempotency: ["idempotency"],
  checks: ["checks"],
  checkIds: ["check_ids"],
  feedback: ["feedback"],
  orgLearning: ["org_learning"],
  orgModels: ["org_models", true],
  webhookEndpoints: ["webhook_endpoints"],
  webhookOutbox: ["webhook_outbox"],
  webhookDue: ["webhook_due"],
  webhookLog: ["webhook_log"],
  orgProjects: ["org_projects"],
  orgKeys: ["org_keys"],
  observationBudgets: ["observation_budgets"],
};

export function openPgState(store: KvStore): StateDbs {
  const dbs: Record<string, unknown> = { root: store, metersRoot: store };
  for (const [name, [table, binary]] of Object.entries(PG_TABLES)) dbs[name] = store.db(table, binary === true);
  return dbs as unknown as StateDbs;
}

/**
 * One write transaction over both environments: the meters one around the state one, so a batch
 * that writes both commits both (state first) or, when `action` throws or returns ABORT, neither.
 */
export function stateTransaction<T>(dbs: Pick<StateDbs, "root" | "metersRoot">, action: () => T): T {
  if (dbs.root === dbs.metersRoot) return dbs.root.transactionSync(action);
  return dbs.metersRoot.transactionSync(() => dbs.root.transactionSync(action));
}

/**
 * Flushes an environment's commits to disk off the thread (lmdb-js `RootDatabase#sync(callback)`,
 * mdb_env_sync in a libuv worker; present in lmdb 3 but missing from its type definitions).
 */
export function flushToDisk(root: RootDatabase, done: (err: unknown) => void): void {
  (root as unknown as { sync(callback: (err: unknown) => void): void }).sync(done);
}
