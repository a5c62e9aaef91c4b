/**
 * `npm start`'s compile step: esbuild turns every TypeScript file of src/, scripts/ and bench/
 * into dist/ (the same layout as `tsc -p tsconfig.json`), file by file, without type checking,
 * in about a second where tsc takes about 20 s on a 2-core machine. Types are checked by
 * `npm run build`, `npm test` and `npm run lint`; a type error does not stop `npm start`, as with
 * tsx or ts-node's transpile-only mode.
 *
 * Nothing is compiled when nothing changed: a stamp in dist/ (`.transpile.json`) holds a digest of
 * the inputs (each source file's path, mtime and size, this script and esbuild's version). The
 * next run compiles again only when a source file was added, removed or changed, an output is
 * missing, or the stamp is missing or not ours.
 *
 * Plain JavaScript, so it runs before dist/ exists.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build, version as esbuildVersion } from "esbuild";

/** The stamp's file name inside the output folder. */
export const STAMP_FILE = ".transpile.json";
const TOOL = "scripts/transpile.mjs";

/**
 * Compiles `dirs` of `root` into `outdir` unless the stamp says they are up to date.
 * @param {{ root?: string, outdir?: string, dirs?: string[] }} [opts] defaults: the repository, its dist/, src scripts bench
 * @returns {Promise<{ compiled: boolean, files: number }>} whether esbuild ran, and over how many files
 */
export async function transpile(opts = {}) {
  const root = opts.root ?? fileURLToPath(new URL("..", import.meta.url));
  const outdir = opts.outdir ?? join(root, "dist");
  const dirs = opts.dirs ?? ["src", "scripts", "bench"];
  const relative = dirs
    .flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
        .map((f) => join(dir, f)),
    )
    .sort();
  const stamp = JSON.stringify({ tool: TOOL, esbuild: esbuildVersion, inputs: inputsDigest(root, relative) });
  const stampPath = join(outdir, STAMP_FILE);
  if (readOr(stampPath) === stamp && relative.every((f) => existsSync(join(outdir, f.replace(/\.ts$/, ".js"))))) {
    return { compiled: false, files: relative.length };
  }
  await build({
    entryPoints: relative.map((f) => join(root, f)),
    outdir,
    outbase: root,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    logLevel: "warning",
  });
  mkdirSync(outdir, { recursive: true });
  const tmp = `${stampPath}.${process.pid}.tmp`;
  writeFileSync(tmp, stamp);
  renameSync(tmp, stampPath);
  return { compiled: true, files: relative.length };
}

/** sha256 over each input's path, mtime and size (a stat per file, no reads) and this script's text. */
function inputsDigest(root, relative) {
  const h = createHash("sha256").update(readFileSync(fileURLToPath(import.meta.url)));
  for (const f of relative) {
    const s = statSync(join(root, f));
    h.update(`${f}\0${s.mtimeMs}\0${s.size}\n`);
  }
  return h.digest("hex");
}

function readOr(path) {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await transpile();
}
