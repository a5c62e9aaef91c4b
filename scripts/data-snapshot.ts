/**
 * Writes the repository's snapshot of the sources layout (data/snapshot/, read by
 * scripts/data-build.ts; format in scripts/sources/snapshot.ts): every file of data/sources.json
 * (range sources, bot registries, evaluation lists) whose licence lets us redistribute it, gzipped,
 * with manifest.json and LICENCES.md. Withheld trees (data/sources.json `withheld`) are listed in
 * the manifest with the reason, never copied.
 *
 *   node dist/scripts/data-snapshot.js --from DIR [--taken YYYY-MM-DD]
 *       copy from a directory of the sources layout; each file's date comes from DIR/SOURCES.md
 *       ("Snapshot `<commit>` (<date>)" under each repository's heading), the evaluation list's
 *       `taken`, or --taken
 *   node dist/scripts/data-snapshot.js --fetch [--fetch-mirror URL]
 *       download every source from its upstream address (dated today); a failed or drifted
 *       download keeps the file already in the snapshot
 *   node dist/scripts/data-snapshot.js --check
 *       verify every file against the manifest and its parser; exit 1 on any problem
 *
 * Every file is parsed with the parser the build uses before it is written, so a drifted upstream
 * never enters the snapshot.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { parseBotRegistryBytes } from "./bots/sources.js";
import { download, readLocal, type AcquirableSource } from "./sources/acquire.js";
import { isBotNpmSource, isNpmSource, loadManifest, withheldTreeOf, type BotFileSource, type FileSource, type Manifest } from "./sources/manifest.js";
import { parseSourceFile } from "./sources/parsers.js";
import {
  SNAPSHOT_DIR, SNAPSHOT_FORMAT, loadSnapshot, parseSnapshotManifest, snapshotBytes,
  type Snapshot, type SnapshotFile, type SnapshotManifest, type WithheldFile,
} from "./sources/snapshot.js";
import { splitCsvRows } from "./text/csv.js";

/** One path of the layout and everything in data/sources.json that reads it. */
interface PathEntry {
  path: string;
  used_by: string[];
  /** How to count its rows and check its format. */
  kind: "range" | "bot" | "evaluation";
  /** The first reader, for parsing and downloading. */
  range?: FileSource;
  bot?: BotFileSource;
  upstream: string | null;
  licence: string;
  /** Evaluation lists carry their own date. */
  taken?: string;
}

/** Every path of the layout the manifest reads, in manifest order. */
export function layoutPaths(manifest: Manifest): PathEntry[] {
  const byPath = new Map<string, PathEntry>();
  const add = (path: string, id: string, make: () => PathEntry) => {
    const entry = byPath.get(path);
    if (entry) entry.used_by.push(id);
    else byPath.set(path, make());
  };
  for (const s of manifest.sources) {
    if (isNpmSource(s)) continue;
    add(s.path, s.id, () => ({ path: s.path, used_by: [s.id], kind: "range", range: s, upstream: s.upstream, licence: s.licence }));
  }
  for (const b of manifest.bots) {
    if (isBotNpmSource(b)) continue;
    add(b.path, b.id, () => ({ path: b.path, used_by: [b.id], kind: "bot", bot: b, upstream: b.upstream, licence: b.licence }));
  }
  for (const e of manifest.evaluation) {
    add(e.path, e.id, () => ({ path: e.path, used_by: [e.id], kind: "evaluation", upstream: e.upstream, licence: e.licence, taken: e.taken }));
  }
  return [...byPath.values()];
}

/** Data rows of a file in `format`; throws when the file is not in that format. */
function countRows(entry: PathEntry, bytes: Buffer, format: string): number {
  if (entry.kind === "range") return parseSourceFile(bytes, entry.range!, format).rows;
  if (entry.kind === "bot") return parseBotRegistryBytes(entry.bot!, bytes).parsed.entries.length;
  const rows = splitCsvRows(bytes.toString("utf8"));
  const header = rows.shift();
  if (!header || header.length < 1) throw new Error("empty CSV");
  const bad = rows.findIndex((r) => r.length !== header.length);
  if (bad >= 0) throw new Error(`CSV row ${bad + 2}: ${rows[bad]!.length} fields, header has ${header.length}`);
  return rows.length;
}

function formatOf(entry: PathEntry): string {
  return entry.range?.format ?? entry.bot?.format ?? "csv";
}

/** Per repository prefix (`<category>/<owner-repo>/`), the commit and date SOURCES.md states. */
export function snapshotDates(sourcesMd: string): Map<string, { commit: string; repo: string; date: string }> {
  const out = new Map<string, { commit: string; repo: string; date: string }>();
  const re = /^### `([^`]+\/)` — (\S+)\s*\n+Snapshot `([0-9a-f]{7,40})` \((\d{4}-\d{2}-\d{2})[^)]*\)/gm;
  for (const m of sourcesMd.matchAll(re)) out.set(m[1]!, { repo: m[2]!, commit: m[3]!, date: m[4]! });
  return out;
}

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Writes `bytes` gzipped at `<dir>/<path>.gz` (temporary name, then rename). */
function writeGz(dir: string, path: string, bytes: Buffer): string {
  const file = `${path}.gz`;
  const to = join(dir, file);
  mkdirSync(dirname(to), { recursive: true });
  writeFileSync(`${to}.tmp`, gzipSync(bytes, { level: 9 }));
  renameSync(`${to}.tmp`, to);
  return file;
}

type Log = (line: string) => void;

/** How a run gets each file. */
type Mode =
  | { kind: "from"; dir: string; takenDefault?: string }
  | { kind: "fetch"; mirror?: string; timeoutMs?: number };

/**
 * Rewrites the snapshot in `dir` (default data/snapshot/). Files that cannot be had or do not
 * parse keep their current copy; a shippable path with no copy at all is a problem.
 * @returns the problems (empty when every shippable path has a checked copy).
 */
export async function writeSnapshot(mode: Mode, opts: { dir?: string; manifest?: Manifest; log?: Log } = {}): Promise<string[]> {
  const dir = opts.dir ?? SNAPSHOT_DIR;
  const log = opts.log ?? (() => {});
  const manifest = opts.manifest ?? loadManifest();
  const old = loadSnapshot(dir);
  const dates = mode.kind === "from" && existsSync(join(mode.dir, "SOURCES.md")) ? snapshotDates(readFileSync(join(mode.dir, "SOURCES.md"), "utf8")) : new Map();
  const today = new Date().toISOString().slice(0, 10);
  const files: SnapshotFile[] = [];
  const withheld: WithheldFile[] = [];
  const problems: string[] = [];
  const down = new Map<string, string>();
  /** With --fetch: downloads tried, and those that failed (the old copy kept). */
  const downloads = { tried: 0, failed: 0 };
  for (const entry of layoutPaths(manifest)) {
    const tree = withheldTreeOf(manifest, entry.path);
    if (tree) {
      withheld.push({ path: entry.path, used_by: entry.used_by, upstream: entry.upstream, licence: tree.licence, reason: tree.reason });
      continue;
    }
    const keep = (why: string) => {
      const current = old.files.get(entry.path);
      if (current) {
        log(`  kept    ${entry.path}: ${why}`);
        files.push({ ...current, used_by: entry.used_by, upstream: entry.upstream, licence: entry.licence });
      } else {
        problems.push(`${entry.path}: ${why}, and the snapshot has no copy`);
      }
    };
    let bytes: Buffer;
    let format = formatOf(entry);
    let taken: string;
    let origin: string;
    if (mode.kind === "from") {
      const got = await readLocal({ path: entry.path, upstream: entry.upstream ?? "", format } as AcquirableSource, mode.dir);
      if (got.status !== "ok") {
        keep(got.reason);
        continue;
      }
      bytes = got.bytes;
      const prefix = entry.path.split("/").slice(0, 2).join("/") + "/";
      const dated = dates.get(prefix);
      const date = dated?.date ?? entry.taken ?? mode.takenDefault;
      if (!date) {
        problems.push(`${entry.path}: no date for it in ${join(mode.dir, "SOURCES.md")}; give --taken YYYY-MM-DD`);
        continue;
      }
      taken = date;
      origin = dated ? `${dated.repo}@${dated.commit.slice(0, 12)}:${entry.path.split("/").slice(2).join("/")}` : (entry.upstream ?? "recorded by the project");
    } else {
      const source = entry.range ?? entry.bot;
      if (!source || !entry.upstream) {
        keep("derived list, not downloaded");
        continue;
      }
      downloads.tried++;
      const got = await download(source as AcquirableSource, { fetchMirror: mode.mirror, timeoutMs: mode.timeoutMs }, down);
      if (got.status !== "ok") {
        downloads.failed++;
        keep(`download failed (${got.reason})`);
        continue;
      }
      ({ bytes, format, origin } = got);
      taken = today;
    }
    let rows: number;
    try {
      rows = countRows(entry, bytes, format);
    } catch (err) {
      keep(`not in the ${format} format: ${(err as Error).message}`);
      continue;
    }
    const digest = sha256(bytes);
    const same = old.files.get(entry.path);
    if (same && same.sha256 === digest && same.format === format) {
      // Unchanged upstream: the copy, its date and its file stay as they are.
      log(`  same    ${entry.path}: unchanged since ${same.taken}`);
      files.push({ ...same, used_by: entry.used_by, upstream: entry.upstream, licence: entry.licence });
      continue;
    }
    const file = writeGz(dir, entry.path, bytes);
    files.push({ path: entry.path, file, format, used_by: entry.used_by, upstream: entry.upstream, licence: entry.licence, sha256: sha256(bytes), bytes: bytes.length, rows, taken, origin });
    log(`  ok      ${entry.path}: ${rows} rows, taken ${taken}`);
  }
  if (downloads.tried > 0) log(`downloads: ${downloads.tried - downloads.failed} of ${downloads.tried} fetched; ${downloads.failed} failed (their old copies kept)`);
  if (downloads.tried > 0 && downloads.failed === downloads.tried) {
    problems.push(`no download succeeded (${downloads.failed} failed: no network, or the mirror is down); the snapshot is unchanged`);
    // One problem (nothing could be had), counted as the downloads line counts it.
    log(`snapshot: unchanged: all ${downloads.failed} downloads failed`);
    return problems;
  }
  const next: SnapshotManifest = parseSnapshotManifest({
    generated_by: "scripts/data-snapshot.ts; do not edit",
    format: SNAPSHOT_FORMAT,
    written_at: new Date().toISOString(),
    files,
    withheld,
  });
  const contents = (m: SnapshotManifest): string => JSON.stringify({ format: m.format, files: m.files, withheld: m.withheld });
  if (contents(next) === contents(old.manifest)) {
    // Nothing to say that the tracked manifest does not already say: leave it (and its date) alone.
    log(`snapshot: unchanged (${files.length} files, ${withheld.length} withheld), ${problemCount(problems)}`);
    return problems;
  }
  removeStale(dir, new Set(files.map((f) => f.file)));
  writeFileSync(join(dir, "manifest.json.tmp"), `${JSON.stringify(next, null, 2)}\n`);
  renameSync(join(dir, "manifest.json.tmp"), join(dir, "manifest.json"));
  writeFileSync(join(dir, "LICENCES.md"), licencesMarkdown(next));
  const size = files.reduce((n, f) => n + readFileSync(join(dir, f.file)).length, 0);
  log(`snapshot: ${files.length} files (${(size / 1e6).toFixed(2)} MB gzipped), ${withheld.length} withheld, ${problemCount(problems)}`);
  return problems;
}

const problemCount = (problems: readonly string[]): string => `${problems.length} problem${problems.length === 1 ? "" : "s"}`;

/** Deletes .gz files under `dir` that the new manifest does not list. */
function removeStale(dir: string, keep: ReadonlySet<string>): void {
  const walk = (at: string) => {
    for (const d of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, d.name);
      if (d.isDirectory()) walk(full);
      else if (d.name.endsWith(".gz") && !keep.has(relative(dir, full))) rmSync(full);
    }
  };
  if (existsSync(dir)) walk(dir);
}

/** LICENCES.md: per repository of the layout, its licence and how many files the snapshot ships. */
export function licencesMarkdown(m: SnapshotManifest): string {
  // A repository of the layout is `<category>/<owner-repo>/`; lists directly under a category stand alone.
  const groupOf = (path: string) => {
    const parts = path.split("/");
    return parts.length > 2 ? `${parts.slice(0, 2).join("/")}/` : path;
  };
  const repos = new Map<string, { licence: string; files: number; taken: Set<string> }>();
  for (const f of m.files) {
    const repo = groupOf(f.path);
    const r = repos.get(repo) ?? { licence: f.licence, files: 0, taken: new Set<string>() };
    r.files++;
    r.taken.add(f.taken.slice(0, 10));
    repos.set(repo, r);
  }
  const withheld = new Map<string, { licence: string; files: number }>();
  for (const w of m.withheld) {
    const repo = groupOf(w.path);
    const r = withheld.get(repo) ?? { licence: w.licence, files: 0 };
    r.files++;
    withheld.set(repo, r);
  }
  const lines = [
    "<!-- generated by scripts/data-snapshot.ts; do not edit -->",
    "# Licences of the data snapshot",
    "",
    "Each file under this directory is a gzipped, byte-for-byte copy of a file published by the repository or",
    "package named in `manifest.json` (`origin`, `upstream`), redistributed under that source's licence. The",
    "files are data read by the dataset builder, not part of the program; copyleft data (GPL, LGPL) stays in",
    "its own files under its own licence. Copyright remains with the authors named by each upstream.",
    "",
    "| Files | Licence | Taken |",
    "|---|---|---|",
    ...[...repos].map(([repo, r]) => `| \`${repo}\` (${r.files}) | ${r.licence} | ${[...r.taken].sort().join(", ")} |`),
    "",
    "## Withheld",
    "",
    "These are read by builds only with `--fetch` or `--sources DIR`; `manifest.json` gives the reason per file.",
    "",
    "| Files | Licence |",
    "|---|---|",
    ...[...withheld].map(([repo, r]) => `| \`${repo}\` (${r.files}) | ${r.licence} |`),
    "",
  ];
  return lines.join("\n");
}

/** Checks every file of the snapshot against its manifest entry and parser. Returns the problems. */
export function checkSnapshot(snapshot: Snapshot = loadSnapshot(), manifest: Manifest = loadManifest()): string[] {
  const problems: string[] = [];
  for (const entry of layoutPaths(manifest)) {
    const file = snapshot.files.get(entry.path);
    if (withheldTreeOf(manifest, entry.path)) {
      if (file) problems.push(`${entry.path}: withheld by data/sources.json but shipped`);
      else if (!snapshot.withheld.has(entry.path)) problems.push(`${entry.path}: withheld but not listed as withheld in the snapshot manifest`);
      continue;
    }
    if (!file) {
      problems.push(`${entry.path}: not in the snapshot`);
      continue;
    }
    try {
      const rows = countRows(entry, snapshotBytes(snapshot, entry.path), file.format);
      if (rows !== file.rows) problems.push(`${entry.path}: ${rows} rows, the manifest says ${file.rows}`);
    } catch (err) {
      problems.push(`${entry.path}: ${(err as Error).message}`);
    }
  }
  return problems;
}

const USAGE = `usage: node dist/scripts/data-snapshot.js (--from DIR [--taken YYYY-MM-DD] | --fetch [--fetch-mirror URL] | --check)`;

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: { from: { type: "string" }, taken: { type: "string" }, fetch: { type: "boolean" }, "fetch-mirror": { type: "string" }, check: { type: "boolean" } },
    }));
  } catch (err) {
    console.error(`[data-snapshot] ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const modes = [values.from !== undefined, values.fetch === true, values.check === true].filter(Boolean).length;
  if (modes !== 1 || (values.taken && values.from === undefined) || (values["fetch-mirror"] && !values.fetch)) {
    console.error(`[data-snapshot] give exactly one of --from, --fetch, --check\n${USAGE}`);
    return 2;
  }
  if (values.taken !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(values.taken)) {
    console.error("[data-snapshot] --taken needs YYYY-MM-DD");
    return 2;
  }
  if (values.from !== undefined && !existsSync(values.from)) {
    console.error(`[data-snapshot] --from ${values.from}: no such directory`);
    return 2;
  }
  const log: Log = (line) => console.log(`[data-snapshot] ${line}`);
  const problems = values.check
    ? checkSnapshot()
    : await writeSnapshot(values.fetch ? { kind: "fetch", mirror: values["fetch-mirror"] } : { kind: "from", dir: values.from!, takenDefault: values.taken }, { log });
  for (const p of problems) console.error(`[data-snapshot] ${p}`);
  if (values.check && problems.length === 0) log("every file matches the manifest");
  return problems.length > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`[data-snapshot] failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
