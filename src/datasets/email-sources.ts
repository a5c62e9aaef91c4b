/**
 * Readers for the e-mail list packages: one per package and file, each reading the file in the
 * exact shape the pinned version ships (see docs/data.md, "Email data", for versions, licences
 * and counts). Anything unexpected fails at start (and in the tests) rather than giving a silently
 * shorter list:
 *
 * - a package version other than the one the reader was written for (the shape may have changed;
 *   read the new file, adapt the reader, then raise `version`);
 * - a file that is not in the expected shape (not JSON, not an array of strings, no `new Set([...])`
 *   in mailchecker's module, no `domains` object in fakefilter's JSON);
 * - fewer entries than `minEntries` (a truncated or emptied release);
 * - more than 1% malformed entries (MAX_MALFORMED_SHARE).
 *
 * Each entry is trimmed and lower-cased; an internationalised (Unicode) name is converted to its
 * ASCII A-label form with UTS #46 (node:url domainToASCII), as the scorer does with an address's
 * domain, so `instágram.com` becomes `xn--instgram-cza.com`. An entry that is still not a host
 * name (two or more labels of [a-z0-9-], letter or `xn--` TLD) is dropped and counted as malformed.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { domainToASCII } from "node:url";
import { z } from "zod";

/** Why a list could not be read; thrown at start, never per request. */
export class EmailSourceError extends Error {
  constructor(
    readonly source: string,
    message: string,
  ) {
    super(`${source}: ${message}`);
    this.name = "EmailSourceError";
  }
}

/** Share of malformed entries above which a list is refused. */
export const MAX_MALFORMED_SHARE = 0.01;

/** What a reader knows about one file of one package. */
export interface EmailSourceSpec {
  /** Short name used in docs and logs (`mailchecker`, `freemail free`). */
  id: string;
  /** npm package name. */
  package: string;
  /** The version this reader was written for (= the exact pin in package.json). */
  version: string;
  /** SPDX licence of the data. */
  licence: string;
  /** Path of the file inside the package. */
  file: string;
  /** Fewer entries than this (after cleaning) is an error. */
  minEntries: number;
  /** Raw entries from the file's text; throws (plain Error) on an unexpected shape. */
  parse(text: string): string[];
}

/** A cleaned list of host names. */
export interface DomainList {
  spec: EmailSourceSpec;
  /** Lower-case ASCII host names in file order (a few lists repeat an entry; the merge de-duplicates). */
  domains: string[];
  /** Entries in the file (blank lines and `#` comments not counted). */
  entries: number;
  /** Entries converted from Unicode to A-labels. */
  converted: number;
  /** Entries that are not a host name even after conversion (dropped). */
  malformed: string[];
}

/** Newline-separated text, `#` comments and blank lines skipped. */
export function parseLines(text: string): string[] {
  if (text.includes("\0")) throw new Error("not a text file");
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith("#"));
}

/** Whether a value is an array of strings (a plain loop: zod costs ~10x more on 130,000 entries). */
function isStringArray(v: unknown): v is string[] {
  if (!Array.isArray(v)) return false;
  for (const x of v) if (typeof x !== "string") return false;
  return true;
}

/** A JSON array of strings. */
export function parseJsonStringArray(text: string): string[] {
  const parsed = parseJson(text);
  if (!isStringArray(parsed)) throw new Error("expected a JSON array of strings");
  return parsed;
}

/**
 * mailchecker's Node module: the list is the array literal in `var blacklist = new Set([...]);`
 * (a JSON array of strings). Read as text, not executed.
 */
export function parseMailcheckerModule(text: string): string[] {
  const m = /\bvar blacklist\s*=\s*new Set\((\[[^\]]*\])\);/.exec(text);
  if (!m) throw new Error("no `var blacklist = new Set([...]);` in the module");
  return parseJsonStringArray(m[1]!);
}

/**
 * fakefilter's `json/data.json` (format version 1): the keys of `domains`, an object of
 * `{ provider, firstseen, lastseen }` records.
 */
export function parseFakefilterJson(text: string): string[] {
  const shape = "expected { version: 1, t, domains: { <domain>: { provider, firstseen, lastseen } } }";
  const parsed = parseJson(text) as { version?: unknown; domains?: unknown } | null;
  if (typeof parsed !== "object" || parsed === null || parsed.version !== 1) throw new Error(shape);
  const domains = parsed.domains;
  if (typeof domains !== "object" || domains === null || Array.isArray(domains)) throw new Error(shape);
  for (const [domain, rec] of Object.entries(domains as Record<string, unknown>)) {
    const r = rec as { provider?: unknown; firstseen?: unknown; lastseen?: unknown } | null;
    if (typeof r !== "object" || r === null || typeof r.provider !== "string" || typeof r.firstseen !== "number" || typeof r.lastseen !== "number") {
      throw new Error(`${shape}; "${domain}" is not`);
    }
  }
  return Object.keys(domains);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error("not JSON");
  }
}

/** freemail's `data/blacklist.txt`: one `.suffix` a line; returned without the dot. */
export function parseDottedSuffixes(text: string): string[] {
  const lines = parseLines(text);
  for (const l of lines) if (!l.startsWith(".")) throw new Error(`expected ".suffix" lines, got "${l}"`);
  return lines.map((l) => l.slice(1));
}

/** The disposable-domain lists, in the order they are merged. */
export const DISPOSABLE_SOURCES: readonly EmailSourceSpec[] = Object.freeze([
  { id: "freemail", package: "freemail", version: "1.7.0", licence: "ISC", file: "data/disposable.txt", minEntries: 80_000, parse: parseLines },
  { id: "disposable-email-domains", package: "disposable-email-domains", version: "1.0.62", licence: "MIT", file: "index.json", minEntries: 100_000, parse: parseJsonStringArray },
  { id: "disposable-email-domains wildcard", package: "disposable-email-domains", version: "1.0.62", licence: "MIT", file: "wildcard.json", minEntries: 300, parse: parseJsonStringArray },
  { id: "mailchecker", package: "mailchecker", version: "6.0.21", licence: "MIT", file: "platform/node/index.js", minEntries: 50_000, parse: parseMailcheckerModule },
  { id: "disposable-email-domains-js", package: "disposable-email-domains-js", version: "1.26.0", licence: "CC0-1.0", file: "dist/dict/disposable_email_blocklist.json", minEntries: 8_000, parse: parseJsonStringArray },
  { id: "disposable-domains", package: "disposable-domains", version: "2.0.1", licence: "MIT", file: "index.json", minEntries: 120_000, parse: parseJsonStringArray },
  { id: "fakefilter", package: "fakefilter", version: "0.1.1476", licence: "BSD-3-Clause", file: "json/data.json", minEntries: 4_000, parse: parseFakefilterJson },
]);

/** freemail's free-provider list. */
export const FREE_SOURCE: EmailSourceSpec = Object.freeze({ id: "freemail free", package: "freemail", version: "1.7.0", licence: "ISC", file: "data/free.txt", minEntries: 4_000, parse: parseLines });

/** freemail's excluded suffixes (hosting services whose subdomains belong to unrelated users). */
export const EXCLUDED_SUFFIX_SOURCE: EmailSourceSpec = Object.freeze({ id: "freemail excluded suffixes", package: "freemail", version: "1.7.0", licence: "ISC", file: "data/blacklist.txt", minEntries: 1, parse: parseDottedSuffixes });

/** A lower-case ASCII host name: two or more labels of [a-z0-9-] (no edge hyphen), a letter or `xn--` TLD. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * The ASCII host name of a list entry, or null when it is not one.
 * @example toAsciiHost(" Instágram.com ") // "xn--instgram-cza.com"
 */
export function toAsciiHost(entry: string): string | null {
  // Fast path: almost every entry is already a clean host name.
  if (entry.length <= 253 && HOST.test(entry)) return entry;
  const t = entry.trim();
  const host = ASCII.test(t) ? t.toLowerCase() : domainToASCII(t);
  return host.length > 0 && host.length <= 253 && HOST.test(host) ? host : null;
}

/**
 * Cleans raw entries (see toAsciiHost) and checks the count and the malformed share.
 * @throws EmailSourceError when fewer than `spec.minEntries` remain or more than 1% are malformed.
 */
export function cleanDomainList(spec: EmailSourceSpec, raw: readonly string[]): DomainList {
  const domains: string[] = [];
  const malformed: string[] = [];
  let converted = 0;
  for (const entry of raw) {
    const host = toAsciiHost(entry);
    if (host === null) malformed.push(entry);
    else {
      if (host !== entry && !ASCII.test(entry)) converted++;
      domains.push(host);
    }
  }
  if (raw.length > 0 && malformed.length / raw.length > MAX_MALFORMED_SHARE) {
    throw new EmailSourceError(spec.id, `${malformed.length} of ${raw.length} entries are not host names (e.g. "${malformed[0]}"); more than ${MAX_MALFORMED_SHARE * 100}%`);
  }
  if (domains.length < spec.minEntries) throw new EmailSourceError(spec.id, `${domains.length} domains, expected at least ${spec.minEntries}`);
  return { spec, domains, entries: raw.length, converted, malformed };
}

const require = createRequire(import.meta.url);

/** The installed version of a package (its package.json next to the resolved entry). */
export function installedVersion(pkg: string): string {
  const json = JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), "utf8")) as { version?: unknown };
  if (typeof json.version !== "string") throw new EmailSourceError(pkg, "package.json has no version");
  return json.version;
}

function packageFile(pkg: string, file: string): string {
  return join(dirname(require.resolve(`${pkg}/package.json`)), file);
}

/**
 * Reads, parses and cleans one list from node_modules.
 * @throws EmailSourceError on a version, shape, size or malformed-share mismatch.
 */
export function readDomainList(spec: EmailSourceSpec): DomainList {
  const version = installedVersion(spec.package);
  if (version !== spec.version) {
    throw new EmailSourceError(spec.id, `installed ${spec.package} ${version}, the reader was written for ${spec.version}: check the file's shape, then update the reader`);
  }
  let raw: string[];
  try {
    raw = spec.parse(readFileSync(packageFile(spec.package, spec.file), "utf8"));
  } catch (e) {
    throw new EmailSourceError(spec.id, `${spec.file}: ${(e as Error).message}`);
  }
  return cleanDomainList(spec, raw);
}

/** Category of a role local part, as the Mixmax package groups them. */
export type RoleCategory = "marketing" | "notification" | "meeting" | "other";

const ROLES_VERSION = "3.1.0";
const ROLE_KEYS = { marketing: "MARKETING", notification: "NOTIFICATION", meeting: "MEETING", other: "OTHER" } as const;

/**
 * role-based-email-addresses 3.1.0: its export is an array of every role, carrying MARKETING,
 * NOTIFICATION, MEETING and OTHER arrays as properties.
 */
export function readRoleLists(): Record<RoleCategory, string[]> {
  const id = "role-based-email-addresses";
  const version = installedVersion(id);
  if (version !== ROLES_VERSION) throw new EmailSourceError(id, `installed ${version}, the reader was written for ${ROLES_VERSION}`);
  const exported = require(id) as Record<string, unknown>;
  const out = {} as Record<RoleCategory, string[]>;
  for (const [cat, key] of Object.entries(ROLE_KEYS) as [RoleCategory, string][]) {
    const list = exported[key];
    if (!isStringArray(list) || list.length === 0) throw new EmailSourceError(id, `expected ${key} to be a non-empty array of strings`);
    out[cat] = list;
  }
  return out;
}

/** Category of a never-disposable domain. */
export type NeverDisposableCategory = "provider" | "forwarding" | "institution";

const neverDisposableFile = z.object({
  description: z.string(),
  domains: z.array(z.object({ domain: z.string(), category: z.enum(["provider", "forwarding", "institution"]), reason: z.string().min(3) }).strict()).min(1),
  registrySuffixes: z.array(z.object({ suffix: z.string(), reason: z.string().min(3) }).strict()),
});

/** data/email-never-disposable.json, checked. */
export interface NeverDisposableList {
  domains: { domain: string; category: NeverDisposableCategory; reason: string }[];
  registrySuffixes: { suffix: string; reason: string }[];
}

/** A lower-case ASCII name with one label or more (the curated list holds bare TLDs such as `edu`). */
const CURATED_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Parses the curated never-disposable file's text: every name lower-case ASCII, none twice.
 * @throws EmailSourceError on any deviation (it is ours; no tolerance).
 */
export function parseNeverDisposable(text: string, source = "data/email-never-disposable.json"): NeverDisposableList {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new EmailSourceError(source, "not JSON");
  }
  const parsed = neverDisposableFile.safeParse(json);
  if (!parsed.success) throw new EmailSourceError(source, `unexpected shape: ${parsed.error.issues[0]?.path.join(".")} ${parsed.error.issues[0]?.message}`);
  const seen = new Set<string>();
  for (const name of [...parsed.data.domains.map((d) => d.domain), ...parsed.data.registrySuffixes.map((r) => r.suffix)]) {
    if (!CURATED_NAME.test(name)) throw new EmailSourceError(source, `"${name}" is not a lower-case ASCII domain`);
    if (seen.has(name)) throw new EmailSourceError(source, `"${name}" is listed twice`);
    seen.add(name);
  }
  return { domains: parsed.data.domains, registrySuffixes: parsed.data.registrySuffixes };
}
