/**
 * The source manifest (data/sources.json): every input of the IP dataset, where it comes from,
 * how to parse it and what it means. Parsed once with zod at the edge; the builder
 * and the tests take the typed result.
 *
 * Kinds:
 *   asn, country                     npm-registry inputs, always built (package + file)
 *   cloud, datacenter, isp, crawler,  IP range lists: each row is a CIDR or address (see
 *   tor, vpn, proxy, scanner          src/datasets/ip-facts.ts for what each kind sets)
 *   hosting-asn, datacenter-asn,      ASN lists: every range announced by a listed ASN
 *   vpn-asn
 *
 * `bots` (a list of its own, beside `sources`): the four User-Agent registries merged into the
 * build's bots.json (scripts/bots/registry.ts). Three are files of the snapshot layout (read from
 * --sources, downloaded with --fetch, like range sources); crawler-user-agents comes from npm.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { REPO_ROOT } from "../../src/config/index.js";
import { BOT_SOURCE_NAMES, type BotSourceName } from "../../src/datasets/bot-registry.js";

/** Where the manifest lives in the repository. */
export const MANIFEST_PATH = resolve(REPO_ROOT, "data/sources.json");

export const NPM_KINDS = ["asn", "country"] as const;
export const RANGE_KINDS = ["cloud", "datacenter", "isp", "crawler", "tor", "vpn", "proxy", "scanner"] as const;
export const ASN_LIST_KINDS = ["hosting-asn", "datacenter-asn", "vpn-asn"] as const;

export type NpmKind = (typeof NPM_KINDS)[number];
export type RangeKind = (typeof RANGE_KINDS)[number];
export type AsnListKind = (typeof ASN_LIST_KINDS)[number];
export type SourceKind = NpmKind | RangeKind | AsnListKind;

const id = z.string().regex(/^[a-z0-9][a-z0-9.-]{0,79}$/, "ids are lower-case letters, digits, '.' and '-'");
// A path inside a sources directory: relative, no "..", a plain alphabet (it is also a URL path).
const relativePath = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]*(\/[A-Za-z0-9_][A-Za-z0-9._-]*)*$/, "a relative path of plain names")
  .refine((p) => !p.split("/").includes(".."), "no '..'");
const url = z.string().regex(/^https?:\/\/[^\s]+$/, "an http(s) URL");

/** Parser options; which ones a format honours is documented with the parser. */
const optionsSchema = z
  .object({
    /** Take each row's name (a comment or a Name column) as the provider/organisation. */
    row_names: z.boolean().optional(),
    /** JSON formats keyed by service: only these keys (datadog, stripe). */
    keys: z.array(z.string()).min(1).optional(),
    /** AWS: only prefixes of these services (e.g. ROUTE53_HEALTHCHECKS). */
    services: z.array(z.string()).min(1).optional(),
  })
  .strict();

const crawlerSchema = z.object({ id, operator: z.string().min(1) }).strict();

const npmSourceSchema = z
  .object({
    id,
    kind: z.enum(NPM_KINDS),
    format: z.string(),
    package: z.string(),
    file: relativePath,
    family: z.union([z.literal(4), z.literal(6)]),
    upstream: url,
    licence: z.string().min(1),
    /** Files of the package that must still contain this text, or the build stops for a licence review. */
    licence_files: z.array(z.object({ file: relativePath, must_contain: z.string().min(1) }).strict()),
    /** Fewer good rows than this means the input is truncated or no longer what we think it is. */
    min_rows: z.number().int().positive(),
  })
  .strict();

const fileSourceSchema = z
  .object({
    id,
    kind: z.enum([...RANGE_KINDS, ...ASN_LIST_KINDS]),
    format: z.string(),
    /** Path in the sources layout (data/snapshot/, --sources DIR); also the mirror path for --fetch-mirror. */
    path: relativePath,
    /** What `--fetch` downloads: the operator's own file where one exists, else the list's raw address. */
    upstream: url,
    /** Format of `upstream` when it differs from `format` (the operator publishes another layout than the snapshot). */
    upstream_format: z.string().optional(),
    /** The operator's own publication, for reference, when `upstream` is a community mirror. */
    official: url.optional(),
    licence: z.string().min(1),
    /** cloud (required), datacenter, isp, vpn: who operates the ranges. */
    provider: z.string().min(1).optional(),
    /** scanner: the scanning organisation. */
    organisation: z.string().min(1).optional(),
    /** crawler (required): the bot and its operator. */
    crawler: crawlerSchema.optional(),
    options: optionsSchema.optional(),
    note: z.string().optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    const need = (ok: boolean, message: string) => ok || ctx.addIssue({ code: "custom", message });
    need(s.kind !== "cloud" || s.provider !== undefined, "cloud sources name their provider");
    need(s.kind !== "crawler" || s.crawler !== undefined, "crawler sources name their crawler");
    need(s.crawler === undefined || s.kind === "crawler", "only crawler sources name a crawler");
    need(s.organisation === undefined || s.kind === "scanner", "only scanner sources name an organisation");
    need(s.provider === undefined || ["cloud", "datacenter", "isp", "vpn", "vpn-asn"].includes(s.kind), `${s.kind} sources do not name a provider`);
  });

/** Bot registry formats, and which registry each one is. */
export const BOT_FORMATS = {
  "arcjet-well-known-bots-json": "arcjet",
  "ai-robots-txt-json": "ai-robots-txt",
  "matomo-bots-yml": "matomo",
  "crawler-user-agents-json": "crawler-user-agents",
} as const satisfies Record<string, BotSourceName>;
type BotFormat = keyof typeof BOT_FORMATS;
const botFormat = z.enum(Object.keys(BOT_FORMATS) as [BotFormat, ...BotFormat[]]);

const botFileSourceSchema = z
  .object({
    id,
    /** Which registry this is (one entry per registry). */
    source: z.enum(BOT_SOURCE_NAMES),
    format: botFormat,
    /** Path in the sources layout (data/snapshot/, --sources DIR); also the mirror path. */
    path: relativePath,
    /** What `--fetch` downloads (the registry's raw file in its repository). */
    upstream: url,
    licence: z.string().min(1),
    note: z.string().optional(),
  })
  .strict();

const botNpmSourceSchema = z
  .object({
    id,
    source: z.enum(BOT_SOURCE_NAMES),
    format: botFormat,
    /** npm package that ships the registry; read from node_modules (installed by `npm ci`). */
    package: z.string(),
    file: relativePath,
    upstream: url,
    licence: z.string().min(1),
    licence_files: z.array(z.object({ file: relativePath, must_contain: z.string().min(1) }).strict()),
    note: z.string().optional(),
  })
  .strict();

/**
 * A tree of the sources layout that the repository's snapshot leaves out because its licence does
 * not let us redistribute it; builds read it only with --fetch or --sources.
 */
const withheldSchema = z
  .object({
    /** Path prefix, ending in "/" (a whole repository of the layout). */
    prefix: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9._/-]*\/$/, "a relative directory ending in /"),
    licence: z.string().min(1),
    reason: z.string().min(1),
  })
  .strict();

/** A file the snapshot ships that no build reads: labelled lists the tests and evaluations use. */
const evaluationFileSchema = z
  .object({
    id,
    path: relativePath,
    /** Where the list was derived from; null for lists recorded by the project itself. */
    upstream: url.nullable(),
    licence: z.string().min(1),
    /** When the list was taken from upstream (YYYY-MM-DD), as its own documentation states. */
    taken: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    note: z.string().optional(),
  })
  .strict();

const manifestSchema = z
  .object({
    $comment: z.string().optional(),
    sources: z.array(z.union([npmSourceSchema, fileSourceSchema])).min(1),
    /** The bot registries (absent: the build writes an empty registry). */
    bots: z.array(z.union([botFileSourceSchema, botNpmSourceSchema])).default([]),
    /** Files of the snapshot layout that are deliberately not used, and why. */
    excluded: z.array(z.object({ path: relativePath, reason: z.string().min(1) }).strict()),
    /** Repositories of the layout whose licence keeps them out of data/snapshot/. */
    withheld: z.array(withheldSchema).default([]),
    /** Files data/snapshot/ also ships for tests and evaluations (User-Agent and e-mail lists). */
    evaluation: z.array(evaluationFileSchema).default([]),
  })
  .strict()
  .superRefine((m, ctx) => {
    const seen = new Set<string>();
    for (const [i, s] of m.sources.entries()) {
      if (seen.has(s.id)) ctx.addIssue({ code: "custom", path: ["sources", i, "id"], message: `duplicate id ${s.id}` });
      seen.add(s.id);
    }
    const registries = new Set<string>();
    for (const [i, b] of m.bots.entries()) {
      if (seen.has(b.id)) ctx.addIssue({ code: "custom", path: ["bots", i, "id"], message: `duplicate id ${b.id}` });
      seen.add(b.id);
      if (registries.has(b.source)) ctx.addIssue({ code: "custom", path: ["bots", i, "source"], message: `${b.source} is listed twice` });
      registries.add(b.source);
      if (BOT_FORMATS[b.format] !== b.source) ctx.addIssue({ code: "custom", path: ["bots", i, "format"], message: `${b.format} is not the ${b.source} format` });
    }
  });

export type NpmSource = z.infer<typeof npmSourceSchema>;
export type FileSource = z.infer<typeof fileSourceSchema>;
export type SourceEntry = NpmSource | FileSource;
export type Manifest = z.infer<typeof manifestSchema>;
export type BotFileSource = z.infer<typeof botFileSourceSchema>;
export type BotNpmSource = z.infer<typeof botNpmSourceSchema>;
export type BotRegistrySource = BotFileSource | BotNpmSource;
export type WithheldTree = z.infer<typeof withheldSchema>;
export type EvaluationFile = z.infer<typeof evaluationFileSchema>;

/** The withheld tree a path lies in, if any. */
export function withheldTreeOf(manifest: Manifest, path: string): WithheldTree | undefined {
  return manifest.withheld.find((w) => path.startsWith(w.prefix));
}

/** True for a bot registry read from an npm package rather than a sources directory. */
export function isBotNpmSource(s: BotRegistrySource): s is BotNpmSource {
  return "package" in s;
}

/** True for the npm-registry inputs (asn, country). */
export function isNpmSource(s: SourceEntry): s is NpmSource {
  return (NPM_KINDS as readonly string[]).includes(s.kind);
}

/** True for ASN lists (hosting-asn, datacenter-asn, vpn-asn). */
export function isAsnListKind(kind: string): kind is AsnListKind {
  return (ASN_LIST_KINDS as readonly string[]).includes(kind);
}

/**
 * Parses a manifest.
 * @throws Error naming each failing field path.
 */
export function parseManifest(json: unknown, where = "manifest"): Manifest {
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 10).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new Error(`${where} is invalid: ${problems.join("; ")}`);
  }
  return parsed.data;
}

/** Reads and parses data/sources.json (or another manifest file). */
export function loadManifest(path: string = MANIFEST_PATH): Manifest {
  return parseManifest(JSON.parse(readFileSync(path, "utf8")), path);
}
