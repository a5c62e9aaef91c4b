import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { buildIpDataset } from "../../scripts/data-build.js";
import { REPO_ROOT } from "../../src/config/index.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A DATA_DIR holding one built IP dataset, shared read-only by every test server. */
    datasetDataDir: string;
    /** The sources directory that build read (../shared/data), or "" when it was npm-only. */
    datasetSourcesDir: string;
  }
}

/**
 * Builds the real IP dataset once for the whole integration run: from ../shared/data plus the
 * npm packages (about 10 s), or from the npm packages alone where that directory is absent.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), "fs-datasets-"));
  const shared = resolve(REPO_ROOT, "../shared/data");
  const sourcesDir = existsSync(shared) ? shared : undefined;
  await buildIpDataset({ dataDir: dir, sourcesDir, log: () => {} });
  project.provide("datasetDataDir", dir);
  project.provide("datasetSourcesDir", sourcesDir ?? "");
  return () => rmSync(dir, { recursive: true, force: true });
}
