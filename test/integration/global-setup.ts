import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildIpDataset } from "../../scripts/data-build.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A DATA_DIR holding one built IP dataset, shared read-only by every test server. */
    datasetDataDir: string;
    /**
     * Set in the `integration-pg` project only (global-setup-pg.ts): the run's PostgreSQL, whose
     * databases the test servers use (FS_STORE=postgres).
     */
    postgresUrl?: string;
  }
}

/**
 * Builds the real IP dataset once for the whole integration run, as `npm start` does on a fresh
 * clone: the npm packages plus the repository's snapshot (data/snapshot/), about 10 s.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), "fs-datasets-"));
  const outcome = await buildIpDataset({ dataDir: dir, log: () => {} });
  if (!outcome.madeCurrent) throw new Error(`the test dataset was not made current: ${outcome.summary}`);
  project.provide("datasetDataDir", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
