import { existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION_NAME, ipDatasetRoot } from "./ip-dataset.js";

/** One build on disk, as listed for operators. */
export interface IpBuildInfo {
  version: string;
  built_at: string | null;
  source: string | null;
}

/** Every complete build under DATA_DIR/datasets/ip, newest first (version names sort by time). */
export function listIpBuilds(dataDir: string): IpBuildInfo[] {
  const root = ipDatasetRoot(dataDir);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names
    .filter((n) => VERSION_NAME.test(n) && existsSync(join(root, n, "data.mdb")))
    .sort()
    .reverse()
    .map((version) => {
      const info: IpBuildInfo = { version, built_at: null, source: null };
      try {
        const m = JSON.parse(readFileSync(join(root, version, "manifest.json"), "utf8")) as { built_at?: string; source?: string };
        info.built_at = m.built_at ?? null;
        info.source = m.source ?? null;
      } catch {
        // A build without a readable manifest is still listed; opening it will say what is wrong.
      }
      return info;
    });
}

/** The version `current` names, or null. */
export function currentIpVersion(dataDir: string): string | null {
  try {
    const name = readFileSync(join(ipDatasetRoot(dataDir), "current"), "utf8").trim();
    return VERSION_NAME.test(name) ? name : null;
  } catch {
    return null;
  }
}

/** Points `current` at `version` atomically (write a temp file, rename over). */
export function setCurrentIpVersion(dataDir: string, version: string): void {
  if (!VERSION_NAME.test(version)) throw new Error(`not a dataset version name: ${version}`);
  const root = ipDatasetRoot(dataDir);
  if (!existsSync(join(root, version, "data.mdb"))) throw new Error(`no build ${version} under ${root}`);
  const tmp = join(root, `current.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(tmp, `${version}\n`);
  renameSync(tmp, join(root, "current"));
}

/**
 * Deletes old builds: every complete build older than both `live` and `previous` (names sort by
 * build time), except the one `current` names. What is newer than either stays (a build made by
 * data:build and not loaded yet, one kept aside, the one rolled back from), so an operator can
 * still activate it. A build is renamed out of the listing first, then removed, so no reader ever
 * sees half of one.
 * @param live the build in service
 * @param previous the build it replaced; at a start null: the newest build older than `live`
 * @returns the versions deleted, and those that could not be (with the reason)
 */
export function pruneIpBuilds(dataDir: string, live: string, previous: string | null): { deleted: string[]; failed: Array<{ version: string; reason: string }> } {
  const root = ipDatasetRoot(dataDir);
  const builds = listIpBuilds(dataDir).map((b) => b.version); // newest first
  const before = previous ?? builds.find((v) => v < live) ?? live;
  const oldest = before < live ? before : live;
  const current = currentIpVersion(dataDir);
  const deleted: string[] = [];
  const failed: Array<{ version: string; reason: string }> = [];
  for (const version of builds) {
    if (version >= oldest || version === current) continue;
    const aside = join(root, `.pruned-${version}-${process.pid}`);
    try {
      renameSync(join(root, version), aside);
      deleted.push(version);
      rmSync(aside, { recursive: true, force: true });
    } catch (err) {
      failed.push({ version, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  return { deleted, failed };
}
