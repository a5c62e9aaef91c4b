import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from "node:fs";
import { join, relative } from "node:path";
import type { TestProject } from "vitest/node";
import { REPO_ROOT } from "../../src/config/index.js";
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
 * Built test datasets, one folder per hash of their inputs. The newest few are kept, and any used in
 * the last few hours: runs in other checkouts sharing node_modules may still be reading one.
 */
const CACHE = join(REPO_ROOT, "node_modules/.cache/fraudscore-test-datasets");
const KEEP = 3;
const IN_USE_MS = 6 * 3_600_000;

/**
 * What a build reads: the npm packages (the lock file names their versions), the snapshot and the
 * manifest (data/), and the code that builds and encodes it (scripts/, src/datasets/, src/shared/).
 */
const INPUTS = ["package-lock.json", "data", "scripts", "src/datasets", "src/shared"];

/** Hex SHA-256 over every input file's path and content. */
export function datasetInputsHash(root = REPO_ROOT): string {
  const hash = createHash("sha256");
  const walk = (path: string): void => {
    const st = statSync(path);
    if (st.isDirectory()) {
      if (relative(root, path) === join("data", "local")) return;
      for (const name of readdirSync(path).sort()) walk(join(path, name));
      return;
    }
    hash.update(relative(root, path)).update("\0").update(readFileSync(path)).update("\0");
  };
  for (const input of INPUTS) if (existsSync(join(root, input))) walk(join(root, input));
  return hash.digest("hex").slice(0, 16);
}

/**
 * The real IP dataset, as `npm start` builds it on a fresh clone (the npm packages plus the
 * repository's snapshot, data/snapshot/), built once for every project and run with the same
 * inputs: a build takes about 10 s of CPU, 50 s on a loaded 2-core machine, and three projects
 * (integration, integration-pg, browser) each needed one.
 */
export default async function setup(project: TestProject): Promise<void> {
  // Projects may set up at once, each with its own instance of this module: one build for all.
  const shared = globalThis as { fsTestDataset?: Promise<string> };
  shared.fsTestDataset ??= cachedDataset();
  project.provide("datasetDataDir", await shared.fsTestDataset);
}

/** The DATA_DIR holding the build for the current inputs, built first if there is none. */
export async function cachedDataset(): Promise<string> {
  const dir = join(CACHE, datasetInputsHash());
  if (!existsSync(join(dir, "datasets"))) {
    mkdirSync(CACHE, { recursive: true });
    const tmp = mkdtempSync(join(CACHE, "building-"));
    try {
      const outcome = await buildIpDataset({ dataDir: tmp, log: () => {} });
      if (!outcome.madeCurrent) throw new Error(`the test dataset was not made current: ${outcome.summary}`);
      // Another run may have finished the same build meanwhile: then keep its folder.
      try {
        renameSync(tmp, dir);
      } catch (err) {
        if (!existsSync(join(dir, "datasets"))) throw err;
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const now = new Date();
  utimesSync(dir, now, now);
  prune(dir);
  return dir;
}

/**
 * Deletes builds beyond the KEEP most recently used that no run has used for IN_USE_MS, and builds
 * left half-done long ago.
 */
function prune(keep: string): void {
  const entries = readdirSync(CACHE).map((name) => ({ path: join(CACHE, name), name, mtime: statSync(join(CACHE, name)).mtimeMs }));
  const builds = entries.filter((e) => !e.name.startsWith("building-")).sort((a, b) => b.mtime - a.mtime);
  const stale = (e: { mtime: number }): boolean => Date.now() - e.mtime > IN_USE_MS;
  for (const old of builds.slice(KEEP)) if (old.path !== keep && stale(old)) rmSync(old.path, { recursive: true, force: true });
  const hour = 3_600_000;
  for (const e of entries) if (e.name.startsWith("building-") && Date.now() - e.mtime > hour) rmSync(e.path, { recursive: true, force: true });
}
