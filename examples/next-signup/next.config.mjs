import { fileURLToPath } from "node:url";

/**
 * The example's Next.js config. NEXT_DIST_DIR lets the tests build into a folder of their own, so
 * two runs (the app and app-pg projects) never share one build.
 * @type {import("next").NextConfig}
 */
const config = {
  distDir: process.env.NEXT_DIST_DIR ?? ".next",
  // The repository's ESLint (npm run lint) covers these files.
  eslint: { ignoreDuringBuilds: true },
  // The repository root, where the workspace packages and the lockfile are.
  outputFileTracingRoot: fileURLToPath(new URL("../..", import.meta.url)),
};

export default config;
