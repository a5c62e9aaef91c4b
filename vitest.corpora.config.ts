import { defineConfig } from "vitest/config";

/** Tests that read data the repository does not ship; run by `npm run test:corpora` (scripts/test-corpora.ts). */
export default defineConfig({
  test: {
    include: ["test/corpora/**/*.test.ts"],
    testTimeout: 1_800_000,
    hookTimeout: 1_800_000,
  },
});
