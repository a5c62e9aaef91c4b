/**
 * Bot registry builder: strict parsers for the four bot sources and the merge into one registry.
 *
 * Sources (data/sources.json `bots`, data/snapshot/LICENCES.md): arcjet well-known-bots.json (MIT), matomo
 * device-detector regexes/bots.yml (LGPL-3.0-or-later), ai-robots-txt robots.json (MIT) and the npm
 * package crawler-user-agents. Each parser validates the whole document with zod and throws an Error
 * naming the source when the format has drifted; single bad entries are skipped and counted.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import {
  compileBotRegistry,
  requiredLiterals,
  splitTopLevel,
  type BotEntry,
  type BotKind,
  type BotSourceName,
  type MergeStats,
} from "../../src/datasets/bot-registry.js";

export type { BotSourceName, MergeStats } from "../../src/datasets/bot-registry.js";

/** One bot as one source describes it, before merging. */
export interface BotSource {
  source: BotSourceName;
  /** The source's own name for the bot (UA token where the source has one). */
  name: string;
  /** Merge key: the lowercase id candidate, e.g. "googlebot". */
  id: string;
  operator: string | null;
  /** null when the source's category says nothing specific. */
  kind: BotKind | null;
  patterns: string[];
  /**
   * `range_urls`: addresses of the IP lists the source says prove this bot (arcjet's cidr/ip
   * sources); linked to published crawler ranges by URL. `rdns_masks`: arcjet reverse-DNS masks.
   */
  verification: { range_urls: string[]; rdns_masks: string[] };
  /** Example UAs the source says match (arcjet, crawler-user-agents). */
  instances: string[];
}

export interface ParsedSource {
  entries: BotSource[];
  /** Entries skipped because they failed their schema. */
  bad: number;
}

/** The decoded documents (JSON, or matomo's YAML); a source left out (not read) contributes nothing. */
export interface BotSourceInputs {
  arcjet?: unknown;
  aiRobotsTxt?: unknown;
  matomo?: unknown;
  crawlerUserAgents?: unknown;
}

/**
 * A published crawler IP list as the IP dataset knows it: a data/sources.json crawler entry's
 * `crawler` ({id, operator}, which becomes IpFacts.crawler) plus the addresses it is published at.
 */
export interface CrawlerRangeRef {
  id: string;
  operator: string;
  /** upstream and official addresses of the list (matched against arcjet's verification URLs). */
  urls: string[];
}

/** Stable lowercase id: runs of anything but [a-z0-9] become one dash. */
export function normaliseId(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/** Merge key: the id without separators, so "ChatGPT-User" and "ChatGPTUser" meet. */
function mergeKey(id: string): string {
  return id.replace(/-/g, "");
}

/** The pattern itself when it is plain literal text (escapes allowed), else null. */
function plainLiteral(pattern: string): string | null {
  const unescaped = pattern.replace(/\\([^A-Za-z0-9])/g, "$1").replace(/\/$/, "");
  if (/[\\^$.*+?()[\]{}|]/.test(unescaped)) return null;
  return unescaped.trim() || null;
}

function literalOrNull(pattern: string): string | null {
  return plainLiteral(pattern) ?? requiredLiterals(pattern)?.[0] ?? null;
}

function docError(source: string, error: z.ZodError): Error {
  const issue = error.issues[0];
  const path = issue ? issue.path.join(".") || "(root)" : "(root)";
  return new Error(`bot source ${source}: unexpected format at ${path}: ${issue?.message ?? "invalid"}`);
}

function parseEntries<T>(
  source: string,
  doc: unknown,
  docSchema: z.ZodType<unknown[]>,
  entrySchema: z.ZodType<T>,
): { ok: T[]; bad: number } {
  const top = docSchema.safeParse(doc);
  if (!top.success) throw docError(source, top.error);
  const ok: T[] = [];
  let bad = 0;
  for (const raw of top.data) {
    const r = entrySchema.safeParse(raw);
    if (r.success) ok.push(r.data);
    else bad++;
  }
  // A source where most entries fail has drifted, not just a few bad rows.
  if (top.data.length > 0 && bad > top.data.length / 2) {
    throw new Error(`bot source ${source}: ${bad} of ${top.data.length} entries fail the schema; format drifted?`);
  }
  return { ok, bad };
}

// ---- arcjet well-known-bots.json -------------------------------------------------------------

const arcjetEntry = z.object({
  id: z.string().min(1),
  categories: z.array(z.string()),
  pattern: z.object({ accepted: z.array(z.string()).min(1), forbidden: z.array(z.string()) }),
  aliases: z.array(z.string()).optional(),
  verification: z.array(
    z.union([
      z.object({ type: z.literal("cidr"), sources: z.array(z.unknown()) }),
      z.object({ type: z.literal("dns"), masks: z.array(z.string()) }),
      // "ip": a published list of single addresses (fetched from `sources`, or inline `ips`).
      z.object({ type: z.literal("ip"), sources: z.array(z.unknown()).optional(), ips: z.array(z.string()).optional() }),
    ]),
  ),
  instances: z.object({ accepted: z.array(z.string()), rejected: z.array(z.string()).optional() }),
});

/** arcjet's company categories name the operator. */
const ARCJET_OPERATORS: Record<string, string> = {
  google: "Google",
  microsoft: "Microsoft",
  meta: "Meta",
  amazon: "Amazon",
  apple: "Apple",
  yahoo: "Yahoo",
  slack: "Slack",
  vercel: "Vercel",
};

function arcjetKind(categories: string[], id: string, name: string): BotKind | null {
  const has = (c: string): boolean => categories.includes(c);
  // Link previews first: arcjet also tags facebookexternalhit "ai".
  if (has("preview") || has("social")) return "preview";
  if (has("ai")) {
    if (has("search-engine")) return "ai_search";
    if (/user|assistant|agent/i.test(`${id} ${name}`)) return "ai_assistant";
    return "ai_crawler";
  }
  if (has("search-engine")) return "search_crawler";
  if (has("monitor")) return "monitor";
  if (has("feedfetcher")) return "feed";
  if (has("archive")) return "archive";
  if (has("optimizer")) return "seo";
  if (has("tool") || has("programmatic") || has("webhook")) return "tool";
  if (has("academic")) return "scraper";
  return null;
}

/** The `url` of one arcjet verification source ({type, url, selector}), or null. */
function sourceUrl(source: unknown): string | null {
  const url = (source as { url?: unknown } | null)?.url;
  return typeof url === "string" && url !== "" ? url : null;
}

/** Parse arcjet well-known-bots.json (array of {id, categories, pattern, verification, …}). */
export function parseArcjet(doc: unknown): ParsedSource {
  const { ok, bad } = parseEntries("arcjet well-known-bots.json", doc, z.array(z.unknown()), arcjetEntry);
  const entries = ok.map((e): BotSource => {
    const [first] = e.pattern.accepted;
    const literal = e.pattern.accepted.length === 1 && first !== undefined ? plainLiteral(first) : null;
    const name = e.aliases?.[0] ?? literal ?? e.id;
    const operator = e.categories.map((c) => ARCJET_OPERATORS[c]).find((o) => o !== undefined) ?? null;
    const masks = e.verification.flatMap((v) => (v.type === "dns" ? v.masks : []));
    const urls = e.verification.flatMap((v) => (v.type === "dns" ? [] : (v.sources ?? []).map(sourceUrl).filter((u): u is string => u !== null)));
    return {
      source: "arcjet",
      name,
      id: normaliseId(name),
      operator,
      kind: arcjetKind(e.categories, e.id, name),
      patterns: e.pattern.accepted,
      verification: { range_urls: urls, rdns_masks: masks },
      instances: e.instances.accepted,
    };
  });
  return { entries, bad };
}

// ---- ai-robots-txt robots.json ---------------------------------------------------------------

const aiRobotsEntry = z.object({
  operator: z.string(),
  respect: z.string(),
  function: z.string(),
  frequency: z.string(),
  description: z.string(),
});

/** "[OpenAI](https://openai.com)" -> "OpenAI"; placeholders and sentences trimmed; unknown -> null. */
function cleanOperator(raw: string): string | null {
  let s = raw.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").trim();
  if (/^(unclear|unknown|no information|n\/a)/i.test(s) || s === "") return null;
  s = s.split(/ that | which |, a company|, an? /)[0]?.replace(/[.…]+$/, "").trim() ?? "";
  return s === "" ? null : s;
}

function aiRobotsKind(fn: string, description: string): BotKind {
  if (/assistant|agent|user[- ](?:initiated|triggered|prompt)|prompted by a user/i.test(fn)) return "ai_assistant";
  if (/search/i.test(fn)) return "ai_search";
  if (/^(no information|unclear)/i.test(fn) && /when .*users? (?:ask|request)/i.test(description)) return "ai_assistant";
  return "ai_crawler";
}

function escapeRegex(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

/** Parse ai-robots-txt robots.json (object keyed by UA token). */
export function parseAiRobotsTxt(doc: unknown): ParsedSource {
  const top = z.record(z.string(), z.unknown()).safeParse(doc);
  if (!top.success || Array.isArray(doc)) {
    throw new Error("bot source ai-robots-txt robots.json: unexpected format at (root): expected an object keyed by UA token");
  }
  const { ok, bad } = parseEntries(
    "ai-robots-txt robots.json",
    Object.entries(top.data),
    z.array(z.unknown()),
    z.tuple([z.string().min(1), aiRobotsEntry]),
  );
  const entries = ok.map(([token, e]): BotSource => ({
    source: "ai-robots-txt",
    name: token,
    // Some tokens carry a version ("MistralAI-User/1.0"); the bot is the same without it.
    id: normaliseId(token.replace(/[\s/]v?[\d.]+$/, "")),
    operator: cleanOperator(e.operator),
    kind: aiRobotsKind(e.function, e.description),
    patterns: [escapeRegex(token)],
    verification: { range_urls: [], rdns_masks: [] },
    instances: [],
  }));
  return { entries, bad };
}

// ---- matomo device-detector regexes/bots.yml -------------------------------------------------

const matomoEntry = z.object({
  regex: z.string().min(1),
  name: z.string().min(1),
  category: z.string().optional(),
  url: z.string().optional(),
  producer: z.object({ name: z.string().nullish(), url: z.string().nullish() }).nullish(),
});

const MATOMO_KINDS: Record<string, BotKind> = {
  "Search bot": "search_crawler",
  "Security search bot": "search_crawler",
  "AI Data Scraper": "ai_crawler",
  "AI Search Crawler": "ai_search",
  "AI Assistant": "ai_assistant",
  "AI Agent": "ai_assistant",
  "Site Monitor": "monitor",
  "Network Monitor": "monitor",
  "Social Media Agent": "preview",
  "Feed Fetcher": "feed",
  "Feed Parser": "feed",
  "Feed Reader": "feed",
  "Read-it-later Service": "tool",
  "Validator": "tool",
  "Benchmark": "tool",
  "Security Checker": "scraper",
  // "Crawler", "Service Agent", "Service bot": too broad to say anything; left to other sources.
};

/**
 * The leading plain text of a regex alternative in its own case ("Yandex(?:Bot|Images)" ->
 * "Yandex"), extended by the first option of a directly following group when that option is
 * plain ("Google-(?:GeminiNotebook|NotebookLM)" -> "Google-GeminiNotebook"). null under 3 characters.
 */
function leadingName(alt: string): string | null {
  const prefix = /^(?:[A-Za-z0-9 _.-]|\\[.\- /])*/.exec(alt)?.[0] ?? "";
  let name = prefix.replace(/\\(.)/g, "$1");
  const rest = alt.slice(prefix.length);
  if (rest.startsWith("(?:")) {
    const first = splitTopLevel(rest.slice(3, rest.indexOf(")") < 0 ? undefined : rest.indexOf(")")))[0] ?? "";
    if (/^[A-Za-z0-9]+$/.test(first)) name += first;
  }
  name = name.replace(/[\s._-]+$/, "");
  return name.length >= 3 ? name : null;
}

/**
 * matomo names some entries "$1": the bot is whatever the capture group matched, so one entry
 * stands for several bots ("(360Spider(?:-Image)?|GoGuidesCrawler)"). Such an entry is split
 * into one entry per alternative of the group, each named after its own text; other entries
 * keep their single regex.
 */
function matomoVariants(regex: string, name: string): Array<{ name: string; pattern: string }> {
  if (!name.includes("$")) return [{ name, pattern: regex }];
  const group = /^\((?!\?)(.*)\)$/.exec(regex);
  const whole = group ? null : regex;
  const alternatives = whole === null ? splitTopLevel(group![1]!) : [whole];
  return alternatives.map((alt) => ({ name: leadingName(alt) ?? literalOrNull(alt) ?? alt, pattern: alt }));
}

/** Parse matomo regexes/bots.yml (a YAML list of {regex, name, category, url, producer}). */
export function parseMatomo(doc: unknown): ParsedSource {
  const { ok, bad } = parseEntries("matomo bots.yml", doc, z.array(z.unknown()).min(1), matomoEntry);
  const entries = ok.flatMap((e): BotSource[] =>
    matomoVariants(e.regex, e.name).map(({ name, pattern }) => ({
      source: "matomo",
      name,
      id: normaliseId(name),
      operator: e.producer?.name?.trim() || null,
      kind: e.category !== undefined ? (MATOMO_KINDS[e.category] ?? null) : null,
      patterns: [pattern],
      verification: { range_urls: [], rdns_masks: [] },
      instances: [],
    })),
  );
  return { entries, bad };
}

/** Parse matomo's YAML text, then the list. */
export function parseMatomoYaml(text: string): ParsedSource {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new Error(`bot source matomo bots.yml: not valid YAML: ${(err as Error).message}`);
  }
  return parseMatomo(doc);
}

// ---- crawler-user-agents ---------------------------------------------------------------------

const cuaEntry = z.object({
  pattern: z.string().min(1),
  instances: z.array(z.string()),
  description: z.string().optional(),
  tags: z.array(z.string()).optional(),
});

const CUA_KINDS: Record<string, BotKind> = {
  seo: "seo",
  monitoring: "monitor",
  "search-engine": "search_crawler",
  scanner: "scraper",
  "social-preview": "preview",
  "feed-reader": "feed",
  "ai-crawler": "ai_crawler",
  "http-library": "tool",
  archiver: "archive",
  academic: "scraper",
  "browser-automation": "tool",
};

/** Parse crawler-user-agents.json (array of {pattern, instances, description, tags}). */
export function parseCrawlerUserAgents(doc: unknown): ParsedSource {
  const { ok, bad } = parseEntries("crawler-user-agents.json", doc, z.array(z.unknown()).min(1), cuaEntry);
  const entries = ok.map((e): BotSource => {
    const name = literalOrNull(e.pattern) ?? e.pattern;
    const tag = e.tags?.find((t) => CUA_KINDS[t] !== undefined);
    return {
      source: "crawler-user-agents",
      name,
      id: normaliseId(name),
      operator: null,
      kind: tag !== undefined ? (CUA_KINDS[tag] ?? null) : null,
      patterns: [e.pattern],
      verification: { range_urls: [], rdns_masks: [] },
      instances: e.instances,
    };
  });
  return { entries, bad };
}

// ---- merge -----------------------------------------------------------------------------------

/** Legal-form words dropped before comparing operator names ("Google LLC" = "Google Inc." = "Google"). */
const LEGAL_FORMS = new Set([
  "inc", "incorporated", "llc", "ltd", "limited", "corp", "corporation", "co", "company", "gmbh", "ag", "sa", "sas",
  "sarl", "srl", "spa", "bv", "nv", "oy", "ab", "as", "plc", "pty", "pte", "llp", "lp", "kk", "ooo", "se",
]);

/** Names for the same operator that no normalisation can join. */
const OPERATOR_ALIASES: Record<string, string> = {
  facebook: "meta",
  metaplatforms: "meta",
  twitter: "x",
  xcorp: "x",
  alphabet: "google",
  googlecloud: "google",
};

/**
 * Normalised operator name: lowercase, trailing legal forms (Inc, LLC, Corporation, Ltd, GmbH …)
 * and a leading "the" dropped, then only letters and digits, then the alias table.
 * @example operatorKey("Meta Platforms, Inc.") // "meta"
 */
export function operatorKey(name: string): string {
  const words = name
    .toLowerCase()
    .replace(/\([^)]*\)/g, " ")
    .replace(/\./g, "")
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
  if (words[0] === "the") words.shift();
  while (words.length > 1 && LEGAL_FORMS.has(words[words.length - 1]!)) words.pop();
  const key = words.join("");
  return OPERATOR_ALIASES[key] ?? key;
}

/** A URL compared without scheme, "www." and trailing slash. */
function urlKey(url: string): string {
  return url.toLowerCase().replace(/^https?:\/\/(www\.)?/, "").replace(/\/+$/, "");
}

const OPERATOR_ORDER: BotSourceName[] = ["arcjet", "ai-robots-txt", "matomo", "crawler-user-agents"];
/** Kind: matomo's categories are the most specific, then the npm tags, ai-robots-txt, arcjet. */
const KIND_ORDER: BotSourceName[] = ["matomo", "crawler-user-agents", "ai-robots-txt", "arcjet"];
/** Id and display name: the UA token from ai-robots-txt or arcjet reads best. */
const NAME_ORDER: BotSourceName[] = ["ai-robots-txt", "arcjet", "matomo", "crawler-user-agents"];

function pick<T>(group: BotSource[], order: BotSourceName[], get: (e: BotSource) => T | null): T | null {
  for (const s of order) {
    for (const e of group) if (e.source === s) {
      const v = get(e);
      if (v !== null) return v;
    }
  }
  return null;
}

const EMPTY_SOURCE: ParsedSource = { entries: [], bad: 0 };

/**
 * Merge parsed sources into one registry. Entries with the same merge key (normalised id or name)
 * merge; crawler-user-agents entries without a key match join the bot that already classifies
 * their example UAs. Operator: arcjet, then ai-robots-txt, then matomo. Kind: the most specific
 * source category (see KIND_ORDER). Reverse-DNS masks: arcjet's.
 *
 * Range ids: a published crawler list (`crawlers`) belongs to a bot when its operator is one a
 * source names for the bot (compared with operatorKey), when its id is the bot's id, or when its
 * address is one of arcjet's verification URLs for the bot (lists in SERVICE_ONLY_LISTS: id and URL
 * only). So every Google bot lists every Google crawler list, and no OpenAI list.
 *
 * @param inputs decoded source documents; absent ones are skipped (counted as 0 entries).
 * @param crawlers the published crawler lists a build has (none: every `range_ids` is empty).
 * @returns bots sorted by bot_id, and counts.
 * @throws Error naming the source when a present document has drifted.
 */
export function mergeBotRegistry(inputs: BotSourceInputs, crawlers: readonly CrawlerRangeRef[] = []): { bots: BotEntry[]; stats: MergeStats } {
  const parseIf = (doc: unknown, parse: (d: unknown) => ParsedSource): ParsedSource => (doc === undefined ? EMPTY_SOURCE : parse(doc));
  const parsed: Record<BotSourceName, ParsedSource> = {
    arcjet: parseIf(inputs.arcjet, parseArcjet),
    "ai-robots-txt": parseIf(inputs.aiRobotsTxt, parseAiRobotsTxt),
    matomo: parseIf(inputs.matomo, parseMatomo),
    "crawler-user-agents": parseIf(inputs.crawlerUserAgents, parseCrawlerUserAgents),
  };

  const groups = new Map<string, BotSource[]>();
  const add = (key: string, e: BotSource): void => {
    const g = groups.get(key);
    if (g) g.push(e);
    else groups.set(key, [e]);
  };
  for (const s of ["arcjet", "ai-robots-txt", "matomo"] as const) {
    for (const e of parsed[s].entries) add(mergeKey(e.id) || e.name, e);
  }

  // crawler-user-agents names are derived from regexes ("Ahrefs" for Ahrefs(Bot|SiteAudit)), so
  // besides the key, let its own example UAs say which known bot it is.
  const known = compileBotRegistry([...groups.entries()].map(([key, g]) => toEntry(key, g, [])));
  const byId = new Map([...groups.entries()].map(([key, g]) => [toEntry(key, g, []).bot_id, key]));
  for (const e of parsed["crawler-user-agents"].entries) {
    const key = mergeKey(e.id);
    if (groups.has(key)) {
      add(key, e);
      continue;
    }
    const first = e.instances[0];
    const hit = first !== undefined ? known.classify(first) : null;
    const target = hit ? byId.get(hit.bot_id) : undefined;
    add(target ?? (key || e.name), e);
  }
  absorbIndistinguishable(groups);

  const seen = new Set<string>();
  const bots = [...groups.entries()].map(([key, g]) => {
    const entry = toEntry(key, g, crawlers);
    let id = entry.bot_id;
    for (let n = 2; seen.has(id); n++) id = `${entry.bot_id}-${n}`;
    seen.add(id);
    return { ...entry, bot_id: id };
  });
  bots.sort((a, b) => (a.bot_id < b.bot_id ? -1 : a.bot_id > b.bot_id ? 1 : 0));
  return { bots, stats: mergeStats(bots, parsed) };
}

/**
 * Joins groups the registry cannot tell apart: when an example UA of one source entry is won by
 * another group whose deciding literal contains the entry's own literal (matomo's "Slackbot"
 * regex lists "Slack-ImgProxy" verbatim), the entry's group joins the winner's, unless both groups
 * hold entries of one source (that source tells them apart, as ai-robots-txt does ClaudeBot and
 * Claude-Web). A UA that merely mentions another bot ("like FeedFetcher-Google") wins on a literal
 * of its own and joins nothing.
 */
function absorbIndistinguishable(groups: Map<string, BotSource[]>): void {
  const keys = [...groups.keys()];
  const probe = compileBotRegistry(keys.map((key, i) => ({ ...toEntry(key, groups.get(key)!, []), bot_id: `g${i}` })));
  const parent = keys.map((_, i) => i);
  const sourcesOf = keys.map((key) => new Set(groups.get(key)!.map((e) => e.source)));
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  keys.forEach((key, i) => {
    for (const e of groups.get(key)!) {
      const own = e.patterns.flatMap((p) => requiredLiterals(p) ?? []);
      for (const ua of e.instances) {
        const hit = probe.explain(ua);
        if (hit === null) continue;
        const j = Number(hit.match.bot_id.slice(1));
        const [a, b] = [find(i), find(j)];
        if (a === b || !own.some((l) => hit.literal.includes(l))) continue;
        if ([...sourcesOf[a]!].some((s) => sourcesOf[b]!.has(s))) continue;
        parent[a] = b;
        for (const s of sourcesOf[a]!) sourcesOf[b]!.add(s);
      }
    }
  });
  const merged = new Map<number, BotSource[]>();
  keys.forEach((key, i) => {
    const root = find(i);
    const members = groups.get(key)!;
    const list = merged.get(root);
    // The winner's own members first, so its name and operator lead.
    if (!list) merged.set(root, [...members]);
    else if (root === i) list.unshift(...members);
    else list.push(...members);
  });
  groups.clear();
  for (const [root, members] of merged) groups.set(keys[root]!, members);
}

function mergeStats(bots: BotEntry[], parsed: Record<BotSourceName, ParsedSource>): MergeStats {
  const per = (s: BotSourceName): { entries: number; bad: number } => ({ entries: parsed[s].entries.length, bad: parsed[s].bad });
  const verified = (b: BotEntry): boolean => b.verification.ranges || b.verification.rdns_masks.length > 0;
  const operators = new Set<string>();
  const verifiedOperators = new Set<string>();
  for (const b of bots) {
    if (b.operator === null) continue;
    operators.add(operatorKey(b.operator));
    if (verified(b)) verifiedOperators.add(operatorKey(b.operator));
  }
  return {
    per_source: {
      arcjet: per("arcjet"),
      "ai-robots-txt": per("ai-robots-txt"),
      matomo: per("matomo"),
      "crawler-user-agents": per("crawler-user-agents"),
    },
    merged: bots.length,
    with_operator: bots.filter((b) => b.operator !== null).length,
    with_verification: bots.filter(verified).length,
    with_ranges: bots.filter((b) => b.verification.ranges).length,
    operators: operators.size,
    operators_with_verification: verifiedOperators.size,
  };
}

/**
 * Published lists that cover one service of a large operator, not its crawlers: they join a bot
 * only by id or by arcjet URL, never by operator. Linking them by operator would make every other
 * bot of that operator "unverified" whenever it calls from the operator's real crawler addresses.
 */
export const SERVICE_ONLY_LISTS: ReadonlyMap<string, string> = new Map([
  ["route53-health-check", "Amazon's Route 53 health checkers; Amazonbot and Amazon's other bots crawl from elsewhere (verified by reverse DNS)"],
  ["datadog-synthetics", "Datadog's synthetic monitors only"],
  ["stripe-webhook", "Stripe's webhook senders only"],
  ["bingbot", "bingbot.json covers Bingbot and (by arcjet's URL) BingPreview, AdIdxBot, MicrosoftPreview, not Teams/Office/Skype link previews"],
]);

/** The crawler list ids that belong to a group of source entries (see mergeBotRegistry). */
function rangeIds(key: string, group: BotSource[], crawlers: readonly CrawlerRangeRef[]): string[] {
  if (crawlers.length === 0) return [];
  const operators = new Set(group.flatMap((e) => (e.operator === null ? [] : [operatorKey(e.operator)])));
  const ids = new Set([key, ...group.map((e) => mergeKey(e.id))]);
  const urls = new Set(group.flatMap((e) => e.verification.range_urls.map(urlKey)));
  const out = new Set<string>();
  for (const c of crawlers) {
    const byOperator = !SERVICE_ONLY_LISTS.has(c.id) && operators.has(operatorKey(c.operator));
    if (byOperator || ids.has(mergeKey(normaliseId(c.id))) || c.urls.some((u) => urls.has(urlKey(u)))) out.add(c.id);
  }
  return [...out].sort();
}

function toEntry(key: string, group: BotSource[], crawlers: readonly CrawlerRangeRef[]): BotEntry {
  const name = pick(group, NAME_ORDER, (e) => e.name) ?? key;
  const patterns = [...new Set(group.flatMap((e) => e.patterns))];
  const range_ids = rangeIds(key, group, crawlers);
  return {
    bot_id: normaliseId(name) || key,
    name,
    operator: pick(group, OPERATOR_ORDER, (e) => e.operator),
    kind: pick(group, KIND_ORDER, (e) => e.kind) ?? "other",
    patterns,
    verification: {
      ranges: range_ids.length > 0,
      range_ids,
      rdns_masks: [...new Set(group.flatMap((e) => e.verification.rdns_masks))],
    },
    sources: OPERATOR_ORDER.filter((s) => group.some((e) => e.source === s)),
  };
}

/**
 * The three registry files of the sources layout, read through `read` (for example from the
 * repository's snapshot: `(path) => snapshotBytes(loadSnapshot(), path)`), and crawler-user-agents
 * from node_modules. Throws when a file is missing or not JSON/YAML.
 */
export function readBotSources(read: (path: string) => Buffer): BotSourceInputs {
  const require = createRequire(import.meta.url);
  const cuaPath = require.resolve("crawler-user-agents"); // "require" export: the JSON file itself
  const json = (path: string): unknown => JSON.parse(read(path).toString("utf8")) as unknown;
  let matomo: unknown;
  try {
    matomo = parseYaml(read("bots/matomo-device-detector/regexes/bots.yml").toString("utf8"));
  } catch (err) {
    throw new Error(`bot source matomo bots.yml: ${(err as Error).message}`);
  }
  return {
    arcjet: json("bots/arcjet-well-known-bots/well-known-bots.json"),
    aiRobotsTxt: json("bots/ai-robots-txt/robots.json"),
    matomo,
    crawlerUserAgents: JSON.parse(readFileSync(cuaPath, "utf8")) as unknown,
  };
}
