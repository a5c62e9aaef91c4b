import { availableParallelism, hostname } from "node:os";
import { parseIp } from "../shared/ip.js";
import { z } from "zod";

/** Environment variables whose values are redacted whenever the config is printed. */
export const SECRET_KEYS = new Set(["FS_ADMIN_TOKEN", "FS_METRICS_TOKEN", "STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "DATABASE_URL"]);

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

/** Defaults for the pool: one thread per core left after the front thread, at least one. */
const defaultPoolThreads = Math.max(1, availableParallelism() - 1);

/**
 * The whole environment contract. Each field: meaning, unit, example.
 * Only src/config reads process.env; everything else receives a slice of the parsed Config.
 */
export const envSchema = z.object({
  /** TCP port the HTTP front listens on; 0 picks a free port (tests). Example: 8080. */
  PORT: port.default(8080),
  /**
   * Interface to bind. Loopback by default, so a first `npm start` (with its demo org) is not
   * reachable from other machines; 0.0.0.0 (or ::) to serve them, e.g. behind a reverse proxy.
   * Example: 127.0.0.1.
   */
  HOST: z.string().min(1).default("127.0.0.1"),
  /** Directory holding the LMDB state environment and built datasets. Example: ./data/local. */
  DATA_DIR: z.string().min(1).optional(),
  /**
   * Where orgs, keys, ledgers, sessions and observations are kept: `lmdb`, embedded in DATA_DIR
   * (one node), or `postgres`, shared by every node of a cluster (DATABASE_URL; docs/cluster.md).
   */
  FS_STORE: z.enum(["lmdb", "postgres"]).default("lmdb"),
  /** The cluster's PostgreSQL (FS_STORE=postgres). Example: postgres://fraudscore:secret@db:5432/fraudscore. */
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL").optional(),
  /**
   * This node's name in the cluster, stable across restarts (its journals' progress and its credit
   * leases are kept under it). Letters, digits, `.`, `_`, `-`. Default: the host name.
   */
  FS_NODE_ID: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "1-64 letters, digits, '.', '_' or '-'").default(hostname().replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 64) || "node"),
  /** Milliseconds one PostgreSQL statement (or connection attempt) may take before it fails. Example: 2000. */
  FS_PG_TIMEOUT_MS: positiveInt.max(60_000).default(2000),
  /** Most credits a node takes of a free-plan quota in one lease (leases shrink near the end of the quota). Example: 1000. */
  FS_LEASE_CREDITS: positiveInt.max(1_000_000).default(1000),
  /**
   * Milliseconds a node's credit lease lives in PostgreSQL unless the node renews it (it does every
   * second): a dead node's lease comes back to the org after this. Example: 60000.
   */
  FS_LEASE_TTL_MS: positiveInt.min(1000).max(3_600_000).default(60_000),
  /**
   * Milliseconds a node serves a cached key, project or org record before reading it again from
   * PostgreSQL, when no change notification reached it (the bound for a change made on another node). Example: 2000.
   */
  FS_CLUSTER_CACHE_MS: positiveInt.max(60_000).default(2000),
  /** Bearer token for /v1/admin. When unset, one is generated on first start and printed once. */
  FS_ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /** Bearer token that opens GET /metrics and nothing else (a scraper's). Unset: only the admin token does. */
  FS_METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /** Largest accepted request body in bytes; larger bodies get 413. Example: 65536. */
  FS_MAX_BODY_BYTES: positiveInt.max(16 * 1024 * 1024).default(64 * 1024),
  /**
   * Request-body bytes held at once, across every connection, for routes reached without a
   * secret key (the payment webhook, the beacon, the dashboard's forms, the demo), counted as they
   * arrive; past it, 503 OVERLOADED. Bounds what unauthenticated clients can make the process
   * hold. Shared out between the front threads. Example: 8388608 (8 MiB).
   */
  FS_BODY_BUFFER_PUBLIC_BYTES: positiveInt.max(1024 * 1024 * 1024).default(8 * 1024 * 1024),
  /**
   * The same for Stripe's webhook (POST /webhooks/stripe), a pool of its own apart from the
   * public one, so keyless senders of its large bodies cannot take what the beacon and the
   * sign-in need. Shared out between the front threads. Example: 4194304 (4 MiB).
   */
  FS_BODY_BUFFER_WEBHOOK_BYTES: positiveInt.max(1024 * 1024 * 1024).default(4 * 1024 * 1024),
  /** The same for routes that need a secret or admin key (checked before the body is read). Example: 67108864. */
  FS_BODY_BUFFER_BYTES: positiveInt.max(4 * 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  /**
   * Bytes one client address (an IPv6 /64) may hold of FS_BODY_BUFFER_PUBLIC_BYTES in bodies
   * still arriving, per front thread; past it, 503 OVERLOADED for that client only. At least the
   * largest public body (Stripe's events, 1 MiB) for such a body to arrive in pieces. Example: 1048576.
   */
  FS_BODY_BUFFER_PER_CLIENT_BYTES: positiveInt.max(1024 * 1024 * 1024).default(1024 * 1024),
  /**
   * Bytes one network (an IPv4 /24, an IPv6 /48) may hold of the public pool, and of the webhook
   * pool, in bodies still arriving, per front thread; past it, 503 OVERLOADED for that network
   * only. Example: 2097152 (2 MiB).
   */
  FS_BODY_BUFFER_PER_NETWORK_BYTES: positiveInt.max(1024 * 1024 * 1024).default(2 * 1024 * 1024),
  /** The same for one org (or the admin token) of FS_BODY_BUFFER_BYTES. Example: 8388608. */
  FS_BODY_BUFFER_PER_ORG_BYTES: positiveInt.max(4 * 1024 * 1024 * 1024).default(8 * 1024 * 1024),
  /**
   * Milliseconds a request body holding at most FS_BODY_UNPROVEN_BYTES may take to arrive after
   * its headers at any rate; after that it too must keep FS_BODY_MIN_BYTES_PER_SECOND over each
   * FS_BODY_RATE_WINDOW_MS, or it is answered 408 REQUEST_TIMEOUT and its connection closed. Example: 10000.
   */
  FS_BODY_TIMEOUT_MS: positiveInt.max(600_000).default(10_000),
  /** The rate (bytes a second) a body still arriving must keep over each FS_BODY_RATE_WINDOW_MS (past FS_BODY_UNPROVEN_BYTES or FS_BODY_TIMEOUT_MS). Example: 16384. */
  FS_BODY_MIN_BYTES_PER_SECOND: positiveInt.max(1024 * 1024 * 1024).default(16 * 1024),
  /** The window (ms) over which a body's rate is measured: a large body that stalls is cut within two. Example: 2000. */
  FS_BODY_RATE_WINDOW_MS: positiveInt.min(100).max(60_000).default(2000),
  /** Bytes a body may hold before it must prove FS_BODY_MIN_BYTES_PER_SECOND over each window. Example: 65536. */
  FS_BODY_UNPROVEN_BYTES: positiveInt.max(1024 * 1024 * 1024).default(64 * 1024),
  /**
   * Front threads: each runs the HTTP server (routing, validation, authentication, admission,
   * answers) on the same port, the kernel spreading connections over them. Default 1. Example: 2.
   */
  FS_FRONT_THREADS: positiveInt.max(16).default(1),
  /** Scoring pool threads. Example: 3. Default: cores - 1, at least 1. */
  FS_POOL_THREADS: positiveInt.max(256).default(defaultPoolThreads),
  /** Tasks that may wait in the pool queue before requests get 503 OVERLOADED. Example: 1024. */
  FS_POOL_MAX_QUEUE: positiveInt.default(1024),
  /** Seconds a client is told to wait (Retry-After) after 503 OVERLOADED. */
  FS_RETRY_AFTER_SECONDS: positiveInt.default(1),
  /**
   * Milliseconds the front gathers journaled debits before handing them to the store writer.
   * The journal is already durable; this only bounds how far the LMDB ledger trails it. Example: 20.
   */
  FS_LEDGER_FLUSH_MS: positiveInt.max(1000).default(20),
  /**
   * DNS servers for rdns enrichment, comma-separated host[:port]; empty = the system's resolvers.
   * Example: 127.0.0.1:5353,9.9.9.9.
   */
  FS_DNS_SERVERS: z
    .string()
    .default("")
    .transform((v) => v.split(",").map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:.]+)(:\d{1,5})?$/, "each server must be an IP address with an optional :port"))),
  /**
   * A domain known to receive mail: when an e-mail domain looks mailless, this one is looked up
   * too, and if it looks mailless as well the DNS is taken to be blind (air-gapped, or a resolver
   * answering NXDOMAIN for everything) and the answer counts as unresolved. Empty turns it off.
   */
  FS_MX_CANARY: z
    .string()
    .default("gmail.com")
    .pipe(z.string().regex(/^$|^(?=.{1,253}$)[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})+\.?$/, "must be a domain name, or empty to turn the check off")),
  /**
   * An IP address known to have a PTR record. When an address looks PTR-less, this one is looked
   * up too; if it has none either, the resolver is taken to be blind (air-gapped, NXDOMAIN for
   * everything) and the rdns answer is unresolved: skipped and not charged. Empty turns it off.
   * Example: 8.8.8.8.
   */
  FS_RDNS_CANARY: z
    .string()
    .default("8.8.8.8")
    .refine((v) => v === "" || parseIp(v) !== null, "must be an IPv4 or IPv6 address, or empty to turn the check off"),
  /** Milliseconds one rdns enrichment may take (PTR + forward confirmation) before it is skipped. */
  FS_RDNS_TIMEOUT_MS: positiveInt.max(30_000).default(1500),
  /** Seconds an rdns answer is cached. */
  FS_RDNS_TTL_SECONDS: positiveInt.default(3600),
  /** Seconds a "no PTR record" answer is cached. */
  FS_RDNS_NEGATIVE_TTL_SECONDS: positiveInt.default(300),
  /** Most addresses kept in the rdns cache (LRU). */
  FS_RDNS_CACHE_SIZE: positiveInt.default(100_000),
  /**
   * Reverse proxies in front of the service, comma-separated IPs or CIDR blocks. Requests from
   * them take the client address from X-Forwarded-For (rightmost untrusted entry); empty = the
   * socket's peer address is the client. Example: 127.0.0.1,10.0.0.0/8.
   */
  FS_TRUSTED_PROXIES: z
    .string()
    .default("")
    .transform((v) => v.split(",").map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[0-9a-fA-F:.]+(\/\d{1,3})?$/, "each entry must be an IP address or CIDR block"))),
  /** Seconds a beacon handshake token stays valid. Example: 1800. */
  FS_BEACON_TOKEN_TTL_SECONDS: positiveInt.max(86_400).default(1800),
  /**
   * Beacon writes (handshake, collect, report) one client address may make per minute, at most
   * this many at once (an IPv6 address counts by its /64); past it, 429 RATE_LIMITED. Per front
   * thread. 0 turns the limit off. Example: 600.
   */
  FS_BEACON_ADDRESS_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(600),
  /** The same per project, from every address together. 0 turns the limit off. Example: 60000. */
  FS_BEACON_PROJECT_LIMIT: z.coerce.number().int().min(0).max(100_000_000).default(60_000),
  /**
   * Beacon observations recorded per org and UTC day; past it hits are answered but not
   * recorded (dropped and counted). Bounds the disk an org's publishable key can fill to this
   * times FS_OBSERVATION_RETENTION_DAYS observations. 0: no budget. Example: 50000.
   */
  FS_OBSERVATION_BUDGET_PER_DAY: z.coerce.number().int().min(0).max(1_000_000_000).default(50_000),
  /**
   * The same per project, within its org's budget: a flood of one project's key leaves the
   * rest of the org's budget to its other projects when set below the org's. 0: no budget.
   * Example: 50000.
   */
  FS_OBSERVATION_BUDGET_PROJECT_PER_DAY: z.coerce.number().int().min(0).max(1_000_000_000).default(50_000),
  /**
   * Observations one client address prefix (FS_OBSERVATION_BUDGET_PREFIX_V4 / _V6) may record
   * per project and UTC day, within the project's budget, so that the addresses of one network
   * cannot use a project's budget up. Per front thread. 0: no share. Example: 1000.
   */
  FS_OBSERVATION_BUDGET_PREFIX_PER_DAY: z.coerce.number().int().min(0).max(1_000_000_000).default(1_000),
  /** The IPv4 prefix length the share above counts by. Example: 24. */
  FS_OBSERVATION_BUDGET_PREFIX_V4: z.coerce.number().int().min(8).max(32).default(24),
  /** The IPv6 prefix length the share above counts by (at most 52). Example: 48. */
  FS_OBSERVATION_BUDGET_PREFIX_V6: z.coerce.number().int().min(16).max(52).default(48),
  /**
   * Serve the demo page at /demo (the demo org's project; see README, "Quick start"). Default: on
   * when HOST is a loopback address, off otherwise (the demo page shows a publishable key).
   */
  FS_DEMO: z
    .enum(["true", "false", "1", "0"])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "true" || v === "1")),
  /**
   * Demo submissions (POST /demo/submit, a full form check each) one client address may make
   * per minute, at most this many at once (an IPv6 address counts by its /64); past it, 429
   * RATE_LIMITED. Per front thread. 0 turns the limit off. Example: 10.
   */
  FS_DEMO_SUBMIT_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(10),
  /**
   * The same for the demo's pages (GET /demo and GET /demo/observations together; one visit
   * makes up to 12). 0 turns the limit off. Example: 120.
   */
  FS_DEMO_READ_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(120),
  /**
   * How long a demo submission waits, in milliseconds, for the beacon's report of it (sent beside
   * the form, so it may arrive a little later) before the page is answered without it. Example: 2000.
   */
  FS_DEMO_REPORT_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(2000),
  /**
   * Preview: serve POST /v1/meter (announced, not yet live). Off: the endpoint
   * answers 404 saying it is not available yet.
   */
  FS_ENABLE_METER: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  /**
   * Minutes a dashboard session (/dashboard) lasts without a request before it ends. Sessions are
   * kept in memory: a restart signs everyone out. Example: 30.
   */
  FS_DASHBOARD_IDLE_MINUTES: positiveInt.max(1440).default(30),
  /** Dashboard sessions kept for all orgs together (memory bound; each holds a few hundred bytes). Example: 10000. */
  FS_DASHBOARD_MAX_SESSIONS: positiveInt.max(1_000_000).default(10_000),
  /**
   * Dashboard sessions kept per org: a sign-in beyond it ends that org's oldest session, so no org
   * can end another's. Example: 100.
   */
  FS_DASHBOARD_SESSIONS_PER_ORG: positiveInt.max(1_000_000).default(100),
  /**
   * Wrong dashboard sign-in keys per client address, and per key id, within
   * FS_DASHBOARD_SIGNIN_WINDOW_MINUTES before further wrong keys are answered 429 (a right key
   * always signs in). Example: 10.
   */
  FS_DASHBOARD_SIGNIN_FAILURES: positiveInt.max(1_000_000).default(10),
  /** Minutes the dashboard's wrong-key counts last; past the limit each wrong key restarts them. Example: 15. */
  FS_DASHBOARD_SIGNIN_WINDOW_MINUTES: positiveInt.max(1440).default(15),
  /**
   * Most observations (and, apart, most checks) one traffic report reads (GET
   * /v1/projects/{projectId}/traffic, the dashboard's Traffic page): past it the report says
   * `partial` and covers the newest part of its range. A read costs the front thread a few
   * microseconds of CPU per observation (docs/operations.md), in slices of 2,000 with other
   * requests served between them. Example: 100000.
   */
  FS_TRAFFIC_SCAN_LIMIT: positiveInt.max(10_000_000).default(100_000),
  /**
   * Most stored hits, and apart most stored checks, one bot-policy replay re-decides (POST
   * /v1/projects/{projectId}/bot-policy/replay, the dashboard's policy preview), newest first:
   * past it the answer says `partial` and covers the newest ones. Each is parsed and re-decided
   * on the front thread that answers (bench/README.md gives the cost). Example: 20000.
   */
  FS_REPLAY_SCAN_LIMIT: positiveInt.max(1_000_000).default(20_000),
  /** Days beacon observations and their sessions are kept. Example: 30. */
  FS_OBSERVATION_RETENTION_DAYS: positiveInt.max(3650).default(30),
  /**
   * POST /v1/feedback calls per org per minute (per front thread), past which 429 RATE_LIMITED:
   * each one rewrites the org's model in a writer commit. 0 turns the limit off. Example: 600.
   */
  FS_FEEDBACK_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(600),
  /**
   * Checks of test-mode keys kept in an org's (test) check history per UTC day: test keys are
   * charged nothing, so their history is bounded here instead of by the quota. Past it a test
   * check is answered as usual and not kept. Example: 1000.
   */
  FS_TEST_HISTORY_PER_DAY: positiveInt.max(1_000_000).default(1000),
  /**
   * Calls of the metered routes a test-mode key's org may make a second (as many at once), per
   * front thread; past it 429 RATE_LIMITED. Test keys are charged nothing, so this and the daily
   * count stand for the quota. 0 turns the limit off. Example: 25.
   */
  FS_TEST_MODE_PER_SECOND: z.coerce.number().int().min(0).max(1_000_000).default(25),
  /** Calls of the metered routes an org's test-mode keys may make a UTC day, per process; past it 429 RATE_LIMITED. 0: no count. Example: 10000. */
  FS_TEST_MODE_PER_DAY: z.coerce.number().int().min(0).max(100_000_000).default(10_000),
  /**
   * DNS lookups (MX, reverse DNS) an org's test-mode calls may send a minute (as many at once), per
   * front thread; past it a lookup is answered from the cache or skipped. 0: no bound. Example: 30.
   */
  FS_TEST_MODE_DNS_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(30),
  /** Days a session-resolution binding counts towards shared-account figures. Example: 90. */
  FS_BINDING_RETENTION_DAYS: positiveInt.max(3650).default(90),
  /**
   * Stripe (billing). The service starts without them; billing endpoints then answer 503
   * BILLING_NOT_CONFIGURED. Secret API key, e.g. sk_live_... / sk_test_....
   */
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  /** Signing secret of the webhook endpoint (whsec_...); without it webhooks are refused. */
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  /** Price ids: the monthly price and the metered overage price of each paid plan. */
  STRIPE_PRICE_PRO: z.string().min(1).optional(),
  STRIPE_PRICE_PRO_OVERAGE: z.string().min(1).optional(),
  STRIPE_PRICE_BUSINESS: z.string().min(1).optional(),
  STRIPE_PRICE_BUSINESS_OVERAGE: z.string().min(1).optional(),
  /** Event name of the Stripe billing meter the overage prices are attached to. */
  STRIPE_METER_EVENT_NAME: z.string().min(1).default("fraudscore_overage_credits"),
  /** Where the SDK connects (tests point it at a local Stripe-compatible server). */
  STRIPE_API_HOST: z.string().min(1).optional(),
  STRIPE_API_PORT: port.optional(),
  STRIPE_API_PROTOCOL: z.enum(["http", "https"]).optional(),
  /** Milliseconds one Stripe call may take before it fails (the caller gets 502; scoring is unaffected). */
  STRIPE_TIMEOUT_MS: positiveInt.max(120_000).default(10_000),
  /** How often overage is reported to Stripe's meter, in milliseconds. */
  FS_OVERAGE_REPORT_MS: positiveInt.max(86_400_000).default(60_000),
  /** Outbound webhooks (docs/integrations.md): deliveries in flight at once over all endpoints. Example: 8. */
  FS_WEBHOOK_CONCURRENCY: positiveInt.max(256).default(8),
  /** Milliseconds one webhook attempt may take before it counts as failed (and is retried). Example: 10000. */
  FS_WEBHOOK_TIMEOUT_MS: positiveInt.max(120_000).default(10_000),
  /** Waits before the 1st, 2nd... retry of a webhook, in milliseconds, comma-separated; the last repeats. */
  FS_WEBHOOK_BACKOFF_MS: z
    .string()
    .regex(/^\d+(,\d+)*$/, "comma-separated milliseconds, e.g. 5000,30000")
    .default("5000,30000,120000,600000,3600000")
    .transform((v) => v.split(",").map(Number)),
  /** Hours a webhook is retried before it is marked failed and dropped. Example: 24. */
  FS_WEBHOOK_RETRY_HOURS: positiveInt.max(720).default(24),
  /** Webhook entries waiting per org (over its endpoints); events past it are dropped and logged. Example: 1000. */
  FS_WEBHOOK_OUTBOX_MAX: positiveInt.max(1_000_000).default(1_000),
  /** Delivery attempts kept in each webhook endpoint's log. Example: 100. */
  FS_WEBHOOK_LOG_MAX: positiveInt.max(10_000).default(100),
  /**
   * Projects one org may have: the next create is refused with 409 LIMIT_EXCEEDED. Example: 1000.
   */
  FS_MAX_PROJECTS_PER_ORG: positiveInt.max(1_000_000).default(1_000),
  /**
   * API keys one org may have that are not deleted (secret and publishable, live and test,
   * disabled and expired ones included; a roll may pass it by the one key it replaces): the next
   * create is refused with 409 LIMIT_EXCEEDED. Example: 1000.
   */
  FS_MAX_KEYS_PER_ORG: positiveInt.max(1_000_000).default(1_000),
  /** Webhook endpoints per org. Example: 10. */
  FS_WEBHOOK_ENDPOINTS_MAX: positiveInt.max(1_000).default(10),
  /** Milliseconds between the deliverer's looks for due webhooks (retries, other nodes' events). Example: 1000. */
  FS_WEBHOOK_POLL_MS: positiveInt.max(60_000).default(1_000),
  /**
   * Accept `http://` webhook URLs (default: https only). For a receiver on the same host or a
   * private network; never send webhooks in clear over the internet. Example: true.
   */
  FS_WEBHOOK_ALLOW_HTTP: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  /**
   * Let webhook endpoints name non-public addresses (loopback, private, link-local, unique-local,
   * CGNAT...: shared/public-address.ts), at registration and at delivery. Default false: an org's
   * URL cannot make the service call its own host, network or cloud metadata service. For
   * self-hosters whose receivers are on their own network. Example: true.
   */
  FS_WEBHOOK_ALLOW_PRIVATE: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  /** Public base URL of the service, for default checkout/portal return URLs. Example: https://fs.example.com. */
  FS_PUBLIC_URL: z.string().url().optional(),
  /** Log level: error, warn, info or debug. */
  FS_LOG_LEVEL: z.enum(["error", "warn", "info", "debug"]).default("info"),
  /** Log lines: `json` (one object per line), `pretty` (pino-pretty), or `auto` (pretty on a terminal, json otherwise). */
  FS_LOG_FORMAT: z.enum(["auto", "json", "pretty"]).default("auto"),
  /**
   * Share of answers written to the access log (one `request` line each, component `access`):
   * 0 (default) writes none, 1 all, 0.01 one in a hundred.
   */
  FS_ACCESS_LOG_SAMPLE: z.coerce.number().min(0).max(1).default(0),
  /**
   * Test-only: honour the X-FS-Test-Now header (epoch ms) as the clock for quota periods.
   * Never enable in production. Example: true.
   */
  FS_TEST_CLOCK: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
});

export type Env = z.infer<typeof envSchema>;
