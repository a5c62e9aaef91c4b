/**
 * One strict parser per source format named in data/sources.json. Each takes the file's bytes
 * and returns its rows; a file whose layout is not the documented one throws FormatDriftError,
 * so that source fails with a clear message and the build goes on. Rows that do not parse are
 * counted (`badRows`, with a few examples) and skipped; too many of them also count as drift.
 *
 * JSON envelopes are checked with zod (validation at the edge); rows inside them and text lines are checked
 * one by one so a single odd row costs one row, not the source.
 */
import { z } from "zod";
import { parseCidr } from "./cidr.js";
import type { FileSource } from "./manifest.js";

/** One range of a range list. `name`: a per-row label (comment or Name column); `region`: the operator's region. */
export interface FactRow {
  family: 4 | 6;
  start: bigint;
  end: bigint;
  name: string | null;
  region: string | null;
}

/** One ASN of an ASN list, with the list's name for it. */
export interface AsnRow {
  asn: number;
  name: string | null;
}

/** What a parser read from one file. */
export interface ParsedFile {
  /** Data rows seen (good and bad); blank and comment lines are not rows. */
  rows: number;
  badRows: number;
  /** Up to three bad rows, for the report. */
  badExamples: string[];
  /** The file's own timestamp, ISO 8601 UTC, when its format carries one. */
  dataDate: string | null;
  ranges: FactRow[];
  asns: AsnRow[];
}

/** The file is not in the format the manifest says; the source fails, the build continues. */
export class FormatDriftError extends Error {
  override readonly name = "FormatDriftError";
}

export type Parser = (bytes: Buffer, source: FileSource) => ParsedFile;

/** Beyond this share of bad rows (and more than MAX_BAD_FLOOR of them) a file counts as drifted. */
export const MAX_BAD_SHARE = 0.05;
const MAX_BAD_FLOOR = 2;

/** Collects rows and bad rows for one file. */
class RowSink {
  readonly out: ParsedFile = { rows: 0, badRows: 0, badExamples: [], dataDate: null, ranges: [], asns: [] };

  bad(reason: string): void {
    this.out.badRows++;
    if (this.out.badExamples.length < 3) this.out.badExamples.push(reason);
  }

  /** One CIDR or address row. */
  cidr(text: string, name: string | null = null, region: string | null = null): void {
    this.out.rows++;
    const r = parseCidr(text.trim());
    if (typeof r === "string") return this.bad(r);
    this.out.ranges.push({ family: r.family, start: r.start, end: r.end, name, region });
  }

  /** One ASN row ("AS123" or "123"). */
  asn(text: string, name: string | null): void {
    this.out.rows++;
    const m = /^(?:AS)?(\d{1,10})$/i.exec(text.trim());
    const asn = m ? Number(m[1]) : NaN;
    if (!m || asn > 0xffffffff || asn === 0) return this.bad(`not an AS number: ${text.slice(0, 60)}`);
    this.out.asns.push({ asn, name });
  }

  /** One row of an array that must be a string. */
  cidrValue(value: unknown, region: string | null = null): void {
    if (typeof value === "string") this.cidr(value, null, region);
    else {
      this.out.rows++;
      this.bad(`not a string: ${JSON.stringify(value)?.slice(0, 60)}`);
    }
  }

  /** Finishes: applies the drift threshold. */
  done(source: FileSource): ParsedFile {
    const { rows, badRows, badExamples } = this.out;
    if ((rows > 0 && badRows === rows) || (badRows > MAX_BAD_FLOOR && badRows > rows * MAX_BAD_SHARE)) {
      throw new FormatDriftError(
        `${source.id}: ${badRows} of ${rows} rows do not parse as ${source.format} (e.g. ${badExamples.join(" | ")}); the format has drifted`,
      );
    }
    return this.out;
  }
}

function text(bytes: Buffer): string {
  const s = bytes.toString("utf8");
  return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
}

/** Non-empty lines, without their line break. */
function* lines(s: string): Generator<string> {
  for (let at = 0; at < s.length; ) {
    let nl = s.indexOf("\n", at);
    if (nl < 0) nl = s.length;
    const line = s.slice(at, nl).replace(/\r$/, "");
    at = nl + 1;
    if (line.trim() !== "") yield line;
  }
}

/** Parses JSON and checks its envelope; any mismatch is drift. */
function envelope<T>(bytes: Buffer, source: FileSource, schema: z.ZodType<T>): T {
  let json: unknown;
  try {
    json = JSON.parse(text(bytes));
  } catch (err) {
    throw new FormatDriftError(`${source.id}: not JSON (${(err as Error).message.slice(0, 80)}); expected ${source.format}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FormatDriftError(`${source.id}: not the ${source.format} layout: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * A timestamp as the operators write them, to ISO 8601 UTC: "2026-08-21-07-37-05" (AWS),
 * "2026-08-21T01:05:42.583377" (Google, Oracle: no zone, UTC), "2026-08-21T10:00:05Z",
 * "2026-07-27T14:00:04.173594+00:00".
 * @returns null when the text is not such a timestamp.
 */
export function isoTimestamp(value: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T -](\d{2})[:-](\d{2})[:-](\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = "", zone = "Z"] = m;
  const ms = (frac + "000").slice(0, 3);
  const z2 = zone === "Z" ? "Z" : zone.includes(":") ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}${z2}`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** A required timestamp field: unparsable means the format drifted. */
function requiredDate(value: string, source: FileSource, field: string): string {
  const iso = isoTimestamp(value);
  if (!iso) throw new FormatDriftError(`${source.id}: ${field} "${value.slice(0, 40)}" is not a timestamp; expected ${source.format}`);
  return iso;
}

// ---- text formats ------------------------------------------------------------------------

/**
 * `cidr-list`: one CIDR or address per line; `#` starts a comment (whole-line or after the
 * address). The comment after an address is the row's name (maltrail owner, az0 country).
 */
const cidrList: Parser = (bytes, source) => {
  const sink = new RowSink();
  for (const line of lines(text(bytes))) {
    const hash = line.indexOf("#");
    const value = (hash < 0 ? line : line.slice(0, hash)).trim();
    if (value === "") continue;
    const comment = hash < 0 ? null : line.slice(hash + 1).trim() || null;
    sink.cidr(value, comment);
  }
  return sink.done(source);
};

/** `host-port-list`: `address:port` per line (IPv6 as `[address]:port`), the proxy listen address. */
const hostPortList: Parser = (bytes, source) => {
  const sink = new RowSink();
  for (const line of lines(text(bytes))) {
    const value = line.trim();
    if (value.startsWith("#")) continue;
    const m = /^\[([0-9A-Fa-f:.]+)\]:(\d{1,5})$/.exec(value) ?? /^([0-9.]+):(\d{1,5})$/.exec(value);
    if (!m || Number(m[2]) > 65535) {
      sink.out.rows++;
      sink.bad(`not address:port: ${value.slice(0, 60)}`);
      continue;
    }
    sink.cidr(m[1]!);
  }
  return sink.done(source);
};

/** Splits a CSV line with RFC 4180 quoting, tolerating spaces around fields. Null on broken quoting. */
export function splitLooseCsv(line: string): string[] | null {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    while (line[i] === " " || line[i] === "\t") i++;
    if (line[i] === '"') {
      let value = "";
      let from = i + 1;
      for (;;) {
        const q = line.indexOf('"', from);
        if (q < 0) return null;
        value += line.slice(from, q);
        if (line[q + 1] === '"') {
          value += '"';
          from = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      while (line[i] === " " || line[i] === "\t") i++;
      fields.push(value);
      if (i >= line.length) return fields;
      if (line[i] !== ",") return null;
      i++;
    } else {
      const comma = line.indexOf(",", i);
      const field = line.slice(i, comma < 0 ? line.length : comma).trim();
      if (field.includes('"')) return null;
      fields.push(field);
      if (comma < 0) return fields;
      i = comma + 1;
    }
  }
}

/** A CSV with a fixed header; `row` gets the fields of each data line. */
function csvWithHeader(header: string[], row: (fields: string[], sink: RowSink) => void): Parser {
  return (bytes, source) => {
    const sink = new RowSink();
    let first = true;
    for (const line of lines(text(bytes))) {
      const fields = splitLooseCsv(line);
      if (first) {
        first = false;
        const got = fields?.map((f) => f.trim().toLowerCase());
        if (!got || got.length !== header.length || got.some((f, k) => f !== header[k])) {
          throw new FormatDriftError(`${source.id}: header is "${line.slice(0, 80)}", expected "${header.join(",")}" (${source.format})`);
        }
        continue;
      }
      if (!fields || fields.length !== header.length) {
        sink.out.rows++;
        sink.bad(`expected ${header.length} fields: ${line.slice(0, 80)}`);
        continue;
      }
      row(fields, sink);
    }
    if (first) throw new FormatDriftError(`${source.id}: empty file, expected a "${header.join(",")}" header (${source.format})`);
    return sink.done(source);
  };
}

/** `type-address-csv`: header `Type,Address`, Type IPv4 or IPv6 matching the CIDR (disposable/cloud-ip-ranges). */
const typeAddressCsv = csvWithHeader(["type", "address"], ([type, address], sink) => {
  const before = sink.out.ranges.length;
  sink.cidr(address!);
  const r = sink.out.ranges[before];
  if (r && `IPv${r.family}` !== type) {
    sink.out.ranges.pop();
    sink.bad(`type ${type} does not match ${address}`);
  }
});

/** `sefinek-csv`: header `IP,Name,Sources`; Name is the row's name. */
const sefinekCsv = csvWithHeader(["ip", "name", "sources"], ([ip, name], sink) => sink.cidr(ip!, name || null));

/** `tor-onionoo-csv`: header `fingerprint, ipaddr, port` (one row per OR address of an exit relay). */
const torOnionooCsv = csvWithHeader(["fingerprint", "ipaddr", "port"], ([fingerprint, ip], sink) => {
  if (!/^[0-9A-F]{40}$/.test(fingerprint!)) {
    sink.out.rows++;
    return sink.bad(`not a relay fingerprint: ${fingerprint!.slice(0, 60)}`);
  }
  sink.cidr(ip!.replace(/^\[(.*)\]$/, "$1"));
});

/** `geofeed-csv`: RFC 8805 `prefix,country,region,city,postal`, no header, `#` comments; region is the row's region. */
const geofeedCsv: Parser = (bytes, source) => {
  const sink = new RowSink();
  for (const line of lines(text(bytes))) {
    if (line.trimStart().startsWith("#")) continue;
    const fields = splitLooseCsv(line);
    if (!fields || fields.length < 2 || fields.length > 5 || (fields[1] !== "" && !/^[A-Z]{2}$/.test(fields[1]!))) {
      sink.out.rows++;
      sink.bad(`not a geofeed row: ${line.slice(0, 80)}`);
      continue;
    }
    sink.cidr(fields[0]!, null, fields[2] || null);
  }
  return sink.done(source);
};

/** `asn-comment-list`: `AS123 # name` per line (X4BNet); the comment is the ASN's name. */
const asnCommentList: Parser = (bytes, source) => {
  const sink = new RowSink();
  for (const line of lines(text(bytes))) {
    const hash = line.indexOf("#");
    const value = (hash < 0 ? line : line.slice(0, hash)).trim();
    if (value === "") continue;
    sink.asn(value, hash < 0 ? null : line.slice(hash + 1).trim() || null);
  }
  return sink.done(source);
};

/** `asn-entity-csv`: header `ASN,Entity` (brianhama bad-asn-list); Entity is the ASN's name. */
const asnEntityCsv = csvWithHeader(["asn", "entity"], ([asn, entity], sink) => sink.asn(asn!, entity || null));

// ---- JSON formats ------------------------------------------------------------------------

const strings = z.array(z.unknown());

/**
 * `aws-ip-ranges`: ip-ranges.json; region from `region`, kept as AWS writes it: "GLOBAL" marks the
 * ranges of AWS's edge and global services (CloudFront, Route 53), which serve every region.
 * Option `services` filters.
 */
const awsIpRanges: Parser = (bytes, source) => {
  const doc = envelope(bytes, source, z.object({ syncToken: z.string(), createDate: z.string(), prefixes: strings, ipv6_prefixes: strings }));
  const sink = new RowSink();
  sink.out.dataDate = requiredDate(doc.createDate, source, "createDate");
  const services = source.options?.services;
  const row = z.object({ region: z.string(), service: z.string() });
  for (const [list, key] of [[doc.prefixes, "ip_prefix"], [doc.ipv6_prefixes, "ipv6_prefix"]] as const) {
    for (const item of list) {
      const p = row.safeParse(item);
      const cidr = (item as Record<string, unknown> | null)?.[key];
      if (!p.success || typeof cidr !== "string") {
        sink.out.rows++;
        sink.bad(`not a ${key} entry: ${JSON.stringify(item)?.slice(0, 80)}`);
        continue;
      }
      if (services && !services.includes(p.data.service)) continue;
      sink.cidr(cidr, null, p.data.region);
    }
  }
  return sink.done(source);
};

/**
 * `google-ranges-json`: Google's layout, also used by OpenAI, Bing and Apple:
 * {creationTime, prefixes[{ipv4Prefix | ipv6Prefix, scope?}]}; `scope` (GCP) is the region.
 */
const googleRangesJson: Parser = (bytes, source) => {
  const doc = envelope(bytes, source, z.object({ creationTime: z.string(), prefixes: strings }));
  const sink = new RowSink();
  sink.out.dataDate = requiredDate(doc.creationTime, source, "creationTime");
  for (const item of doc.prefixes) {
    const p = item as Record<string, unknown> | null;
    const cidr = p?.ipv4Prefix ?? p?.ipv6Prefix;
    if (typeof cidr !== "string") {
      sink.out.rows++;
      sink.bad(`no ipv4Prefix/ipv6Prefix: ${JSON.stringify(item)?.slice(0, 80)}`);
      continue;
    }
    sink.cidr(cidr, null, typeof p?.scope === "string" ? p.scope : null);
  }
  return sink.done(source);
};

/** `oracle-ranges-json`: public_ip_ranges.json {last_updated_timestamp, regions[{region, cidrs[{cidr}]}]}. */
const oracleRangesJson: Parser = (bytes, source) => {
  const doc = envelope(
    bytes,
    source,
    z.object({ last_updated_timestamp: z.string(), regions: z.array(z.object({ region: z.string(), cidrs: strings })) }),
  );
  const sink = new RowSink();
  sink.out.dataDate = requiredDate(doc.last_updated_timestamp, source, "last_updated_timestamp");
  for (const region of doc.regions) {
    for (const item of region.cidrs) sink.cidrValue((item as Record<string, unknown> | null)?.cidr, region.region);
  }
  return sink.done(source);
};

/** `linode-geofeed-json`: jonhadfield's JSON of Linode's geofeed {lastModified, records[{prefix, region}]}. */
const linodeGeofeedJson: Parser = (bytes, source) => {
  const doc = envelope(bytes, source, z.object({ lastModified: z.string(), records: strings }));
  const sink = new RowSink();
  sink.out.dataDate = isoTimestamp(doc.lastModified);
  for (const item of doc.records) {
    const r = item as Record<string, unknown> | null;
    sink.cidrValue(r?.prefix, typeof r?.region === "string" && r.region !== "" ? r.region : null);
  }
  return sink.done(source);
};

/** `prefix-lists-json`: jonhadfield/ip-fetcher {IPv4Prefixes[], IPv6Prefixes[] | null}. */
const prefixListsJson: Parser = (bytes, source) => {
  const doc = envelope(bytes, source, z.object({ IPv4Prefixes: strings, IPv6Prefixes: strings.nullable() }));
  const sink = new RowSink();
  for (const v of [...doc.IPv4Prefixes, ...(doc.IPv6Prefixes ?? [])]) sink.cidrValue(v);
  return sink.done(source);
};

/** `cidr-json-array`: a JSON array of CIDR strings (Cloudflare). */
const cidrJsonArray: Parser = (bytes, source) => {
  const doc = envelope(bytes, source, strings);
  const sink = new RowSink();
  for (const v of doc) sink.cidrValue(v);
  return sink.done(source);
};

/** Object of named CIDR arrays: {a: [...], b: [...]}; every listed key must be present. */
function keyedArrays(keys: string[], dateKey?: string): Parser {
  return (bytes, source) => {
    const shape: Record<string, z.ZodType> = Object.fromEntries(keys.map((k) => [k, strings]));
    if (dateKey) shape[dateKey] = z.string();
    const doc = envelope(bytes, source, z.object(shape)) as Record<string, unknown>;
    const sink = new RowSink();
    if (dateKey) sink.out.dataDate = isoTimestamp(doc[dateKey] as string);
    for (const k of keys) for (const v of doc[k] as unknown[]) sink.cidrValue(v);
    return sink.done(source);
  };
}

/** `cdn77-json`: {updated_at, prefixes[{prefix}]}. */
const cdn77Json: Parser = (bytes, source) => {
  const doc = envelope(bytes, source, z.object({ updated_at: z.string(), prefixes: strings }));
  const sink = new RowSink();
  sink.out.dataDate = isoTimestamp(doc.updated_at);
  for (const item of doc.prefixes) sink.cidrValue((item as Record<string, unknown> | null)?.prefix);
  return sink.done(source);
};

/** `atlassian-json`: {creationDate, items[{cidr}]}. */
const atlassianJson: Parser = (bytes, source) => {
  const doc = envelope(bytes, source, z.object({ creationDate: z.string(), items: strings }));
  const sink = new RowSink();
  sink.out.dataDate = isoTimestamp(doc.creationDate);
  for (const item of doc.items) sink.cidrValue((item as Record<string, unknown> | null)?.cidr);
  return sink.done(source);
};

/** `datadog-json`: {version, modified, <service>: {prefixes_ipv4[], prefixes_ipv6[]}}; option `keys` picks services. */
const datadogJson: Parser = (bytes, source) => {
  const doc = envelope(bytes, source, z.looseObject({ version: z.number(), modified: z.string() })) as Record<string, unknown>;
  const sink = new RowSink();
  sink.out.dataDate = isoTimestamp(doc.modified as string);
  const service = z.object({ prefixes_ipv4: strings, prefixes_ipv6: strings });
  const keys = source.options?.keys ?? Object.keys(doc).filter((k) => k !== "version" && k !== "modified");
  for (const key of keys) {
    const p = service.safeParse(doc[key]);
    if (!p.success) throw new FormatDriftError(`${source.id}: "${key}" is not a {prefixes_ipv4, prefixes_ipv6} object (${source.format})`);
    for (const v of [...p.data.prefixes_ipv4, ...p.data.prefixes_ipv6]) sink.cidrValue(v);
  }
  return sink.done(source);
};

/** `stripe-json`: {<purpose>: [address...]}; option `keys` picks purposes (default all). */
const stripeJson: Parser = (bytes, source) => {
  const doc = envelope(bytes, source, z.record(z.string(), strings));
  const sink = new RowSink();
  for (const key of source.options?.keys ?? Object.keys(doc)) {
    const list = doc[key];
    if (!list) throw new FormatDriftError(`${source.id}: no "${key}" list (${source.format})`);
    for (const v of list) sink.cidrValue(v);
  }
  return sink.done(source);
};

/** `azure-service-tag-json`: one service tag {name, properties{region, addressPrefixes[]}}; region from properties.region. */
const azureServiceTagJson: Parser = (bytes, source) => {
  const doc = envelope(
    bytes,
    source,
    z.object({ name: z.string(), properties: z.object({ region: z.string(), platform: z.string(), addressPrefixes: strings }) }),
  );
  const sink = new RowSink();
  const region = doc.properties.region || null;
  for (const v of doc.properties.addressPrefixes) sink.cidrValue(v, region);
  return sink.done(source);
};

/** Formats read by scripts/sources/npm.ts from the npm packages (named here so the manifest check knows them). */
export const NPM_FORMATS = ["ip-location-db-asn-csv", "ip-location-db-country-mmdb"] as const;

/** Every file format the manifest may name, by name. */
export const PARSERS: Readonly<Record<string, Parser>> = {
  "cidr-list": cidrList,
  "host-port-list": hostPortList,
  "type-address-csv": typeAddressCsv,
  "sefinek-csv": sefinekCsv,
  "tor-onionoo-csv": torOnionooCsv,
  "geofeed-csv": geofeedCsv,
  "asn-comment-list": asnCommentList,
  "asn-entity-csv": asnEntityCsv,
  "aws-ip-ranges": awsIpRanges,
  "google-ranges-json": googleRangesJson,
  "oracle-ranges-json": oracleRangesJson,
  "linode-geofeed-json": linodeGeofeedJson,
  "prefix-lists-json": prefixListsJson,
  "cidr-json-array": cidrJsonArray,
  "fastly-json": keyedArrays(["addresses", "ipv6_addresses"]),
  "bunny-json": keyedArrays(["ipv4", "ipv6"]),
  "imperva-json": keyedArrays(["ipRanges", "ipv6Ranges"]),
  "cdn77-json": cdn77Json,
  "atlassian-json": atlassianJson,
  "datadog-json": datadogJson,
  "stripe-json": stripeJson,
  "azure-service-tag-json": azureServiceTagJson,
};

/**
 * Parses one file of a manifest source.
 * @param format the format to read it as (the source's `format`, or `upstream_format` for an upstream download)
 * @throws FormatDriftError when the file is not in that format.
 */
export function parseSourceFile(bytes: Buffer, source: FileSource, format: string = source.format): ParsedFile {
  const parser = PARSERS[format];
  if (!parser) throw new FormatDriftError(`${source.id}: no parser for format "${format}"`);
  return parser(bytes, format === source.format ? source : { ...source, format });
}
