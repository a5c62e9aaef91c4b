/**
 * Boot order: config -> store writer -> first-start bootstrap and secrets -> the front threads
 * (the first on this thread, then FS_FRONT_THREADS - 1 workers on the same port; each opens the
 * datasets, its scoring pool and its journals: front/front.ts) -> overage reporting. Shutdown in
 * reverse on SIGTERM/SIGINT.
 */
import { randomBytes } from "node:crypto";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { OverageReporter } from "./front/billing/overage-reporter.js";
import { ensureChallengeSecret } from "./front/challenge/index.js";
import { loadConfigFromProcess, redactConfig } from "./config/index.js";
import { orgLimitsOf, webhookSettingsOf } from "./store/protocol.js";
import { ClaimTable } from "./front/admission/claims.js";
import { LocalQuotaCells, SharedQuotaCells } from "./front/admission/cells.js";
import { startFront } from "./front/front.js";
import type { FrontOrder, FrontReport, FrontThreadData } from "./front/front-thread.js";
import { createLogger, resolveLogFormat, setLogFormat, type Logger } from "./shared/log.js";
import { threadEntry } from "./shared/thread-entry.js";
import { journalDirOf } from "./store/charge-journal.js";
import { bootstrap } from "./store/front/bootstrap.js";
import { StoreClient } from "./store/front/client.js";
import type { PgSettings } from "./store/pg/cluster.js";
import { LeaseClock } from "./store/pg/leases.js";
import { Leadership } from "./store/pg/leader.js";
import { stateDirOf } from "./store/state-env.js";

/** A port nothing listens on now, on `host`. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** The entry of the other front threads (threadEntry). */
const FRONT_ENTRY = threadEntry("./front/front-thread.js", import.meta.url);
/** The advisory lock of the cluster's overage reporter. */
const OVERAGE_LEADER_LOCK = 0x66730002;

async function main(): Promise<void> {
  const loaded = loadConfigFromProcess();
  if (!loaded.ok) {
    process.stderr.write(`Configuration invalid (${loaded.problems.length} problem(s)):\n${loaded.problems.map((p) => `  - ${p}`).join("\n")}\n`);
    process.exit(2);
  }
  // `auto` is decided here, where stdout is the process's own: the threads print as this one does.
  const config = { ...loaded.config, FS_LOG_FORMAT: resolveLogFormat(loaded.config.FS_LOG_FORMAT) };
  setLogFormat(config.FS_LOG_FORMAT);
  const log = createLogger(config.FS_LOG_LEVEL, "main");
  log.info("config", redactConfig(config));

  const stateDir = stateDirOf(config.DATA_DIR);
  const journalDir = journalDirOf(stateDir);
  const threads = config.FS_FRONT_THREADS;
  const pg: PgSettings | undefined =
    config.FS_STORE === "postgres" ? { url: config.DATABASE_URL!, nodeId: config.FS_NODE_ID, timeoutMs: config.FS_PG_TIMEOUT_MS } : undefined;
  const store = await StoreClient.start(stateDir, journalDir, {
    bindingRetentionMs: config.FS_BINDING_RETENTION_DAYS * 86_400_000,
    observationRetentionMs: config.FS_OBSERVATION_RETENTION_DAYS * 86_400_000,
    logLevel: config.FS_LOG_LEVEL,
    logFormat: config.FS_LOG_FORMAT,
    postgres: pg,
    webhooks: webhookSettingsOf(config),
    orgLimits: orgLimitsOf(config),
    frontThreads: threads,
  }).catch((err: unknown) => {
    // A node needs its database to start (migrations, replay): say which and why, once.
    if (!pg) throw err;
    const target = new URL(pg.url);
    log.error("cannot open the store on PostgreSQL (DATABASE_URL); not starting", { host: target.host, database: target.pathname.slice(1), reason: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  });
  if (store.cluster) log.info("cluster store: PostgreSQL", { node_id: config.FS_NODE_ID, node_index: store.cluster.nodeIndex, migrations_applied: store.cluster.migrated });
  if (store.replayed > 0) log.warn("replayed charge journal after an unclean stop", { records: store.replayed });
  if (store.observationsReplayed > 0) log.warn("replayed observation journal after an unclean stop", { records: store.observationsReplayed });
  if (store.metersDiscarded) log.warn("meter windows discarded: the machine restarted after an unclean stop, so their unflushed environment could be torn; budgets start empty");
  if (store.metersMigrated > 0) log.info("meter windows moved to their own environment (state/meters)", { windows: store.metersMigrated });
  if (store.budgetsRepaired > 0) log.warn("meter windows of merged accounts folded into their cluster's after an unclean stop", { windows: store.budgetsRepaired });
  store.onDeath((err) => {
    log.error("store writer died; stopping", { err: err.message });
    process.exit(1);
  });
  const boot = await bootstrap(store, config.FS_ADMIN_TOKEN);
  const secretAck = await store.send({ op: "secret.ensure", name: "beacon_secret", value: randomBytes(32).toString("hex") });
  if (!secretAck.ok) throw new Error(`could not read or create the beacon token secret: ${secretAck.message}`);
  const challengeSecret = await ensureChallengeSecret(store);
  const idAck = await store.send({ op: "secret.ensure", name: "identifier_secret", value: randomBytes(32).toString("hex") });
  if (!idAck.ok) throw new Error(`could not read or create the identifier secret: ${idAck.message}`);

  // What the front threads share: admission counters and running Idempotency-Keys.
  const cellsBuffer = threads > 1 ? SharedQuotaCells.allocate() : null;
  const claimsBuffer = threads > 1 ? ClaimTable.allocate() : null;
  const base = {
    config,
    threads,
    stateDir,
    adminTokenHash: boot.adminTokenHash,
    secrets: { beacon: secretAck.value, challenge: challengeSecret, identifier: idAck.value },
    // The node's lease chain (pg/leases.ts), one for every front thread.
    cluster: pg && store.cluster ? { ...pg, nodeIndex: store.cluster.nodeIndex, leaseClock: LeaseClock.allocate() } : null,
  };
  // Threads share the port through SO_REUSEPORT, which uWS sets only for a port given: PORT=0
  // with several threads takes a free port first.
  const port = config.PORT === 0 && threads > 1 ? await freePort(config.HOST) : config.PORT;
  const front = await startFront(
    {
      ...base,
      index: 0,
      port,
      journalDir,
      journalId: "",
      journalSeq: store.journalSeq,
      observationSeq: store.observationSeq,
      cells: cellsBuffer ? new SharedQuotaCells(cellsBuffer) : new LocalQuotaCells(),
      claims: claimsBuffer ? new ClaimTable(claimsBuffer) : null,
    },
    store,
    log,
  );
  const others: Worker[] = [];
  for (let i = 1; i < threads; i++) {
    const id = `f${i}`;
    const seqs = store.journals[id] ?? { journalSeq: 0, observationSeq: 0 };
    const writer = store.connectFront();
    const data: FrontThreadData = {
      setup: { ...base, index: i, port: front.port, journalDir: join(journalDir, id), journalId: id, ...seqs },
      cells: cellsBuffer!,
      claims: claimsBuffer!,
      writer,
    };
    const worker = new Worker(FRONT_ENTRY, { workerData: data, transferList: [writer] });
    await new Promise<void>((resolve, reject) => {
      worker.once("message", (r: FrontReport) => (r.kind === "listening" ? resolve() : reject(new Error(`front thread ${i}: ${r.kind}`))));
      worker.once("error", reject);
    });
    // A front thread that dies takes its share of connections with it: the process stops.
    worker.on("error", (err) => {
      log.error("front thread failed; stopping", { front: i, err: err.stack ?? err.message });
      process.exit(1);
    });
    others.push(worker);
  }
  const { deps } = front;
  const billing = deps.billing;
  // One overage reporter per cluster: the node holding the advisory lock.
  const leadership = pg && billing ? new Leadership(pg.url, OVERAGE_LEADER_LOCK, config.FS_CLUSTER_CACHE_MS, log, `overage-reporter:${pg.nodeId}`) : null;
  leadership?.start();
  const reporter = billing ? new OverageReporter(store, billing, log, deps.flushLedger, config.FS_OVERAGE_REPORT_MS, () => leadership?.isLeader() ?? true) : null;
  reporter?.start();
  log.info("listening", { host: config.HOST, port: front.port, front_threads: threads, pool_threads: config.FS_POOL_THREADS, data_dir: config.DATA_DIR });
  if (boot.firstStart) logFirstStart(log, boot.firstStart, front.port);

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    // Every front thread stops listening and ships what it journaled; then the writer stops.
    const ask = <K extends FrontReport["kind"]>(w: Worker, order: FrontOrder, kind: K): Promise<Extract<FrontReport, { kind: K }>> =>
      new Promise((resolve) => {
        const on = (r: FrontReport): void => {
          if (r.kind !== kind) return;
          w.off("message", on);
          resolve(r as Extract<FrontReport, { kind: K }>);
        };
        w.on("message", on);
        w.postMessage(order);
      });
    const stopped = await Promise.all([front.stop(), ...others.map((w) => ask(w, { kind: "stop" }, "stopped"))]);
    await reporter?.stop();
    await leadership?.stop();
    // A cluster node gives its unused leases back, unless charges still wait for PostgreSQL:
    // then the next start ships them first.
    await Promise.all(others.map((w) => ask(w, { kind: "close" }, "closed")));
    await Promise.all(others.map((w) => w.terminate()));
    await store.close(stopped.some((r) => r.chargesWaiting > 0));
    await front.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  // SIGHUP: load the build `current` names (after `npm run data:build`), without a restart.
  process.on("SIGHUP", () => {
    try {
      const r = front.reloadDatasets();
      deps.peers.datasets();
      log.info("SIGHUP: ip dataset reload", { ...r });
    } catch (err) {
      log.error("SIGHUP: ip dataset reload failed; still serving the old build", { err: (err as Error).message });
    }
  });
  process.on("SIGINT", () => void stop("SIGINT"));
}

/**
 * The demo org's ids and keys, shown once, as one log record (so stdout stays one JSON object per
 * line; pino-pretty shows its fields one per line on a terminal).
 */
function logFirstStart(log: Logger, f: NonNullable<Awaited<ReturnType<typeof bootstrap>>["firstStart"]>, port: number): void {
  log.info("first start: demo org created (shown once)", {
    org_id: f.orgId,
    plan: "free",
    project_id: f.projectId,
    secret_key: f.secretKey,
    publishable_key: f.publishableKey,
    ...(f.adminToken ? { admin_token: f.adminToken, admin_token_note: "set FS_ADMIN_TOKEN to choose your own" } : { admin_token: "from FS_ADMIN_TOKEN" }),
    try: [
      `curl -s -H 'Authorization: Bearer ${f.secretKey}' http://127.0.0.1:${port}/v1/ip/8.8.8.8`,
      `open http://127.0.0.1:${port}/demo (the beacon on a contact form)`,
      `open http://127.0.0.1:${port}/dashboard (sign in with the secret key)`,
    ],
  });
}

main().catch((err) => {
  createLogger("error", "main").error("fatal", { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
});
