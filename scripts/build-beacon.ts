/**
 * Builds the browser beacon (beacon/src; docs/api.md, "Beacon") into one minified IIFE, `dist/beacon/fs.js`,
 * plus `fs.meta.json` ({ bytes, gzip_bytes, sha256 }) beside it. The service serves the file at
 * `GET /js/fs.js`. Run: `node dist/scripts/build-beacon.js [outDir]`.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { build, version as esbuildVersion, type Metafile } from "esbuild";
import { REPO_ROOT } from "../src/config/index.js";
import { createLogger, setLogFormat } from "../src/shared/log.js";

/** The beacon's size budget, gzipped (bytes). The unit test fails past it. */
export const BEACON_GZIP_BUDGET = 5120;

/** What one build produced. */
export interface BeaconBuild {
  /** Absolute path of the written fs.js. */
  path: string;
  /** Size of fs.js in bytes. */
  bytes: number;
  /** Size after gzip -9 (what a compressing front end sends, near enough). */
  gzipBytes: number;
  /** A strong ETag for the file, quoted: the first 32 hex characters of its sha256. */
  etag: string;
  /** Full sha256 of the file, hex. */
  sha256: string;
  /** The files esbuild read, relative to the repository. */
  inputs: string[];
}

/**
 * Bundles beacon/src/index.ts with esbuild (iife, es2019, minified, no source map) and writes it
 * into `outDir` by temp file and rename, so a running server never reads half a file.
 * @param outDir defaults to `<repo>/dist/beacon`
 * @example const { gzipBytes } = await buildBeacon();
 */
export async function buildBeacon(outDir = join(REPO_ROOT, "dist/beacon")): Promise<BeaconBuild> {
  const result = await build({
    entryPoints: [join(REPO_ROOT, "beacon/src/index.ts")],
    tsconfig: join(REPO_ROOT, "beacon/tsconfig.json"),
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2019",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    charset: "utf8",
    write: false,
    metafile: true,
    absWorkingDir: REPO_ROOT,
    logLevel: "silent",
  });
  const code = Buffer.from(result.outputFiles[0]!.contents);
  const sha256 = createHash("sha256").update(code).digest("hex");
  const gzipBytes = gzipSync(code, { level: 9 }).length;
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, "fs.js");
  const meta = { bytes: code.length, gzip_bytes: gzipBytes, sha256 };
  writeAtomic(path, code);
  writeAtomic(join(outDir, "fs.meta.json"), JSON.stringify(meta, null, 2) + "\n");
  return { path, bytes: code.length, gzipBytes, etag: `"${sha256.slice(0, 32)}"`, sha256, inputs: inputsOf(result.metafile) };
}

/**
 * Bundles the npm package @fraudscore/beacon (packages/beacon/src/index.ts, which imports the same
 * sources as the script tag) into one minified ES module, `packages/beacon/dist/index.js`, for the
 * same browsers and under the same gzip budget as fs.js. Its types come from `tsc -b packages/beacon`.
 * @example const { gzipBytes } = await buildBeaconPackage();
 */
export async function buildBeaconPackage(outDir = join(REPO_ROOT, "packages/beacon/dist")): Promise<Omit<BeaconBuild, "etag" | "sha256">> {
  const result = await build({
    entryPoints: [join(REPO_ROOT, "packages/beacon/src/index.ts")],
    tsconfig: join(REPO_ROOT, "beacon/tsconfig.json"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2019",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    charset: "utf8",
    write: false,
    metafile: true,
    absWorkingDir: REPO_ROOT,
    logLevel: "silent",
  });
  const code = Buffer.from(result.outputFiles[0]!.contents);
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, "index.js");
  writeAtomic(path, code);
  return { path, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, inputs: inputsOf(result.metafile) };
}

const inputsOf = (meta: Metafile): string[] => Object.keys(meta.inputs).sort();

/**
 * The stamp of the files `builds` read (path, mtime, size of each; this script's source; esbuild's
 * version): while it is unchanged and the outputs exist, building again would write the same bytes.
 */
export function beaconStamp(inputs: readonly string[]): string {
  const h = createHash("sha256").update(`build-beacon\0${esbuildVersion}\n`);
  for (const f of [...inputs, "beacon/tsconfig.json", "scripts/build-beacon.ts"]) {
    const path = resolve(REPO_ROOT, f);
    const s = existsSync(path) ? statSync(path) : null;
    h.update(`${f}\0${s ? `${s.mtimeMs}\0${s.size}` : "-"}\n`);
  }
  return JSON.stringify({ tool: "scripts/build-beacon.ts", inputs: [...inputs], digest: h.digest("hex") });
}

/** Whether the stamp at `stampPath` still holds for its inputs and every path of `outputs` exists. */
export function beaconUpToDate(stampPath: string, outputs: readonly string[]): boolean {
  try {
    const stamp = readFileSync(stampPath, "utf8");
    const { tool, inputs } = JSON.parse(stamp) as { tool?: unknown; inputs?: unknown };
    if (tool !== "scripts/build-beacon.ts" || !Array.isArray(inputs)) return false;
    return stamp === beaconStamp(inputs as string[]) && outputs.every((p) => existsSync(p));
  } catch {
    return false;
  }
}

function writeAtomic(path: string, data: string | Buffer): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // --log-records (npm start): lines as log records of the service (FS_LOG_FORMAT; `auto`: pretty on a terminal).
  const args = process.argv.slice(2);
  const records = args.includes("--log-records");
  const positional = args.filter((a) => a !== "--log-records");
  if (records) {
    const chosen = process.env.FS_LOG_FORMAT;
    setLogFormat(chosen === "json" || chosen === "pretty" ? chosen : "auto");
  }
  const log = records ? createLogger("info", "build-beacon") : null;
  const info = (line: string, fields: Record<string, unknown>): void => (log ? log.info(line, fields) : console.log(`[build-beacon] ${line}`));
  const fail = (line: string): void => (log ? log.error(line) : console.error(`[build-beacon] ${line}`));
  const outDir = positional[0] ? resolve(positional[0]) : join(REPO_ROOT, "dist/beacon");
  // Nothing changed since the last build (npm start runs this on every start): keep both files.
  const stampPath = join(outDir, ".build.json");
  const outputs = [join(outDir, "fs.js"), join(outDir, "fs.meta.json"), join(REPO_ROOT, "packages/beacon/dist/index.js")];
  if (beaconUpToDate(stampPath, outputs)) {
    info(`${outputs[0]} up to date; nothing built`, { path: outputs[0], built: false });
    process.exit(0);
  }
  Promise.all([buildBeacon(outDir), buildBeaconPackage()]).then(
    ([b, pkg]) => {
      writeAtomic(stampPath, beaconStamp([...new Set([...b.inputs, ...pkg.inputs])].sort()));
      info(`${pkg.path}: ${pkg.bytes} bytes, ${pkg.gzipBytes} gzipped`, { path: pkg.path, bytes: pkg.bytes, gzip_bytes: pkg.gzipBytes });
      info(`${b.path}: ${b.bytes} bytes, ${b.gzipBytes} gzipped (budget ${BEACON_GZIP_BUDGET})`, { path: b.path, bytes: b.bytes, gzip_bytes: b.gzipBytes, budget: BEACON_GZIP_BUDGET });
      // The unit test is the gate; a build past the budget still serves, loudly.
      if (b.gzipBytes > BEACON_GZIP_BUDGET) fail(`over the ${BEACON_GZIP_BUDGET}-byte gzip budget`);
      process.exit(0);
    },
    (err: unknown) => {
      fail(`failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
