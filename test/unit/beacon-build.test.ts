import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BEACON_GZIP_BUDGET, beaconStamp, beaconUpToDate, buildBeacon, buildBeaconPackage, type BeaconBuild } from "../../scripts/build-beacon.js";
import { REPO_ROOT } from "../../src/config/index.js";

describe("buildBeacon", () => {
  const outDir = mkdtempSync(join(tmpdir(), "fs-beacon-"));
  let build!: BeaconBuild;
  let code = "";
  beforeAll(async () => {
    build = await buildBeacon(outDir);
    code = readFileSync(build.path, "utf8");
  });
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("stays within the 5 KB gzip budget", () => {
    expect(BEACON_GZIP_BUDGET).toBe(5120);
    expect(build.gzipBytes).toBeGreaterThan(500);
    expect(build.gzipBytes).toBeLessThanOrEqual(BEACON_GZIP_BUDGET);
    // The reported size is that of the file on disk.
    expect(build.bytes).toBe(Buffer.byteLength(code));
    expect(gunzipSync(gzipSync(code, { level: 9 })).toString()).toBe(code);
  });

  it("writes fs.js and fs.meta.json only, the meta matching the file", () => {
    expect(build.path).toBe(join(outDir, "fs.js"));
    const meta = JSON.parse(readFileSync(join(outDir, "fs.meta.json"), "utf8"));
    expect(meta).toEqual({ bytes: build.bytes, gzip_bytes: build.gzipBytes, sha256: build.sha256 });
    expect(build.etag).toBe(`"${build.sha256.slice(0, 32)}"`);
  });

  it("is one minified IIFE without imports, requires or a source map", () => {
    expect(code).toMatch(/^(?:"use strict";)?\(\(\)=>\{[\s\S]*\}\)\(\);\n?$/);
    expect(code.split("\n").filter(Boolean)).toHaveLength(1);
    expect(code).not.toMatch(/\bimport\s*[\s{*("'`]/);
    expect(code).not.toMatch(/\brequire\s*\(/);
    expect(code).not.toMatch(/\bexport\b/);
    expect(code).not.toMatch(/sourceMappingURL/);
  });

  it("names no other host: every endpoint derives from the script's origin", () => {
    expect(code.match(/https?:\/\/[^\s"'`)]*/g) ?? []).toEqual([]);
    expect(code).toContain("/v1/handshake");
    expect(code).toContain("/v1/collect");
    expect(code).toContain("/v1/probe");
    expect(code).toContain("/v1/report");
  });

  it("is deterministic", async () => {
    const again = await buildBeacon(outDir);
    expect(again.sha256).toBe(build.sha256);
  });

  it("type-checks beacon/ against its own tsconfig (DOM lib, no Node types)", () => {
    const tsc = join(REPO_ROOT, "node_modules/.bin/tsc");
    const r = spawnSync(tsc, ["-p", join(REPO_ROOT, "beacon/tsconfig.json")], { encoding: "utf8", cwd: REPO_ROOT });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});

describe("buildBeaconPackage (@fraudscore/beacon)", () => {
  const outDir = mkdtempSync(join(tmpdir(), "fs-beacon-pkg-"));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("is one ES module exporting init, without other imports, within the script tag's gzip budget", async () => {
    const pkg = await buildBeaconPackage(outDir);
    const code = readFileSync(pkg.path, "utf8");
    expect(pkg.path).toBe(join(outDir, "index.js"));
    expect(pkg.gzipBytes).toBeLessThanOrEqual(BEACON_GZIP_BUDGET);
    expect(code).toMatch(/export\s*\{[^}]*\binit\b[^}]*\}/);
    expect(code).not.toMatch(/\bimport\s*[\s{*("'`]/);
    expect(code).not.toMatch(/\brequire\s*\(/);
  });
});

describe("beaconUpToDate (npm start builds the beacon only when an input changed)", () => {
  const dir = mkdtempSync(join(tmpdir(), "fs-beacon-stamp-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("holds while the inputs and outputs are as stamped, and not after an input is touched or an output removed", () => {
    const input = join(dir, "index.ts");
    const output = join(dir, "fs.js");
    const stampPath = join(dir, ".build.json");
    writeFileSync(input, "export {};\n");
    writeFileSync(output, "");
    expect(beaconUpToDate(stampPath, [output])).toBe(false);
    writeFileSync(stampPath, beaconStamp([input]));
    expect(beaconUpToDate(stampPath, [output])).toBe(true);
    const later = new Date(Date.now() + 5_000);
    utimesSync(input, later, later);
    expect(beaconUpToDate(stampPath, [output])).toBe(false);
    writeFileSync(stampPath, beaconStamp([input]));
    expect(beaconUpToDate(stampPath, [output])).toBe(true);
    rmSync(output);
    expect(beaconUpToDate(stampPath, [output])).toBe(false);
  });

  it("lists every file the two bundles read", async () => {
    const outDir = mkdtempSync(join(tmpdir(), "fs-beacon-inputs-"));
    try {
      const { inputs } = await buildBeacon(outDir);
      expect(inputs).toContain("beacon/src/index.ts");
      expect(inputs.every((f) => !f.startsWith("/"))).toBe(true);
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  });
});
