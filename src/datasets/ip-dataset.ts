/**
 * Read-only view of a built IP dataset: ASN, AS organisation and country for IPv4 and IPv6, plus
 * the type and risk facts, cloud region, VPN provider, scanner, crawler, company and provenance
 * compiled from the sources in data/sources.json (the rules are in ip-facts.ts).
 *
 * Layout contract, shared with scripts/data-build.ts and anything that switches datasets:
 *   <dataDir>/datasets/ip/<version>/          an lmdb environment (data.mdb) plus manifest.json and
 *                                             bots.json (the merged bot registry, see bot-file.ts)
 *   <dataDir>/datasets/ip/current             text file naming the active version, replaced by rename
 *
 * Opening copies the tables out of lmdb into typed arrays once and closes the environment, so a
 * lookup is one binary search over memory with no lmdb transaction and no decoding. Each table
 * entry points at one record (a distinct combination of base fields and facts); its frozen
 * IpFacts object is built on the first lookup that reaches it and returned by every later one.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { open } from "lmdb";
import { z } from "zod";
import type { ParsedIp } from "../shared/ip.js";
import { readBotRegistryFile } from "./bot-file.js";
import { compileBotRegistry, type BotClassifier } from "./bot-registry.js";
import {
  COMPANY_CATEGORIES, RISK_FLAGS, TYPE_FLAGS,
  type IpBase, type IpCompany, type IpCrawler, type IpFacts, type IpProvenance, type IpRiskFlags, type IpTypeFlags,
} from "./ip-facts.js";
import { decodeTable, findIpv4, findIpv6, indexTable, validateTable, type Ipv4Table, type Ipv6Table } from "./ip-table.js";

export type { IpBase, IpCompany, IpCrawler, IpFacts, IpProvenance, IpRiskFlags, IpTypeFlags } from "./ip-facts.js";

/** Status of one source in a build: read and parsed, not found, or found but unusable. */
export type IpSourceStatus = "ok" | "missing" | "failed";

/** One source of a build, as recorded by the builder (see data/sources.json for the list). */
export interface IpSourceMeta {
  /** Manifest id, e.g. "asn-ipv4", "aws", "tor-exits". */
  id: string;
  /** Manifest kind: asn, country, cloud, datacenter, isp, crawler, tor, vpn, proxy, scanner, hosting-asn, datacenter-asn, vpn-asn. */
  kind: string;
  status: IpSourceStatus;
  /** Why it is missing or failed (e.g. "HTTP 404", "format drifted: ..."); null when ok. */
  reason: string | null;
  /** Rows read (good and bad); 0 unless ok. */
  rows: number;
  /** Rows that did not parse and were skipped. */
  bad_rows: number;
  /** SHA-256 (hex) of the bytes read; null when nothing was read. */
  sha256: string | null;
  /** The source's own timestamp (ISO 8601) when its file carries one, else null. */
  data_date: string | null;
  /**
   * When the bytes were taken from upstream (YYYY-MM-DD or ISO 8601): the snapshot's date, the
   * download time, the npm data's date; null when unknown (a --sources directory). Builds of
   * earlier versions do not have it.
   */
  taken?: string | null;
  /** Where it comes from: the operator's or list's address (npm sources: package@version and homepage). */
  upstream: string;
  licence: string;
  /**
   * Where the bytes actually came from when that is not the upstream: e.g. "download failed
   * (HTTP 404); used <local copy>". null when the source was read as listed.
   */
  note?: string | null;
}

/** Provenance of a build, as recorded by the builder. */
export interface IpDatasetMeta {
  /** Build name, e.g. "ip-20261120T221500Z-1a2b3c4d"; also the directory name. */
  version: string;
  /**
   * Short summary of what the build used, e.g.
   * "ip-location-db:asn+geo-whois-asn-country@2.3.2026061719 + 271/284 listed sources".
   */
  source: string;
  /** When the build ran, ISO 8601 UTC. */
  built_at: string;
  /** Every source of the manifest, in manifest order, with its outcome in this build. */
  sources: IpSourceMeta[];
  /** The bot registries merged into bots.json, with their outcome (builds of earlier versions: absent). */
  registries?: IpRegistryMeta[];
}

/** One bot registry of a build. */
export interface IpRegistryMeta {
  id: string;
  status: IpSourceStatus;
  /** When its bytes were taken from upstream, when known. */
  taken: string | null;
}

/** An opened build. Safe to share within a thread; open one per worker thread. */
export interface IpDataset {
  readonly meta: IpDatasetMeta;
  /** Directory of the build this handle was opened from. */
  readonly dir: string;
  /**
   * The bot registry of this build (its bots.json), compiled. Switching datasets switches the
   * registry with the IP tables.
   */
  readonly bots: BotClassifier;
  /**
   * Looks up one address. Mapped IPv4 (`::ffff:a.b.c.d`) arrives as version 4 and uses the IPv4 table.
   * The returned object is deeply frozen and shared: every address of one table entry gets the
   * same object, so callers may cache what they derive from it in a WeakMap. An address that no
   * source covers gets one shared object with null base fields and every flag false.
   * Throws after close().
   */
  lookup(ip: ParsedIp): IpFacts;
  /** Releases the tables. Idempotent. */
  close(): void;
}

/** Storage format of the lmdb keys below and of bots.json beside them; bump when any changes shape (3: bots.json required). */
export const IP_DATASET_FORMAT = 3;

/** lmdb keys of a build (all values binary; JSON values are UTF-8 JSON text). */
export const IP_KEYS = {
  /** UTF-8 decimal IP_DATASET_FORMAT. */
  format: "format",
  /** JSON IpDatasetMeta. */
  meta: "meta",
  /** encodeTable(width 1): IPv4 ranges -> record index. */
  v4: "table:v4",
  /** encodeTable(width 4): IPv6 ranges -> record index. */
  v6: "table:v6",
  /** Uint32 little-endian, RECORD_WORDS per record; see RECORD. */
  records: "records",
  /** JSON string[]: distinct organisation names (also company names). */
  orgs: "strings:orgs",
  /** JSON string[]: distinct country codes. */
  countries: "strings:countries",
  /** JSON StoredFactSet[]: distinct fact sets, referenced by RECORD.facts. */
  facts: "facts",
} as const;

/** Word offsets inside one record of the records table. */
export const RECORD = {
  /** Bit 0: the address has an ASN. */
  flags: 0,
  asn: 1,
  /** Index into strings:orgs, or NONE. */
  org: 2,
  /** Index into strings:countries, or NONE. */
  country: 3,
  /** Index into facts. */
  facts: 4,
  /** Company name as an index into strings:orgs; NONE when there is no company (no ASN). */
  companyName: 5,
  /** Company country, index into strings:countries, or NONE. */
  companyCountry: 6,
  /** Index into COMPANY_CATEGORIES | index into COMPANY_CONFIDENCES << 8. */
  companyClass: 7,
} as const;

/** Marks an absent index in the records table. */
export const NONE = 0xffffffff;
/** Words per record in the records table. */
export const RECORD_WORDS = 8;
/** Confidence values, indexed by the high byte of RECORD.companyClass. */
export const COMPANY_CONFIDENCES = ["high", "medium", "low"] as const;

/**
 * One distinct set of facts as stored (JSON). A flag is true exactly when `provenance` has its
 * name, whose value is the deciding source id; "crawler" carries the crawler's source.
 */
export interface StoredFactSet {
  provenance: Record<string, string>;
  cloud_provider: string | null;
  cloud_region: string | null;
  vpn_provider: string | null;
  scanner_org: string | null;
  crawler: IpCrawler | null;
}

/** Version names are also directory names, so keep them to a safe alphabet. */
export const VERSION_NAME = /^ip-[0-9A-Za-z-]{1,80}$/;

/** `<dataDir>/datasets/ip`: where builds and the `current` pointer live. */
export function ipDatasetRoot(dataDir: string): string {
  return join(dataDir, "datasets", "ip");
}

/**
 * Resolves the active build directory from `<dataDir>/datasets/ip/current`.
 * @returns the directory, or null when there is no pointer, it names no build, or the build is missing.
 */
export function currentIpDatasetDir(dataDir: string): string | null {
  const found = resolveCurrent(dataDir);
  return "dir" in found ? found.dir : null;
}

function resolveCurrent(dataDir: string): { dir: string } | { problem: string } {
  const root = ipDatasetRoot(dataDir);
  const pointer = join(root, "current");
  let name: string;
  try {
    name = readFileSync(pointer, "utf8").trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { problem: `no IP dataset has been built (${pointer} is missing)` };
    throw err;
  }
  if (!VERSION_NAME.test(name)) return { problem: `${pointer} does not hold a version name (got ${JSON.stringify(name.slice(0, 100))})` };
  const dir = join(root, name);
  if (!existsSync(join(dir, "data.mdb"))) return { problem: `${pointer} names ${name}, but ${dir}/data.mdb is missing` };
  return { dir };
}

/**
 * Opens the active build of `dataDir`.
 * @throws Error naming the problem and the fix when there is no usable build.
 * @example const ds = openIpDataset(config.DATA_DIR); ds.lookup(parseIp("8.8.8.8")!).asn // 15169
 */
export function openIpDataset(dataDir: string): IpDataset {
  const found = resolveCurrent(dataDir);
  if ("problem" in found) {
    throw new Error(`${found.problem}; build one with \`node dist/scripts/data-build.js\` (DATA_DIR=${dataDir})`);
  }
  return openIpDatasetDir(found.dir);
}

const metaSchema = z.object({
  version: z.string(),
  source: z.string(),
  built_at: z.string(),
  sources: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      status: z.enum(["ok", "missing", "failed"]),
      reason: z.string().nullable(),
      rows: z.number(),
      bad_rows: z.number(),
      sha256: z.string().nullable(),
      data_date: z.string().nullable(),
      taken: z.string().nullable().optional(),
      upstream: z.string(),
      licence: z.string(),
      note: z.string().nullable().optional(),
    }),
  ),
  registries: z.array(z.object({ id: z.string(), status: z.enum(["ok", "missing", "failed"]), taken: z.string().nullable() })).optional(),
});

const factSetSchema = z.object({
  provenance: z.record(z.string(), z.string()),
  cloud_provider: z.string().nullable(),
  cloud_region: z.string().nullable(),
  vpn_provider: z.string().nullable(),
  scanner_org: z.string().nullable(),
  crawler: z.object({ id: z.string(), operator: z.string() }).nullable(),
});

/**
 * Opens one specific build directory (for example the one a dataset switch is about to adopt),
 * with its bot registry when the build has one.
 * @throws Error when the directory is not a complete build of this format, or its bots.json is
 *   present but unreadable.
 */
export function openIpDatasetDir(dir: string): IpDataset {
  if (!existsSync(join(dir, "data.mdb"))) throw new Error(`${dir} is not an IP dataset build (no data.mdb)`);
  // Always these options: lmdb shares one environment per path within a process.
  const env = open({ path: dir, readOnly: true, encoding: "binary", noSubdir: false });
  let loaded: Loaded;
  try {
    loaded = load(dir, (key) => {
      const value = env.getBinary(key);
      if (!value) throw new Error(`${dir}: key "${key}" is missing; rebuild the dataset`);
      return value;
    });
  } finally {
    // Everything is copied out; holding the environment open would only pin a reader slot.
    void env.close();
  }
  // Format 3 builds always carry bots.json; without it bot detection would be silently off.
  const registry = readBotRegistryFile(dir);
  if (!registry) throw new Error(`${dir}: bots.json is missing; rebuild the dataset`);
  const bots = compileBotRegistry(registry.bots);
  return makeDataset(dir, loaded, bots);
}

/** A fact set decoded once at open; its parts are shared by every record that uses it. */
type FactSet = Omit<IpFacts, keyof IpBase | "company">;

interface Loaded {
  meta: IpDatasetMeta;
  v4: Ipv4Table;
  v6: Ipv6Table;
  words: Uint32Array;
  orgs: string[];
  countries: string[];
  factSets: FactSet[];
}

function load(dir: string, get: (key: string) => Uint8Array): Loaded {
  const text = (key: string) => Buffer.from(get(key)).toString("utf8");
  const json = (key: string): unknown => JSON.parse(text(key));
  const format = text(IP_KEYS.format);
  if (format !== String(IP_DATASET_FORMAT)) {
    throw new Error(`${dir}: dataset format ${format}, this reader needs ${IP_DATASET_FORMAT}; rebuild the dataset`);
  }
  const meta = metaSchema.parse(json(IP_KEYS.meta));
  const orgs = z.array(z.string()).parse(json(IP_KEYS.orgs));
  const countries = z.array(z.string()).parse(json(IP_KEYS.countries));
  const dataDates = new Map(meta.sources.map((s) => [s.id, s.data_date]));
  const factSets = z.array(factSetSchema).parse(json(IP_KEYS.facts)).map((stored, i) => decodeFactSet(stored, dataDates, `${dir}: fact set ${i}`));
  const v4 = indexTable(decodeTable(get(IP_KEYS.v4), 1), 1);
  const v6 = indexTable(decodeTable(get(IP_KEYS.v6), 4), 4);
  const words = decodeRecords(get(IP_KEYS.records), orgs.length, countries.length, factSets.length);
  const records = words.length / RECORD_WORDS;
  for (const [name, table, width] of [["IPv4", v4, 1], ["IPv6", v6, 4]] as const) {
    const problem = validateTable(table, width);
    if (problem) throw new Error(`${dir}: ${name} table is corrupt: ${problem}`);
    for (const value of table.values) {
      if (value < 0 || value >= records) throw new Error(`${dir}: ${name} table points at missing record ${value}`);
    }
  }
  return { meta, v4, v6, words, orgs, countries, factSets };
}

const FLAG_NAMES: ReadonlySet<string> = new Set<string>([...TYPE_FLAGS, ...RISK_FLAGS, "crawler"]);

function decodeFactSet(stored: StoredFactSet, dataDates: Map<string, string | null>, where: string): FactSet {
  const provenance: Record<string, IpProvenance> = {};
  for (const [flag, source] of Object.entries(stored.provenance)) {
    if (!FLAG_NAMES.has(flag)) throw new Error(`${where}: unknown flag "${flag}"`);
    if (!dataDates.has(source)) throw new Error(`${where}: flag "${flag}" names unknown source "${source}"`);
    provenance[flag] = Object.freeze({ source, data_date: dataDates.get(source) ?? null });
  }
  const has = (flag: string) => flag in provenance;
  if ((stored.crawler === null) === has("crawler")) throw new Error(`${where}: crawler and its provenance disagree`);
  return {
    type: Object.freeze({ datacenter: has("datacenter"), hosting: has("hosting"), isp: has("isp"), mobile: has("mobile"), cloud: has("cloud") }),
    risk: Object.freeze({ proxy: has("proxy"), vpn: has("vpn"), tor: has("tor"), residential_proxy: has("residential_proxy"), scanner: has("scanner") }),
    cloud_provider: stored.cloud_provider,
    cloud_region: stored.cloud_region,
    vpn_provider: stored.vpn_provider,
    scanner_org: stored.scanner_org,
    crawler: stored.crawler === null ? null : Object.freeze({ id: stored.crawler.id, operator: stored.crawler.operator }),
    provenance: Object.freeze(provenance),
  };
}

/** Copies the records table into an aligned array and checks every index it holds. */
function decodeRecords(bytes: Uint8Array, orgCount: number, countryCount: number, factCount: number): Uint32Array {
  if (bytes.byteLength % (RECORD_WORDS * 4) !== 0) throw new Error(`records table has an invalid size (${bytes.byteLength})`);
  const words = new Uint32Array(bytes.byteLength / 4);
  new Uint8Array(words.buffer).set(bytes);
  const check = (index: number, count: number, what: string, at: number) => {
    if (index !== NONE && index >= count) throw new Error(`record ${at / RECORD_WORDS} points at missing ${what} ${index}`);
  };
  for (let at = 0; at < words.length; at += RECORD_WORDS) {
    check(words[at + RECORD.org]!, orgCount, "org", at);
    check(words[at + RECORD.country]!, countryCount, "country", at);
    if (words[at + RECORD.facts]! >= factCount) throw new Error(`record ${at / RECORD_WORDS} points at missing fact set`);
    check(words[at + RECORD.companyName]!, orgCount, "company name", at);
    check(words[at + RECORD.companyCountry]!, countryCount, "company country", at);
    const cls = words[at + RECORD.companyClass]!;
    if (words[at + RECORD.companyName] !== NONE && ((cls & 0xff) >= COMPANY_CATEGORIES.length || cls >> 8 >= COMPANY_CONFIDENCES.length)) {
      throw new Error(`record ${at / RECORD_WORDS} has an invalid company class ${cls}`);
    }
  }
  return words;
}

const NO_FLAGS_TYPE: IpTypeFlags = Object.freeze({ datacenter: false, hosting: false, isp: false, mobile: false, cloud: false });
const NO_FLAGS_RISK: IpRiskFlags = Object.freeze({ proxy: false, vpn: false, tor: false, residential_proxy: false, scanner: false });

/** The answer for addresses that no source covers. */
const EMPTY: IpFacts = Object.freeze({
  asn: null,
  org: null,
  country: null,
  type: NO_FLAGS_TYPE,
  risk: NO_FLAGS_RISK,
  cloud_provider: null,
  cloud_region: null,
  vpn_provider: null,
  scanner_org: null,
  crawler: null,
  company: null,
  provenance: Object.freeze({}),
});

function makeDataset(dir: string, loaded: Loaded, bots: BotClassifier): IpDataset {
  let { v4, v6, words } = loaded;
  const { orgs, countries, factSets } = loaded;
  // One slot per record, filled on first use. Holey, so untouched records cost one pointer.
  let cache: Array<IpFacts | undefined> = new Array<IpFacts | undefined>(words.length / RECORD_WORDS);
  let isClosed = false;

  const pick = (list: string[], index: number): string | null => (index === NONE ? null : list[index]!);

  function build(index: number): IpFacts {
    const at = index * RECORD_WORDS;
    const facts = factSets[words[at + RECORD.facts]!]!;
    const companyName = words[at + RECORD.companyName]!;
    let company: IpCompany | null = null;
    if (companyName !== NONE) {
      const cls = words[at + RECORD.companyClass]!;
      company = Object.freeze({
        name: orgs[companyName]!,
        website: null,
        country: pick(countries, words[at + RECORD.companyCountry]!),
        category: COMPANY_CATEGORIES[cls & 0xff]!,
        confidence: COMPANY_CONFIDENCES[cls >> 8]!,
      });
    }
    const record: IpFacts = Object.freeze({
      asn: (words[at + RECORD.flags]! & 1) === 1 ? words[at + RECORD.asn]! : null,
      org: pick(orgs, words[at + RECORD.org]!),
      country: pick(countries, words[at + RECORD.country]!),
      type: facts.type,
      risk: facts.risk,
      cloud_provider: facts.cloud_provider,
      cloud_region: facts.cloud_region,
      vpn_provider: facts.vpn_provider,
      scanner_org: facts.scanner_org,
      crawler: facts.crawler,
      company,
      provenance: facts.provenance,
    });
    cache[index] = record;
    return record;
  }

  return {
    meta: loaded.meta,
    dir,
    bots,
    lookup(ip: ParsedIp): IpFacts {
      if (isClosed) throw new Error("IpDataset.lookup called after close()");
      const index = ip.version === 4 ? findIpv4(v4, ip.v4) : findIpv6(v6, ip.words);
      if (index < 0) return EMPTY;
      return cache[index] ?? build(index);
    },
    close(): void {
      isClosed = true;
      const none = { starts: new Uint32Array(0), ends: new Uint32Array(0), values: new Int32Array(0) };
      v4 = none;
      v6 = none;
      words = new Uint32Array(0);
      cache = [];
    },
  };
}
