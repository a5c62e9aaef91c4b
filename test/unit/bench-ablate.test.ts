import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ablatedBuild, applyEdit, CUTS, parseCuts, type CutName } from "../../bench/http/ablate.js";
import { REPO_ROOT } from "../../src/config/index.js";

describe("ablated builds (bench/http/ablate.ts)", () => {
  const all = Object.keys(CUTS) as CutName[];
  const build = ablatedBuild(all); // `npm test` compiles dist/ first
  afterAll(() => build.cleanup());

  it("apply every cut to the current compiled code, and the edited files still parse", () => {
    for (const cut of all) {
      for (const edit of CUTS[cut]) {
        const path = join(build.root, "dist/src", edit.file);
        const text = readFileSync(path, "utf8");
        expect(text, `${cut}: ${edit.file}`).toContain(edit.replace);
        expect(readFileSync(join(REPO_ROOT, "dist/src", edit.file), "utf8"), "the real build is untouched").not.toContain(edit.replace);
        const check = spawnSync(process.execPath, ["--check", path], { encoding: "utf8" });
        expect(check.status, `${edit.file}: ${check.stderr}`).toBe(0);
      }
    }
  });

  it("serve from the copy: the copy's entry point and the real node_modules", () => {
    expect(existsSync(join(build.root, "dist/src/main.js"))).toBe(true);
    expect(existsSync(join(build.root, "node_modules/uWebSockets.js/package.json"))).toBe(true);
  });

  it("refuse an edit that does not match exactly once, and unknown cut names", () => {
    const edit = { file: "x.js", find: "a()", replace: "b()" };
    expect(applyEdit("f(); a(); g();", edit)).toBe("f(); b(); g();");
    expect(() => applyEdit("f();", edit)).toThrow(/not found/);
    expect(() => applyEdit("a(); a();", edit)).toThrow(/more than once/);
    expect(() => parseCuts(["zod", "nope"])).toThrow(/unknown cut 'nope'/);
    expect(parseCuts(["zod", "writer"])).toEqual(["zod", "writer"]);
  });
});
