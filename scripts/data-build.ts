/**
 * Builds the IP dataset that src/datasets/ip-dataset.ts reads: ASN, AS organisation and country
 * from the npm packages, plus the type/risk facts, regions, crawlers, companies and provenance
 * from every source listed in data/sources.json that the run can get.
 *
 *   node dist/scripts/data-build.js                        npm sources + the snapshot (data/snapshot/)
 *   node dist/scripts/data-build.js --sources DIR          + every manifest source found in DIR (a
 *                                                            directory of the sources layout), the
 *                                                            snapshot for the rest
 *   node dist/scripts/data-build.js --fetch                every source downloaded from its upstream,
 *                                                            the snapshot where a download fails
 *   node dist/scripts/data-build.js --fetch --fetch-mirror URL
 *                                                          downloaded from URL/<path> (a mirror of the layout)
 *   node dist/scripts/data-build.js --no-snapshot ...      without the snapshot (npm sources only, unless
 *                                                            --sources or --fetch)
 *   node dist/scripts/data-build.js --if-missing           do nothing when a current build exists
 *   node dist/scripts/data-build.js --check [--sources DIR | --fetch ...]
 *                                                          parse only; exit 1 when an input drifted
 *
 * Exit status: 0 when the build is current; 1 when it failed or was kept aside because it has fewer
 * usable listed sources than the current build (--force makes it current anyway); 2 for a usage
 * error, such as a --sources directory that does not exist.
 *
 * Steps: read and parse every input strictly (a file source that is missing, unreachable or
 * drifted is reported and skipped; bad rows are counted), overlay the range sources into one
 * disjoint list of fact sets per family (scripts/sources/overlay.ts), classify every ASN
 * (src/datasets/asn-class.ts), overlay facts with ASN and country ranges into one table per family,
 * merge the bot registries (manifest `bots`) into bots.json, linking each bot to the published
 * crawler ranges of its operator (scripts/bots/registry.ts), write `<version>.tmp/`, verify it by
 * sampling, rename it to `<version>/`, then point `current` at it by rename.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs as parseCommandLine } from "node:util";
import { open } from "lmdb";
import { REPO_ROOT, dataDirFromEnv } from "../src/config/index.js";
import { z } from "zod";
import { classifyAsn } from "../src/datasets/asn-class.js";
import { COMPANY_CATEGORIES } from "../src/datasets/ip-facts.js";
import {
  COMPANY_CONFIDENCES, IP_DATASET_FORMAT, IP_KEYS, NONE, RECORD_WORDS, currentIpDatasetDir, ipDatasetRoot, openIpDatasetDir,
  type IpDatasetMeta, type IpFacts, type IpSourceMeta, type StoredFactSet,
} from "../src/datasets/ip-dataset.js";
import { NOT_FOUND, encodeTable, overlayRanges, tableFromRanges, validateTable, type BigRange } from "../src/datasets/ip-table.js";
import { ipv6WordsFromBigInt, type ParsedIp } from "../src/shared/ip.js";
import { BOT_REGISTRY_FILE, BOT_REGISTRY_FORMAT, formatBotRegistryFile } from "../src/datasets/bot-file.js";
import type { BotEntry, MergeStats } from "../src/datasets/bot-registry.js";
import { mergeBotRegistry, type CrawlerRangeRef } from "./bots/registry.js";
import { botInputs, readBotRegistrySources, type BotSourceResult } from "./bots/sources.js";
import { acquireSources, type Acquired } from "./sources/acquire.js";
import { loadSnapshot, type Snapshot } from "./sources/snapshot.js";
import { combineFacts, type AsnFacts } from "./sources/facts.js";
import { isAsnListKind, isBotNpmSource, isNpmSource, loadManifest, type FileSource, type Manifest, type RangeKind } from "./sources/manifest.js";
import { Dictionary, SPECIAL_PURPOSE_RANGES, cidrRanges, readNpmInput, type Log, type NpmInput } from "./sources/npm.js";
import { scannerOrgFromComment, vpnProviderFromComment } from "./sources/names.js";
import { createLogger, setLogFormat } from "../src/shared/log.js";
import { overlayClaims, type Claim, type ClaimRange, type RangeFacts } from "./sources/overlay.js";
import { FormatDriftError, parseSourceFile, type ParsedFile } from "./sources/parsers.js";

export { SPECIAL_PURPOSE_RANGES, cidrRanges, splitCsvLine } from "./sources/npm.js";

/** Id of an npm input ("asn-ipv4", "asn-ipv6", "country-ipv4", "country-ipv6"). */
export type IpInputId = string;

/**
 * IPv6 transition blocks (6to4 2002::/16, Teredo 2001::/32) embed other addresses; a list entry
 * covering them is a mistake (one cloud list carries 2002::/16), so range sources lose them too.
 */
const TRANSITION_RANGES_V6 = ["2001::/32", "2002::/16"];

/** Options shared by readIpSources and buildIpDataset. */
export interface IpSourceOptions {
  /** Progress lines; silent when absent. */
  log?: Log;
  /** Read these files instead of the npm packages' own (tests use it to feed drifted inputs). */
  files?: Partial<Record<IpInputId, string>>;
  /** The manifest to build from; default data/sources.json. */
  manifest?: Manifest;
}

/** Result of reading the npm inputs: enough to build the base tables, or to report in --check mode. */
export interface IpSources {
  inputs: NpmInput[];
  dict: Dictionary;
}

/** Parses and validates the npm inputs without writing anything. Throws on drift. */
export function readIpSources(opts: IpSourceOptions = {}): IpSources {
  const log = opts.log ?? (() => {});
  const manifest = opts.manifest ?? loadManifest();
  const dict = new Dictionary();
  const specs = manifest.sources.filter(isNpmSource);
  for (const kind of ["asn", "country"] as const) {
    for (const family of [4, 6] as const) {
      if (!specs.some((s) => s.kind === kind && s.family === family)) throw new Error(`manifest has no ${kind} source for IPv${family}`);
    }
  }
  return { inputs: specs.map((spec) => readNpmInput(spec, dict, log, opts.files?.[spec.id])), dict };
}

/** Options of buildIpDataset. */
export interface BuildOptions extends IpSourceOptions {
  /** DATA_DIR: the build goes to `<dataDir>/datasets/ip/<version>/`. */
  dataDir: string;
  /** A directory of the sources layout; every manifest source found there is used. */
  sourcesDir?: string;
  /**
   * The snapshot read for every source that neither a download nor `sourcesDir` gives: default
   * data/snapshot/; false for none (an npm-only build unless `sourcesDir` or `fetch`).
   */
  snapshot?: Snapshot | false;
  /** Download each source's upstream address (with sourcesDir: fall back to it when a download fails). */
  fetch?: boolean;
  /** With fetch: download `${fetchMirror}/${path}` instead of the upstream address. */
  fetchMirror?: string;
  /** Per-download time limit; default 60 s. */
  fetchTimeoutMs?: number;
  /**
   * Make the build current even when it has fewer usable listed sources than the build current
   * now (a missing snapshot, an unreachable network). Default false: such a build is kept on disk
   * and reported, and the service keeps its better build.
   */
  force?: boolean;
}

/** One file source after acquiring and parsing. */
interface FileResult {
  source: FileSource;
  order: number;
  status: "ok" | "missing" | "failed";
  reason: string | null;
  origin: string | null;
  note: string | null;
  /** When the bytes were taken from upstream, when known. */
  taken: string | null;
  sha256: string | null;
  parsed: ParsedFile | null;
  /** Range pieces removed because they lie in special-purpose or transition space. */
  masked: number;
}

/** The snapshot a build reads: the one given, none (false), or data/snapshot/. */
function snapshotOf(opts: BuildOptions): Snapshot | undefined {
  if (opts.snapshot === false) return undefined;
  return opts.snapshot ?? loadSnapshot();
}

/** Where a run reads its listed sources from, in the order tried, for the log. */
function describeOrigins(opts: BuildOptions, snapshot: Snapshot | undefined): string {
  const parts = [
    ...(opts.fetch ? [`download${opts.fetchMirror ? ` from ${opts.fetchMirror}` : ""}`] : []),
    ...(opts.sourcesDir ? [opts.sourcesDir] : []),
    ...(snapshot ? [`the snapshot (${snapshot.dir})`] : []),
  ];
  return parts.join(", then ");
}

/** Reads or downloads every file source and parses it; never throws for one source's problem. */
async function readFileSources(manifest: Manifest, opts: BuildOptions, snapshot: Snapshot | undefined, log: Log): Promise<FileResult[]> {
  const files = manifest.sources.filter((s): s is FileSource => !isNpmSource(s));
  const requested = Boolean(opts.sourcesDir || opts.fetch || snapshot);
  if (requested) log(`reading ${files.length} listed sources from ${describeOrigins(opts, snapshot)}`);
  // Each candidate's bytes are parsed as they arrive, so a drifted download falls back to the
  // next origin; the parse of the accepted bytes is kept for the build.
  const parsedBytes = new WeakMap<Buffer, ParsedFile>();
  const accept = (source: FileSource, bytes: Buffer, format: string): string | null => {
    try {
      parsedBytes.set(bytes, parseSourceFile(bytes, source, format));
      return null;
    } catch (err) {
      return err instanceof FormatDriftError ? err.message : `parser error: ${(err as Error).message}`;
    }
  };
  const acquired = await acquireSources(
    files,
    { sourcesDir: opts.sourcesDir, snapshot, fetch: opts.fetch, fetchMirror: opts.fetchMirror, timeoutMs: opts.fetchTimeoutMs, log, what: "listed sources" },
    accept,
  );
  return files.map((source, i) => {
    const got: Acquired = acquired[i]!;
    const order = manifest.sources.indexOf(source);
    if (got.status !== "ok") {
      if (requested) log(`  ${got.status === "failed" ? "FAILED " : "missing"} ${source.id}: ${got.reason}`);
      return { source, order, status: got.status, reason: got.reason, origin: got.origin, note: null, taken: null, sha256: null, parsed: null, masked: 0 };
    }
    const sha256 = createHash("sha256").update(got.bytes).digest("hex");
    const parsed = parsedBytes.get(got.bytes)!;
    const bad = parsed.badRows > 0 ? `, ${parsed.badRows} bad (e.g. ${parsed.badExamples[0]})` : "";
    log(`  ${got.note ? "fallback" : "ok      "} ${source.id} (${source.kind}): ${parsed.rows} rows${bad}${parsed.dataDate ? `, data ${parsed.dataDate}` : ""}${got.note ? `; ${got.note}` : ""}`);
    return { source, order, status: "ok", reason: null, origin: got.origin, note: got.note, taken: got.taken, sha256, parsed, masked: 0 };
  });
}

/** The name a range row contributes for its kind: the source's own, else the row's (with `row_names`). */
function rowName(source: FileSource, raw: string | null): string | null {
  const own = source.kind === "scanner" ? source.organisation : source.provider;
  if (own !== undefined) return own;
  if (!source.options?.row_names) return null;
  if (source.kind === "scanner") return scannerOrgFromComment(raw);
  if (source.kind === "vpn") return vpnProviderFromComment(raw);
  return raw?.trim() || null;
}

/** Cuts the blocks of `special` (sorted, disjoint) out of [start, end]. */
function clip(start: bigint, end: bigint, special: readonly BigRange[]): Array<[bigint, bigint]> {
  const out: Array<[bigint, bigint]> = [];
  let from = start;
  for (const s of special) {
    if (s.end < from) continue;
    if (s.start > end) break;
    if (s.start > from) out.push([from, s.start - 1n]);
    from = s.end + 1n;
    if (from > end) return out;
  }
  out.push([from, end]);
  return out;
}

/** Range claims of every ok range source, per family. */
interface ClaimSet {
  claims: Claim[];
  ranges: Record<4 | 6, ClaimRange[]>;
  /** A few pieces per source, kept for the post-build check. */
  samples: Array<{ source: FileSource; family: 4 | 6; start: bigint; end: bigint }>;
}

function collectClaims(results: FileResult[]): ClaimSet {
  const special: Record<4 | 6, BigRange[]> = {
    4: cidrRanges(SPECIAL_PURPOSE_RANGES[4], 4),
    6: cidrRanges([...SPECIAL_PURPOSE_RANGES[6], ...TRANSITION_RANGES_V6], 6),
  };
  const set: ClaimSet = { claims: [], ranges: { 4: [], 6: [] }, samples: [] };
  const claimIndex = new Map<string, number>();
  for (const result of results) {
    const { source, parsed } = result;
    if (!parsed || isAsnListKind(source.kind)) continue;
    const kind = source.kind as RangeKind;
    const step = Math.max(1, Math.floor(parsed.ranges.length / 10));
    parsed.ranges.forEach((r, row) => {
      const name = rowName(source, r.name);
      const region = kind === "cloud" ? r.region : null;
      const key = `${result.order}\u0000${name}\u0000${region}`;
      let claim = claimIndex.get(key);
      if (claim === undefined) {
        claim = set.claims.push({ kind, source: source.id, order: result.order, name, region, crawler: source.crawler ?? null }) - 1;
        claimIndex.set(key, claim);
      }
      const pieces = clip(r.start, r.end, special[r.family]);
      if (pieces.length !== 1 || pieces[0]![0] !== r.start || pieces[0]![1] !== r.end) result.masked++;
      for (const [start, end] of pieces) set.ranges[r.family].push({ start, end, claim, row });
      const first = pieces[0];
      if (row % step === 0 && first) set.samples.push({ source, family: r.family, start: first[0], end: first[1] });
    });
  }
  return set;
}

/** Per ASN, what the ASN lists say: the first listing source per role, in manifest order. */
interface AsnListing {
  hosting: string | null;
  vpn: string | null;
  vpnProvider: string | null;
  /** The first name a list gives (company name when the ASN data has none). */
  name: string | null;
}

function collectAsnListings(results: FileResult[]): Map<number, AsnListing> {
  const listings = new Map<number, AsnListing>();
  for (const { source, parsed } of results) {
    if (!parsed || !isAsnListKind(source.kind)) continue;
    for (const row of parsed.asns) {
      let l = listings.get(row.asn);
      if (!l) listings.set(row.asn, (l = { hosting: null, vpn: null, vpnProvider: null, name: null }));
      if (source.kind === "vpn-asn") {
        if (!l.vpn) {
          l.vpn = source.id;
          l.vpnProvider = source.provider ?? vpnProviderFromComment(row.name);
        }
      } else if (!l.hosting) {
        l.hosting = source.id;
      }
      l.name ??= row.name;
    }
  }
  return listings;
}

/** Interns values by a string key; the index is the stored reference. */
class Interner<T> {
  readonly values: T[] = [];
  private readonly index = new Map<string, number>();
  add(value: T, key: string = JSON.stringify(value)): number {
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.values.push(value) - 1;
      this.index.set(key, i);
    }
    return i;
  }
}

function timestamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** The npm inputs' base ranges: one value per distinct (ASN pair, country), per family. */
interface BaseTables {
  bases: Interner<{ pair: number; country: number }>;
  ranges: Record<4 | 6, BigRange[]>;
}

function overlayBase(inputs: NpmInput[]): BaseTables {
  const npmOf = (kind: "asn" | "country", family: 4 | 6) => inputs.find((p) => p.spec.kind === kind && p.spec.family === family)!;
  const bases = new Interner<{ pair: number; country: number }>();
  const baseOf = (pair: number, country: number) => bases.add({ pair, country }, `${pair},${country}`);
  return {
    bases,
    ranges: {
      4: overlayRanges(npmOf("asn", 4).ranges, npmOf("country", 4).ranges, baseOf),
      6: overlayRanges(npmOf("asn", 6).ranges, npmOf("country", 6).ranges, baseOf),
    },
  };
}

/**
 * Company country per ASN pair: the country of most of its ranges (both families). Counting
 * ranges, not addresses, keeps one large block registered abroad from outvoting the home network.
 * Ties go to the alphabetically first code, so the answer does not depend on input order.
 */
function companyCountries(base: BaseTables, dict: Dictionary): (pair: number) => number {
  const tallies = new Map<number, Map<number, number>>();
  for (const family of [4, 6] as const) {
    for (const r of base.ranges[family]) {
      const { pair, country } = base.bases.values[r.value]!;
      if (pair === NOT_FOUND || country === NOT_FOUND) continue;
      let t = tallies.get(pair);
      if (!t) tallies.set(pair, (t = new Map()));
      t.set(country, (t.get(country) ?? 0) + 1);
    }
  }
  return (pair) => {
    let best = NONE;
    let bestCount = -1;
    for (const [country, count] of tallies.get(pair) ?? []) {
      if (count > bestCount || (count === bestCount && dict.countries[country]! < dict.countries[best]!)) {
        best = country;
        bestCount = count;
      }
    }
    return best;
  };
}

/** What a record stores about its ASN pair: interned ASN facts and the company words. */
interface PairInfo {
  asnFacts: number;
  companyName: number;
  companyCountry: number;
  companyClass: number;
}

/** data/mobile-carrier-asns.json: carriers' mobile networks whose AS names do not say so. */
const MOBILE_LIST_ID = "mobile-carrier-asns";
const MOBILE_LIST_FILE = join(REPO_ROOT, "data", "mobile-carrier-asns.json");
const MOBILE_CARRIER_ASNS: ReadonlySet<number> = loadMobileCarrierAsns();

function loadMobileCarrierAsns(): Set<number> {
  const parsed = z
    .object({ asns: z.array(z.object({ asn: z.number().int().positive(), carrier: z.string().min(1), why: z.string().min(1) })) })
    .safeParse(JSON.parse(readFileSync(MOBILE_LIST_FILE, "utf8")));
  if (!parsed.success) throw new Error(`${MOBILE_LIST_FILE}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return new Set(parsed.data.asns.map((a) => a.asn));
}

/** The curated list as a source of the build (provenance names it). Kind "mobile-asn": not a range source. */
const MOBILE_LIST_META: IpSourceMeta = {
  id: MOBILE_LIST_ID,
  kind: "mobile-asn",
  status: "ok",
  reason: null,
  rows: MOBILE_CARRIER_ASNS.size,
  bad_rows: 0,
  sha256: createHash("sha256").update(readFileSync(MOBILE_LIST_FILE)).digest("hex"),
  data_date: null,
  taken: null,
  upstream: "data/mobile-carrier-asns.json (this repository)",
  licence: "project data (each entry states why it is listed)",
};

/** Classifies each ASN pair once (lists, then name) and derives its company. */
function pairClassifier(dict: Dictionary, listings: Map<number, AsnListing>, countryOf: (pair: number) => number) {
  const asnFacts = new Interner<AsnFacts>();
  const infos = new Map<number, PairInfo>();
  const infoOf = (pair: number): PairInfo => {
    let info = infos.get(pair);
    if (!info) {
      const { asn } = dict.pairs[pair]!;
      const listing = listings.get(asn);
      const org = dict.orgOf(pair);
      const mobileListed = MOBILE_CARRIER_ASNS.has(asn);
      const cls = classifyAsn({ name: org, hostingListed: listing?.hosting != null, vpnListed: listing?.vpn != null, mobileListed });
      const facts: AsnFacts = {
        mobileSource: mobileListed && cls.mobile ? MOBILE_LIST_ID : null,
        cls,
        hostingSource: cls.hostingBy === "list" ? (listing!.hosting ?? listing!.vpn) : null,
        vpnSource: listing?.vpn ?? null,
        vpnProvider: listing?.vpnProvider ?? null,
      };
      info = {
        asnFacts: asnFacts.add(facts),
        companyName: dict.org(org ?? listing?.name ?? `AS${asn}`),
        companyCountry: countryOf(pair),
        companyClass: COMPANY_CATEGORIES.indexOf(cls.category) | (COMPANY_CONFIDENCES.indexOf(cls.confidence) << 8),
      };
      infos.set(pair, info);
    }
    return info;
  };
  return { asnFacts, infoOf, count: () => infos.size };
}

/** The final tables: every piece of address space mapped to one record (pair, country, fact set). */
function buildTables(
  base: BaseTables,
  factRanges: Record<4 | 6, BigRange[]>,
  rangeFacts: Interner<RangeFacts>,
  pairs: ReturnType<typeof pairClassifier>,
  dict: Dictionary,
  asnSource: Record<4 | 6, string>,
) {
  const factSets = new Interner<StoredFactSet>();
  const factSetMemo = new Map<string, number>();
  const records = new Interner<number[]>();
  const tables = {} as Record<4 | 6, ReturnType<typeof tableFromRanges>>;
  for (const family of [4, 6] as const) {
    const final = overlayRanges(base.ranges[family], factRanges[family], (baseIndex, factsIndex) => {
      const b = baseIndex === NOT_FOUND ? undefined : base.bases.values[baseIndex]!;
      const pair = b && b.pair !== NOT_FOUND ? b.pair : undefined;
      const info = pair === undefined ? undefined : pairs.infoOf(pair);
      // Few distinct (range facts, ASN facts) pairs exist; combine each once.
      const memoKey = `${family},${factsIndex},${info?.asnFacts ?? -1}`;
      let factSet = factSetMemo.get(memoKey);
      if (factSet === undefined) {
        const range = factsIndex === NOT_FOUND ? null : rangeFacts.values[factsIndex]!;
        factSet = factSets.add(combineFacts(range, info ? pairs.asnFacts.values[info.asnFacts]! : null, asnSource[family]));
        factSetMemo.set(memoKey, factSet);
      }
      const p = pair === undefined ? undefined : dict.pairs[pair]!;
      const country = b?.country ?? NOT_FOUND;
      // Layout: RECORD in src/datasets/ip-dataset.ts. The dictionary's "no org" marker is NONE too.
      const words = [
        p ? 1 : 0,
        p?.asn ?? 0,
        p ? p.org : NONE,
        country === NOT_FOUND ? NONE : country,
        factSet,
        info?.companyName ?? NONE,
        info?.companyCountry ?? NONE,
        info?.companyClass ?? 0,
      ];
      return records.add(words, words.join(","));
    });
    tables[family] = tableFromRanges(final, family === 4 ? 1 : 4);
    const problem = validateTable(tables[family], family === 4 ? 1 : 4);
    if (problem) throw new Error(`built IPv${family} table is invalid: ${problem}`);
  }
  const recordWords = new Uint32Array(records.values.length * RECORD_WORDS);
  records.values.forEach((words, i) => recordWords.set(words, i * RECORD_WORDS));
  return { tables, recordWords, records: records.values.length, factSets: factSets.values };
}

/** Per source, in manifest order, what this build made of it. */
function sourceMetas(manifest: Manifest, inputs: NpmInput[], results: FileResult[]): IpSourceMeta[] {
  const npmById = new Map(inputs.map((p) => [p.spec.id, p]));
  const fileById = new Map(results.map((r) => [r.source.id, r]));
  return manifest.sources.map((s): IpSourceMeta => {
    if (isNpmSource(s)) {
      const p = npmById.get(s.id)!;
      return { id: s.id, kind: s.kind, status: "ok", reason: null, rows: p.rows, bad_rows: p.badRows, sha256: p.sha256, data_date: p.dataDate, taken: p.dataDate, upstream: p.upstream, licence: s.licence };
    }
    const r = fileById.get(s.id)!;
    return {
      id: s.id, kind: s.kind, status: r.status, reason: r.reason, rows: r.parsed?.rows ?? 0, bad_rows: r.parsed?.badRows ?? 0,
      sha256: r.sha256, data_date: r.parsed?.dataDate ?? null, taken: r.taken, upstream: s.upstream, licence: s.licence, note: r.note,
    };
  });
}

/** The published crawler lists this build has: what bots link to for verification. */
function crawlerRefs(results: FileResult[]): CrawlerRangeRef[] {
  return results.flatMap(({ source, status }) =>
    status === "ok" && source.crawler
      ? [{ id: source.crawler.id, operator: source.crawler.operator, urls: [source.upstream, ...(source.official ? [source.official] : [])] }]
      : [],
  );
}

/** The bot registry of a build: merged from the registries that could be read. */
interface BotRegistryBuild {
  results: BotSourceResult[];
  bots: BotEntry[];
  stats: MergeStats;
}

async function buildBotRegistry(manifest: Manifest, opts: BuildOptions, snapshot: Snapshot | undefined, results: FileResult[], log: Log): Promise<BotRegistryBuild> {
  const step = Date.now();
  const botResults = await readBotRegistrySources(manifest, {
    sourcesDir: opts.sourcesDir, snapshot, fetch: opts.fetch, fetchMirror: opts.fetchMirror, timeoutMs: opts.fetchTimeoutMs, log,
  });
  const { bots, stats } = mergeBotRegistry(botInputs(botResults), crawlerRefs(results));
  log(
    `bot registry: ${stats.merged} bots from ${botResults.filter((r) => r.status === "ok").length}/${botResults.length} registries, ` +
      `${stats.with_operator} with an operator, ${stats.with_verification} with a verification method ` +
      `(${stats.with_ranges} by published ranges) (${seconds(step)})`,
  );
  return { results: botResults, bots, stats };
}

/** manifest.json `bots`: the registry's counts and, per registry, what this build made of it. */
function botsManifestJson(registry: BotRegistryBuild) {
  return {
    file: BOT_REGISTRY_FILE,
    format: BOT_REGISTRY_FORMAT,
    stats: registry.stats,
    sources: registry.results.map((r) => ({
      id: r.source.id, source: r.source.source, status: r.status, reason: r.reason, entries: r.entries, bad_entries: r.bad,
      sha256: r.sha256, upstream: r.upstream, licence: r.source.licence, origin: r.origin, note: r.note,
    })),
  };
}

/** manifest.json: the meta plus per-source detail (file, origin, bad examples, pieces removed). */
function manifestJson(
  meta: IpDatasetMeta, manifest: Manifest, inputs: NpmInput[], results: FileResult[], tables: Record<string, number>, registry: BotRegistryBuild,
  snapshot: Snapshot | undefined,
) {
  const npmById = new Map(inputs.map((p) => [p.spec.id, p]));
  const fileById = new Map(results.map((r) => [r.source.id, r]));
  return {
    generated_by: "scripts/data-build.ts; do not edit",
    ...meta,
    format: IP_DATASET_FORMAT,
    tables,
    /** The snapshot the build could fall back to (null: built without it). */
    snapshot: snapshot ? { dir: snapshot.dir, written_at: snapshot.manifest.written_at } : null,
    sources: manifest.sources.map((s, i) => {
      const common = { ...meta.sources[i]!, built_at: meta.built_at };
      if (isNpmSource(s)) {
        const p = npmById.get(s.id)!;
        return { ...common, file: s.file, overlapping_rows: p.overlaps, special_purpose_removed: p.masked, ranges: p.ranges.length };
      }
      const r = fileById.get(s.id)!;
      return {
        ...common, path: s.path, origin: r.origin, note: r.note, bad_examples: r.parsed?.badExamples ?? [],
        ranges: r.parsed?.ranges.length ?? 0, asns: r.parsed?.asns.length ?? 0, special_purpose_removed: r.masked,
      };
    }),
    bots: botsManifestJson(registry),
  };
}

/** What buildIpDataset did. */
export interface BuildOutcome {
  version: string;
  dir: string;
  /** Per source, in manifest order, what the build made of it. */
  sources: IpSourceMeta[];
  /** False when the build was kept aside because the current one has more usable sources. */
  madeCurrent: boolean;
  /** One line saying what happened, for the command's last line. */
  summary: string;
}

/**
 * Builds a new IP dataset version under `<dataDir>/datasets/ip/` and makes it current.
 * File sources that are missing, unreachable or drifted are reported (log, manifest.json,
 * meta.sources) and skipped.
 * @returns the version name, its directory and the outcome per source (manifest order).
 * @throws Error when an npm input drifted, a licence file changed, or the verification failed;
 *   `current` is left untouched in that case.
 */
export async function buildIpDataset(opts: BuildOptions): Promise<BuildOutcome> {
  const log = opts.log ?? (() => {});
  const began = Date.now();
  const builtAt = new Date();
  const manifest = opts.manifest ?? loadManifest();
  const { inputs, dict } = readIpSources({ ...opts, manifest });
  log(`npm sources read (${seconds(began)})`);

  let step = Date.now();
  const snapshot = snapshotOf(opts);
  const results = await readFileSources(manifest, opts, snapshot, log);
  const okCount = results.filter((r) => r.status === "ok").length;
  const requested = Boolean(opts.sourcesDir || opts.fetch || snapshot);
  if (requested) log(`listed sources: ${okCount} ok, ${results.length - okCount} not used (${seconds(step)})`);

  const registry = await buildBotRegistry(manifest, opts, snapshot, results, log);
  const botsOk = registry.results.filter((r) => r.status === "ok").length;
  const usable = { count: okCount + botsOk, text: usableText(okCount, results.length, botsOk, registry.results.length) };
  if (opts.fetch) {
    // Downloaded: ok without a note (a fallback names the copy it used). The npm packages are read from disk, not downloaded.
    const files = [...results, ...registry.results.filter((r) => !isBotNpmSource(r.source))];
    const botFiles = files.length - results.length;
    const fetched = files.filter((r) => r.status === "ok" && r.note === null).length;
    const fallback = files.filter((r) => r.status === "ok" && r.note !== null).length;
    log(
      `downloads: ${fetched} of ${files.length} sources fetched from upstream (${results.length} listed sources + ${botFiles} bot registry files; ` +
        `npm packages are read from disk); ${fallback} from a fallback, ${files.length - fetched - fallback} failed`,
    );
    if (fetched === 0) {
      throw new Error(`--fetch: none of the ${files.length} sources could be downloaded (no network, or the mirror is down); nothing was built and the current build stays`);
    }
  }

  // The same inputs read by the same builder make the same build: reuse one that exists.
  const checksums = [...inputs.map((p) => p.sha256), ...results.map((r) => r.sha256 ?? "-"), ...registry.results.map((r) => r.sha256 ?? "-"), builderStamp()];
  const short = createHash("sha256").update(checksums.join("\n")).digest("hex").slice(0, 8);
  const root = ipDatasetRoot(opts.dataDir);
  mkdirSync(root, { recursive: true });
  const twin = existingBuild(root, short);
  if (twin) return makeCurrent(root, twin, usable, opts, log, began, `inputs identical to ${twin}: reused it, nothing written`);

  step = Date.now();
  const claimSet = collectClaims(results);
  const listings = collectAsnListings(results);
  const rangeFacts = new Interner<RangeFacts>();
  const factRanges = {
    4: overlayClaims(claimSet.ranges[4], claimSet.claims, (f) => rangeFacts.add(f)),
    6: overlayClaims(claimSet.ranges[6], claimSet.claims, (f) => rangeFacts.add(f)),
  };
  log(
    `range sources: ${claimSet.ranges[4].length} IPv4 + ${claimSet.ranges[6].length} IPv6 ranges -> ` +
      `${factRanges[4].length} + ${factRanges[6].length} pieces, ${rangeFacts.values.length} fact combinations; ` +
      `${listings.size} listed ASNs (${seconds(step)})`,
  );

  step = Date.now();
  const base = overlayBase(inputs);
  const pairs = pairClassifier(dict, listings, companyCountries(base, dict));
  const asnSource = {
    4: inputs.find((p) => p.spec.kind === "asn" && p.spec.family === 4)!.spec.id,
    6: inputs.find((p) => p.spec.kind === "asn" && p.spec.family === 6)!.spec.id,
  };
  const built = buildTables(base, factRanges, rangeFacts, pairs, dict, asnSource);
  const { tables } = built;
  log(
    `tables: ${tables[4].values.length} IPv4 ranges, ${tables[6].values.length} IPv6 ranges, ${built.records} records, ` +
      `${built.factSets.length} fact sets, ${pairs.count()} companies (${seconds(step)})`,
  );

  const sources = [...sourceMetas(manifest, inputs, results), MOBILE_LIST_META];
  let version = `ip-${timestamp(builtAt)}-${short}`;
  for (let n = 2; existsSync(join(root, version)); n++) version = `ip-${timestamp(builtAt)}-${short}-${n}`;
  const dir = join(root, version);
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });

  const npmVersions = [...new Set(inputs.map((p) => p.upstream.split(" ")[0]!.split("@").pop()))].join(",");
  const npmSummary = `ip-location-db:asn+geo-whois-asn-country@${npmVersions}`;
  const meta: IpDatasetMeta = {
    version,
    source: requested ? `${npmSummary} + ${okCount}/${results.length} listed sources${fallbackSummary(results)}` : npmSummary,
    built_at: builtAt.toISOString(),
    sources,
    registries: registry.results.map((r) => ({ id: r.source.id, status: r.status, taken: r.taken })),
  };
  log(`writing ${tmp}`);
  // noSubdir: lmdb-js would otherwise read the ".tmp" suffix as a file extension and write a bare file.
  const env = open({ path: tmp, encoding: "binary", noSubdir: false });
  const asBuffer = (u8: Uint8Array) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
  await env.transaction(() => {
    env.put(IP_KEYS.format, Buffer.from(String(IP_DATASET_FORMAT)));
    env.put(IP_KEYS.meta, Buffer.from(JSON.stringify(meta)));
    env.put(IP_KEYS.v4, asBuffer(encodeTable(tables[4], 1)));
    env.put(IP_KEYS.v6, asBuffer(encodeTable(tables[6], 4)));
    env.put(IP_KEYS.records, asBuffer(new Uint8Array(built.recordWords.buffer)));
    env.put(IP_KEYS.orgs, Buffer.from(JSON.stringify(dict.orgs)));
    env.put(IP_KEYS.countries, Buffer.from(JSON.stringify(dict.countries)));
    env.put(IP_KEYS.facts, Buffer.from(JSON.stringify(built.factSets)));
  });
  await env.close();
  const counts = {
    ipv4_ranges: tables[4].values.length, ipv6_ranges: tables[6].values.length, records: built.records,
    fact_sets: built.factSets.length, orgs: dict.orgs.length, countries: dict.countries.length,
  };
  writeFileSync(join(tmp, BOT_REGISTRY_FILE), formatBotRegistryFile({ format: BOT_REGISTRY_FORMAT, stats: registry.stats, bots: registry.bots }));
  writeFileSync(join(tmp, "manifest.json"), `${JSON.stringify(manifestJson(meta, manifest, inputs, results, counts, registry, snapshot), null, 2)}\n`);

  verifyBuild(tmp, inputs, dict, claimSet, registry.bots.length, log);
  renameSync(tmp, dir);
  return makeCurrent(root, version, usable, opts, log, began, null, sources);
}

/**
 * Makes build `version` current, unless it has fewer usable listed sources than the current build
 * and `force` is not set (then it is kept aside). `reused` says the build already existed.
 */
function makeCurrent(root: string, version: string, usable: { count: number; text: string }, opts: BuildOptions, log: Log, began: number, reused: string | null, sources?: IpSourceMeta[]): BuildOutcome {
  const dir = join(root, version);
  const metas = sources ?? (JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { sources: IpSourceMeta[] }).sources;
  if (reused) log(reused);
  const currentOk = usableListedSources(currentIpDatasetDir(opts.dataDir));
  if (currentOk !== null && usable.count < currentOk && !opts.force) {
    const summary =
      `kept ${version} aside: ${usable.text} usable, ${usable.count} in all against ${currentOk} in the current build; ` +
      "the service keeps the current one (--force, or POST /v1/admin/datasets/activate, to use it anyway)";
    log(summary);
    return { version, dir, sources: metas, madeCurrent: false, summary };
  }
  // Readers see either the old name or the new one, never a partial file.
  const pointerTmp = join(root, `current.${process.pid}.tmp`);
  writeFileSync(pointerTmp, `${version}\n`);
  renameSync(pointerTmp, join(root, "current"));
  const summary = `${reused ? "reused" : "built"} ${version} in ${seconds(began)} with ${usable.text} usable; current -> ${version}`;
  log(summary);
  return { version, dir, sources: metas, madeCurrent: true, summary };
}

/** The newest complete build under `root` whose name ends with this inputs hash, or null. */
function existingBuild(root: string, short: string): string | null {
  const named = new RegExp(`^ip-\\d{8}T\\d{6}Z-${short}(-\\d+)?$`);
  const found = readdirSync(root)
    .filter((d) => named.test(d) && existsSync(join(root, d, "manifest.json")))
    .sort();
  return found.pop() ?? null;
}

/** The builder's sources, relative to the repository: this module, its readers and the dataset code. */
const BUILDER_SOURCES = ["scripts/data-build.ts", "scripts/sources", "scripts/bots", "src/datasets"];

/**
 * A digest of the builder's own TypeScript sources (BUILDER_SOURCES, as text), part of a build's
 * inputs hash: a changed builder makes a new build. It reads the sources, never dist/: `npm start`
 * (esbuild) and `npm run data:build` (tsc) compile the same sources differently, and the same
 * inputs must reuse one build whichever compiled the builder.
 * @param root the repository (default REPO_ROOT)
 */
export function builderStamp(root: string = REPO_ROOT): string {
  const h = createHash("sha256");
  for (const entry of BUILDER_SOURCES) {
    const path = join(root, entry);
    const files = entry.endsWith(".ts") ? [entry] : readdirSync(path).filter((n) => n.endsWith(".ts")).sort().map((n) => `${entry}/${n}`);
    for (const f of files) h.update(f).update(readFileSync(join(root, f)));
  }
  return h.digest("hex");
}

/**
 * What a build's usable-source count is made of, as the summary lines say it: the listed range and
 * ASN-list sources (the count in `metadata.source`), then the bot registries. `metadata.coverage`
 * counts the npm ASN and country files too (docs/data.md, "Counting sources").
 */
export function usableText(listedOk: number, listed: number, registriesOk: number, registries: number): string {
  return `${listedOk}/${listed} listed sources + ${registriesOk}/${registries} bot registries`;
}

function fallbackSummary(results: FileResult[]): string {
  const n = results.filter((r) => r.status === "ok" && r.note !== null).length;
  return n > 0 ? ` (${n} from a fallback after a failed download or a missing file)` : "";
}

/**
 * Listed sources with status ok in a build's manifest: range and ASN-list sources (not the npm
 * ASN/country data, not the curated mobile list) and bot registries; null when there is no
 * readable build.
 */
export function usableListedSources(dir: string | null): number | null {
  if (!dir) return null;
  try {
    const m = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as {
      sources?: Array<{ kind?: string; status?: string }>;
      bots?: { sources?: Array<{ status?: string }> };
    };
    const ranges = (m.sources ?? []).filter((s) => s.kind !== "asn" && s.kind !== "country" && s.kind !== "mobile-asn" && s.status === "ok").length;
    return ranges + (m.bots?.sources ?? []).filter((s) => s.status === "ok").length;
  } catch {
    return null;
  }
}

const asParsedIp = (family: 4 | 6, addr: bigint): ParsedIp =>
  family === 4 ? { version: 4, v4: Number(addr), mapped: false } : { version: 6, words: ipv6WordsFromBigInt(addr) };

/** What a range source of each kind must make true. */
const KIND_CHECK: Readonly<Record<RangeKind, (f: IpFacts) => boolean>> = {
  cloud: (f) => f.type.cloud && f.type.datacenter && f.type.hosting && f.cloud_provider !== null,
  datacenter: (f) => f.type.datacenter && f.type.hosting,
  isp: (f) => f.type.isp,
  crawler: (f) => f.crawler !== null,
  tor: (f) => f.risk.tor,
  vpn: (f) => f.risk.vpn,
  proxy: (f) => f.risk.proxy,
  scanner: (f) => f.risk.scanner,
};

/** Looks up sampled rows of every input in the written build; they must answer as the input says. */
function verifyBuild(dir: string, inputs: NpmInput[], dict: Dictionary, claims: ClaimSet, bots: number, log: Log): void {
  let ds: ReturnType<typeof openIpDatasetDir> | undefined;
  try {
    ds = openIpDatasetDir(dir);
    if (ds.bots.stats.bots !== bots) throw new Error(`verification failed: ${BOT_REGISTRY_FILE} opens with ${ds.bots.stats.bots} bots, the build merged ${bots}`);
    let checked = 0;
    for (const input of inputs) {
      for (const { start, value } of input.samples) {
        const got = ds.lookup(asParsedIp(input.spec.family, start));
        const want = input.spec.kind === "asn" ? dict.pairs[value]!.asn : dict.countries[value];
        const have = input.spec.kind === "asn" ? got.asn : got.country;
        if (have !== want) throw new Error(`verification failed: ${input.spec.id} row starting at ${start} should give ${want}, got ${have}`);
        checked++;
      }
    }
    for (const { source, family, start, end } of claims.samples) {
      for (const addr of [start, end]) {
        if (!KIND_CHECK[source.kind as RangeKind](ds.lookup(asParsedIp(family, addr)))) {
          throw new Error(`verification failed: ${source.id} lists ${addr} (IPv${family}) but the build does not classify it as ${source.kind}`);
        }
        checked++;
      }
    }
    log(`verified ${checked} sampled rows`);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    ds?.close();
  }
}

const USAGE = `usage: node dist/scripts/data-build.js [--if-missing | --check] [--sources DIR] [--fetch [--fetch-mirror URL]] [--no-snapshot] [--force]
  (no option)         build from the npm packages and the snapshot in data/snapshot/
  --sources DIR       read every data/sources.json source found in DIR (a directory of the sources layout),
                      the snapshot for the rest
  --fetch             download every source from its upstream address; where a download fails, fall back
                      to DIR (with --sources), then to the snapshot
  --fetch-mirror URL  with --fetch: download URL/<path> instead (a mirror of the same layout)
  --no-snapshot       do not read data/snapshot/ (an npm-only build, unless --sources or --fetch)
  --if-missing        do nothing when DATA_DIR already has a current build this reader can open and that
                      has every source the snapshot offers
  --check             parse every input and exit 1 when one has drifted; writes nothing
  --force             make the build current even with fewer usable sources than the current one
  --log-records       print each line as a log record of the service (JSON, or pino-pretty on a terminal;
                      FS_LOG_FORMAT), as npm start does
exit status: 0 built and current (or nothing to do); 1 failed, or built but kept aside; 2 usage error`;

/** What the command line asks for. */
export interface Cli {
  ifMissing: boolean;
  check: boolean;
  sourcesDir?: string;
  fetch: boolean;
  fetchMirror?: string;
  force: boolean;
  /** Read data/snapshot/ (default true; --no-snapshot). */
  snapshot: boolean;
  /** Lines as the service's log records (--log-records). */
  logRecords: boolean;
}

/** Parses the command line; returns a message for anything it does not understand. */
export function parseArgs(argv: string[]): Cli | string {
  let values: ReturnType<typeof parseCliArgs>["values"];
  try {
    ({ values } = parseCliArgs(argv));
  } catch (err) {
    return (err as Error).message;
  }
  const cli: Cli = {
    ifMissing: values["if-missing"] ?? false,
    check: values.check ?? false,
    fetch: values.fetch ?? false,
    force: values.force ?? false,
    snapshot: !(values["no-snapshot"] ?? false),
    logRecords: values["log-records"] ?? false,
  };
  if (values.sources !== undefined) cli.sourcesDir = values.sources;
  if (values["fetch-mirror"] !== undefined) cli.fetchMirror = values["fetch-mirror"];
  if (cli.sourcesDir === "") return "--sources needs a value";
  if (cli.ifMissing && cli.check) return "--if-missing and --check do not go together";
  if (cli.fetchMirror !== undefined && !cli.fetch) return "--fetch-mirror needs --fetch";
  if (cli.fetchMirror !== undefined && !/^https?:\/\//.test(cli.fetchMirror)) return "--fetch-mirror needs an http(s) URL";
  return cli;
}

function parseCliArgs(argv: string[]) {
  return parseCommandLine({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      "if-missing": { type: "boolean" },
      check: { type: "boolean" },
      fetch: { type: "boolean" },
      force: { type: "boolean" },
      "no-snapshot": { type: "boolean" },
      sources: { type: "string" },
      "fetch-mirror": { type: "string" },
      "log-records": { type: "boolean" },
    },
  });
}

/**
 * Whether the current build lacks what the snapshot offers: fewer usable listed sources than the
 * snapshot holds, or made from an older snapshot than the repository's. `npm start` rebuilds then.
 */
function currentIsBehindSnapshot(dir: string, manifest: Manifest, snapshot: Snapshot): string | null {
  const usable = usableListedSources(dir) ?? 0;
  const offered =
    manifest.sources.filter((s) => !isNpmSource(s) && snapshot.files.has(s.path)).length +
    manifest.bots.filter((b) => ("path" in b ? snapshot.files.has(b.path) : true)).length;
  if (usable < offered) return `it has ${usable} usable listed sources and bot registries, the snapshot offers ${offered}`;
  const builtFrom = snapshotWrittenAt(dir);
  if (snapshot.manifest.written_at && builtFrom !== null && builtFrom < snapshot.manifest.written_at) {
    return `it was built from the snapshot of ${builtFrom}, the repository has the one of ${snapshot.manifest.written_at}`;
  }
  return null;
}

/** The snapshot a build read (manifest.json `snapshot.written_at`), or null. */
function snapshotWrittenAt(dir: string): string | null {
  try {
    const m = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { snapshot?: { written_at?: unknown } | null };
    return typeof m.snapshot?.written_at === "string" ? m.snapshot.written_at : null;
  } catch {
    return null;
  }
}

/** Lines as log records of the component `data-build`, in the format FS_LOG_FORMAT asks (`auto`: pretty on a terminal). */
function recordLog(): Log {
  const chosen = process.env.FS_LOG_FORMAT;
  setLogFormat(chosen === "json" || chosen === "pretty" ? chosen : "auto");
  const records = createLogger("info", "data-build");
  return (line) => records.info(line);
}

async function main(argv: string[]): Promise<number> {
  const cli = parseArgs(argv);
  if (typeof cli === "string") {
    console.error(`[data-build] ${cli}\n${USAGE}`);
    return 2;
  }
  if (cli.sourcesDir !== undefined && !existsSync(cli.sourcesDir)) {
    console.error(`[data-build] --sources ${cli.sourcesDir}: no such directory`);
    return 2;
  }
  const dataDir = dataDirFromEnv(process.env);
  const log: Log = cli.logRecords ? recordLog() : (line) => console.log(`[data-build] ${line}`);
  const manifest = loadManifest();
  const snapshot = cli.snapshot ? loadSnapshot() : undefined;
  const opts: BuildOptions = {
    dataDir, log, manifest, sourcesDir: cli.sourcesDir, fetch: cli.fetch, fetchMirror: cli.fetchMirror, force: cli.force, snapshot: snapshot ?? false,
  };
  if (cli.check) {
    readIpSources({ log, manifest });
    const results = await readFileSources(manifest, opts, snapshot, log);
    const botResults = await readBotRegistrySources(manifest, { sourcesDir: cli.sourcesDir, snapshot, fetch: cli.fetch, fetchMirror: cli.fetchMirror, log });
    const failed = [...results, ...botResults].filter((r) => r.status === "failed");
    if (failed.length > 0) {
      log(`${failed.length} source(s) failed: ${failed.map((r) => r.source.id).join(", ")}`);
      return 1;
    }
    log("inputs look as expected");
    return 0;
  }
  if (cli.ifMissing) {
    const dir = currentIpDatasetDir(dataDir);
    if (dir) {
      // A build this reader cannot open (an older format, a damaged copy) counts as missing.
      let problem: string | null;
      try {
        openIpDatasetDir(dir).close();
        problem = snapshot ? currentIsBehindSnapshot(dir, manifest, snapshot) : null;
      } catch (err) {
        problem = `it cannot be used (${(err as Error).message})`;
      }
      if (problem === null) {
        log(`IP dataset present at ${dir}; nothing to do`);
        return 0;
      }
      log(`IP dataset at ${dir} is replaced: ${problem}`);
      opts.force = true; // whatever the old one had, the new one has at least what the snapshot offers
    }
  }
  // The summary is the last line either way; a build kept aside is a failure of the command.
  const outcome = await buildIpDataset(opts);
  return outcome.madeCurrent ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`[data-build] failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
