import { defineConfig } from "vitest/config";

/**
 * Two projects: fast unit tests in parallel, and integration tests that start the real server
 * (uWS, LMDB, pool threads) as a child process, run one file at a time with longer timeouts.
 * Both rely on `npm test` having compiled dist/ first (worker threads load compiled JS).
 */
/** Integration files about the embedded LMDB store itself, or that run their own PostgreSQL. */
const LMDB_ONLY = ["test/integration/cluster*.test.ts", "test/integration/writer.isolation.test.ts", "test/integration/data-build.*.test.ts", "test/integration/datasets.switch.test.ts"];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/integration/global-setup.ts"],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The same integration suite with every test server on PostgreSQL (FS_STORE=postgres),
        // a real server started by global-setup-pg.ts. Left out: files about the embedded store
        // itself (LMDB environments, its meter-window files, its writer's size limits), and the
        // cluster tests, which start their own PostgreSQL and run in "integration".
        test: {
          name: "integration-pg",
          include: ["test/integration/**/*.test.ts"],
          exclude: LMDB_ONLY,
          globalSetup: ["test/integration/global-setup-pg.ts"],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The beacon in Debian's Chromium (playwright-core), against the real server.
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          globalSetup: ["test/integration/global-setup.ts"],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
