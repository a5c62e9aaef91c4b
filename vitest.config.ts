import { defineConfig } from "vitest/config";

/**
 * Two projects: fast unit tests in parallel, and integration tests that start the real server
 * (uWS, LMDB, pool threads) as a child process, run one file at a time with longer timeouts.
 * Both rely on `npm test` having compiled dist/ first (worker threads load compiled JS).
 */
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
