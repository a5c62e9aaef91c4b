/**
 * The npm-registry inputs: @ip-location-db/asn (CSV, ASN and AS organisation per range) and
 * @ip-location-db/geo-whois-asn-country-mmdb (MMDB, country per network). They are always
 * present after `npm ci`, so every build has them; a drifted format or a changed licence file
 * stops the build (without them there is no dataset).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Reader } from "mmdb-lib";
import { z } from "zod";
import { NOT_FOUND, coalesceRanges, overlayRanges, type BigRange } from "../../src/datasets/ip-table.js";
import { SPECIAL_PURPOSE_RANGES } from "../../src/shared/bogon.js";
import { ipv6WordsToBigInt, parseIp } from "../../src/shared/ip.js";
import type { NpmSource } from "./manifest.js";

export type Log = (line: string) => void;

/** Marks an absent org index in the ASN pair list. */
const NO_ORG = 0xffffffff;

/**
 * Special-purpose blocks that are not globally reachable (src/shared/bogon.ts, which answers flag
 * as bogons). Upstream assigns some of them a country (192.168.0.0/16 and 172.16.0.0/12 come out as
 * AU, 2001:db8::/32 as JP), which would make a private or documentation address look foreign; the
 * builder removes them from every input.
 */
export { SPECIAL_PURPOSE_RANGES };

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

/** One npm input after parsing and masking. */
export interface NpmInput {
  spec: NpmSource;
  /** `<package>@<version> <homepage>`. */
  upstream: string;
  /** SHA-256 (hex) of the file as read. */
  sha256: string;
  /** The package's own data stamp: ip-location-db versions end in YYYYMMDDHH. */
  dataDate: string | null;
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
type RawInput = Pick<NpmInput, "rows" | "badRows" | "overlaps" | "ranges">;

/** Interned values shared by all inputs of one build. */
export class Dictionary {
  readonly orgs: string[] = [];
  readonly countries: string[] = [];
  /** ASN pairs: asn and org index (NO_ORG when the org column is empty). */
  readonly pairs: Array<{ asn: number; org: number }> = [];
  private readonly orgIndex = new Map<string, number>();
  private readonly countryIndex = new Map<string, number>();
  private readonly pairIndex = new Map<string, number>();

  pair(asn: number, org: string): number {
    const key = `${asn}\u0000${org}`;
    let i = this.pairIndex.get(key);
    if (i === undefined) {
      i = this.pairs.push({ asn, org: org === "" ? NO_ORG : this.org(org) }) - 1;
      this.pairIndex.set(key, i);
    }
    return i;
  }

  /** Index of an organisation name (also used for company names). */
  org(name: string): number {
    return intern(this.orgs, this.orgIndex, name);
  }

  country(code: string): number {
    return intern(this.countries, this.countryIndex, code);
  }

  /** The organisation name of a pair, or null. */
  orgOf(pair: number): string | null {
    const org = this.pairs[pair]!.org;
    return org === NO_ORG ? null : this.orgs[org]!;
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

/** ip-location-db stamps versions as <major>.<minor>.<YYYYMMDDHH>; that is the data's date. */
export function dataDateOfVersion(version: string): string | null {
  const m = /^\d+\.\d+\.(\d{4})(\d{2})(\d{2})(\d{2})$/.exec(version);
  if (!m) return null;
  const date = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:00:00Z`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** Reads package.json and licence files of an input's package; fails when the licence text drifted. */
function describePackage(spec: NpmSource): { dir: string; upstream: string; version: string } {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve(`${spec.package}/package.json`);
  const dir = dirname(pkgJson);
  const pkg = z
    .object({ name: z.string(), version: z.string(), repository: z.object({ url: z.string() }).optional(), homepage: z.string().optional() })
    .parse(JSON.parse(readFileSync(pkgJson, "utf8")));
  const homepage = pkg.homepage ?? pkg.repository?.url.replace(/^git\+/, "").replace(/\.git$/, "") ?? "unknown";
  for (const { file, must_contain } of spec.licence_files) {
    const path = join(dir, file);
    if (!existsSync(path) || !readFileSync(path, "utf8").includes(must_contain)) {
      throw new Error(`${spec.package}: ${file} no longer says "${must_contain}"; review the licence before building`);
    }
  }
  return { dir, upstream: `${pkg.name}@${pkg.version} ${homepage}`, version: pkg.version };
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
function parseAsnCsv(spec: NpmSource, bytes: Buffer, dict: Dictionary, log: Log): RawInput {
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
    if (rows % 200_000 === 0) log(`  ${spec.id}: ${rows} rows`);
  }
  if (badExamples.length) log(`  ${spec.id}: ${badRows} bad rows, e.g. ${badExamples.join(" | ")}`);
  return { rows, badRows, overlaps, ranges };
}

const countryRecord = z.object({ country_code: z.string().regex(/^[A-Z]{2}$/) });

/** What mmdb-lib keeps private but documents in its source: the tree reader and data decoder. */
interface ReaderInternals {
  walker: { left(offset: number): number; right(offset: number): number };
  decoder: { decodeFast(offset: number): { value: unknown } };
}

/** Enumerates every leaf network of a country MMDB into sorted, coalesced ranges. */
function walkCountryMmdb(spec: NpmSource, bytes: Buffer, dict: Dictionary, log: Log): RawInput {
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
  return { rows: leaves.length + badRows, badRows, overlaps: 0, ranges };
}

function pickSamples(ranges: BigRange[]): Array<{ start: bigint; value: number }> {
  const step = Math.max(1, Math.floor(ranges.length / 200));
  const out: Array<{ start: bigint; value: number }> = [];
  for (let i = 0; i < ranges.length; i += step) out.push({ start: ranges[i]!.start, value: ranges[i]!.value });
  return out;
}

/** A tolerated share of bad rows; a changed format breaks far more rows than this. */
const MAX_BAD_SHARE = 0.01;

/** Reads, checksums and parses one npm input, failing on format drift. */
export function readNpmInput(spec: NpmSource, dict: Dictionary, log: Log, override?: string): NpmInput {
  const { dir, upstream, version } = describePackage(spec);
  const path = override ?? join(dir, spec.file);
  const bytes = readFileSync(path);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  log(`${spec.id}: reading ${path} (${(bytes.length / 1e6).toFixed(1)} MB)`);
  const parsed = spec.kind === "asn" ? parseAsnCsv(spec, bytes, dict, log) : walkCountryMmdb(spec, bytes, dict, log);
  const good = parsed.rows - parsed.badRows;
  if (good < spec.min_rows || parsed.badRows > parsed.rows * MAX_BAD_SHARE) {
    throw new Error(
      `${spec.id}: ${path} does not look like the expected format: ${good} good rows (need ${spec.min_rows}), ` +
        `${parsed.badRows} bad of ${parsed.rows}; check whether ${spec.package} changed its layout`,
    );
  }
  const { ranges, masked } = maskSpecialPurpose(parsed.ranges, spec.family);
  log(`${spec.id}: ${parsed.rows} rows, ${parsed.badRows} bad, ${parsed.overlaps} overlapping, ${masked} special-purpose pieces removed, ${ranges.length} ranges`);
  return { ...parsed, spec, ranges, masked, samples: pickSamples(ranges), upstream, sha256, dataDate: dataDateOfVersion(version) };
}
