/**
 * Getting the bot registries of data/sources.json (`bots`) for a build: the snapshot files the
 * same way as range sources (--sources DIR, --fetch, --fetch-mirror, local fallback; see
 * ../sources/acquire.ts), crawler-user-agents from its npm package. Each document is decoded and
 * run through its strict parser (./registry.ts); a registry that is missing, unreachable or drifted
 * is reported and left out of the merge, never thrown.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { acquireSources, type AcquireOptions, type Acquired } from "../sources/acquire.js";
import { isBotNpmSource, type BotFileSource, type BotNpmSource, type BotRegistrySource, type Manifest } from "../sources/manifest.js";
import {
  parseAiRobotsTxt,
  parseArcjet,
  parseCrawlerUserAgents,
  parseMatomo,
  type BotSourceInputs,
  type BotSourceName,
  type ParsedSource,
} from "./registry.js";

/** What a build made of one registry (manifest order); `doc` is the decoded document when ok. */
export interface BotSourceResult {
  source: BotRegistrySource;
  status: "ok" | "missing" | "failed";
  reason: string | null;
  /** File path or URL read; npm: the file inside node_modules. */
  origin: string | null;
  /** Set when the bytes did not come from where the source is listed (a fallback after a failed download). */
  note: string | null;
  /** When the bytes were taken from upstream, when known. */
  taken: string | null;
  sha256: string | null;
  /** Entries parsed and entries skipped; 0 unless ok. */
  entries: number;
  bad: number;
  /** npm: `<package>@<version>`; else the upstream address. */
  upstream: string;
  doc: unknown;
}

const PARSE: Record<BotSourceName, (doc: unknown) => ParsedSource> = {
  arcjet: parseArcjet,
  "ai-robots-txt": parseAiRobotsTxt,
  matomo: parseMatomo,
  "crawler-user-agents": parseCrawlerUserAgents,
};

const INPUT_KEY: Record<BotSourceName, keyof BotSourceInputs> = {
  arcjet: "arcjet",
  "ai-robots-txt": "aiRobotsTxt",
  matomo: "matomo",
  "crawler-user-agents": "crawlerUserAgents",
};

/** Reads every registry of `manifest.bots`; never throws for one registry's problem. */
export async function readBotRegistrySources(manifest: Manifest, opts: AcquireOptions): Promise<BotSourceResult[]> {
  const log = opts.log ?? (() => {});
  const files = manifest.bots.filter((b): b is BotFileSource => !isBotNpmSource(b));
  // A drifted download falls back to the next origin, like a missing one.
  const accept = (source: BotFileSource, bytes: Buffer): string | null => {
    try {
      parseBotRegistryBytes(source, bytes);
      return null;
    } catch (err) {
      return `format drifted: ${(err as Error).message}`;
    }
  };
  const acquired = await acquireSources(files, { ...opts, what: "bot registry files" }, accept);
  const byId = new Map(files.map((f, i) => [f.id, acquired[i]!]));
  return manifest.bots.map((source) => {
    const got = isBotNpmSource(source) ? readNpmRegistry(source) : byId.get(source.id)!;
    const upstream = isBotNpmSource(source) && got.status === "ok" ? (got.note ?? source.upstream) : source.upstream;
    const base = { source, origin: got.origin, upstream, entries: 0, bad: 0, doc: null };
    if (got.status !== "ok") {
      if (opts.fetch || opts.sourcesDir || opts.snapshot || isBotNpmSource(source)) log(`  ${got.status.padEnd(7)} ${source.id}: ${got.reason}`);
      return { ...base, status: got.status, reason: got.reason, note: null, taken: null, sha256: null };
    }
    const note = isBotNpmSource(source) ? null : got.note;
    const sha256 = createHash("sha256").update(got.bytes).digest("hex");
    try {
      const { doc, parsed } = parseBotRegistryBytes(source, got.bytes);
      log(`  ${note ? "fallback" : "ok      "} ${source.id} (bots): ${parsed.entries.length} entries${parsed.bad ? `, ${parsed.bad} bad` : ""}${note ? `; ${note}` : ""}`);
      return { ...base, status: "ok", reason: null, note, taken: got.taken, sha256, entries: parsed.entries.length, bad: parsed.bad, doc };
    } catch (err) {
      const reason = `format drifted: ${(err as Error).message}`;
      log(`  FAILED  ${source.id}: ${reason}`);
      return { ...base, status: "failed", reason, note, taken: got.taken, sha256 };
    }
  });
}

/** Decodes a registry file (JSON or YAML) and runs it through its strict parser; throws on drift. */
export function parseBotRegistryBytes(source: BotRegistrySource, bytes: Buffer): { doc: unknown; parsed: ParsedSource } {
  const doc = decode(source, bytes);
  return { doc, parsed: PARSE[source.source](doc) };
}

/** The documents of the registries that are ok, keyed as mergeBotRegistry takes them. */
export function botInputs(results: readonly BotSourceResult[]): BotSourceInputs {
  const inputs: BotSourceInputs = {};
  for (const r of results) if (r.status === "ok") inputs[INPUT_KEY[r.source.source]] = r.doc;
  return inputs;
}

function decode(source: BotRegistrySource, bytes: Buffer): unknown {
  const text = bytes.toString("utf8");
  if (source.format === "matomo-bots-yml") {
    try {
      return parseYaml(text);
    } catch (err) {
      throw new Error(`${source.id}: not valid YAML: ${(err as Error).message}`);
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`${source.id}: not JSON: ${(err as Error).message}`);
  }
}

/**
 * Reads a registry from its npm package, checking the licence files first. The package may not
 * export package.json (crawler-user-agents exports only its JSON), so the directory is found
 * from the main entry. The `note` of the answer carries `<package>@<version>` for provenance.
 */
function readNpmRegistry(source: BotNpmSource): Acquired {
  const require = createRequire(import.meta.url);
  let dir: string;
  try {
    dir = packageDir(require, source.package);
  } catch (err) {
    return { status: "missing", reason: `npm package ${source.package} is not installed (${(err as Error).message})`, origin: null };
  }
  const path = join(dir, source.file);
  try {
    for (const { file, must_contain } of source.licence_files) {
      const at = join(dir, file);
      if (!existsSync(at) || !readFileSync(at, "utf8").includes(must_contain)) {
        return { status: "failed", reason: `${source.package}: ${file} no longer says "${must_contain}"; review the licence`, origin: path };
      }
    }
    const version = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version?: unknown }).version;
    const bytes = readFileSync(path);
    return { status: "ok", bytes, origin: path, format: source.format, note: `${source.package}@${String(version)} ${source.upstream}`, taken: null };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { status: code === "ENOENT" ? "missing" : "failed", reason: `cannot read ${path}: ${code ?? (err as Error).message}`, origin: path };
  }
}

function packageDir(require: NodeJS.Require, name: string): string {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    // Walk up from the main entry to the directory holding the package's package.json.
    let dir = dirname(require.resolve(name));
    while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
    return dir;
  }
}
