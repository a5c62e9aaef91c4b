import { mkdirSync, mkdtempSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { STAMP_FILE, transpile } from "../../scripts/transpile.mjs";

describe("transpile (npm start's compile step)", () => {
  const root = mkdtempSync(join(tmpdir(), "fs-transpile-"));
  const outdir = join(root, "dist");
  const dirs = ["src", "scripts"];
  const opts = { root, outdir, dirs };
  mkdirSync(join(root, "src/sub"), { recursive: true });
  mkdirSync(join(root, "scripts"), { recursive: true });
  writeFileSync(join(root, "src/a.ts"), "export const a: number = 1;\n");
  writeFileSync(join(root, "src/sub/b.ts"), "export const b: string = 'b';\n");
  writeFileSync(join(root, "scripts/c.ts"), "export const c = 3;\n");
  const mtimes = () => ["src/a.js", "src/sub/b.js", "scripts/c.js"].map((f) => statSync(join(outdir, f)).mtimeMs);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("compiles every file once, then changes nothing in dist while nothing changed", async () => {
    expect(await transpile(opts)).toEqual({ compiled: true, files: 3 });
    const before = mtimes();
    const stamp = statSync(join(outdir, STAMP_FILE)).mtimeMs;
    expect(await transpile(opts)).toEqual({ compiled: false, files: 3 });
    expect(mtimes()).toEqual(before);
    expect(statSync(join(outdir, STAMP_FILE)).mtimeMs).toBe(stamp);
  });

  it("compiles again when a source file is touched, changed, added or removed", async () => {
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(root, "src/a.ts"), later, later);
    expect((await transpile(opts)).compiled).toBe(true);
    expect((await transpile(opts)).compiled).toBe(false);

    writeFileSync(join(root, "src/sub/b.ts"), "export const b: string = 'bb';\n");
    expect((await transpile(opts)).compiled).toBe(true);

    writeFileSync(join(root, "scripts/d.ts"), "export const d = 4;\n");
    expect(await transpile(opts)).toEqual({ compiled: true, files: 4 });
    expect(statSync(join(outdir, "scripts/d.js")).isFile()).toBe(true);

    unlinkSync(join(root, "scripts/d.ts"));
    expect(await transpile(opts)).toEqual({ compiled: true, files: 3 });
    expect((await transpile(opts)).compiled).toBe(false);
  });

  it("compiles again when an output, the stamp, or a stamp of ours is missing", async () => {
    unlinkSync(join(outdir, "src/a.js"));
    expect((await transpile(opts)).compiled).toBe(true);
    expect(statSync(join(outdir, "src/a.js")).isFile()).toBe(true);

    unlinkSync(join(outdir, STAMP_FILE));
    expect((await transpile(opts)).compiled).toBe(true);

    writeFileSync(join(outdir, STAMP_FILE), JSON.stringify({ tool: "tsc" }));
    expect((await transpile(opts)).compiled).toBe(true);
    expect((await transpile(opts)).compiled).toBe(false);
  });
});
