/**
 * One front thread: its uWS app with every route, and what it needs of its own (read view of the
 * store, caches, journals and their shipping to the writer, the scoring pool, resolvers,
 * metrics). main.ts starts the first on the main thread and, with FS_FRONT_THREADS > 1, the
 * others in worker threads (front-thread.ts), all listening on the same port; the kernel spreads
 * connections over them (SO_REUSEPORT). What must be one for all of them is shared: the store
 * writer (a port each), admission counters (SharedQuotaCells), running Idempotency-Keys
 * (SharedClaims), and changes to cached records (FrontPeers).
 */
import { join } from "node:path";
import { REPO_ROOT, type Config } from "../config/index.js";
import { createChallengeService, storeSpender } from "./challenge/index.js";
import { billingFromConfig } from "./billing/stripe.js";
import { IpDatasetHolder } from "../datasets/holder.js";
import { MxResolver, systemMxDns } from "../datasets/mx.js";
import { RdnsResolver, systemDns } from "../datasets/rdns.js";
import { loadContentModel } from "../scoring/content/index.js";
import { createLogger, type Logger } from "../shared/log.js";
import { Pseudonymizer } from "../shared/pseudonym.js";
import { ChargeJournal } from "../store/charge-journal.js";
import { BatchForwarder } from "../store/front/batch-forwarder.js";
import type { StoreClient } from "../store/front/client.js";
import { LedgerForwarder } from "../store/front/ledger-forwarder.js";
import { OrderedShipper, type ShipOutcome } from "../store/front/shipper.js";
import { ObservationJournal } from "../store/observation-journal.js";
import { groupObservations } from "../store/observation-pages.js";
import { observationSeqs, type PgSettings } from "../store/pg/cluster.js";
import { poolReader, RecordLoader } from "../store/pg/front-records.js";
import { localReader } from "../store/reader.js";
import { ClusterLeases, LeaseClock } from "../store/pg/leases.js";
import { PgPool } from "../store/pg/pool.js";
import { ClusterRefresher } from "../store/pg/refresh.js";
import type { ChargeRecord, KeyRecord, ObservationRecord, OrgLearningRecord, OrgRecord, ProjectRecord } from "../store/records.js";
import { openState, type StateDbs } from "../store/state-env.js";
import { ContentBatcher } from "./content-batcher.js";
import { ScoringPool } from "./scoring-pool.js";
import type { QuotaCells } from "./admission/cells.js";
import type { ClaimTable } from "./admission/claims.js";
import { Authenticator } from "./auth.js";
import { BeaconTokens } from "./beacon/token.js";
import type { BodyIntake } from "../http/body.js";
import { BeaconRateLimits } from "./beacon/limits.js";
import { ObservationBudget } from "./beacon/budget.js";
import { BodyBudget } from "./body-budget.js";
import { BodyDeadlines } from "./body-deadline.js";
import { TrustedProxies } from "./client-address.js";
import type { AppDeps } from "../http/deps.js";
import { IdempotencyKeys } from "./idempotency.js";
import { activateMetrics, ServiceMetrics } from "./metrics.js";
import { FrontPeers } from "./peers.js";
import { OrgLearningCache } from "./feedback/org-learning.js";
import { FeedbackLimit } from "./feedback/limit.js";
import { ProjectDirectory } from "./projects.js";
import { QuotaGate, type LeaseSource } from "./quota.js";
import { listen, type Listener } from "./server.js";
import { loadBeaconAsset } from "../http/static.js";

/** How long journaled records wait before a failed shipment to the store is tried again. */
const SHIP_RETRY_MS = 1000;
/** How long an operator's usage adjustment waits to be in the shared ledger before it is answered. */
const ADJUST_SHIP_WAIT_MS = 2000;

/** What main hands a front thread (plain data and shared memory, so it crosses to a worker). */
export interface FrontSetup {
  config: Config;
  /** 0 for the main thread's front, 1.. for the others. */
  index: number;
  /** FS_FRONT_THREADS. */
  threads: number;
  /** The port to listen on: the first thread's actual port for the others (PORT=0 picks one). */
  port: number;
  stateDir: string;
  /** This thread's journal folder and its id at the writer ("" for the first thread, f<n>). */
  journalDir: string;
  journalId: string;
  journalSeq: number;
  observationSeq: number;
  adminTokenHash: string;
  secrets: { beacon: string; challenge: string; identifier: string };
  /** Admission counters and running Idempotency-Keys, one table for every thread. */
  cells: QuotaCells;
  claims: ClaimTable | null;
  /** FS_STORE=postgres, with this node's index in the cluster and its lease chain (pg/leases.ts). */
  cluster: (PgSettings & { nodeIndex: number; leaseClock: SharedArrayBuffer }) | null;
}

export interface RunningFront {
  port: number;
  deps: AppDeps;
  /** Loads the IP dataset build `current` names (SIGHUP). */
  reloadDatasets(): ReturnType<IpDatasetHolder["reload"]>;
  /** Stops listening and ships what is journaled; returns charges left waiting for the store. */
  stop(): Promise<{ chargesWaiting: number }>;
  /** Closes what is left (pool, connections) once the writer has stopped. */
  close(): Promise<void>;
}

/** Builds one front thread's services over `store` and listens (`listener`: tests serve without a socket). */
export async function startFront(setup: FrontSetup, store: StoreClient, log: Logger, listener: Listener = listen): Promise<RunningFront> {
  const { config, cluster } = setup;
  // In a cluster, a few asynchronous connections of this thread's own: the records a call needs
  // before it starts (keys, orgs, projects), credit leases and their heartbeat, and the refresh of
  // cached records other nodes may change. None of them holds up the event loop.
  const pgPool = cluster ? new PgPool({ url: cluster.url, timeoutMs: cluster.timeoutMs, name: `fs-front:${cluster.nodeId}:${setup.index}` }, 2) : null;
  // The store as routes read it: LMDB's read-only view at once, or on a cluster node over the
  // pool (the records the caches keep, and what routes await); no read here blocks the event loop.
  const local: StateDbs | null = cluster ? null : openState(setup.stateDir, true);
  const records = pgPool ? new RecordLoader(pgPool) : null;
  const reads = pgPool ? poolReader(pgPool) : localReader(local!);
  store.afterCommit = () => local?.root.resetReadTxn();

  // The first thread deletes builds older than the one in service and the one before it.
  const ipDatasets = new IpDatasetHolder(
    config.DATA_DIR,
    setup.index === 0
      ? ({ deleted, failed }) => {
          if (deleted.length > 0) log.info("old dataset builds deleted", { versions: deleted });
          for (const f of failed) log.warn("old dataset build not deleted", { version: f.version, reason: f.reason });
        }
      : null,
  );
  if (setup.index === 0) {
    const ipMeta = ipDatasets.get().meta;
    log.info("dataset open", { ip: ipMeta.version, source: ipMeta.source, built_at: ipMeta.built_at });
  }
  // The pool's threads are shared out between the front threads.
  const poolThreads = Math.max(1, Math.floor(config.FS_POOL_THREADS / setup.threads) + (setup.index < config.FS_POOL_THREADS % setup.threads ? 1 : 0));
  const pool = new ScoringPool({
    ipDatasetDir: ipDatasets.dir,
    threads: poolThreads,
    maxQueue: config.FS_POOL_MAX_QUEUE,
    retryAfterSeconds: config.FS_RETRY_AFTER_SECONDS,
  });
  await pool.ping();
  ipDatasets.onSwitch((dir) => {
    pool.setIpDatasetDir(dir);
    log.info("ip dataset switched", { dir, front: setup.index });
  });

  let stopping = false;
  // Highest sequence numbers the writer has applied, for the journal backlog metric.
  const applied = { charges: setup.journalSeq, observations: setup.observationSeq };
  const journalField = setup.journalId === "" ? {} : { journal: setup.journalId };
  /** What a failed shipment does: alone (LMDB) the store is broken, stop; in a cluster wait for PostgreSQL. */
  const shipFailed = (what: string, upToSeq: number, message: string): { outcome: ShipOutcome; reason: string } => {
    // The records are safe in the journal and are replayed at the next start.
    if (stopping) {
      log.warn(`${what} left for replay at next start`, { up_to_seq: upToSeq, front: setup.index });
      return { outcome: "ok", reason: message };
    }
    if (!cluster) {
      log.error(`writer could not apply ${what}; stopping`, { message });
      process.exit(1);
    }
    return { outcome: "retry", reason: message };
  };
  const chargeShipper = new OrderedShipper<ChargeRecord>(async (b) => {
    const ack = await store.send({ op: "charges.apply", records: b.records, upToSeq: b.upToSeq, afterSeq: b.afterSeq, ...journalField });
    if (!ack.ok) return shipFailed("charges", b.upToSeq, ack.message);
    applied.charges = Math.max(applied.charges, b.upToSeq);
    idempotency.applied(b.upToSeq);
    return { outcome: "ok" };
  }, setup.journalSeq, SHIP_RETRY_MS);
  chargeShipper.onRetry = (n, reason) => {
    if (n === 1 || n % 30 === 0) log.warn("charges wait in the journal for the store", { failures: n, reason });
  };
  const forwarder = new LedgerForwarder((records) => chargeShipper.ship(records, records.reduce((m, r) => Math.max(m, r.seq), 0)), config.FS_LEDGER_FLUSH_MS);
  const journal = new ChargeJournal(setup.journalDir, setup.journalSeq, (records) => forwarder.add(records));
  const idempotency = new IdempotencyKeys(records ? { idempotency: records.table("idempotency", { once: true }) } : local!, journal, setup.claims);
  journal.onCallbackError = (err) => log.error("response after charge failed", { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });

  // Several journals (front threads, or nodes) interleave in time: one page per observation.
  const pagePerObservation = cluster !== null || setup.threads > 1;
  const obsShipper = new OrderedShipper<[ObservationRecord, string]>(async (b) => {
    const { pages, sessions } = groupObservations(b.records.map((r) => r[0]), b.records.map((r) => r[1]), pagePerObservation);
    const ack = await store.send({ op: "observations.apply", pages, sessions, upToSeq: b.upToSeq, afterSeq: b.afterSeq, ...journalField });
    if (!ack.ok) return shipFailed("observations", b.upToSeq, ack.message);
    applied.observations = Math.max(applied.observations, b.upToSeq);
    return { outcome: "ok" };
  }, setup.observationSeq, SHIP_RETRY_MS);
  obsShipper.onRetry = (n, reason) => {
    if (n === 1 || n % 30 === 0) log.warn("observations wait in the journal for the store", { failures: n, reason });
  };
  const obsForwarder = new BatchForwarder<[ObservationRecord, string]>((batch) => obsShipper.ship(batch, batch[batch.length - 1]![0].seq), config.FS_LEDGER_FLUSH_MS);
  const observations = new ObservationJournal(setup.journalDir, setup.observationSeq, (records, lines) =>
    obsForwarder.add(records.map((r, i) => [r, lines[i]!])),
  );
  observations.onCallbackError = journal.onCallbackError;
  // Observation numbers distinct across journals: by time, with the journal's own residue.
  if (cluster || setup.threads > 1) observations.seqAfter = observationSeqs((cluster?.nodeIndex ?? 0) * MAX_FRONT_THREADS + setup.index);

  // One directory for every route: admin and owner routes hand it the records they change.
  const projects = new ProjectDirectory(records ? { projects: records.table("projects") } : local!);
  const billing = billingFromConfig(config);
  if (!billing && setup.index === 0) log.info("billing not configured (STRIPE_SECRET_KEY and STRIPE_PRICE_*): billing endpoints answer 503");
  const beaconAsset = loadBeaconAsset(join(REPO_ROOT, "dist/beacon/fs.js"));
  if (!beaconAsset && setup.index === 0) log.warn("beacon script not built; GET /js/fs.js answers 503 until `npm run build`");

  const rdns = new RdnsResolver({
    dns: systemDns(config.FS_DNS_SERVERS.length > 0 ? config.FS_DNS_SERVERS : undefined),
    timeoutMs: config.FS_RDNS_TIMEOUT_MS,
    ttlMs: config.FS_RDNS_TTL_SECONDS * 1000,
    negativeTtlMs: config.FS_RDNS_NEGATIVE_TTL_SECONDS * 1000,
    maxEntries: config.FS_RDNS_CACHE_SIZE,
    canary: config.FS_RDNS_CANARY,
  });
  const clusterLeases = pgPool ? new ClusterLeases(pgPool, cluster!.nodeId, new LeaseClock(cluster!.leaseClock), config.FS_LEASE_TTL_MS, config.FS_LEASE_CREDITS) : null;
  // A lapsed chain starts again once every debit this thread admitted is shipped.
  const caughtUp = (): boolean => chargeShipper.waiting === 0;
  if (setup.index === 0) clusterLeases?.startHeartbeat(caughtUp);
  const leases: LeaseSource | null = clusterLeases
    ? { chain: () => clusterLeases.chain(), grant: (o, p, q, n) => clusterLeases.grant(o, p, q, n), lowWater: clusterLeases.lowWater, wake: () => clusterLeases.wake(caughtUp) }
    : null;
  const quota = new QuotaGate(
    records ? { orgs: records.table("orgs"), usage: records.table("usage") } : local!,
    journal,
    leases,
    cluster
      ? (seq) => {
          forwarder.flush();
          return chargeShipper.whenShipped(seq, ADJUST_SHIP_WAIT_MS);
        }
      : null,
    setup.cells,
  );
  const trusted = new TrustedProxies(config.FS_TRUSTED_PROXIES);
  // The pools are shared out between the front threads; a client's or an org's share is per thread.
  const bodies: BodyIntake = {
    budget: new BodyBudget(
      { public: Math.ceil(config.FS_BODY_BUFFER_PUBLIC_BYTES / setup.threads), keyed: Math.ceil(config.FS_BODY_BUFFER_BYTES / setup.threads) },
      { public: config.FS_BODY_BUFFER_PER_CLIENT_BYTES, keyed: config.FS_BODY_BUFFER_PER_ORG_BYTES },
      config.FS_RETRY_AFTER_SECONDS,
    ),
    deadlines: new BodyDeadlines(config.FS_BODY_TIMEOUT_MS, config.FS_BODY_MIN_BYTES_PER_SECOND),
    trusted,
  };
  const beaconLimits = new BeaconRateLimits({ perAddress: config.FS_BEACON_ADDRESS_LIMIT, perProject: config.FS_BEACON_PROJECT_LIMIT });
  const observationBudget = new ObservationBudget(setup.cells, config.FS_OBSERVATION_BUDGET_PER_DAY);
  const metrics = new ServiceMetrics({
    pool,
    store,
    ipDatasets,
    journals: [
      { name: "charges", written: () => journal.lastSeq, applied: () => applied.charges },
      { name: "observations", written: () => observations.lastSeq, applied: () => applied.observations },
    ],
    bodies,
    log: createLogger(config.FS_LOG_LEVEL, "access"),
    accessLogSample: config.FS_ACCESS_LOG_SAMPLE,
    thread: setup.index,
    beacon: { rateLimited: beaconLimits.refused, budget: observationBudget },
  });
  activateMetrics(metrics);
  // On a cluster node a beacon call's project is read (if need be) before the call starts.
  const beforeCall = records ? (k: KeyRecord) => void (k.type === "publishable" && k.project_id !== null && projects.get(k.project_id)) : undefined;
  const auth = new Authenticator(records ? { keys: records.table("keys") } : local!, setup.adminTokenHash, beforeCall);
  // A change this node made (a key disabled, a plan) wins over a refresh read before it.
  const peerDbs = {
    root: {
      resetReadTxn: () => {
        local?.root.resetReadTxn();
        refresher?.localChange();
      },
    },
  };
  const learning = new OrgLearningCache(reads, (orgId, err) => log.error("org model unreadable; the org's checks use the global model", { org_id: orgId, reason: err.message }));
  const peers = new FrontPeers(setup.threads, { auth, projects, quota, learning, readDbs: peerDbs, ipDatasets, metrics });
  const deps: AppDeps = {
    config,
    log,
    store,
    bodies,
    auth,
    quota,
    pool,
    flushLedger: forwarder.flush,
    ledgerBehind: () => chargeShipper.behind(),
    ipDatasets,
    reads,
    beacon: {
      projects,
      tokens: new BeaconTokens(Buffer.from(setup.secrets.beacon, "hex"), config.FS_BEACON_TOKEN_TTL_SECONDS * 1000),
      trusted,
      ipDatasets,
      rdns,
      journal: observations,
      limits: beaconLimits,
      budget: observationBudget,
      sessionProofMs: config.FS_OBSERVATION_RETENTION_DAYS * 86_400_000,
    },
    flushObservations: obsForwarder.flush,
    challenge: createChallengeService({ secret: setup.secrets.challenge, projects, spend: storeSpender(store) }),
    content: new ContentBatcher(pool, loadContentModel()),
    learning,
    feedbackLimit: new FeedbackLimit(config.FS_FEEDBACK_PER_MINUTE),
    pseudonyms: new Pseudonymizer(setup.secrets.identifier),
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
    peers,
    front: { index: setup.index, threads: setup.threads },
  };
  const server = await listener(deps, beaconAsset, setup.port);
  // In a cluster: cached keys, projects and plans are read again every FS_CLUSTER_CACHE_MS, so a
  // change made on another node applies here within that bound.
  const refresher = pgPool
    ? new ClusterRefresher(
        pgPool,
        [
          { table: "keys", ids: () => auth.cachedKeyIds(), update: (id, k: KeyRecord | undefined) => (k ? auth.rememberKey(k) : auth.forgetKey(id)) },
          { table: "projects", ids: () => projects.cachedIds(), update: (id, p: ProjectRecord | undefined) => (p ? projects.remember(p) : projects.forget(id)) },
          { table: "orgs", ids: () => quota.orgIds(), update: (_id, o: OrgRecord | undefined) => o && quota.orgChanged(o) },
          { table: "org_learning", ids: () => learning.orgIds(), update: (id, l: OrgLearningRecord | undefined) => learning.refreshed(id, l) },
        ],
        config.FS_CLUSTER_CACHE_MS,
        (err) => log.warn("cached records not refreshed: PostgreSQL unreachable; serving what is cached", { reason: err.message }),
      )
    : null;
  refresher?.start();

  return {
    port: server.port,
    deps,
    reloadDatasets: () => ipDatasets.reload(),
    async stop() {
      stopping = true;
      // Stop accepting connections; requests on open keep-alive connections are still answered,
      // but once the journal is closed a metered call gets 503 NOT_READY and is not charged.
      server.close();
      refresher?.stop();
      clusterLeases?.stop();
      journal.close();
      observations.close();
      forwarder.flush();
      obsForwarder.flush();
      await chargeShipper.drain();
      await obsShipper.drain();
      return { chargesWaiting: chargeShipper.waiting };
    },
    async close() {
      if (setup.index > 0) server.closeAll();
      bodies.deadlines.close();
      peers.close();
      await pgPool?.close();
      await pool.close();
    },
  };
}

/** Front threads one node may run (observation numbers make room for this many per node). */
export const MAX_FRONT_THREADS = 16;

/** The logger of front thread `index` (its lines say which thread wrote them). */
export function frontLogger(config: Config, index: number): Logger {
  return index === 0 ? createLogger(config.FS_LOG_LEVEL, "main") : createLogger(config.FS_LOG_LEVEL, `front-${index}`);
}
