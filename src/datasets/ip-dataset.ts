/**
 * Read-only view of the built IP base dataset (ASN, AS organisation, country for IPv4 and IPv6).
 *
 * Layout contract, shared with scripts/data-build.ts and anything that switches datasets:
 *   <dataDir>/datasets/ip/<version>/          an lmdb environment (data.mdb) plus manifest.json
 *   <dataDir>/datasets/ip/current             text file naming the active version, replaced by rename
 *
 * Opening copies the tables out of lmdb into typed arrays once and closes the environment, so a
 * lookup is a binary search over memory with no lmdb transaction, no decoding and no allocation.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { open } from "lmdb";
import { z } from "zod";
import type { ParsedIp } from "../shared/ip.js";
import { decodeTable, findIpv4, findIpv6, indexTable, validateTable, type Ipv4Table, type Ipv6Table } from "./ip-table.js";

/** What the dataset knows about one address. Each field is null when no source covers it. */
export interface IpBase {
  /** Autonomous system number, e.g. 15169; null when the address is in no announced range. */
  asn: number | null;
  /** AS organisation name as published upstream, e.g. "Google LLC"; null with asn, or when unnamed. */
  org: string | null;
  /** ISO 3166-1 alpha-2 country code, upper case, e.g. "US"; null when unknown (private ranges). */
  country: string | null;
}

/** Provenance of a build, as recorded by the builder. */
export interface IpDatasetMeta {
  /** Build name, e.g. "ip-20261120T221500Z-1a2b3c4d"; also the directory name. */
  version: string;
  /** Short upstream summary, e.g. "ip-location-db:asn+geo-whois-asn-country@2.3.2026061719". */
  source: string;
  /** When the build ran, ISO 8601 UTC. */
  built_at: string;
  /** One entry per input file. `checksum` is "sha256:<hex>" of the file as read. */
  sources: Array<{ id: string; kind: string; rows: number; checksum: string; upstream: string; licence: string }>;
}

/** An opened build. Safe to share within a thread; open one per worker thread. */
export interface IpDataset {
  readonly meta: IpDatasetMeta;
  /** Directory of the build this handle was opened from. */
  readonly dir: string;
  /**
   * Looks up one address. Mapped IPv4 (`::ffff:a.b.c.d`) arrives as version 4 and uses the IPv4 table.
   * The returned object is shared and frozen: do not mutate it. Throws after close().
   */
  lookup(ip: ParsedIp): IpBase;
  /** Releases the tables. Idempotent. */
  close(): void;
}

/** Storage format of the lmdb keys below; bump when any of them changes shape. */
export const IP_DATASET_FORMAT = 1;

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
  /** Uint32 little-endian, 4 per record: flags (bit 0: has ASN), asn, org index, country index (NONE = absent). */
  records: "records",
  /** JSON string[]: distinct organisation names. */
  orgs: "strings:orgs",
  /** JSON string[]: distinct country codes. */
  countries: "strings:countries",
} as const;

/** Marks an absent org or country index in the records table. */
export const NONE = 0xffffffff;
/** Words per record in the records table. */
export const RECORD_WORDS = 4;

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
    z.object({ id: z.string(), kind: z.string(), rows: z.number(), checksum: z.string(), upstream: z.string(), licence: z.string() }),
  ),
});

/**
 * Opens one specific build directory (for example the one a dataset switch is about to adopt).
 * @throws Error when the directory is not a complete build of this format.
 */
export function openIpDatasetDir(dir: string): IpDataset {
  if (!existsSync(join(dir, "data.mdb"))) throw new Error(`${dir} is not an IP dataset build (no data.mdb)`);
  // Always these options: lmdb shares one environment per path within a process (STYLE.md §6).
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
  return makeDataset(dir, loaded);
}

interface Loaded {
  meta: IpDatasetMeta;
  v4: Ipv4Table;
  v6: Ipv6Table;
  records: IpBase[];
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
  const v4 = indexTable(decodeTable(get(IP_KEYS.v4), 1), 1);
  const v6 = indexTable(decodeTable(get(IP_KEYS.v6), 4), 4);
  const records = decodeRecords(get(IP_KEYS.records), orgs, countries);
  for (const [name, table, width] of [["IPv4", v4, 1], ["IPv6", v6, 4]] as const) {
    const problem = validateTable(table, width);
    if (problem) throw new Error(`${dir}: ${name} table is corrupt: ${problem}`);
    for (const value of table.values) {
      if (value < 0 || value >= records.length) throw new Error(`${dir}: ${name} table points at missing record ${value}`);
    }
  }
  return { meta, v4, v6, records };
}

function decodeRecords(bytes: Uint8Array, orgs: string[], countries: string[]): IpBase[] {
  if (bytes.byteLength % (RECORD_WORDS * 4) !== 0) throw new Error(`records table has an invalid size (${bytes.byteLength})`);
  const words = new Uint32Array(bytes.byteLength / 4);
  new Uint8Array(words.buffer).set(bytes);
  const pick = (list: string[], index: number, what: string): string | null => {
    if (index === NONE) return null;
    const value = list[index];
    if (value === undefined) throw new Error(`records table points at missing ${what} ${index}`);
    return value;
  };
  const records: IpBase[] = [];
  for (let at = 0; at < words.length; at += RECORD_WORDS) {
    const hasAsn = (words[at]! & 1) === 1;
    records.push(
      Object.freeze({
        asn: hasAsn ? words[at + 1]! : null,
        org: pick(orgs, words[at + 2]!, "org"),
        country: pick(countries, words[at + 3]!, "country"),
      }),
    );
  }
  return records;
}

const EMPTY: IpBase = Object.freeze({ asn: null, org: null, country: null });

function makeDataset(dir: string, loaded: Loaded): IpDataset {
  let { v4, v6, records } = loaded;
  let isClosed = false;
  return {
    meta: loaded.meta,
    dir,
    lookup(ip: ParsedIp): IpBase {
      if (isClosed) throw new Error("IpDataset.lookup called after close()");
      const index = ip.version === 4 ? findIpv4(v4, ip.v4) : findIpv6(v6, ip.words);
      return index < 0 ? EMPTY : records[index]!;
    },
    close(): void {
      isClosed = true;
      const none = { starts: new Uint32Array(0), ends: new Uint32Array(0), values: new Int32Array(0) };
      v4 = none;
      v6 = none;
      records = [];
    },
  };
}
