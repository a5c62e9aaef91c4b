import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { LmdbStateDbs } from "../state-env.js";
import { ensurePrivateDir, openPrivate } from "../private-files.js";

/**
 * The meter windows (POST /v1/meter) live in an LMDB environment of their own, `state/meters/`,
 * committed without a flush to disk. Every meter decision writes its window, and on this
 * project's machine an LMDB commit with its fsync costs 0.2-0.4 ms: in A/B bench runs the meter's
 * ratio to hello world went from 0.22 to 0.33 (wrk) without it. A commit still reaches the
 * kernel before the answer, so a killed process (kill -9) loses nothing answered, as everywhere
 * else in the service.
 *
 * What an unflushed commit risks is an OS crash or power loss: the environment may then be torn.
 * So it is only ever reopened after a clean stop, or by the same boot of the machine (the page
 * cache, where the commits are, was never lost): `meters/boot_id` records the boot that opened it
 * and `meters/clean` is written, after a full flush, when the writer stops cleanly. After an OS
 * restart that followed an unclean stop, the windows are discarded and start empty
 * (docs/architecture.md, "Meter windows"). Where the boot id cannot be read (not Linux), the environment flushes every commit
 * like the rest of the state.
 */
export interface MetersDir {
  path: string;
  /** Commits skip the flush to disk (safe, see above). */
  noSync: boolean;
  /** The previous environment was discarded at this start (unclean stop, then an OS restart). */
  discarded: boolean;
}

const BOOT_ID = "/proc/sys/kernel/random/boot_id";

/** This boot of the machine, or null where the OS does not say. */
export function readBootId(path = BOOT_ID): string | null {
  try {
    const id = readFileSync(path, "utf8").trim();
    return id.length > 0 ? id : null;
  } catch {
    return null;
  }
}

/**
 * Decides whether the meters environment under `stateDir` can be reopened, discards it when not,
 * and records this boot before anything is written. Call before opening it, from the writer.
 */
export function prepareMetersDir(stateDir: string, bootId: string | null = readBootId()): MetersDir {
  const path = join(stateDir, "meters");
  ensurePrivateDir(stateDir);
  ensurePrivateDir(path);
  const bootFile = join(path, "boot_id");
  const cleanFile = join(path, "clean");
  const storedBoot = existsSync(bootFile) ? readFileSync(bootFile, "utf8").trim() : null;
  const clean = existsSync(cleanFile);
  // A boot id on file means the last run committed without flushing; it is trusted only if it
  // stopped cleanly or the machine has not restarted since.
  const discarded = storedBoot !== null && !clean && storedBoot !== bootId && existsSync(join(path, "data.mdb"));
  if (discarded) {
    rmSync(join(path, "data.mdb"), { force: true });
    rmSync(join(path, "lock.mdb"), { force: true });
  }
  if (clean) unlinkSync(cleanFile);
  if (bootId === null) {
    if (storedBoot !== null) unlinkSync(bootFile); // flushed commits from now on: nothing to distrust
    syncDir(path);
    return { path, noSync: false, discarded };
  }
  // Rewritten only when it changes, and atomically (a kill mid-write must not leave it empty,
  // which a later start on the same boot would read as another boot's).
  if (storedBoot !== bootId) {
    writeDurably(`${bootFile}.tmp`, `${bootId}\n`);
    renameSync(`${bootFile}.tmp`, bootFile);
  }
  syncDir(path); // the removed marker and the boot id reach the disk before any unflushed commit
  return { path, noSync: true, discarded };
}

/** After the environment was flushed (env.sync) at a clean stop: later starts may trust it. */
export function markMetersClean(path: string): void {
  writeDurably(join(path, "clean"), "clean\n");
  syncDir(path);
}

/** Before a commit that will not be flushed, once the environment was marked clean. */
export function unmarkMetersClean(path: string): void {
  rmSync(join(path, "clean"), { force: true });
  syncDir(path);
}

function writeDurably(file: string, text: string): void {
  const fd = openPrivate(file, "w");
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Meter windows written before they had their own environment are in the state environment's
 * `meters` database: copied over once (the writer, at start), and deleted there only once the
 * copies are flushed to disk (`flush`, asynchronous), so an upgrade loses none even to an OS
 * crash; a kill before the deletion copies again what is missing. Returns how many were copied.
 */
export function migrateLegacyMeters(
  dbs: Pick<LmdbStateDbs, "root" | "metersRoot" | "meters">,
  flush: (root: LmdbStateDbs["metersRoot"], done: (err: unknown) => void) => void,
): number {
  const legacy = dbs.root.openDB<Buffer, [string, string, string]>({ name: "meters", encoding: "binary" });
  const entries = [...legacy.getRange({})];
  if (entries.length === 0) return 0;
  dbs.metersRoot.transactionSync(() => {
    for (const { key, value } of entries) if (dbs.meters.get(key) === undefined) dbs.meters.putSync(key, value);
  });
  flush(dbs.metersRoot, (err) => {
    if (err) return; // kept: the next start tries again
    dbs.root.transactionSync(() => {
      for (const { key } of entries) legacy.removeSync(key);
    });
  });
  return entries.length;
}
