/**
 * Entry of the single writer thread: the only code that opens LMDB state for writing.
 * Group commit: every intent that arrived since the last commit is applied in one transaction,
 * then all of them are acknowledged in one message. One intent that cannot be applied fails
 * alone: the batch is then applied again one intent per transaction, so every other intent
 * commits and only the faulty one is refused (logged with its reason). An ack therefore means "committed": the state
 * environment's commit is flushed to disk before it returns, the meter windows' environment's
 * reaches the kernel (it survives a killed process; see meters-env.ts and docs/architecture.md, "Durability").
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { IntentApplier } from "./apply.js";
import { listSegments, pruneSegments, readSegment, truncateTornTail } from "../charge-journal.js";
import { lastJournalSeq as lastSeqOf, listJournalSegments, pruneJournalSegments, readJournalSegment } from "../journal.js";
import { OBSERVATION_CODEC } from "../observation-journal.js";
import { PROTOCOL_VERSION, type Ack, type AckBatch, type IntentBatch, type IntentOf, type WriterData, type WriterPort, type WriterReady } from "../protocol.js";
import { markMetersClean, migrateLegacyMeters, prepareMetersDir, unmarkMetersClean } from "./meters-env.js";
import { flushToDisk, openPgState, openState, stateTransaction, type StateDbs } from "../state-env.js";
import { KvStore } from "../pg/kv.js";
import { migrate } from "../pg/migrate.js";
import { PgError, SyncPg } from "../pg/sync-client.js";
import { registerNode, returnLeasesStatement } from "../pg/cluster.js";
import { PgShipping, withRaces, type JournalDir } from "../pg/writer-ship.js";
import { createLogger, setLogFormat } from "../../shared/log.js";
import { ensurePrivateDir } from "../private-files.js";
import { DEFAULT_WEBHOOK_SETTINGS } from "./webhooks.js";
import { WebhookDeliverer } from "./webhook-deliverer.js";

const data = workerData as WriterData;
if (data.protocolVersion !== PROTOCOL_VERSION) {
  throw new Error(`store writer protocol ${PROTOCOL_VERSION} started with ${data.protocolVersion}`);
}
const port = parentPort;
if (!port) throw new Error("writer-thread must run as a worker thread");
setLogFormat(data.logFormat ?? "json");
const log = createLogger(data.logLevel ?? "info", "writer");

/** FS_STORE=postgres: the shared store, reached through one connection of this thread. */
const pg = data.postgres ? new SyncPg(data.postgres.url, data.postgres.timeoutMs, `fs-writer:${data.postgres.nodeId}`) : null;
const migrated = pg ? migrate(pg) : [];
const nodeIndex = pg ? registerNode(pg, data.postgres!.nodeId) : 0;
const kv = pg ? new KvStore(pg) : null;
ensurePrivateDir(data.stateDir); // also on PostgreSQL, where it holds the journals only
const metersDir = kv ? { path: "", noSync: false, discarded: false } : prepareMetersDir(data.stateDir);
const lmdb = kv ? null : openState(data.stateDir, false, metersDir.noSync);
const dbs: StateDbs = lmdb ?? openPgState(kv!);
if (lmdb) {
  // Create every named database before any reader opens them (lmdb: opening named databases
  // from read-only transactions can race with their creation).
  lmdb.root.transactionSync(() => {
    for (const db of [lmdb.orgs, lmdb.projects, lmdb.keys, lmdb.usage, lmdb.meta]) db.get("__init__");
    lmdb.observations.get(["__init__", 0]);
    lmdb.sessions.get(["__init__", ""]);
    lmdb.challenges.get([0, ""]);
    lmdb.bindings.get(["", "", "", ""]);
    lmdb.bindingKeys.get(["", "", ""]);
    lmdb.clusters.get(["", ""]);
    lmdb.sessionProjects.get("__init__");
    lmdb.stripeEvents.get("__init__");
    lmdb.stripeCustomers.get("__init__");
    lmdb.overage.get("__init__");
    lmdb.idempotency.get(["", ""]);
    lmdb.checks.get(["", 0, ""]);
    lmdb.checkIds.get(["", ""]);
    lmdb.feedback.get(["", ""]);
    lmdb.orgLearning.get("__init__");
    lmdb.orgModels.get("__init__");
    lmdb.webhookEndpoints.get(["", ""]);
    lmdb.webhookOutbox.get(["", 0]);
    lmdb.webhookDue.get([0, "", ""]);
    lmdb.webhookLog.get(["", 0, ""]);
    lmdb.orgProjects.get(["", ""]);
    lmdb.orgKeys.get(["", ""]);
    lmdb.meta.putSync("schema_version", 1);
  });
  lmdb.metersRoot.transactionSync(() => lmdb.meters.get(["", "", ""]));
}
const metersMigrated = lmdb ? migrateLegacyMeters(lmdb, flushToDisk) : 0;
const nodeId = data.postgres?.nodeId ?? null;
const webhookSettings = data.webhooks ?? DEFAULT_WEBHOOK_SETTINGS;
const applier = new IntentApplier(dbs, data.bindingRetentionMs, nodeId, webhookSettings, data.orgLimits);
// A store from before the org indexes (state-env.ts orgProjects, orgKeys): fill them once. On
// PostgreSQL nodes starting together race for it; the loser finds the marker on its retry.
const indexed = withRaces(() =>
  stateTransaction(dbs, () => {
    try {
      return applier.backfillOrgIndexes();
    } catch (err) {
      applier.reset();
      throw err;
    }
  }),
);
if (indexed > 0) log.info("org indexes filled from the stored projects and keys", { entries: indexed });
// A kill between a batch's two commits (state first, then meters) can leave a merged account's
// windows under its old budget: fold them into the cluster's before serving.
const budgetsRepaired = pg ? 0 : repairBudgets(); // PostgreSQL commits state and meters together
// Several front threads (FS_FRONT_THREADS): one journal each, observations one page each.
if ((data.frontThreads ?? 1) > 1) applier.pagePerObservation = true;
const journals = journalDirs(data.journalDir, data.frontThreads ?? 1);
/** On PostgreSQL: debits and observations shipped by cursor (pg/writer-ship.ts). */
const shipping = pg ? new PgShipping(pg, kv!, applier, nodeId!, journals) : null;
let replayed = 0;
let observationsReplayed = 0;
for (const j of journals) {
  replayed += replayJournal(j);
  observationsReplayed += replayObservations(j);
}
// Every charge this node admitted is shipped now: what its leases hold beyond them goes back.
if (pg) withRaces(() => pg.run([returnLeasesStatement(nodeId!)]));

/**
 * Applies every journaled charge the ledger does not have yet (the process may have been killed
 * after answering and before the writer committed), then prunes applied segments.
 */
function replayJournal(j: JournalDir): number {
  const before = applier.appliedSeq(j.id);
  let count = 0;
  for (const seg of listSegments(j.dir)) truncateTornTail(seg.path);
  if (shipping) {
    count = shipping.replayCharges(j);
    pruneSegments(j.dir, applier.appliedSeq(j.id));
    return count;
  }
  for (const seg of listSegments(j.dir)) {
    const records = readSegment(seg.path).filter((r) => r.seq > before);
    if (records.length === 0) continue;
    stateTransaction(dbs, () => applier.applyCharges(records, undefined, Date.now(), j.id));
    count += records.length;
  }
  pruneSegments(j.dir, applier.appliedSeq(j.id));
  return count;
}

/** Same for observations: each answered hit is in the journal; store the ones LMDB lacks. */
function replayObservations(j: JournalDir): number {
  const before = applier.appliedObservationSeq(j.id);
  let count = 0;
  for (const seg of listJournalSegments(j.dir, OBSERVATION_CODEC.prefix)) {
    truncateTornTail(seg.path);
    const records = readJournalSegment(seg.path, OBSERVATION_CODEC);
    const fresh = records.filter((r) => r.seq > before).length;
    if (fresh === 0) continue;
    // The lines as stored: re-encoding gives the same text (the codec is JSON.stringify of the record).
    const lines = records.map((r) => `${OBSERVATION_CODEC.encode(r)}\n`);
    // On PostgreSQL another node may be merging the same sessions: again after a lost race.
    withRaces(() => stateTransaction(dbs, () => applier.applyObservations(records, lines, j.id)));
    count += fresh;
  }
  pruneJournalSegments(j.dir, OBSERVATION_CODEC.prefix, applier.appliedObservationSeq(j.id));
  return count;
}

/** Intents waiting for the next commit, each with the port to acknowledge it on. */
let queue: Array<{ item: IntentBatch["items"][number]; from: MessagePort }> = [];
let scheduled = false;
/** Every front thread's port: the first thread's (parentPort) and those main hands over (WriterPort). */
const fronts: MessagePort[] = [port];

function listenTo(from: MessagePort): void {
  from.on("message", (msg: IntentBatch | WriterPort) => {
    if (msg.kind === "port") {
      fronts.push(msg.port);
      listenTo(msg.port);
      return;
    }
    for (const item of msg.items) queue.push({ item, from });
    if (!scheduled) {
      scheduled = true;
      setImmediate(commitQueued);
    }
  });
}
listenTo(port);

function commitQueued(): void {
  scheduled = false;
  const queued = queue;
  queue = [];
  if (queued.length === 0) return;
  // Ids are each front thread's own: number the batch's intents afresh for the commit.
  const items = queued.map((q, i) => ({ id: i, intent: q.item.intent }));
  // Commits after a clean stop's flush (keep-alive requests still arriving) are not flushed:
  // the environment is not clean any more.
  if (metersCleanMarked) {
    unmarkMetersClean(metersDir.path);
    metersCleanMarked = false;
  }
  commits++;
  const started = performance.now();
  const acks = shipping ? applyShippingFirst(items) : applyIsolated(items);
  const commit = { intents: items.length, ms: performance.now() - started };
  // Each front thread with intents in the batch gets their acknowledgements. The others are not
  // told: lmdb-js renews a reader's snapshot at its next event-loop turn (a timer resets it), so
  // their next request reads this commit anyway, and a message per commit to every thread cost
  // each of them a structured clone and a wake-up.
  const send = (): void => {
    for (const front of fronts) {
      const mine: AckBatch["items"] = [];
      for (let i = 0; i < queued.length; i++) if (queued[i]!.from === front) mine.push({ id: queued[i]!.item.id, ack: acks[i]!.ack });
      if (mine.length > 0) front.postMessage({ kind: "acks", items: mine, commit } satisfies AckBatch);
    }
  };
  const shutdown = items.find((item) => item.intent.op === "shutdown");
  if (shutdown) return closeMeters(send, shutdown.intent.op === "shutdown" && shutdown.intent.keepLeases === true);
  send();
  if (applier.webhooks.takeEmitted()) deliverer.kick();
  maybePrune();
}

/**
 * On PostgreSQL: debits and observations shipped first, each batch on its own by cursor (they
 * commit without waiting for the flush, and must not wait for another intent's race), then the
 * rest of the batch in one transaction, so a read that follows a flush (GET /usage) sees them.
 */
function applyShippingFirst(items: IntentBatch["items"]): AckBatch["items"] {
  const acks = new Map<number, Ack>();
  const charges: Array<{ id: number; intent: IntentOf<"charges.apply"> }> = [];
  const observations: Array<{ id: number; intent: IntentOf<"observations.apply"> }> = [];
  const rest: IntentBatch["items"] = [];
  for (const item of items) {
    const i = item.intent;
    if (i.op === "charges.apply") charges.push({ id: item.id, intent: i });
    else if (i.op === "observations.apply") observations.push({ id: item.id, intent: i });
    else rest.push(item);
  }
  shipping!.chargesAll(charges.map((c) => c.intent)).forEach((ack, k) => acks.set(charges[k]!.id, ack));
  shipping!.observationsAll(observations.map((o) => o.intent)).forEach((ack, k) => acks.set(observations[k]!.id, ack));
  for (const a of applyIsolated(rest)) acks.set(a.id, a.ack);
  return items.map((item) => ({ id: item.id, ack: acks.get(item.id)! }));
}

/**
 * Applies `items` in one transaction. An intent that throws while it is applied (a key over
 * LMDB's size limit, a record the store refuses) aborts that transaction; it is then refused
 * alone and the rest is applied again without it, so every other intent commits. A failure of
 * the commit itself (disk full, a broken environment) refuses the whole batch: the front stops
 * when that hits its charges, which stay in the journal for the next start.
 */
function applyIsolated(items: IntentBatch["items"]): AckBatch["items"] {
  const acks = new Map<number, Ack>();
  let pending = items;
  let races = 0;
  while (pending.length > 0) {
    let culprit = -1;
    // On PostgreSQL another node may have changed anything since the last commit: read afresh.
    if (pg) applier.reset();
    try {
      const applied: Ack[] = [];
      stateTransaction(dbs, () => {
        if (pg) applier.prefetch(pending.map((item) => item.intent));
        for (let i = 0; i < pending.length; i++) {
          culprit = i;
          applied.push(applier.apply(pending[i]!.intent));
        }
        culprit = -1;
      });
      pending.forEach((item, i) => acks.set(item.id, applied[i]!));
      break;
    } catch (err) {
      rollBack();
      if (err instanceof PgError && err.retryable && races < MAX_RACES) {
        // Another node's transaction touched the same records first: apply the batch again.
        races++;
        pause(Math.random() * Math.min(50, 2 ** races));
        continue;
      }
      if (err instanceof PgError && (err.unavailable || err.retryable)) {
        // A commit whose answer was lost may have committed: the callers are told it failed and
        // retry (a webhook's event id is in the same commit as its effect, so a retry finds it).
        for (const item of pending) acks.set(item.id, refused(item, err, err.unknown ? "outcome unknown" : "store unavailable"));
        break;
      }
      if (culprit < 0) {
        // The commit failed, not an intent: nothing of the batch is stored.
        for (const item of pending) acks.set(item.id, refused(item, err, "commit failed"));
        break;
      }
      const bad = pending[culprit]!;
      acks.set(bad.id, refused(bad, err, "intent failed"));
      pending = pending.filter((_, i) => i !== culprit);
    }
  }
  return items.map((item) => ({ id: item.id, ack: acks.get(item.id)! }));
}

/** Serialization failures tolerated for one batch before its intents are refused. */
const MAX_RACES = 30;
const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Blocks this thread for `ms` (between retries of a transaction that lost a race). */
function pause(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/**
 * After a failed transaction: the cached state may hold its uncommitted effects, so drop it. The
 * state environment commits first: if only the meters one failed, a cluster merge may be stored
 * without its moved windows; fold them now rather than at the next start.
 */
function rollBack(): void {
  applier.reset();
  if (pg) return; // one transaction held both: nothing half-written
  try {
    repairBudgets();
  } catch {
    // The store is failing; the next start repairs.
  }
}

/** The acknowledgement of an intent the store could not apply, logged with its reason. */
function refused(item: IntentBatch["items"][number], err: unknown, stage: string): Ack {
  const message = err instanceof Error ? err.message : String(err);
  log.error("write refused", { op: item.intent.op, stage, reason: message });
  return { ok: false, error: "STORE_FAILED", message: `store write failed: ${message}` };
}

let stopped = false;
let commits = 0;
let metersCleanMarked = false;
/**
 * A clean stop (intent `shutdown`, the last the front sends): flush the meters environment to
 * disk and mark it clean, so a start after an OS restart may trust it; then `done` (the ack).
 * The mark is only written when nothing was committed while the flush ran, and a later commit
 * removes it first (commitQueued).
 */
function closeMeters(done: () => void, keepLeases = false): void {
  stopped = true;
  // Deliveries in flight finish or time out unrecorded; their claims expire and they go out again after the next start.
  deliverer.stop();
  if (pg && keepLeases) return done();
  if (pg) {
    // A clean stop: every admitted charge was shipped before `shutdown`; give the rest back.
    try {
      withRaces(() => pg.run([returnLeasesStatement(nodeId!)]));
    } catch (err) {
      log.warn("leases not returned at stop; they come back at the next start", { reason: (err as Error).message });
    }
    return done();
  }
  if (!metersDir.noSync || !lmdb) return done();
  const at = commits;
  flushToDisk(lmdb.metersRoot, (err) => {
    if (!err && commits === at) {
      markMetersClean(metersDir.path);
      metersCleanMarked = true;
    }
    done();
  });
}

/** Folds meter windows left under a merged account into its cluster's (see BindingIndex.repairBudgets). */
function repairBudgets(): number {
  return stateTransaction(dbs, () => applier.bindings.repairBudgets());
}

/**
 * Retention: at start and every 10 minutes the writer deletes bindings past
 * FS_BINDING_RETENTION_DAYS (they stop counting), meter logs unused past the longest window,
 * Stripe event ids after 30 days, observations and beacon sessions past
 * FS_OBSERVATION_RETENTION_DAYS, and checks past their org's history setting, in short bounded
 * transactions between which intents keep flowing.
 */
const PRUNE_BINDINGS_MS = 10 * 60_000;
function pruneBindings(): void {
  if (stopped) return;
  try {
    pruneBatch();
  } catch (err) {
    // On PostgreSQL a prune can lose a race with another node's, or find the database away:
    // the next round goes on from the same place.
    applier.reset();
    log.warn("retention prune deferred", { reason: (err as Error).message });
  }
}
function pruneBatch(): void {
  let removed = 0;
  let more = false;
  stateTransaction(dbs, () => {
    const now = Date.now();
    const obs = applier.pruneObservations(now, data.observationRetentionMs ?? 30 * 86_400_000);
    const checks = applier.feedback.prune(now);
    removed = applier.bindings.prune(now) + applier.bindings.pruneMeters(now) + applier.billing.pruneEvents(now) + obs.removed + checks.removed;
    more = applier.bindings.pruning || applier.bindings.pruningMeters || obs.more || checks.more;
  });
  // More to do: go on after whatever intents arrived meanwhile.
  if (removed > 0 || more) setImmediate(pruneBindings);
}
setInterval(pruneBindings, PRUNE_BINDINGS_MS).unref();
// Once at start too: what passed its retention while the service was stopped goes now.
setImmediate(pruneBindings);

let lastPrune = 0;
/** Deletes fully applied journal segments now and then (cheap: one readdir). */
function maybePrune(): void {
  const now = Date.now();
  if (now - lastPrune < 10_000) return;
  lastPrune = now;
  try {
    // On PostgreSQL the records were committed without waiting for the flush: prune only below
    // what a durable commit says is on disk.
    const durable = shipping?.durableCursors();
    for (const j of journals) {
      pruneSegments(j.dir, durable ? durable.charges.get(j.id)! : applier.appliedSeq(j.id));
      pruneJournalSegments(j.dir, OBSERVATION_CODEC.prefix, durable ? durable.observations.get(j.id)! : applier.appliedObservationSeq(j.id));
    }
    dbs.root.transactionSync(() => applier.pruneIdempotency(now));
  } catch (err) {
    applier.reset();
    log.warn("journal prune deferred", { reason: (err as Error).message });
  }
}

/** Outbound webhooks: due entries (also those left by an earlier run) go out from now on. */
const deliverer = new WebhookDeliverer(
  applier.webhooks,
  webhookSettings,
  (action) => {
    try {
      return dbs.root.transactionSync(action); // the webhook records are all in the state environment
    } catch (err) {
      applier.reset();
      throw err;
    }
  },
  log,
);
deliverer.kick();

const ready: WriterReady = {
  kind: "ready",
  protocolVersion: PROTOCOL_VERSION,
  journalSeq: lastJournalSeq(journals[0]!),
  replayed,
  observationSeq: lastSeqOf(data.journalDir, OBSERVATION_CODEC, applier.appliedObservationSeq()),
  journals: Object.fromEntries(
    journals.map((j) => [j.id, { journalSeq: lastJournalSeq(j), observationSeq: lastSeqOf(j.dir, OBSERVATION_CODEC, applier.appliedObservationSeq(j.id)) }]),
  ),
  observationsReplayed,
  metersDiscarded: metersDir.discarded,
  metersMigrated,
  budgetsRepaired,
  cluster: pg ? { nodeIndex, migrated } : null,
};
port.postMessage(ready);

/** The highest sequence number anywhere in the journal or the ledger, so the front continues after it. */
function lastJournalSeq(j: JournalDir): number {
  let max = applier.appliedSeq(j.id);
  for (const seg of listSegments(j.dir)) {
    const recs = readSegment(seg.path);
    const last = recs[recs.length - 1];
    if (last && last.seq > max) max = last.seq;
  }
  return max;
}

/**
 * The journals to replay and keep: the first front thread's, each `f<n>` folder beside it (from
 * this run's threads, or left by an earlier run with more), and those of this run's threads.
 */
function journalDirs(root: string, threads: number): JournalDir[] {
  const ids = new Set<string>();
  for (let i = 1; i < threads; i++) ids.add(`f${i}`);
  if (existsSync(root)) for (const e of readdirSync(root, { withFileTypes: true })) if (e.isDirectory() && /^f\d+$/.test(e.name)) ids.add(e.name);
  return [{ id: "", dir: root }, ...[...ids].sort().map((id) => ({ id, dir: join(root, id) }))];
}
