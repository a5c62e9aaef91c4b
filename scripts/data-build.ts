/**
 * Builds the IP base dataset (ASN, AS organisation, country; IPv4 and IPv6) from the npm packages
 * @ip-location-db/asn (CSV) and @ip-location-db/geo-whois-asn-country-mmdb (MMDB) into an lmdb
 * environment that src/datasets/ip-dataset.ts reads.
 *
 *   node dist/scripts/data-build.js               build a new version and make it current
 *   node dist/scripts/data-build.js --if-missing  do nothing when a current build exists
 *   node dist/scripts/data-build.js --check       parse and validate the inputs only; exit 1 on drift
 *
 * Steps: parse inputs strictly (bad rows counted and reported; a drifted format fails the run),
 * overlay ASN and country ranges into one table per family, write `<version>.tmp/`, verify it
 * by sampling, rename it to `<version>/`, then point `current` at it by rename.
 */
import { createHash } from "node:crypto";
import { readFileSync, renameSync, rmSync, mkdirSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { open } from "lmdb";
import { Reader } from "mmdb-lib";
import { z } from "zod";
import { dataDirFromEnv } from "../src/config/index.js";
import {
  IP_DATASET_FORMAT, IP_KEYS, NONE, RECORD_WORDS, currentIpDatasetDir, ipDatasetRoot, openIpDatasetDir,
  type IpDatasetMeta,
} from "../src/datasets/ip-dataset.js";
import { NOT_FOUND, coalesceRanges, encodeTable, overlayRanges, tableFromRanges, validateTable, type BigRange } from "../src/datasets/ip-table.js";
import { ipv6WordsFromBigInt, ipv6WordsToBigInt, parseIp } from "../src/shared/ip.js";

type Log = (line: string) => void;

/** The inputs of a build, one per file. */
export type IpInputId = "asn-ipv4" | "asn-ipv6" | "country-ipv4" | "country-ipv6";

/** A dataset input: one file of one npm package, with what its licence files must still say. */
interface InputSpec {
  id: IpInputId;
  kind: "asn" | "country";
  family: 4 | 6;
  pkg: string;
  file: string;
  /** Our summary of the terms, recorded in the manifest; checked against the package's own files. */
  licence: string;
  licenceFiles: Array<{ file: string; mustContain: string }>;
  /** Fewer good rows than this means the input is truncated or no longer what we think it is. */
  minRows: number;
}

const ASN_PKG = "@ip-location-db/asn";
const COUNTRY_PKG = "@ip-location-db/geo-whois-asn-country-mmdb";
const CC_BY = "Creative Commons Attribution 4.0";
const ASN_LICENCE =
  "CC-BY-4.0: RouteViews (routeviews.org), DB-IP IP to ASN Lite (db-ip.com; web pages using results must link to DB-IP.com), NRO (nro.net)";
// The package.json says CC0-1.0, but its README and NRO_LICENSE put the NRO data under CC BY 4.0.
const COUNTRY_LICENCE = "CC-BY-4.0: NRO (nro.net) per NRO_LICENSE and README; package.json declares CC0-1.0";
const asnLicenceFiles = [
  { file: "DBIP-LICENSE", mustContain: CC_BY },
  { file: "ROUTEVIEWS-LICENSE", mustContain: CC_BY },
  { file: "NRO_LICENSE", mustContain: CC_BY },
];
const countryLicenceFiles = [{ file: "NRO_LICENSE", mustContain: CC_BY }];

// Row floors: about a quarter of what the 2026 packages hold (412k/103k ASN rows, 500k+ networks).
const INPUTS: InputSpec[] = [
  { id: "asn-ipv4", kind: "asn", family: 4, pkg: ASN_PKG, file: "asn-ipv4-num.csv", licence: ASN_LICENCE, licenceFiles: asnLicenceFiles, minRows: 100_000 },
  { id: "asn-ipv6", kind: "asn", family: 6, pkg: ASN_PKG, file: "asn-ipv6-num.csv", licence: ASN_LICENCE, licenceFiles: asnLicenceFiles, minRows: 25_000 },
  { id: "country-ipv4", kind: "country", family: 4, pkg: COUNTRY_PKG, file: "geo-whois-asn-country-ipv4.mmdb", licence: COUNTRY_LICENCE, licenceFiles: countryLicenceFiles, minRows: 50_000 },
  { id: "country-ipv6", kind: "country", family: 6, pkg: COUNTRY_PKG, file: "geo-whois-asn-country-ipv6.mmdb", licence: COUNTRY_LICENCE, licenceFiles: countryLicenceFiles, minRows: 20_000 },
];

/** A tolerated share of bad rows; a changed format breaks far more rows than this. */
const MAX_BAD_SHARE = 0.01;

/**
 * Special-purpose blocks that are not globally reachable (IANA IPv4 and IPv6 Special-Purpose
 * Address Registries, RFC 6890 and successors). Upstream assigns some of them a country
 * (192.168.0.0/16 and 172.16.0.0/12 come out as AU, 2001:db8::/32 as JP), which would make a
 * private or documentation address look foreign; the builder removes them from every input.
 */
export const SPECIAL_PURPOSE_RANGES: Record<4 | 6, readonly string[]> = {
  4: [
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
    "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
  ],
  6: [
    "::/128", "::1/128", "::ffff:0:0/96", "64:ff9b:1::/48", "100::/64", "2001:2::/48", "2001:db8::/32",
    "3fff::/20", "fc00::/7", "fe80::/10", "ff00::/8",
  ],
};

/** Turns CIDR text into a sorted range list, using the runtime parser. */
export function cidrRanges(cidrs: readonly string[], family: 4 | 6): BigRange[] {
  const bits = family === 4 ? 32 : 128;
  const ranges = cidrs.map((cidr) => {
    const [addr = "", len = ""] = cidr.split("/");
    const ip = parseIp(addr);
    const prefix = Number(len);
    if (!ip || !/^\d{1,3}$/.test(len) || prefix > bits) throw new Error(`bad CIDR ${cidr}`);
    // ::ffff:0:0 parses as mapped IPv4; in an IPv6 list we want its 128-bit form.
    const start = ip.version === 6 ? ipv6WordsToBigInt(ip.words) : family === 6 ? 0xffff00000000n | BigInt(ip.v4) : BigInt(ip.v4);
    const size = 1n << BigInt(bits - prefix);
    if (start % size !== 0n) throw new Error(`CIDR ${cidr} has host bits set`);
    return { start, end: start + size - 1n, value: 0 };
  });
  return ranges.sort((a, b) => (a.start < b.start ? -1 : 1));
}

/** Removes the special-purpose blocks from `ranges`; returns what is left and how many pieces went. */
function maskSpecialPurpose(ranges: BigRange[], family: 4 | 6): { ranges: BigRange[]; masked: number } {
  let masked = 0;
  const out = overlayRanges(ranges, cidrRanges(SPECIAL_PURPOSE_RANGES[family], family), (value, special) => {
    if (special === NOT_FOUND) return value;
    if (value !== NOT_FOUND) masked++;
    return NOT_FOUND;
  });
  return { ranges: out, masked };
}

interface ParsedInput {
  spec: InputSpec;
  upstream: string;
  checksum: string;
  rows: number;
  badRows: number;
  /** Rows clipped or dropped because they overlapped an earlier row (ASN only). */
  overlaps: number;
  /** Pieces of ranges removed because they lie in special-purpose space. */
  masked: number;
  /** Value = index into the ASN pair list (asn inputs) or the country list (country inputs). */
  ranges: BigRange[];
  /** A few good rows kept for the post-build check. */
  samples: Array<{ start: bigint; value: number }>;
}

/** An input as its parser returns it, before masking and bookkeeping. */
type RawInput = Omit<ParsedInput, "upstream" | "checksum" | "samples">;

/** Interned values shared by all inputs of one build. */
class Dictionary {
  readonly orgs: string[] = [];
  readonly countries: string[] = [];
  /** ASN pairs: asn and org index (NONE when the org column is empty). */
  readonly pairs: Array<{ asn: number; org: number }> = [];
  private readonly orgIndex = new Map<string, number>();
  private readonly countryIndex = new Map<string, number>();
  private readonly pairIndex = new Map<string, number>();

  pair(asn: number, org: string): number {
    const key = `${asn}\u0000${org}`;
    let i = this.pairIndex.get(key);
    if (i === undefined) {
      i = this.pairs.push({ asn, org: org === "" ? NONE : intern(this.orgs, this.orgIndex, org) }) - 1;
      this.pairIndex.set(key, i);
    }
    return i;
  }

  country(code: string): number {
    return intern(this.countries, this.countryIndex, code);
  }
}

function intern(list: string[], index: Map<string, number>, value: string): number {
  let i = index.get(value);
  if (i === undefined) {
    i = list.push(value) - 1;
    index.set(value, i);
  }
  return i;
}

/** Reads package.json and licence files of an input's package; fails when the licence text drifted. */
function describePackage(spec: InputSpec): { dir: string; upstream: string } {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve(`${spec.pkg}/package.json`);
  const dir = dirname(pkgJson);
  const pkg = z
    .object({ name: z.string(), version: z.string(), repository: z.object({ url: z.string() }).optional(), homepage: z.string().optional() })
    .parse(JSON.parse(readFileSync(pkgJson, "utf8")));
  const homepage = pkg.homepage ?? pkg.repository?.url.replace(/^git\+/, "").replace(/\.git$/, "") ?? "unknown";
  for (const { file, mustContain } of spec.licenceFiles) {
    const path = join(dir, file);
    if (!existsSync(path) || !readFileSync(path, "utf8").includes(mustContain)) {
      throw new Error(`${spec.pkg}: ${file} no longer says "${mustContain}"; review the licence before building`);
    }
  }
  return { dir, upstream: `${pkg.name}@${pkg.version} ${homepage}` };
}

/** Splits one CSV line (RFC 4180 quoting, `""` inside quotes). Returns null on broken quoting. */
export function splitCsvLine(line: string): string[] | null {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line.charCodeAt(i) === 34) {
      let value = "";
      let from = ++i;
      for (;;) {
        const q = line.indexOf('"', from);
        if (q < 0) return null;
        value += line.slice(from, q);
        if (line.charCodeAt(q + 1) === 34) {
          value += '"';
          from = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      fields.push(value);
      if (i === line.length) return fields;
      if (line.charCodeAt(i) !== 44) return null;
      i++;
    } else {
      const comma = line.indexOf(",", i);
      const field = line.slice(i, comma < 0 ? line.length : comma);
      if (field.includes('"')) return null;
      fields.push(field);
      if (comma < 0) return fields;
      i = comma + 1;
    }
  }
}

const decimalAddress = (bits: 32n | 128n) =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]{0,38})$/, "not a decimal address")
    .transform((s) => BigInt(s))
    .refine((v) => v >> bits === 0n, `exceeds ${bits} bits`);
const asnField = z.string().regex(/^(0|[1-9][0-9]{0,9})$/, "not an AS number").transform(Number).refine((v) => v <= 0xffffffff, "AS number exceeds 32 bits");
const asnRow = (bits: 32n | 128n) =>
  z.tuple([decimalAddress(bits), decimalAddress(bits), asnField, z.string()]).refine(([s, e]) => s <= e, "range ends before it starts");
const asnRowSchemas = { 4: asnRow(32n), 6: asnRow(128n) };

/** Parses an ASN CSV (start,end,asn,org with numeric addresses). */
function parseAsnCsv(spec: InputSpec, bytes: Buffer, dict: Dictionary, log: Log): RawInput {
  const text = bytes.toString("utf8");
  const schema = asnRowSchemas[spec.family];
  const ranges: BigRange[] = [];
  let rows = 0;
  let badRows = 0;
  let overlaps = 0;
  const badExamples: string[] = [];
  for (let at = 0; at < text.length; ) {
    let nl = text.indexOf("\n", at);
    if (nl < 0) nl = text.length;
    const line = text.slice(at, nl).replace(/\r$/, "");
    at = nl + 1;
    if (line === "") continue;
    rows++;
    const fields = splitCsvLine(line);
    const parsed = fields && fields.length === 4 ? schema.safeParse(fields) : null;
    if (!parsed?.success) {
      badRows++;
      if (badExamples.length < 3) badExamples.push(`line ${rows}: ${line.slice(0, 120)}`);
      continue;
    }
    let [start, end, asn, org] = parsed.data;
    const last = ranges[ranges.length - 1];
    if (last && start < last.start) {
      badRows++; // the file is sorted by start; an exception means we misread it
      if (badExamples.length < 3) badExamples.push(`line ${rows} (out of order): ${line.slice(0, 120)}`);
      continue;
    }
    if (last && start <= last.end) {
      // Upstream has a few overlapping rows; the earlier row keeps the shared addresses.
      overlaps++;
      if (end <= last.end) continue;
      start = last.end + 1n;
    }
    ranges.push({ start, end, value: dict.pair(asn, org.trim()) });
    if (rows % 100_000 === 0) log(`  ${spec.id}: ${rows} rows`);
  }
  if (badExamples.length) log(`  ${spec.id}: ${badRows} bad rows, e.g. ${badExamples.join(" | ")}`);
  return { spec, rows, badRows, overlaps, masked: 0, ranges };
}

const countryRecord = z.object({ country_code: z.string().regex(/^[A-Z]{2}$/) });

/** What mmdb-lib keeps private but documents in its source: the tree reader and data decoder. */
interface ReaderInternals {
  walker: { left(offset: number): number; right(offset: number): number };
  decoder: { decodeFast(offset: number): { value: unknown } };
}

/** Enumerates every leaf network of a country MMDB into sorted, coalesced ranges. */
function walkCountryMmdb(spec: InputSpec, bytes: Buffer, dict: Dictionary, log: Log): RawInput {
  const reader = new Reader(bytes);
  const { databaseType, ipVersion, nodeCount, nodeByteSize, searchTreeSize } = reader.metadata;
  if (!databaseType.includes("country") || ipVersion !== spec.family) {
    throw new Error(`${spec.id}: expected a country database for IPv${spec.family}, found "${databaseType}" (ipVersion ${ipVersion})`);
  }
  const { walker, decoder } = reader as unknown as Partial<ReaderInternals>;
  if (typeof walker?.left !== "function" || typeof decoder?.decodeFast !== "function") {
    throw new Error(`${spec.id}: mmdb-lib no longer exposes walker/decoder internals; update walkCountryMmdb for this mmdb-lib version`);
  }
  const bits = spec.family === 4 ? 32 : 128;
  const countryOf = new Map<number, number>(); // data pointer -> country index, or NOT_FOUND when invalid
  const leaves: BigRange[] = [];
  let badRows = 0;
  // Depth-first, left before right, so leaves come out in address order. Entries are record
  // values: below nodeCount a node, equal to it "no data", above it a pointer into the data section.
  const stack: Array<{ record: number; depth: number; prefix: bigint }> = [{ record: 0, depth: 0, prefix: 0n }];
  while (stack.length > 0) {
    const { record, depth, prefix } = stack.pop()!;
    if (record < nodeCount) {
      if (depth === bits) {
        badRows++; // a node below the last bit: a malformed tree
        continue;
      }
      const offset = record * nodeByteSize;
      const half = 1n << BigInt(bits - depth - 1);
      stack.push({ record: walker.right(offset), depth: depth + 1, prefix: prefix | half });
      stack.push({ record: walker.left(offset), depth: depth + 1, prefix });
      continue;
    }
    if (record === nodeCount) continue;
    let country = countryOf.get(record);
    if (country === undefined) {
      // Same arithmetic as mmdb-lib's resolveDataPointer.
      const parsed = countryRecord.safeParse(decoder.decodeFast(record - nodeCount + searchTreeSize).value);
      country = parsed.success ? dict.country(parsed.data.country_code) : NOT_FOUND;
      countryOf.set(record, country);
    }
    if (country === NOT_FOUND) {
      badRows++;
      continue;
    }
    leaves.push({ start: prefix, end: prefix + (1n << BigInt(bits - depth)) - 1n, value: country });
    if (leaves.length % 200_000 === 0) log(`  ${spec.id}: ${leaves.length} networks`);
  }
  const ranges = coalesceRanges(leaves);
  log(`  ${spec.id}: ${leaves.length} networks -> ${ranges.length} ranges after joining neighbours`);
  return { spec, rows: leaves.length + badRows, badRows, overlaps: 0, masked: 0, ranges };
}

function pickSamples(ranges: BigRange[]): Array<{ start: bigint; value: number }> {
  const step = Math.max(1, Math.floor(ranges.length / 200));
  const out: Array<{ start: bigint; value: number }> = [];
  for (let i = 0; i < ranges.length; i += step) out.push({ start: ranges[i]!.start, value: ranges[i]!.value });
  return out;
}

/** Reads, checksums and parses one input, failing on format drift. */
function readInput(spec: InputSpec, dict: Dictionary, log: Log, override?: string): ParsedInput {
  const { dir, upstream } = describePackage(spec);
  const path = override ?? join(dir, spec.file);
  const bytes = readFileSync(path);
  const checksum = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  log(`${spec.id}: reading ${path} (${(bytes.length / 1e6).toFixed(1)} MB)`);
  const parsed = spec.kind === "asn" ? parseAsnCsv(spec, bytes, dict, log) : walkCountryMmdb(spec, bytes, dict, log);
  const good = parsed.rows - parsed.badRows;
  if (good < spec.minRows || parsed.badRows > parsed.rows * MAX_BAD_SHARE) {
    throw new Error(
      `${spec.id}: ${path} does not look like the expected format: ${good} good rows (need ${spec.minRows}), ` +
        `${parsed.badRows} bad of ${parsed.rows}; check whether ${spec.pkg} changed its layout`,
    );
  }
  const { ranges, masked } = maskSpecialPurpose(parsed.ranges, spec.family);
  log(`${spec.id}: ${parsed.rows} rows, ${parsed.badRows} bad, ${parsed.overlaps} overlapping, ${masked} special-purpose pieces removed, ${ranges.length} ranges`);
  return { ...parsed, ranges, masked, samples: pickSamples(ranges), upstream, checksum };
}

/** Result of reading every input: enough to write a build, or to report in --check mode. */
export interface IpSources {
  inputs: ParsedInput[];
  dict: Dictionary;
}

/** Options shared by readIpSources and buildIpDataset. */
export interface IpSourceOptions {
  /** Progress lines; silent when absent. */
  log?: Log;
  /** Read these files instead of the packages' own (tests use it to feed drifted inputs). */
  files?: Partial<Record<IpInputId, string>>;
}

/** Parses and validates all inputs without writing anything. Throws on drift. */
export function readIpSources(opts: IpSourceOptions = {}): IpSources {
  const log = opts.log ?? (() => {});
  const dict = new Dictionary();
  return { inputs: INPUTS.map((spec) => readInput(spec, dict, log, opts.files?.[spec.id])), dict };
}

function timestamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
}

/**
 * Builds a new IP dataset version under `<dataDir>/datasets/ip/` and makes it current.
 * @returns the version name and its directory.
 * @throws Error when an input drifted, a licence file changed, or the verification failed;
 *   `current` is left untouched in that case.
 */
export async function buildIpDataset(opts: IpSourceOptions & { dataDir: string }): Promise<{ version: string; dir: string }> {
  const log = opts.log ?? (() => {});
  const began = Date.now();
  const builtAt = new Date();
  const { inputs, dict } = readIpSources(opts);
  const byId = (id: IpInputId) => inputs.find((p) => p.spec.id === id)!;

  // One record per distinct (ASN pair, country); the tables map ranges to records.
  const recordIndex = new Map<number, number>();
  const recordWords: number[] = [];
  const recordOf = (pair: number, country: number): number => {
    const key = (pair + 1) * 65536 + (country + 1);
    let i = recordIndex.get(key);
    if (i === undefined) {
      const p = pair === NOT_FOUND ? undefined : dict.pairs[pair];
      i = recordWords.push(p ? 1 : 0, p?.asn ?? 0, p?.org ?? NONE, country === NOT_FOUND ? NONE : country) / RECORD_WORDS - 1;
      recordIndex.set(key, i);
    }
    return i;
  };
  log("overlaying ASN and country ranges");
  const v4 = tableFromRanges(overlayRanges(byId("asn-ipv4").ranges, byId("country-ipv4").ranges, recordOf), 1);
  const v6 = tableFromRanges(overlayRanges(byId("asn-ipv6").ranges, byId("country-ipv6").ranges, recordOf), 4);
  for (const [name, table, width] of [["IPv4", v4, 1], ["IPv6", v6, 4]] as const) {
    const problem = validateTable(table, width);
    if (problem) throw new Error(`built ${name} table is invalid: ${problem}`);
  }
  log(`tables: ${v4.values.length} IPv4 ranges, ${v6.values.length} IPv6 ranges, ${recordIndex.size} records, ${dict.orgs.length} orgs`);

  const short = createHash("sha256").update(inputs.map((p) => p.checksum).join("\n")).digest("hex").slice(0, 8);
  const root = ipDatasetRoot(opts.dataDir);
  mkdirSync(root, { recursive: true });
  let version = `ip-${timestamp(builtAt)}-${short}`;
  for (let n = 2; existsSync(join(root, version)); n++) version = `ip-${timestamp(builtAt)}-${short}-${n}`;
  const dir = join(root, version);
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });

  const upstreamVersions = [...new Set(inputs.map((p) => p.upstream.split(" ")[0]!.split("@").pop()))].join(",");
  const meta: IpDatasetMeta = {
    version,
    source: `ip-location-db:asn+geo-whois-asn-country@${upstreamVersions}`,
    built_at: builtAt.toISOString(),
    sources: inputs.map((p) => ({ id: p.spec.id, kind: p.spec.kind, rows: p.rows, checksum: p.checksum, upstream: p.upstream, licence: p.spec.licence })),
  };
  log(`writing ${tmp}`);
  // noSubdir: lmdb-js would otherwise read the ".tmp" suffix as a file extension and write a bare file.
  const env = open({ path: tmp, encoding: "binary", noSubdir: false });
  const asBuffer = (u8: Uint8Array) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
  await env.transaction(() => {
    env.put(IP_KEYS.format, Buffer.from(String(IP_DATASET_FORMAT)));
    env.put(IP_KEYS.meta, Buffer.from(JSON.stringify(meta)));
    env.put(IP_KEYS.v4, asBuffer(encodeTable(v4, 1)));
    env.put(IP_KEYS.v6, asBuffer(encodeTable(v6, 4)));
    env.put(IP_KEYS.records, asBuffer(new Uint8Array(Uint32Array.from(recordWords).buffer)));
    env.put(IP_KEYS.orgs, Buffer.from(JSON.stringify(dict.orgs)));
    env.put(IP_KEYS.countries, Buffer.from(JSON.stringify(dict.countries)));
  });
  await env.close();
  const manifest = {
    generated_by: "scripts/data-build.ts; do not edit",
    ...meta,
    format: IP_DATASET_FORMAT,
    tables: { ipv4_ranges: v4.values.length, ipv6_ranges: v6.values.length, records: recordIndex.size, orgs: dict.orgs.length, countries: dict.countries.length },
    sources: inputs.map((p) => ({
      id: p.spec.id, kind: p.spec.kind, file: p.spec.file, rows: p.rows, bad_rows: p.badRows, overlapping_rows: p.overlaps, special_purpose_removed: p.masked,
      ranges: p.ranges.length, checksum: p.checksum, built_at: builtAt.toISOString(), upstream: p.upstream, licence: p.spec.licence,
    })),
  };
  writeFileSync(join(tmp, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);

  verifyBuild(tmp, inputs, dict, log);
  renameSync(tmp, dir);
  // Readers see either the old name or the new one, never a partial file.
  const pointerTmp = join(root, `current.${process.pid}.tmp`);
  writeFileSync(pointerTmp, `${version}\n`);
  renameSync(pointerTmp, join(root, "current"));
  log(`built ${version} in ${((Date.now() - began) / 1000).toFixed(1)} s; current -> ${version}`);
  return { version, dir };
}

/** Looks up sampled range starts of every input in the written build; they must answer as the input says. */
function verifyBuild(dir: string, inputs: ParsedInput[], dict: Dictionary, log: Log): void {
  let ds: ReturnType<typeof openIpDatasetDir> | undefined;
  try {
    ds = openIpDatasetDir(dir);
    let checked = 0;
    for (const input of inputs) {
      for (const { start, value } of input.samples) {
        const ip = input.spec.family === 4 ? { version: 4 as const, v4: Number(start), mapped: false } : { version: 6 as const, words: ipv6WordsFromBigInt(start) };
        const got = ds.lookup(ip);
        const want = input.spec.kind === "asn" ? dict.pairs[value]!.asn : dict.countries[value];
        const have = input.spec.kind === "asn" ? got.asn : got.country;
        if (have !== want) throw new Error(`verification failed: ${input.spec.id} row starting at ${start} should give ${want}, got ${have}`);
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

const USAGE = "usage: node dist/scripts/data-build.js [--if-missing | --check]";

async function main(argv: string[]): Promise<number> {
  const unknown = argv.filter((a) => a !== "--if-missing" && a !== "--check");
  if (unknown.length > 0 || argv.length > 1) {
    console.error(`[data-build] unexpected arguments: ${argv.join(" ")}\n${USAGE}`);
    return 2;
  }
  const dataDir = dataDirFromEnv(process.env);
  const log: Log = (line) => console.log(`[data-build] ${line}`);
  if (argv.includes("--check")) {
    readIpSources({ log });
    log("inputs look as expected");
    return 0;
  }
  if (argv.includes("--if-missing")) {
    const dir = currentIpDatasetDir(dataDir);
    if (dir) {
      log(`IP dataset present at ${dir}; nothing to do`);
      return 0;
    }
  }
  await buildIpDataset({ dataDir, log });
  return 0;
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
