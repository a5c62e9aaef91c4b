/**
 * Runs the tests that read data the repository does not ship (test/corpora/): the content
 * model's evaluations on the labelled text corpora, the lead-word pre-check against the golden
 * answers the code before it gave on the same texts, and, with --sources, data/sources.json
 * against a full directory of the sources layout.
 *
 *   npm run test:corpora -- TEXT_DIR [--sources DIR]
 *
 * The folders are handed to the tests as FS_CORPORA_TEXT_DIR and FS_SOURCES_DIR; a test whose
 * folder is missing fails, it never skips.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { REPO_ROOT } from "../src/config/index.js";

const USAGE = "usage: npm run test:corpora -- TEXT_DIR [--sources DIR]";

function main(argv: string[]): number {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: { sources: { type: "string" } } });
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const [text, ...rest] = parsed.positionals;
  if (!text || rest.length > 0) {
    console.error(USAGE);
    return 2;
  }
  for (const dir of [text, parsed.values.sources]) {
    if (dir !== undefined && !existsSync(dir)) {
      console.error(`${dir}: no such directory`);
      return 2;
    }
  }
  const files = ["test/corpora/content-model.test.ts", "test/corpora/content-lead-words.test.ts", ...(parsed.values.sources ? ["test/corpora/sources-layout.test.ts"] : [])];
  const env = { ...process.env, FS_CORPORA_TEXT_DIR: resolve(text), ...(parsed.values.sources ? { FS_SOURCES_DIR: resolve(parsed.values.sources) } : {}) };
  const vitest = join(REPO_ROOT, "node_modules", ".bin", "vitest");
  const run = spawnSync(vitest, ["run", "--config", "vitest.corpora.config.ts", ...files], { cwd: REPO_ROOT, env, stdio: "inherit" });
  return run.status ?? 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exit(main(process.argv.slice(2)));
