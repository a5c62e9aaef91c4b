import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { scaled } from "../helpers/time.js";

/**
 * The dataset command as users run it (`node dist/scripts/data-build.js`, which `npm start` and
 * `npm run data:build` call): a build never silently gets worse, and bad arguments are errors.
 */
const REPO = resolve(import.meta.dirname, "../..");
let dataDir: string;

const run = (...args: string[]) => {
  const r = spawnSync(process.execPath, [join(REPO, "dist/scripts/data-build.js"), ...args], {
    env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir },
    encoding: "utf8",
    timeout: scaled(120_000),
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}`, last: `${r.stdout}${r.stderr}`.trim().split("\n").at(-1) ?? "" };
};
const current = () => readFileSync(join(dataDir, "datasets", "ip", "current"), "utf8").trim();

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "data-build-cli-"));
  // Start from the run's full build (npm + snapshot), as after a first `npm start`.
  cpSync(join(inject("datasetDataDir"), "datasets"), join(dataDir, "datasets"), { recursive: true });
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("data-build command", () => {
  it("refuses a --sources folder that does not exist (exit 2), and unknown options", () => {
    const missing = run("--sources", join(dataDir, "nowhere"));
    expect(missing.status).toBe(2);
    expect(missing.last).toMatch(/--sources .*nowhere: no such directory/);
    expect(run("--sauces").status).toBe(2);
  });

  it("keeps a worse build aside and exits 1 with a one-line summary; --force makes it current", () => {
    const before = current();
    const worse = run("--no-snapshot");
    expect(worse.status).toBe(1);
    // npm packages only: no listed source, the one bot registry that is an npm package.
    expect(worse.last).toMatch(/^\[data-build\] kept ip-\S+ aside: 0\/\d+ listed sources \+ 1\/\d+ bot registries usable, 1 in all against \d+ in the current build; the service keeps the current one/);
    expect(current()).toBe(before);
    const forced = run("--no-snapshot", "--force");
    expect(forced.status).toBe(0);
    expect(current()).not.toBe(before);
  }, scaled(120_000));

  it("--if-missing replaces a build that lacks what the snapshot offers, then leaves the full one alone", () => {
    const npmOnly = current(); // made current with --force above
    const rebuilt = run("--if-missing");
    expect(rebuilt.status).toBe(0);
    expect(rebuilt.out).toMatch(/is replaced: it has 1 usable listed sources and bot registries, the snapshot offers \d+/);
    expect(current()).not.toBe(npmOnly);
    const full = current();
    const again = run("--if-missing");
    expect([again.status, current()]).toEqual([0, full]);
    expect(again.last).toMatch(/nothing to do$/);
    // As npm start runs it: every line a JSON log record of the component data-build.
    const records = run("--if-missing", "--log-records");
    expect(records.status).toBe(0);
    const lines = records.out.trim().split("\n");
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ level: "info", component: "data-build", msg: expect.stringMatching(/nothing to do$/) });
  }, scaled(120_000));

  it("--fetch with no network exits 1 with a summary and changes nothing", () => {
    const before = current();
    // A mirror on a closed port stands for the missing network.
    const r = run("--fetch", "--fetch-mirror", "http://127.0.0.1:9/");
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/download failed \(fetch failed: [^)]+\); used the snapshot taken \d{4}-\d{2}-\d{2}/);
    // Progress says what happened, with one total; a fallback is labelled as one, never "ok".
    const lines = r.out.split("\n");
    const progress = lines.filter((l) => /^\[data-build\]\s+listed sources: tried /.test(l));
    expect(progress.length).toBeGreaterThan(0);
    const last = /tried (\d+)\/(\d+) \(0 fetched, (\d+) from a fallback, (\d+) failed\)$/.exec(progress.at(-1)!)!;
    expect(last[1]).toBe(last[2]);
    expect(Number(last[3]) + Number(last[4])).toBe(Number(last[2]));
    expect(lines.filter((l) => /^\[data-build\]\s+ok\s/.test(l) && /download failed/.test(l))).toEqual([]);
    expect(lines.filter((l) => /used the snapshot/.test(l)).every((l) => /^\[data-build\]\s+fallback /.test(l))).toBe(true);
    const downloads = /downloads: 0 of (\d+) sources fetched from upstream \((\d+) listed sources \+ (\d+) bot registry files; npm packages are read from disk\)/.exec(r.out)!;
    expect(downloads).not.toBeNull();
    expect(downloads[2]).toBe(last[2]);
    expect(Number(downloads[1])).toBe(Number(downloads[2]) + Number(downloads[3]));
    expect(r.last).toContain(`none of the ${downloads[1]} sources could be downloaded`);
    expect(r.last).toMatch(/none of the \d+ sources could be downloaded .*nothing was built and the current build stays/);
    expect(current()).toBe(before);
  }, scaled(120_000));
});
