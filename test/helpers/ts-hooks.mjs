/**
 * Module hooks that let a thread started by a test run the TypeScript sources: vitest runs
 * src/*.ts through its own transform, but worker threads (the writer, the scoring pool, front
 * threads) are plain Node.js threads. They inherit vitest's execArgv (`--import
 * test/helpers/ts-register.mjs`, vitest.config.ts), which installs these hooks in each thread:
 * a `.js` import from a `.ts` file that has no `.js` beside it resolves to the `.ts`, and a `.ts`
 * file is stripped of its types by esbuild. Only the tests load this; a build runs dist/.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/**
 * Stripped sources by hash of path and text: esbuild (a child process per thread that uses it) is
 * started only for a file changed since the last run.
 */
const CACHE = fileURLToPath(new URL("../../node_modules/.cache/fraudscore-ts-hooks/", import.meta.url));

/** @type {import("node:module").ResolveHook} */
export async function resolve(specifier, context, next) {
  const parent = context.parentURL;
  if (parent?.startsWith("file:") && parent.endsWith(".ts") && specifier.endsWith(".js") && (specifier.startsWith(".") || specifier.startsWith("file:"))) {
    const js = new URL(specifier, parent);
    if (!existsSync(fileURLToPath(js))) {
      const ts = new URL(js.href.replace(/\.js$/, ".ts"));
      if (existsSync(fileURLToPath(ts))) return { url: ts.href, format: "module", shortCircuit: true };
    }
  }
  return next(specifier, context);
}

/** @type {import("node:module").LoadHook} */
export async function load(url, context, next) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context);
  const path = fileURLToPath(url);
  const text = await readFile(path, "utf8");
  const cached = `${CACHE}${createHash("sha256").update(path).update("\0").update(text).digest("hex").slice(0, 32)}.js`;
  const hit = await readFile(cached, "utf8").catch(() => null);
  if (hit !== null) return { format: "module", source: hit, shortCircuit: true };
  const { transform } = await import("esbuild");
  const out = await transform(text, { loader: "ts", format: "esm", target: "node20", sourcefile: path, sourcemap: "inline" });
  mkdirSync(CACHE, { recursive: true });
  const tmp = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(tmp, out.code);
  await rename(tmp, cached);
  return { format: "module", source: out.code, shortCircuit: true };
}
