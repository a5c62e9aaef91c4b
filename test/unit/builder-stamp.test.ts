import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { builderStamp } from "../../scripts/data-build.js";
import { REPO_ROOT } from "../../src/config/index.js";

describe("builderStamp (the builder's part of a dataset build's inputs hash)", () => {
  const root = mkdtempSync(join(tmpdir(), "fs-builder-stamp-"));
  for (const p of ["scripts/data-build.ts", "scripts/sources", "scripts/bots", "src/datasets"]) cpSync(join(REPO_ROOT, p), join(root, p), { recursive: true });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("depends on the builder's TypeScript sources only, not on what compiled them into dist/", () => {
    const stamp = builderStamp();
    expect(stamp).toMatch(/^[0-9a-f]{64}$/);
    // A copy of the sources with no dist/, then with a dist/ of other compiled code: one stamp.
    expect(builderStamp(root)).toBe(stamp);
    mkdirSync(join(root, "dist/scripts/sources"), { recursive: true });
    writeFileSync(join(root, "dist/scripts/data-build.js"), "// esbuild's output\n");
    writeFileSync(join(root, "dist/scripts/sources/acquire.js"), "// tsc's output\n");
    expect(builderStamp(root)).toBe(stamp);
  });

  it("changes when a builder source changes", () => {
    const stamp = builderStamp(root);
    appendFileSync(join(root, "src/datasets/coverage.ts"), "\n// changed\n");
    expect(builderStamp(root)).not.toBe(stamp);
  });
});
