import { join } from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/config/index.js";

/**
 * The layout rules of `npm run lint` (eslint.config.js: no-restricted-paths zones and no-cycle),
 * run on fixture texts placed at paths inside src/, so the rules cannot silently go away.
 * The imported modules are real files (a zone and a cycle are only seen for imports that resolve).
 */
const eslint = new ESLint({ cwd: REPO_ROOT, overrideConfigFile: join(REPO_ROOT, "eslint.config.js") });

async function ruleIds(path: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: join(REPO_ROOT, path) });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

describe("source layout lint (docs/architecture.md, Source layout)", () => {
  it("refuses an upward import from src/shared, and the cycle it closes", async () => {
    // front/quota.ts imports shared/errors.ts: errors.ts importing quota.ts is both.
    const ids = await ruleIds("src/shared/errors.ts", 'import { QuotaGate } from "../front/quota.js";\nexport const gate = QuotaGate;\n');
    expect(ids).toContain("import-x/no-restricted-paths");
    expect(ids).toContain("import-x/no-cycle");
  });

  it("refuses a cycle between two files of one folder", async () => {
    // front/quota.ts imports front/counters.ts.
    const ids = await ruleIds("src/front/counters.ts", 'import { QuotaGate } from "./quota.js";\nexport const gate = QuotaGate;\n');
    expect(ids).toEqual(["import-x/no-cycle"]);
  });

  it("keeps each thread's folder to what it may import", async () => {
    const upward: Array<[string, string]> = [
      ["src/scoring/fixture.ts", "../http/router.js"],
      ["src/datasets/fixture.ts", "../front/quota.js"],
      ["src/scoring/fixture.ts", "../store/state-env.js"],
      ["src/store/fixture.ts", "../front/quota.js"],
      ["src/store/writer/fixture.ts", "../../http/route.js"],
      ["src/pool/fixture.ts", "../front/scoring-pool.js"],
      ["src/http/routes/fixture.ts", "../../store/writer/apply.js"],
      ["src/front/fixture.ts", "../pool/scoring-worker.js"],
    ];
    for (const [path, spec] of upward) {
      expect({ path, spec, ids: await ruleIds(path, `import * as m from "${spec}";\nexport const n = m;\n`) }).toEqual({
        path,
        spec,
        ids: ["import-x/no-restricted-paths"],
      });
    }
  });

  it("lets a folder import what it may", async () => {
    const allowed: Array<[string, string]> = [
      ["src/scoring/fixture.ts", "../store/records.js"],
      ["src/front/fixture.ts", "../pool/messages.js"],
      ["src/http/routes/fixture.ts", "../../front/quota.js"],
      ["src/store/writer/fixture.ts", "../../shared/errors.js"],
    ];
    for (const [path, spec] of allowed) {
      expect({ path, spec, ids: await ruleIds(path, `import * as m from "${spec}";\nexport const n = m;\n`) }).toEqual({ path, spec, ids: [] });
    }
  });
});
