import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { currentIpVersion, listIpBuilds, pruneIpBuilds, setCurrentIpVersion, type IpBuildInfo } from "./ip-catalog.js";
import { ipDatasetRoot, openIpDatasetDir, type IpDataset } from "./ip-dataset.js";

/** Seconds an replaced dataset stays open for requests that still hold it (async enrichment). */
const RETIRE_AFTER_MS = 60_000;

export interface SwitchResult {
  loaded: string;
  previous: string;
  changed: boolean;
}

/**
 * The IP dataset in service, swappable without a restart.
 *
 * Switching opens the new build completely (tables loaded and validated) before one assignment
 * makes it current; a request in flight keeps the object it already has, and the replaced one is
 * closed a minute later. A build that fails to open leaves the service on the old one.
 * Rollback is activating an older version that is still on disk. The bot registry is part of a
 * build (`get().bots`), so it switches and rolls back with the IP tables.
 */
export class IpDatasetHolder {
  private dataset: IpDataset;
  private loadedVersion: string;
  private readonly listeners: Array<(dir: string) => void> = [];

  /**
   * @param prune after opening and after each switch, delete builds older than the live one and
   *   the previous one (pruneIpBuilds); called with what was deleted or could not be.
   *   One holder per process prunes (the first front thread's).
   */
  constructor(
    private readonly dataDir: string,
    private readonly prune: ((outcome: ReturnType<typeof pruneIpBuilds>) => void) | null = null,
  ) {
    const version = currentIpVersion(dataDir);
    if (!version) throw new Error(`no IP dataset has been built under ${ipDatasetRoot(dataDir)}; run \`npm run data:build\``);
    assertLmdbFile(join(ipDatasetRoot(dataDir), version, "data.mdb"));
    this.dataset = openIpDatasetDir(join(ipDatasetRoot(dataDir), version));
    this.loadedVersion = version;
    this.pruneOld(null);
  }

  /** The dataset to answer with now. */
  get(): IpDataset {
    return this.dataset;
  }

  /** Version name of the dataset in service. */
  get version(): string {
    return this.loadedVersion;
  }

  /** Directory of the dataset in service (pool threads open the same one). */
  get dir(): string {
    return join(ipDatasetRoot(this.dataDir), this.loadedVersion);
  }

  /** Called with the new directory after each switch. */
  onSwitch(listener: (dir: string) => void): void {
    this.listeners.push(listener);
  }

  /** Loads whatever `current` names (after a rebuild). No-op when it is already loaded. */
  reload(): SwitchResult {
    const version = currentIpVersion(this.dataDir);
    if (!version) throw new Error("datasets/ip/current names no build");
    return this.load(version);
  }

  /** Makes `version` current on disk and in service: roll forward or back. */
  activate(version: string): SwitchResult {
    const result = this.load(version);
    setCurrentIpVersion(this.dataDir, version);
    return result;
  }

  /** Builds on disk, newest first. */
  builds(): IpBuildInfo[] {
    return listIpBuilds(this.dataDir);
  }

  private load(version: string): SwitchResult {
    const previous = this.loadedVersion;
    if (version === previous) return { loaded: version, previous, changed: false };
    const dir = join(ipDatasetRoot(this.dataDir), version);
    assertLmdbFile(join(dir, "data.mdb"));
    const next = openIpDatasetDir(dir); // throws: nothing changes
    const old = this.dataset;
    this.dataset = next;
    this.loadedVersion = version;
    setTimeout(() => old.close(), RETIRE_AFTER_MS).unref();
    for (const l of this.listeners) l(this.dir);
    // Deleting the files of a build still open (replaced less than a minute ago) is safe: open
    // files and mappings stay readable until closed, and nothing opens an older build again.
    this.pruneOld(previous);
    return { loaded: version, previous, changed: true };
  }

  private pruneOld(previous: string | null): void {
    if (!this.prune) return;
    const outcome = pruneIpBuilds(this.dataDir, this.loadedVersion, previous);
    if (outcome.deleted.length > 0 || outcome.failed.length > 0) this.prune(outcome);
  }
}

/**
 * LMDB meta page: a page header, then the magic number 0xBEEFC0DE (little endian). The header is
 * 16 bytes in classic LMDB and 24 in the LMDB 1.0 format lmdb-js builds; accept either.
 */
const LMDB_MAGIC = 0xbeefc0de;

/**
 * Refuses a file that is not an LMDB environment before lmdb opens it: lmdb-js crashes the whole
 * process (SIGSEGV) on a corrupt data.mdb instead of throwing.
 */
export function assertLmdbFile(path: string): void {
  const buf = Buffer.alloc(32);
  const fd = openSync(path, "r");
  try {
    if (readSync(fd, buf, 0, 32, 0) < 32 || (buf.readUInt32LE(16) !== LMDB_MAGIC && buf.readUInt32LE(24) !== LMDB_MAGIC)) {
      throw new Error(`${path} is not an LMDB file (bad magic)`);
    }
  } finally {
    closeSync(fd);
  }
}
