import type { Config } from "../config/index.js";
import type { BodyIntake } from "./body.js";
import type { IpDatasetHolder } from "../datasets/holder.js";
import type { RdnsResolver } from "../datasets/rdns.js";
import type { Logger } from "../shared/log.js";
import type { StoreClient } from "../store/front/client.js";
import type { StoreReader } from "../store/reader.js";
import type { BeaconServices } from "../front/beacon/hits.js";
import type { ChallengeService } from "../front/challenge/index.js";
import type { EmailServices } from "../datasets/mx.js";
import type { ContentBatcher } from "../front/content-batcher.js";
import type { Pseudonymizer } from "../shared/pseudonym.js";
import type { BillingSetup } from "../front/billing/stripe.js";
import type { ScoringPool } from "../front/scoring-pool.js";
import type { Authenticator } from "../front/auth.js";
import type { QuotaGate } from "../front/quota.js";
import type { ServiceMetrics } from "../front/metrics.js";
import type { IdempotencyKeys } from "../front/idempotency.js";
import type { FrontPeers } from "../front/peers.js";
import type { OrgLearningCache } from "../front/feedback/org-learning.js";
import type { ObservationBudget } from "../front/beacon/budget.js";
import type { FeedbackLimit } from "../front/feedback/limit.js";
import type { TestModeBudget } from "../front/test-mode-budget.js";
import type { ReportScans } from "../front/traffic/scan-thread.js";

/** Services the route handlers use. Built once in main.ts. */
export interface AppDeps {
  config: Config;
  log: Logger;
  store: StoreClient;
  auth: Authenticator;
  quota: QuotaGate;
  pool: ScoringPool;
  /**
   * Sends debits still gathered on the front to the writer now, so a read through the writer
   * that follows sees every answered charge (messages to the writer keep their order).
   */
  flushLedger(): void;
  /**
   * When this thread's debits are slow to reach the ledger (a second or more; a cluster whose
   * PostgreSQL is slow or away): how many are not in it, and the age of the oldest. Null otherwise.
   */
  ledgerBehind(): { records: number; seconds: number } | null;
  /** Reverse DNS with forward confirmation, cached (include=rdns). */
  rdns: RdnsResolver;
  /** The IP dataset in service now; swappable without a restart (hot switch, rollback). */
  ipDatasets: IpDatasetHolder;
  /**
   * The store's records as routes read them (store/reader.ts; the writer thread owns every write):
   * at once on LMDB, off the event loop on a cluster node.
   */
  reads: StoreReader;
  /** Beacon: projects, tokens, trusted proxies, the observation journal. */
  beacon: BeaconServices;
  /** Sends observations gathered on the front to the writer now (before a read of them). */
  flushObservations(): void;
  /** Proof-of-work challenges: issue, verify and spend (src/front/challenge). */
  challenge: ChallengeService;
  /** Email intelligence: the MX resolver (cached, with a timeout). */
  email: EmailServices;
  /** The trained content model (data/content-model), run on the scoring pool in batches. */
  content: ContentBatcher;
  /** Each org's check history setting and own model (feedback/org-learning.ts). */
  learning: OrgLearningCache;
  /** The per-org limit on POST /v1/feedback (FS_FEEDBACK_PER_MINUTE). */
  feedbackLimit: FeedbackLimit;
  /** Traffic reports and policy replays: one at a time per org, scanned on their own thread. */
  scans: ReportScans;
  /** Test keys' checks kept in history per org and day (FS_TEST_HISTORY_PER_DAY). */
  testHistory: ObservationBudget;
  /** Test-mode keys' calls and their DNS lookups per org (FS_TEST_MODE_*; the router and the lookups). */
  testMode: TestModeBudget;
  /** Keyed hashes for identifiers the store keeps (session resolution, metering). */
  pseudonyms: Pseudonymizer;
  /** Stripe billing; null when not configured (billing endpoints answer 503). */
  billing: BillingSetup | null;
  /** The caps on request-body bytes held across connections, and the deadline of slow bodies. */
  bodies: BodyIntake;
  /** Stored answers of Idempotency-Keys (idempotency.ts). */
  idempotency: IdempotencyKeys;
  /** Prometheus metrics (GET /metrics). */
  metrics: ServiceMetrics;
  /** Changes to cached keys, projects and plans, applied here and on every other front thread. */
  peers: FrontPeers;
  /** Which front thread this is (0: the main thread's) of how many (FS_FRONT_THREADS). */
  front: { index: number; threads: number };
}
