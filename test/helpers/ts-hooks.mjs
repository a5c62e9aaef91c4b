/**
 * Module hooks that let a thread started by a test run the TypeScript sources: vitest runs
 * src/*.ts through its own transform, but worker threads (the writer, the scoring pool, front
 * threads) are plain Node.js threads. They inherit vitest's execArgv (`--import
 * test/helpers/ts-register.mjs`, vitest.config.ts), which installs these hooks in each thread:
 * a `.js` import from a `.ts` file that has no `.js` beside it resolves to the `.ts`, and a `.ts`
 * file is stripped of its types by esbuild. Only the tests load this; a build runs dist/.
 */
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { transform } from "esbuild";

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
  const out = await transform(await readFile(path, "utf8"), { loader: "ts", format: "esm", target: "node20", sourcefile: path, sourcemap: "inline" });
  return { format: "module", source: out.code, shortCircuit: true };
}
