import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
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
