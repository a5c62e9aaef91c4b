import { fileURLToPath } from "node:url";

/**
 * The file of a thread's entry module, found from the `import.meta.url` of the module that starts
 * the thread, as `new URL(specifier, base)` would: compiled, the `.js` beside it in dist/; run
 * from the sources (vitest), the `.ts`, which test threads load through test/helpers/ts-hooks.mjs.
 * A thread therefore always runs the same code as the module that started it, never a stale build.
 * @example new Worker(threadEntry("../writer/writer-thread.js", import.meta.url))
 */
export function threadEntry(specifier: string, base: string): string {
  const url = new URL(specifier, base);
  if (base.endsWith(".ts")) url.pathname = url.pathname.replace(/\.js$/, ".ts");
  return fileURLToPath(url);
}
