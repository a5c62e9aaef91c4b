import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildIpDataset } from "../../scripts/data-build.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A DATA_DIR holding one built IP dataset, shared read-only by every test server. */
    datasetDataDir: string;
  }
}

/** Builds the real IP dataset once for the whole integration run. */
export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), "fs-datasets-"));
  await buildIpDataset({ dataDir: dir, log: () => {} });
  project.provide("datasetDataDir", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
