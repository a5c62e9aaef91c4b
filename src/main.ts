/**
 * Boot order: config -> store writer -> first-start bootstrap -> datasets -> worker pool ->
 * HTTP listen. Shutdown in reverse on SIGTERM/SIGINT.
 */
import { randomBytes } from "node:crypto";
import { BodyBudget } from "./http/body-budget.js";
import { join } from "node:path";
import { REPO_ROOT, loadConfigFromProcess, redactConfig } from "./config/index.js";
import { BeaconTokens } from "./http/beacon/token.js";
import { TrustedProxies } from "./http/client-address.js";
import { ProjectDirectory } from "./http/projects.js";
import { createChallengeService, ensureChallengeSecret, storeSpender } from "./challenge/index.js";
import { loadBeaconAsset } from "./http/static.js";
import { BatchForwarder } from "./store/front/batch-forwarder.js";
import { ObservationJournal } from "./store/observation-journal.js";
import { groupObservations } from "./store/observation-pages.js";
import { IpDatasetHolder } from "./datasets/holder.js";
import { RdnsResolver, systemDns } from "./datasets/rdns.js";
import { MxResolver, systemMxDns } from "./datasets/mx.js";
import { loadContentModel } from "./scoring/content/index.js";
import { Pseudonymizer } from "./shared/pseudonym.js";
import { billingFromConfig } from "./billing/stripe.js";
import { OverageReporter } from "./billing/overage-reporter.js";
import { Authenticator } from "./http/auth.js";
import type { AppDeps } from "./http/deps.js";
import { QuotaGate } from "./http/quota.js";
import { listen } from "./http/server.js";
import { createLogger } from "./shared/log.js";
import { activateMetrics, ServiceMetrics } from "./http/metrics.js";
import { IdempotencyKeys } from "./http/idempotency.js";
import { bootstrap } from "./store/front/bootstrap.js";
import { ChargeJournal, journalDirOf } from "./store/charge-journal.js";
import { LedgerForwarder } from "./store/front/ledger-forwarder.js";
import { StoreClient } from "./store/front/client.js";
import { openPgState, openState, stateDirOf, type StateDbs } from "./store/state-env.js";
import { ContentBatcher } from "./workers/content-batcher.js";
import { ScoringPool } from "./workers/pool.js";
import type { ChargeRecord, KeyRecord, ObservationRecord, OrgRecord, ProjectRecord } from "./store/records.js";
import { OrderedShipper, type ShipOutcome } from "./store/front/shipper.js";
import { grantLease, observationSeqs, type PgSettings } from "./store/pg/cluster.js";
import { KvStore } from "./store/pg/kv.js";
import { Leadership } from "./store/pg/leader.js";
import { ClusterRefresher } from "./store/pg/refresh.js";
import { SyncPg } from "./store/pg/sync-client.js";
import type { LeaseSource } from "./http/quota.js";

/** How long journaled records wait before a failed shipment to the store is tried again. */
const SHIP_RETRY_MS = 1000;
/** How long an operator's usage adjustment waits to be in the shared ledger before it is answered. */
const ADJUST_SHIP_WAIT_MS = 2000;
/** The advisory lock of the cluster's overage reporter. */
const OVERAGE_LEADER_LOCK = 0x66730002;

async function main(): Promise<void> {
  const loaded = loadConfigFromProcess();
  if (!loaded.ok) {
    process.stderr.write(`Configuration invalid (${loaded.problems.length} problem(s)):\n${loaded.problems.map((p) => `  - ${p}`).join("\n")}\n`);
    process.exit(2);
  }
  const config = loaded.config;
  const log = createLogger(config.FS_LOG_LEVEL, "main");
  log.info("config", redactConfig(config));

  const stateDir = stateDirOf(config.DATA_DIR);
  const journalDir = journalDirOf(stateDir);
  const cluster: PgSettings | undefined =
    config.FS_STORE === "postgres" ? { url: config.DATABASE_URL!, nodeId: config.FS_NODE_ID, timeoutMs: config.FS_PG_TIMEOUT_MS } : undefined;
  const store = await StoreClient.start(stateDir, journalDir, {
    bindingRetentionMs: config.FS_BINDING_RETENTION_DAYS * 86_400_000,
    observationRetentionMs: config.FS_OBSERVATION_RETENTION_DAYS * 86_400_000,
    logLevel: config.FS_LOG_LEVEL,
    postgres: cluster,
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
  // The front's reads: LMDB's read-only view, or, in a cluster, a connection of its own (also
  // used for credit leases and to re-read cached records other nodes may change).
  const frontPg = cluster ? new SyncPg(cluster.url, cluster.timeoutMs, `fs-front:${cluster.nodeId}`) : null;
  const readDbs: StateDbs = frontPg ? openPgState(new KvStore(frontPg)) : openState(stateDir, true);
  store.afterCommit = () => readDbs.root.resetReadTxn();

  const ipDatasets = new IpDatasetHolder(config.DATA_DIR);
  const ipMeta = ipDatasets.get().meta;
  log.info("dataset open", { ip: ipMeta.version, source: ipMeta.source, built_at: ipMeta.built_at });

  const pool = new ScoringPool({
    ipDatasetDir: ipDatasets.dir,
    threads: config.FS_POOL_THREADS,
    maxQueue: config.FS_POOL_MAX_QUEUE,
    retryAfterSeconds: config.FS_RETRY_AFTER_SECONDS,
  });
  await pool.ping();
  ipDatasets.onSwitch((dir) => {
    pool.setIpDatasetDir(dir);
    log.info("ip dataset switched", { dir });
  });

  let stopping = false;
  // Highest sequence numbers the writer has applied, for the journal backlog metric.
  const applied = { charges: store.journalSeq, observations: store.observationSeq };
  /** What a failed shipment does: alone (LMDB) the store is broken, stop; in a cluster wait for PostgreSQL. */
  const shipFailed = (what: string, upToSeq: number, message: string): { outcome: ShipOutcome; reason: string } => {
    // The records are safe in the journal and are replayed at the next start.
    if (stopping) {
      log.warn(`${what} left for replay at next start`, { up_to_seq: upToSeq });
      return { outcome: "ok", reason: message };
    }
    if (!cluster) {
      log.error(`writer could not apply ${what}; stopping`, { message });
      process.exit(1);
    }
    return { outcome: "retry", reason: message };
  };
  const chargeShipper = new OrderedShipper<ChargeRecord>(async (b) => {
    const ack = await store.send({ op: "charges.apply", records: b.records, upToSeq: b.upToSeq, afterSeq: b.afterSeq });
    if (!ack.ok) return shipFailed("charges", b.upToSeq, ack.message);
    applied.charges = Math.max(applied.charges, b.upToSeq);
    idempotency.applied(b.upToSeq);
    return { outcome: "ok" };
  }, store.journalSeq, SHIP_RETRY_MS);
  chargeShipper.onRetry = (n, reason) => {
    if (n === 1 || n % 30 === 0) log.warn("charges wait in the journal for the store", { failures: n, reason });
  };
  const forwarder = new LedgerForwarder((records) => chargeShipper.ship(records, records.reduce((m, r) => Math.max(m, r.seq), 0)), config.FS_LEDGER_FLUSH_MS);
  const journal = new ChargeJournal(journalDir, store.journalSeq, (records) => forwarder.add(records));
  const idempotency = new IdempotencyKeys(readDbs, journal);
  journal.onCallbackError = (err) => log.error("response after charge failed", { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });

  const obsShipper = new OrderedShipper<[ObservationRecord, string]>(async (b) => {
    const { pages, sessions } = groupObservations(b.records.map((r) => r[0]), b.records.map((r) => r[1]), cluster !== undefined);
    const ack = await store.send({ op: "observations.apply", pages, sessions, upToSeq: b.upToSeq, afterSeq: b.afterSeq });
    if (!ack.ok) return shipFailed("observations", b.upToSeq, ack.message);
    applied.observations = Math.max(applied.observations, b.upToSeq);
    return { outcome: "ok" };
  }, store.observationSeq, SHIP_RETRY_MS);
  obsShipper.onRetry = (n, reason) => {
    if (n === 1 || n % 30 === 0) log.warn("observations wait in the journal for the store", { failures: n, reason });
  };
  const obsForwarder = new BatchForwarder<[ObservationRecord, string]>((batch) => obsShipper.ship(batch, batch[batch.length - 1]![0].seq), config.FS_LEDGER_FLUSH_MS);
  const observations = new ObservationJournal(journalDir, store.observationSeq, (records, lines) =>
    obsForwarder.add(records.map((r, i) => [r, lines[i]!])),
  );
  observations.onCallbackError = journal.onCallbackError;
  if (store.cluster) observations.seqAfter = observationSeqs(store.cluster.nodeIndex);
  const secretAck = await store.send({ op: "secret.ensure", name: "beacon_secret", value: randomBytes(32).toString("hex") });
  if (!secretAck.ok) throw new Error(`could not read or create the beacon token secret: ${secretAck.message}`);
  const challengeSecret = await ensureChallengeSecret(store);
  const idAck = await store.send({ op: "secret.ensure", name: "identifier_secret", value: randomBytes(32).toString("hex") });
  if (!idAck.ok) throw new Error(`could not read or create the identifier secret: ${idAck.message}`);
  // One directory for every route: admin and owner routes hand it the records they change.
  const projects = new ProjectDirectory(readDbs);
  const billing = billingFromConfig(config);
  if (!billing) log.info("billing not configured (STRIPE_SECRET_KEY and STRIPE_PRICE_*): billing endpoints answer 503");
  const beaconAsset = loadBeaconAsset(join(REPO_ROOT, "dist/beacon/fs.js"));
  if (!beaconAsset) log.warn("beacon script not built; GET /js/fs.js answers 503 until `npm run build`");

  const rdns = new RdnsResolver({
    dns: systemDns(config.FS_DNS_SERVERS.length > 0 ? config.FS_DNS_SERVERS : undefined),
    timeoutMs: config.FS_RDNS_TIMEOUT_MS,
    ttlMs: config.FS_RDNS_TTL_SECONDS * 1000,
    negativeTtlMs: config.FS_RDNS_NEGATIVE_TTL_SECONDS * 1000,
    maxEntries: config.FS_RDNS_CACHE_SIZE,
    canary: config.FS_RDNS_CANARY,
  });
  const leases: LeaseSource | null = frontPg
    ? { grant: (orgId, period, quota, need) => grantLease(frontPg, cluster!.nodeId, orgId, period, quota, need, Math.max(need, config.FS_LEASE_CREDITS)) }
    : null;
  const quota = new QuotaGate(
    readDbs,
    journal,
    leases,
    cluster
      ? (seq) => {
          forwarder.flush();
          return chargeShipper.whenShipped(seq, ADJUST_SHIP_WAIT_MS);
        }
      : null,
  );
  const metrics = new ServiceMetrics({
    pool,
    store,
    ipDatasets,
    journals: [
      { name: "charges", written: () => journal.lastSeq, applied: () => applied.charges },
      { name: "observations", written: () => observations.lastSeq, applied: () => applied.observations },
    ],
    log: createLogger(config.FS_LOG_LEVEL, "access"),
    accessLogSample: config.FS_ACCESS_LOG_SAMPLE,
  });
  activateMetrics(metrics);
  const deps: AppDeps = {
    config,
    log,
    store,
    bodies: new BodyBudget({ public: config.FS_BODY_BUFFER_PUBLIC_BYTES, keyed: config.FS_BODY_BUFFER_BYTES }, config.FS_RETRY_AFTER_SECONDS),
    auth: new Authenticator(readDbs, boot.adminTokenHash),
    quota,
    pool,
    flushLedger: forwarder.flush,
    ipDatasets,
    state: readDbs,
    beacon: {
      projects,
      tokens: new BeaconTokens(Buffer.from(secretAck.value, "hex"), config.FS_BEACON_TOKEN_TTL_SECONDS * 1000),
      trusted: new TrustedProxies(config.FS_TRUSTED_PROXIES),
      ipDatasets,
      rdns,
      journal: observations,
    },
    flushObservations: obsForwarder.flush,
    challenge: createChallengeService({ secret: challengeSecret, projects, spend: storeSpender(store) }),
    content: new ContentBatcher(pool, loadContentModel()),
    pseudonyms: new Pseudonymizer(idAck.value),
    billing,
    email: {
      mx: new MxResolver({
        dns: systemMxDns(config.FS_DNS_SERVERS.length > 0 ? config.FS_DNS_SERVERS : undefined),
        canary: config.FS_MX_CANARY,
        timeoutMs: config.FS_RDNS_TIMEOUT_MS,
        ttlMs: config.FS_RDNS_TTL_SECONDS * 1000,
        negativeTtlMs: config.FS_RDNS_NEGATIVE_TTL_SECONDS * 1000,
        maxEntries: config.FS_RDNS_CACHE_SIZE,
      }),
    },
    rdns,
    metrics,
    idempotency,
  };
  const server = await listen(deps, beaconAsset);
  // In a cluster: cached keys, projects and plans are read again every FS_CLUSTER_CACHE_MS, so a
  // change made on another node applies here within that bound.
  const refresher = frontPg
    ? new ClusterRefresher(
        frontPg,
        [
          { table: "keys", ids: () => deps.auth.cachedKeyIds(), update: (id, k: KeyRecord | undefined) => (k ? deps.auth.rememberKey(k) : deps.auth.forgetKey(id)) },
          { table: "projects", ids: () => projects.cachedIds(), update: (id, p: ProjectRecord | undefined) => (p ? projects.remember(p) : projects.forget(id)) },
          { table: "orgs", ids: () => quota.orgIds(), update: (_id, o: OrgRecord | undefined) => o && quota.orgChanged(o) },
        ],
        config.FS_CLUSTER_CACHE_MS,
        (err) => log.warn("cached records not refreshed: PostgreSQL unreachable; serving what is cached", { reason: err.message }),
      )
    : null;
  refresher?.start();
  // One overage reporter per cluster: the node holding the advisory lock.
  const leadership = cluster && billing ? new Leadership(cluster.url, OVERAGE_LEADER_LOCK, config.FS_CLUSTER_CACHE_MS, log, `overage-reporter:${cluster.nodeId}`) : null;
  leadership?.start();
  const reporter = billing ? new OverageReporter(store, billing, log, forwarder.flush, config.FS_OVERAGE_REPORT_MS, () => leadership?.isLeader() ?? true) : null;
  reporter?.start();
  log.info("listening", { host: config.HOST, port: server.port, pool_threads: pool.threads, data_dir: config.DATA_DIR });
  if (boot.firstStart) printFirstStart(boot.firstStart, server.port);

  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    // Stop accepting connections; requests on open keep-alive connections are still answered,
    // but once the journal is closed a metered call gets 503 NOT_READY and is not charged.
    server.close();
    await reporter?.stop();
    await leadership?.stop();
    refresher?.stop();
    journal.close();
    observations.close();
    forwarder.flush();
    obsForwarder.flush();
    await chargeShipper.drain();
    await obsShipper.drain();
    // A cluster node gives its unused leases back, unless charges still wait for PostgreSQL:
    // then the next start ships them first.
    await store.close(chargeShipper.waiting > 0);
    frontPg?.close();
    await pool.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  // SIGHUP: load the build `current` names (after `npm run data:build`), without a restart.
  process.on("SIGHUP", () => {
    try {
      const r = ipDatasets.reload();
      log.info("SIGHUP: ip dataset reload", { ...r });
    } catch (err) {
      log.error("SIGHUP: ip dataset reload failed; still serving the old build", { err: (err as Error).message });
    }
  });
  process.on("SIGINT", () => void stop("SIGINT"));
}

function printFirstStart(f: NonNullable<Awaited<ReturnType<typeof bootstrap>>["firstStart"]>, port: number): void {
  const lines = [
    "",
    "==================== first start: demo org created (shown once) ====================",
    `  org id           ${f.orgId}  (plan free)`,
    `  project id       ${f.projectId}`,
    `  secret key       ${f.secretKey}`,
    `  publishable key  ${f.publishableKey}`,
    f.adminToken ? `  admin token      ${f.adminToken}   (set FS_ADMIN_TOKEN to choose your own)` : "  admin token      from FS_ADMIN_TOKEN",
    "",
    "  try:",
    `  curl -s -H 'Authorization: Bearer ${f.secretKey}' http://127.0.0.1:${port}/v1/ip/8.8.8.8`,
    `  open http://127.0.0.1:${port}/demo   (the beacon on a contact form)`,
    `  open http://127.0.0.1:${port}/dashboard   (sign in with the secret key above)`,
    "=====================================================================================",
    "",
  ];
  process.stdout.write(lines.join("\n") + "\n");
}

main().catch((err) => {
  process.stderr.write(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
