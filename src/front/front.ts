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
import { createLogger, setLogFormat, type Logger } from "../shared/log.js";
import { Pseudonymizer } from "../shared/pseudonym.js";
import type { StoreClient } from "../store/front/client.js";
import type { PgSettings } from "../store/pg/cluster.js";
import { ClusterLeases, LeaseClock } from "../store/pg/leases.js";
import { PgPool } from "../store/pg/pool.js";
import { ClusterRefresher } from "../store/pg/refresh.js";
import type { KeyRecord, OrgLearningRecord, OrgRecord, ProjectRecord } from "../store/records.js";
import { ContentBatcher } from "./content-batcher.js";
import { ScoringPool } from "./scoring-pool.js";
import type { QuotaCells } from "./admission/cells.js";
import type { ClaimTable } from "./admission/claims.js";
import { Authenticator, keyUseRecorder } from "./auth.js";
import { BeaconTokens } from "./beacon/token.js";
import type { BodyIntake } from "../http/body.js";
import { BeaconRateLimits } from "./beacon/limits.js";
import { BeaconBudget, ObservationBudget } from "./beacon/budget.js";
import { BodyBudget } from "./body-budget.js";
import { BodyDeadlines } from "./body-deadline.js";
import { TrustedProxies } from "./client-address.js";
import type { AppDeps } from "../http/deps.js";
import { activateMetrics, ServiceMetrics } from "./metrics.js";
import { FrontPeers } from "./peers.js";
import { OrgLearningCache } from "./feedback/org-learning.js";
import { FeedbackLimit } from "./feedback/limit.js";
import { TestModeBudget } from "./test-mode-budget.js";
import { ReportScans } from "./traffic/scan-thread.js";
import { ProjectDirectory } from "./projects.js";
import { QuotaGate, type LeaseSource } from "./quota.js";
import { listen, type Listener } from "./server.js";
import { createDebitPipeline } from "./debit-pipeline.js";
import { journalShipping } from "./journal-shipping.js";
import { createObservationPipeline } from "./observation-pipeline.js";
import { openStoreView } from "./store-view.js";
import { BlockNotifier } from "./webhook-blocks.js";
import { loadBeaconAsset } from "../http/static.js";

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
  const { pgPool, local, records, reads } = openStoreView(setup.stateDir, setup.index, cluster);
  store.afterCommit = () => local?.root.resetReadTxn();
  const ipDatasets = openIpDatasets(config, setup.index, log);
  const pool = await startScoringPool(config, setup, ipDatasets, log);

  let stopping = false;
  const shipping = journalShipping(store, log, { journalId: setup.journalId, frontIndex: setup.index, clustered: cluster !== null, stopping: () => stopping });
  const debits = createDebitPipeline(
    shipping,
    { dir: setup.journalDir, seq: setup.journalSeq },
    config.FS_LEDGER_FLUSH_MS,
    records ? { idempotency: records.table("idempotency", { once: true }) } : local!,
    setup.claims,
  );
  // Several journals (front threads, or nodes) interleave in time: each numbers its observations
  // by time with a residue of its own.
  const interleaved = cluster !== null || setup.threads > 1;
  const observations = createObservationPipeline(
    shipping,
    { dir: setup.journalDir, seq: setup.observationSeq },
    config.FS_LEDGER_FLUSH_MS,
    interleaved ? (cluster?.nodeIndex ?? 0) * MAX_FRONT_THREADS + setup.index : null,
  );

  // One directory for every route: admin and owner routes hand it the records they change.
  const projects = new ProjectDirectory(records ? { projects: records.table("projects") } : local!);
  const billing = billingFromConfig(config);
  if (!billing && setup.index === 0) log.info("billing not configured (STRIPE_SECRET_KEY and STRIPE_PRICE_*): billing endpoints answer 503");
  const beaconAsset = loadBeaconAsset(join(REPO_ROOT, "dist/beacon/fs.js"));
  if (!beaconAsset && setup.index === 0) log.warn("beacon script not built; GET /js/fs.js answers 503 until `npm run build`");

  const rdns = createRdnsResolver(config);
  const clusterLeases = pgPool ? new ClusterLeases(pgPool, cluster!.nodeId, new LeaseClock(cluster!.leaseClock), config.FS_LEASE_TTL_MS, config.FS_LEASE_CREDITS) : null;
  // A lapsed chain starts again once every debit this thread admitted is shipped.
  const caughtUp = (): boolean => debits.shipper.waiting === 0;
  if (setup.index === 0) clusterLeases?.startHeartbeat(caughtUp);
  const quota = new QuotaGate(
    records ? { orgs: records.table("orgs"), usage: records.table("usage") } : local!,
    debits.journal,
    clusterLeases ? leaseSource(clusterLeases, caughtUp) : null,
    cluster
      ? (seq) => {
          debits.forwarder.flush();
          return debits.shipper.whenShipped(seq, ADJUST_SHIP_WAIT_MS);
        }
      : null,
    setup.cells,
  );
  const trusted = new TrustedProxies(config.FS_TRUSTED_PROXIES);
  const bodies = createBodyIntake(config, setup.threads, trusted);
  const beaconLimits = new BeaconRateLimits({ perAddress: config.FS_BEACON_ADDRESS_LIMIT, perProject: config.FS_BEACON_PROJECT_LIMIT });
  const storedBudgets = records ? records.table("observationBudgets") : local!.observationBudgets;
  const observationBudget = new BeaconBudget(
    new ObservationBudget(setup.cells, config.FS_OBSERVATION_BUDGET_PER_DAY, "obs:", storedBudgets),
    new ObservationBudget(setup.cells, config.FS_OBSERVATION_BUDGET_PROJECT_PER_DAY, "obsp:", storedBudgets),
    { perDay: config.FS_OBSERVATION_BUDGET_PREFIX_PER_DAY, v4: config.FS_OBSERVATION_BUDGET_PREFIX_V4, v6: config.FS_OBSERVATION_BUDGET_PREFIX_V6 },
  );
  const testMode = new TestModeBudget(setup.cells, { perSecond: config.FS_TEST_MODE_PER_SECOND, perDay: config.FS_TEST_MODE_PER_DAY, dnsPerMinute: config.FS_TEST_MODE_DNS_PER_MINUTE });
  const metrics = new ServiceMetrics({
    pool,
    store,
    ipDatasets,
    journals: [
      { name: "charges", written: () => debits.journal.lastSeq, applied: debits.applied },
      { name: "observations", written: () => observations.journal.lastSeq, applied: observations.applied },
    ],
    bodies,
    log: createLogger(config.FS_LOG_LEVEL, "access"),
    accessLogSample: config.FS_ACCESS_LOG_SAMPLE,
    thread: setup.index,
    beacon: { rateLimited: beaconLimits.refused, budget: observationBudget },
    testMode: testMode.refused,
  });
  activateMetrics(metrics);
  // On a cluster node a beacon call's project is read (if need be) before the call starts.
  const beforeCall = records ? (k: KeyRecord) => void (k.type === "publishable" && k.project_id !== null && projects.get(k.project_id)) : undefined;
  const recordUse = keyUseRecorder((keyId, atMs) => store.send({ op: "key.used", keyId, atMs }));
  const auth = new Authenticator(records ? { keys: records.table("keys") } : local!, setup.adminTokenHash, beforeCall, recordUse);
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
    flushLedger: debits.forwarder.flush,
    ledgerBehind: () => debits.shipper.behind(),
    ipDatasets,
    reads,
    beacon: {
      projects,
      tokens: new BeaconTokens(Buffer.from(setup.secrets.beacon, "hex"), config.FS_BEACON_TOKEN_TTL_SECONDS * 1000),
      trusted,
      ipDatasets,
      rdns,
      journal: observations.journal,
      limits: beaconLimits,
      budget: observationBudget,
      blocks: new BlockNotifier(store),
      sessionProofMs: config.FS_OBSERVATION_RETENTION_DAYS * 86_400_000,
    },
    flushObservations: observations.forwarder.flush,
    challenge: createChallengeService({ secret: setup.secrets.challenge, projects, spend: storeSpender(store) }),
    content: new ContentBatcher(pool, loadContentModel()),
    learning,
    feedbackLimit: new FeedbackLimit(config.FS_FEEDBACK_PER_MINUTE),
    scans: new ReportScans(
      { stateDir: setup.stateDir, pg: cluster ? { url: cluster.url, timeoutMs: cluster.timeoutMs, name: `fs-scan:${cluster.nodeId}:${setup.index}` } : null },
      (err, inFlight) => log.error("scan thread lost; its reports answered 503 NOT_READY, the next one starts another", { reason: err.message, in_flight: inFlight }),
    ),
    testHistory: new ObservationBudget(setup.cells, config.FS_TEST_HISTORY_PER_DAY, "testchecks:"),
    testMode,
    pseudonyms: new Pseudonymizer(setup.secrets.identifier),
    billing,
    email: { mx: createMxResolver(config) },
    rdns,
    metrics,
    idempotency: debits.idempotency,
    peers,
    front: { index: setup.index, threads: setup.threads },
  };
  const server = await listener(deps, beaconAsset, setup.port);
  const refresher = pgPool ? createRefresher(pgPool, config, { auth, projects, quota, learning }, log) : null;
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
      debits.journal.close();
      observations.journal.close();
      debits.forwarder.flush();
      observations.forwarder.flush();
      await debits.shipper.drain();
      await observations.shipper.drain();
      return { chargesWaiting: debits.shipper.waiting };
    },
    async close() {
      if (setup.index > 0) server.closeAll();
      bodies.deadlines.close();
      peers.close();
      await deps.scans.close();
      await pgPool?.close();
      await pool.close();
    },
  };
}

/** The IP dataset holder; the first thread deletes builds older than the one in service and the one before it. */
function openIpDatasets(config: Config, index: number, log: Logger): IpDatasetHolder {
  const ipDatasets = new IpDatasetHolder(
    config.DATA_DIR,
    index === 0
      ? ({ deleted, failed }) => {
          if (deleted.length > 0) log.info("old dataset builds deleted", { versions: deleted });
          for (const f of failed) log.warn("old dataset build not deleted", { version: f.version, reason: f.reason });
        }
      : null,
  );
  if (index === 0) {
    const ipMeta = ipDatasets.get().meta;
    log.info("dataset open", { ip: ipMeta.version, source: ipMeta.source, built_at: ipMeta.built_at });
  }
  return ipDatasets;
}

/** This thread's scoring pool, once it answers; its threads follow a dataset switch. */
async function startScoringPool(config: Config, setup: FrontSetup, ipDatasets: IpDatasetHolder, log: Logger): Promise<ScoringPool> {
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
  return pool;
}

/** The body buffers of one of `threads` front threads: the pools are shared out between them, a client's or an org's share is per thread. */
function createBodyIntake(config: Config, threads: number, trusted: TrustedProxies): BodyIntake {
  return {
    budget: new BodyBudget(
      {
        public: Math.ceil(config.FS_BODY_BUFFER_PUBLIC_BYTES / threads),
        webhook: Math.ceil(config.FS_BODY_BUFFER_WEBHOOK_BYTES / threads),
        keyed: Math.ceil(config.FS_BODY_BUFFER_BYTES / threads),
      },
      { public: config.FS_BODY_BUFFER_PER_CLIENT_BYTES, webhook: config.FS_BODY_BUFFER_PER_CLIENT_BYTES, keyed: config.FS_BODY_BUFFER_PER_ORG_BYTES },
      config.FS_RETRY_AFTER_SECONDS,
      config.FS_BODY_BUFFER_PER_NETWORK_BYTES,
    ),
    deadlines: new BodyDeadlines(config.FS_BODY_TIMEOUT_MS, config.FS_BODY_MIN_BYTES_PER_SECOND, config.FS_BODY_RATE_WINDOW_MS, config.FS_BODY_UNPROVEN_BYTES),
    trusted,
  };
}

function createRdnsResolver(config: Config): RdnsResolver {
  return new RdnsResolver({
    dns: systemDns(config.FS_DNS_SERVERS.length > 0 ? config.FS_DNS_SERVERS : undefined),
    timeoutMs: config.FS_RDNS_TIMEOUT_MS,
    ttlMs: config.FS_RDNS_TTL_SECONDS * 1000,
    negativeTtlMs: config.FS_RDNS_NEGATIVE_TTL_SECONDS * 1000,
    maxEntries: config.FS_RDNS_CACHE_SIZE,
    canary: config.FS_RDNS_CANARY,
  });
}

function createMxResolver(config: Config): MxResolver {
  return new MxResolver({
    dns: systemMxDns(config.FS_DNS_SERVERS.length > 0 ? config.FS_DNS_SERVERS : undefined),
    canary: config.FS_MX_CANARY,
    timeoutMs: config.FS_RDNS_TIMEOUT_MS,
    ttlMs: config.FS_RDNS_TTL_SECONDS * 1000,
    negativeTtlMs: config.FS_RDNS_NEGATIVE_TTL_SECONDS * 1000,
    maxEntries: config.FS_RDNS_CACHE_SIZE,
  });
}

/** The quota's view of a cluster node's credit leases; a lapsed chain restarts once `caughtUp`. */
function leaseSource(leases: ClusterLeases, caughtUp: () => boolean): LeaseSource {
  return { chain: () => leases.chain(), grant: (o, p, q, n) => leases.grant(o, p, q, n), lowWater: leases.lowWater, wake: () => leases.wake(caughtUp) };
}

/**
 * In a cluster: cached keys, projects and plans are read again every FS_CLUSTER_CACHE_MS, so a
 * change made on another node applies here within that bound.
 */
function createRefresher(
  pgPool: PgPool,
  config: Config,
  caches: { auth: Authenticator; projects: ProjectDirectory; quota: QuotaGate; learning: OrgLearningCache },
  log: Logger,
): ClusterRefresher {
  const { auth, projects, quota, learning } = caches;
  return new ClusterRefresher(
    pgPool,
    [
      { table: "keys", ids: () => auth.cachedKeyIds(), update: (id, k: KeyRecord | undefined) => (k ? auth.rememberKey(k) : auth.forgetKey(id)) },
      { table: "projects", ids: () => projects.cachedIds(), update: (id, p: ProjectRecord | undefined) => (p ? projects.remember(p) : projects.forget(id)) },
      { table: "orgs", ids: () => quota.orgIds(), update: (_id, o: OrgRecord | undefined) => o && quota.orgChanged(o) },
      { table: "org_learning", ids: () => learning.orgIds(), update: (id, l: OrgLearningRecord | undefined) => learning.refreshed(id, l) },
    ],
    config.FS_CLUSTER_CACHE_MS,
    (err) => log.warn("cached records not refreshed: PostgreSQL unreachable; serving what is cached", { reason: err.message }),
  );
}

/** Front threads one node may run (observation numbers make room for this many per node). */
export const MAX_FRONT_THREADS = 16;

/** The logger of front thread `index` (its lines say which thread wrote them). */
export function frontLogger(config: Config, index: number): Logger {
  // The main thread resolved FS_LOG_FORMAT (`auto`) before it passed the config on.
  setLogFormat(config.FS_LOG_FORMAT);
  return index === 0 ? createLogger(config.FS_LOG_LEVEL, "main") : createLogger(config.FS_LOG_LEVEL, `front-${index}`);
}
