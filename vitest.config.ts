import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { scaled } from "./test/helpers/time.js";

/**
 * Unit tests and the in-process app's tests three files at a time, then integration tests that
 * start the real server (uWS, LMDB, pool threads) as a child process from dist/ (built by `npm
 * test` first), two files at a time, then the cluster's and the browser's one at a time. Threads a test starts in its own process (the writer, the scoring pool) run the
 * TypeScript sources, as the test does: each test process registers test/helpers/ts-hooks.mjs,
 * and worker threads inherit its execArgv.
 */
const execArgv = ["--import", fileURLToPath(new URL("./test/helpers/ts-register.mjs", import.meta.url))];
/** Files in test/app/ that use no store (the scoring pool alone): run once, not again on PostgreSQL. */
const STORE_FREE = ["test/app/content-batcher.test.ts", "test/app/pool.overload.test.ts"];
/**
 * The Next.js middleware's file builds its example app (`next build`, a minute or more) into the
 * example's folder: once per run, not again on PostgreSQL (the service calls it makes are the
 * Express and Fastify ones, which run on both stores).
 */
const NEXT_BUILD = "packages/next/test/next.test.ts";
/** Integration files about the embedded LMDB store itself, or that run their own PostgreSQL. */
/** The cluster's files (project "cluster"). */
const CLUSTER = "test/integration/cluster*.test.ts";
const LMDB_ONLY = [
  CLUSTER,
  "test/integration/writer.isolation.test.ts",
  "test/integration/data-build.*.test.ts",
  "test/integration/datasets.switch.test.ts",
  // Fills the stopped server's LMDB state directly (40,000 observations in a second).
  "test/integration/reports.isolation.security.test.ts",
];
/**
 * Integration files about the HTTP front alone (its parser, body budgets and deadlines, proxies'
 * headers, the envelope, dataset builds on disk): what they assert never reaches the store, so
 * they run once, on LMDB, not again on PostgreSQL.
 */
const FRONT_ONLY = [
  "test/integration/app-parity.test.ts",
  "test/integration/body.memory.test.ts",
  "test/integration/body.security.test.ts",
  "test/integration/client-address.security.test.ts",
  "test/integration/datasets.prune.test.ts",
  "test/integration/http.envelope.test.ts",
  "test/integration/http.headers.security.test.ts",
  "test/integration/router.internal-error.test.ts",
];
/**
 * How many test files run at once. vitest's default on this 2-core machine is one (cores - 1), so
 * the suite ran file after file while most of them wait: on a spawned server's start, on a
 * killed process, on PostgreSQL, on a stalled link. Tests wait for conditions and scale their
 * hang bounds with the load (test/helpers/time.ts), so they hold with others beside them.
 */
const IN_PROCESS_WORKERS = 3;
const SPAWNING_WORKERS = 2;

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          maxWorkers: IN_PROCESS_WORKERS,
          execArgv,
          // Pure modules: each file does its own setup, so the modules are loaded once per worker.
          isolate: false,
          include: ["test/unit/**/*.test.ts"],
          // The run's IP dataset build, read by test/unit/ip-facts.test.ts.
          globalSetup: ["test/integration/global-setup.ts"],
          testTimeout: scaled(60_000),
          hookTimeout: scaled(180_000),
        },
      },
      {
        test: {
          name: "integration",
          maxWorkers: SPAWNING_WORKERS,
          sequence: { groupOrder: 1 },
          execArgv,
          include: ["test/integration/**/*.test.ts"],
          exclude: [CLUSTER],
          globalSetup: ["test/integration/global-setup.ts"],
          testTimeout: scaled(60_000),
          hookTimeout: scaled(180_000),
        },
      },
      {
        // Clusters of nodes on their own PostgreSQL, with faults injected in their links: each
        // file loads the machine with several servers and measures latencies, so one at a time,
        // after the others.
        test: {
          name: "cluster",
          execArgv,
          include: [CLUSTER],
          globalSetup: ["test/integration/global-setup.ts"],
          fileParallelism: false,
          testTimeout: scaled(60_000),
          hookTimeout: scaled(180_000),
        },
      },
      {
        // The same integration suite with every test server on PostgreSQL (FS_STORE=postgres),
        // a real server started by global-setup-pg.ts. Left out: files about the embedded store
        // itself (LMDB environments, its meter-window files, its writer's size limits), the
        // cluster tests, which start their own PostgreSQL (project "cluster"), and files about
        // the front alone.
        test: {
          name: "integration-pg",
          maxWorkers: SPAWNING_WORKERS,
          sequence: { groupOrder: 1 },
          execArgv,
          include: ["test/integration/**/*.test.ts"],
          exclude: [...LMDB_ONLY, ...FRONT_ONLY],
          globalSetup: ["test/integration/global-setup-pg.ts"],
          testTimeout: scaled(60_000),
          hookTimeout: scaled(180_000),
        },
      },
      {
        // Tests about an answer's content: the app in the test's own process, called without a
        // socket (test/helpers/app.ts), over a real writer thread, LMDB and scoring pool; files
        // in parallel.
        test: {
          name: "app",
          maxWorkers: IN_PROCESS_WORKERS,
          execArgv,
          // Each file starts its own app; the modules are loaded once per worker process.
          isolate: false,
          include: ["test/app/**/*.test.ts", "packages/*/test/**/*.test.ts"],
          globalSetup: ["test/integration/global-setup.ts"],
          testTimeout: scaled(60_000),
          hookTimeout: scaled(180_000),
        },
      },
      {
        // The same on PostgreSQL: each app gets a database of the run's server (global-setup-pg.ts).
        test: {
          name: "app-pg",
          maxWorkers: IN_PROCESS_WORKERS,
          execArgv,
          // Each file starts its own app; the modules are loaded once per worker process.
          isolate: false,
          include: ["test/app/**/*.test.ts", "packages/*/test/**/*.test.ts"],
          exclude: [...STORE_FREE, NEXT_BUILD],
          globalSetup: ["test/integration/global-setup-pg.ts"],
          testTimeout: scaled(60_000),
          hookTimeout: scaled(180_000),
        },
      },
      {
        // The beacon in Debian's Chromium (playwright-core), against the real server.
        test: {
          name: "browser",
          execArgv,
          include: ["test/browser/**/*.test.ts"],
          globalSetup: ["test/integration/global-setup.ts"],
          fileParallelism: false,
          testTimeout: scaled(60_000),
          hookTimeout: scaled(180_000),
        },
      },
    ],
  },
});
