import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { scaled } from "./test/helpers/time.js";

/**
 * Fast unit tests in parallel, and integration tests that start the real server (uWS, LMDB, pool
 * threads) as a child process from dist/ (built by `npm test` first), one file at a time with
 * longer timeouts. Threads a test starts in its own process (the writer, the scoring pool) run the
 * TypeScript sources, as the test does: each test process registers test/helpers/ts-hooks.mjs,
 * and worker threads inherit its execArgv.
 */
const execArgv = ["--import", fileURLToPath(new URL("./test/helpers/ts-register.mjs", import.meta.url))];
/** Integration files about the embedded LMDB store itself, or that run their own PostgreSQL. */
/** Files in test/app/ that use no store (the scoring pool alone): run once, not again on PostgreSQL. */
const STORE_FREE = ["test/app/content-batcher.test.ts", "test/app/pool.overload.test.ts"];
const LMDB_ONLY = [
  "test/integration/cluster*.test.ts",
  "test/integration/writer.isolation.test.ts",
  "test/integration/data-build.*.test.ts",
  "test/integration/datasets.switch.test.ts",
];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          execArgv,
          include: ["test/unit/**/*.test.ts"],
          testTimeout: scaled(60_000),
          hookTimeout: scaled(180_000),
        },
      },
      {
        test: {
          name: "integration",
          execArgv,
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/integration/global-setup.ts"],
          fileParallelism: false,
          testTimeout: scaled(60_000),
          hookTimeout: scaled(180_000),
        },
      },
      {
        // The same integration suite with every test server on PostgreSQL (FS_STORE=postgres),
        // a real server started by global-setup-pg.ts. Left out: files about the embedded store
        // itself (LMDB environments, its meter-window files, its writer's size limits), and the
        // cluster tests, which start their own PostgreSQL and run in "integration".
        test: {
          name: "integration-pg",
          execArgv,
          include: ["test/integration/**/*.test.ts"],
          exclude: LMDB_ONLY,
          globalSetup: ["test/integration/global-setup-pg.ts"],
          fileParallelism: false,
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
          execArgv,
          // Each file starts its own app; the modules are loaded once per worker process.
          isolate: false,
          include: ["test/app/**/*.test.ts"],
          globalSetup: ["test/integration/global-setup.ts"],
          testTimeout: scaled(60_000),
          hookTimeout: scaled(180_000),
        },
      },
      {
        // The same on PostgreSQL: each app gets a database of the run's server (global-setup-pg.ts).
        test: {
          name: "app-pg",
          execArgv,
          // Each file starts its own app; the modules are loaded once per worker process.
          isolate: false,
          include: ["test/app/**/*.test.ts"],
          exclude: STORE_FREE,
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
