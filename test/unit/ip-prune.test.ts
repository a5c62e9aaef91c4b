import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pruneIpBuilds } from "../../src/datasets/ip-catalog.js";

/** Fake builds (a data.mdb is what makes a build complete for the listing) in a temporary DATA_DIR. */
let dataDir = "";
const root = () => join(dataDir, "datasets", "ip");
function builds(...versions: string[]): void {
  dataDir = mkdtempSync(join(tmpdir(), "fs-prune-"));
  for (const v of versions) {
    mkdirSync(join(root(), v), { recursive: true });
    writeFileSync(join(root(), v, "data.mdb"), "x");
  }
}
const left = () => readdirSync(root()).filter((n) => n.startsWith("ip-")).sort();
const v = (n: number) => `ip-2026010${n}T000000Z-aaaaaaaa`;

afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe("pruneIpBuilds", () => {
  it("after a switch keeps the live build, the previous one and anything newer; deletes the rest", () => {
    builds(v(1), v(2), v(3), v(4), v(5));
    writeFileSync(join(root(), "current"), `${v(4)}\n`);
    expect(pruneIpBuilds(dataDir, v(4), v(3))).toEqual({ deleted: [v(2), v(1)], failed: [] });
    expect(left()).toEqual([v(3), v(4), v(5)]);
    expect(readdirSync(root()).filter((n) => n.startsWith(".pruned"))).toEqual([]);
  });

  it("after a rollback keeps the build rolled back from and everything between", () => {
    builds(v(1), v(2), v(3), v(4));
    writeFileSync(join(root(), "current"), `${v(2)}\n`);
    expect(pruneIpBuilds(dataDir, v(2), v(4)).deleted).toEqual([v(1)]);
    expect(left()).toEqual([v(2), v(3), v(4)]);
  });

  it("at a start keeps the newest build older than the live one, and never the one current names", () => {
    builds(v(1), v(2), v(3), v(4));
    writeFileSync(join(root(), "current"), `${v(1)}\n`);
    expect(pruneIpBuilds(dataDir, v(4), null).deleted).toEqual([v(2)]);
    expect(left()).toEqual([v(1), v(3), v(4)]);
    // Alone, nothing to do.
    expect(pruneIpBuilds(dataDir, v(1), null).deleted).toEqual([]);
  });

  it("leaves incomplete directories and other files alone", () => {
    builds(v(1), v(3));
    mkdirSync(join(root(), v(2)));
    mkdirSync(join(root(), `${v(0)}.tmp`));
    pruneIpBuilds(dataDir, v(3), null);
    expect(existsSync(join(root(), v(2)))).toBe(true);
    expect(existsSync(join(root(), `${v(0)}.tmp`))).toBe(true);
  });
});
