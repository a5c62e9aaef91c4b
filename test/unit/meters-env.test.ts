import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { markMetersClean, migrateLegacyMeters, prepareMetersDir, readBootId } from "../../src/store/writer/meters-env.js";
import { openState, stateTransaction } from "../../src/store/state-env.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A state directory whose meters environment holds one window, written without flushes. */
async function stateWithWindow(bootId: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "fs-meters-"));
  dirs.push(dir);
  const m = prepareMetersDir(dir, bootId);
  const dbs = openState(dir, false, m.noSync);
  stateTransaction(dbs, () => dbs.meters.putSync(["org", "a:u", "login"], Buffer.from(new Float64Array([1, 1]).buffer)));
  await dbs.metersRoot.close();
  await dbs.root.close();
  return dir;
}

async function windowOf(dir: string, bootId: string | null): Promise<{ noSync: boolean; discarded: boolean; kept: boolean }> {
  const m = prepareMetersDir(dir, bootId);
  const dbs = openState(dir, false, m.noSync);
  const kept = dbs.meters.get(["org", "a:u", "login"]) !== undefined;
  await dbs.metersRoot.close();
  await dbs.root.close();
  return { noSync: m.noSync, discarded: m.discarded, kept };
}

describe("meters environment across restarts", () => {
  it("reads this machine's boot id", () => {
    const id = readBootId(); // null where the OS does not say (then commits are flushed)
    if (id !== null) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(readBootId("/nonexistent/boot_id")).toBeNull();
  });

  it("keeps the windows after a killed process on the same boot (the page cache holds them)", async () => {
    const dir = await stateWithWindow("boot-1");
    expect(await windowOf(dir, "boot-1")).toEqual({ noSync: true, discarded: false, kept: true });
  });

  it("discards them after an OS restart that followed an unclean stop (they may be torn)", async () => {
    const dir = await stateWithWindow("boot-1");
    expect(await windowOf(dir, "boot-2")).toEqual({ noSync: true, discarded: true, kept: false });
    // The new boot is on file now: a later start on this boot keeps what it writes.
    expect(await windowOf(dir, "boot-2")).toMatchObject({ discarded: false });
  });

  it("keeps them after an OS restart that followed a clean stop, and the mark is used once", async () => {
    const dir = await stateWithWindow("boot-1");
    markMetersClean(join(dir, "meters"));
    expect(await windowOf(dir, "boot-2")).toEqual({ noSync: true, discarded: false, kept: true });
    expect(existsSync(join(dir, "meters/clean"))).toBe(false);
    expect(await windowOf(dir, "boot-3")).toMatchObject({ discarded: true }); // that run did not stop cleanly
  });

  it("flushes every commit where the boot id cannot be read, and trusts such an environment", async () => {
    const dir = await stateWithWindow("boot-1");
    markMetersClean(join(dir, "meters"));
    expect(await windowOf(dir, null)).toEqual({ noSync: false, discarded: false, kept: true });
    expect(existsSync(join(dir, "meters/boot_id"))).toBe(false);
    expect(await windowOf(dir, null)).toEqual({ noSync: false, discarded: false, kept: true });
  });

  it("moves windows from the state environment (before the upgrade) into their own, once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fs-meters-"));
    dirs.push(dir);
    const dbs = openState(dir, false, prepareMetersDir(dir, "boot-1").noSync);
    const legacy = dbs.root.openDB<Buffer, [string, string, string]>({ name: "meters", encoding: "binary" });
    const log = Buffer.from(new Float64Array([5, 1, 6, 2]).buffer);
    dbs.root.transactionSync(() => legacy.putSync(["org", "a:old", "login"], log));
    const flushes: Array<() => void> = [];
    const flush = (_root: unknown, done: (err: unknown) => void) => flushes.push(() => done(null));
    expect(migrateLegacyMeters(dbs, flush)).toBe(1);
    expect(dbs.meters.get(["org", "a:old", "login"])).toEqual(log);
    // The old copy stays until the new one is on disk; a start before that copies nothing twice.
    expect([...legacy.getRange({})]).toHaveLength(1);
    expect(migrateLegacyMeters(dbs, flush)).toBe(1);
    flushes[0]!();
    expect([...legacy.getRange({})]).toHaveLength(0);
    expect(migrateLegacyMeters(dbs, flush)).toBe(0);
    await dbs.metersRoot.close();
    await dbs.root.close();
  });

  it("rewrites the boot id only when it changes, and a kill cannot leave it empty", async () => {
    const dir = await stateWithWindow("boot-1");
    const file = join(dir, "meters/boot_id");
    const before = statSync(file).mtimeMs;
    prepareMetersDir(dir, "boot-1");
    expect(statSync(file).mtimeMs).toBe(before);
    writeFileSync(`${file}.tmp`, ""); // a write cut short by a kill leaves only the temporary file
    expect(await windowOf(dir, "boot-1")).toMatchObject({ discarded: false, kept: true });
  });

  it("a boot id file without data discards nothing", () => {
    const dir = mkdtempSync(join(tmpdir(), "fs-meters-"));
    dirs.push(dir);
    prepareMetersDir(dir, "boot-1");
    writeFileSync(join(dir, "meters/boot_id"), "boot-0\n");
    expect(prepareMetersDir(dir, "boot-1").discarded).toBe(false);
  });
});
