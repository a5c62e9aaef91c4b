/**
 * Runtime bot classifier over the merged bot registry (built by scripts/bots/registry.ts).
 *
 * Matching avoids trying every pattern per call: each pattern is indexed under a literal that any
 * match must contain (extracted from the regex source), keyed by that literal's first three
 * lowercase characters. A call slides a 3-character window over the lowercased UA, confirms the
 * literal with `includes`, and only then runs the candidate's regex. Patterns without such a
 * literal are tested on every call (counted in `stats.unindexed`). Results are cached by UA string.
 */

/** Kinds of registered bots. AI crawlers are split into training, search and user-triggered. */
export type BotKind =
  | "search_crawler"
  | "ai_crawler"
  | "ai_search"
  | "ai_assistant"
  | "monitor"
  | "preview"
  | "seo"
  | "feed"
  | "archive"
  | "scraper"
  | "tool"
  | "other";

/** One merged registry entry. `patterns` are regex sources, matched case-insensitively. */
export interface BotEntry {
  /** Stable lowercase id, e.g. "googlebot", "gptbot", "chatgpt-user". */
  bot_id: string;
  name: string;
  /** The company running the bot; null when no source names one. */
  operator: string | null;
  kind: BotKind;
  patterns: string[];
  verification: BotVerification;
  /** Which inputs named this bot ("arcjet", "ai-robots-txt", "matomo", "crawler-user-agents"). */
  sources: string[];
}

/**
 * How a client claiming to be this bot can be checked.
 *
 * - `range_ids`: the `crawler.id` values (data/sources.json crawler entries, IpFacts.crawler.id at
 *   runtime) of published IP ranges of this bot's operator. A request with this bot's UA is
 *   verified when its address's `IpFacts.crawler.id` is one of them. Sorted, no duplicates.
 * - `ranges`: true exactly when `range_ids` is non-empty.
 * - `rdns_masks`: reverse-DNS masks from arcjet (e.g. "crawl-***-***-***-***.googlebot.com");
 *   `*` is one label character or more, checked with a forward-confirmed lookup.
 */
export interface BotVerification {
  ranges: boolean;
  range_ids: string[];
  rdns_masks: string[];
}

/** The answer for a UA that names a registered bot. Frozen and shared between calls. */
export interface BotMatch {
  bot_id: string;
  bot_name: string;
  bot_operator: string | null;
  bot_kind: BotKind;
  /** What would prove the claim; both lists empty when nothing can. */
  verification: { range_ids: string[]; rdns_masks: string[] };
}

/** Counts of one merge (stored in bots.json and the build's manifest.json). */
export interface MergeStats {
  /** Per source: entries parsed and entries skipped for failing their schema (0/0 when the source was not read). */
  per_source: Record<BotSourceName, { entries: number; bad: number }>;
  merged: number;
  with_operator: number;
  /** Bots with at least one range id or reverse-DNS mask. */
  with_verification: number;
  /** Bots with at least one range id. */
  with_ranges: number;
  /** Distinct operators, and those with at least one verified bot. */
  operators: number;
  operators_with_verification: number;
}

/** The four registries merged into one. */
export const BOT_SOURCE_NAMES = ["arcjet", "ai-robots-txt", "matomo", "crawler-user-agents"] as const;
export type BotSourceName = (typeof BOT_SOURCE_NAMES)[number];

export interface BotClassifierStats {
  bots: number;
  patterns: number;
  /** Patterns whose source failed to compile as a JS RegExp; left out. */
  invalid: number;
  /** Patterns with no required literal of 3+ characters; tested on every call. */
  unindexed: number;
}

export interface BotClassifier {
  /** Classify a User-Agent; null when it names no registered bot. Cached by UA string. */
  classify(ua: string): BotMatch | null;
  /**
   * The same decision, uncached, with the pattern literal that decided it (lowercase; "" for an
   * unindexed pattern). For the registry builder, tests and the UA classifier.
   *
   * `tokenStart`: count a pattern only where its literal starts a token of the UA (the character
   * before it is not a letter or digit), an unindexed pattern only where its first match does. The UA classifier asks
   * this for UAs shaped like a browser, whose tokens ("SLCC2", "photobucket", "Lightning") may
   * contain a short registry literal ("LCC", "Buck", "NING") that a bot's own UA carries as a word.
   */
  explain(ua: string, opts?: { tokenStart?: boolean }): { match: BotMatch; literal: string } | null;
  readonly stats: BotClassifierStats;
  /** Every registered bot's id, name and kind, sorted by id (the dashboard's bot policy lists them). */
  readonly known: ReadonlyArray<{ bot_id: string; name: string; kind: BotKind }>;
}

interface CompiledPattern {
  re: RegExp;
  literal: string;
  /** Top-level alternatives of the pattern: between equal literals, a narrower pattern is more specific. */
  alternatives: number;
  /** Tie-break between equally specific matches: bots named by more sources, then registry order. */
  sourceCount: number;
  rank: number;
  match: BotMatch;
}

const KEY_LEN = 3;
const DEFAULT_CACHE_SIZE = 10_000;

/**
 * Literals that every match of `source` must contain, one per top-level alternative (lowercased,
 * longest run of plain characters in that alternative). Returns null when some alternative has no
 * literal of at least 3 characters, so the pattern cannot be indexed.
 *
 * Conservative: groups, classes, escapes like \d and optional characters end a run, so a literal
 * returned here is always required by the regex (under case-insensitive matching).
 */
export function requiredLiterals(source: string): string[] | null {
  const alternatives = splitTopLevel(source);
  const out: string[] = [];
  for (const alt of alternatives) {
    const best = longestRun(alt);
    if (best.length < KEY_LEN) return null;
    out.push(best.toLowerCase());
  }
  return out;
}

/** The top-level alternatives of a regex source ("a|b(c|d)" -> ["a", "b(c|d)"]). */
export function splitTopLevel(source: string): string[] {
  const parts: string[] = [];
  let start = 0;
  walkRegex(source, 0, (c, i, depth) => {
    if (c === "|" && depth === 0) {
      parts.push(source.slice(start, i));
      start = i + 1;
    }
    return false;
  });
  parts.push(source.slice(start));
  return parts;
}

/**
 * Walks a regex source from `from`, skipping escapes and the inside of character classes, and
 * calls `visit` with each other character and the group depth after it. Stops at the first
 * character for which `visit` returns true and returns its index (or the length of `s`).
 */
function walkRegex(s: string, from: number, visit: (c: string, i: number, depth: number) => boolean): number {
  let depth = 0;
  let inClass = false;
  for (let i = from; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    if (visit(c, i, depth)) return i;
  }
  return s.length;
}

/** Index just past the group or class opening at `i`. */
function skipBalanced(s: string, i: number): number {
  if (s[i] === "[") {
    let j = i + 1;
    while (j < s.length && s[j] !== "]") j += s[j] === "\\" ? 2 : 1;
    return j + 1;
  }
  const close = walkRegex(s, i, (c, _j, depth) => c === ")" && depth === 0);
  return close >= s.length ? s.length : close + 1;
}

function longestRun(alt: string): string {
  let best = "";
  let run = "";
  const flush = (): void => {
    if (run.length > best.length) best = run;
    run = "";
  };
  let i = 0;
  while (i < alt.length) {
    const c = alt[i] as string;
    let lit: string | null = null;
    let next = i + 1;
    if (c === "\\") {
      const e = alt[i + 1] ?? "";
      if (/[A-Za-z0-9]/.test(e)) {
        // Class escapes, \b, \xHH, \uHHHH, back-references: not literal text.
        next = i + 2;
        if (e === "x") next = i + 4;
        else if (e === "u") next = alt[i + 2] === "{" ? alt.indexOf("}", i) + 1 || alt.length : i + 6;
        else if (e === "c") next = i + 3;
        else if (/[0-9]/.test(e)) while (/[0-9]/.test(alt[next] ?? "")) next++;
      } else {
        lit = e;
        next = i + 2;
      }
    } else if (c === "(" || c === "[") {
      next = skipBalanced(alt, i);
    } else if (!".^$*+?{}|)]".includes(c)) {
      lit = c;
    }
    // A quantifier after an atom: `?`, `*`, `{0,..}` make it optional; anything else ends the run.
    const q = alt[next];
    if (q === "?" || q === "*" || q === "{" || q === "+") {
      if (lit !== null && q === "+") run += lit;
      flush();
      if (q === "{") {
        const close = alt.indexOf("}", next);
        next = close < 0 ? alt.length : close + 1;
      } else next++;
      if (alt[next] === "?") next++; // lazy quantifier
      i = next;
      continue;
    }
    if (lit === null) flush();
    else run += lit;
    i = next;
  }
  flush();
  return best;
}

/**
 * Compile the merged registry into a classifier.
 *
 * When several bots match, the one whose pattern literal found in the UA is longest wins (so
 * "AdsBot-Google" beats "Google", and "Googlebot" beats a generic "bot"); ties go to the pattern
 * with fewer top-level alternatives (a bot's own pattern beats a catch-all list naming it), then
 * to the bot named by more sources, then to the earlier entry.
 *
 * @param bots registry entries.
 * @param cacheSize most UA strings kept in the result cache (oldest evicted first).
 * @example compileBotRegistry(bots).classify("Mozilla/5.0 (compatible; Googlebot/2.1)")?.bot_id // "googlebot"
 */
export function compileBotRegistry(bots: BotEntry[], cacheSize = DEFAULT_CACHE_SIZE): BotClassifier {
  const index = new Map<string, CompiledPattern[]>();
  const always: CompiledPattern[] = [];
  const stats: BotClassifierStats = { bots: bots.length, patterns: 0, invalid: 0, unindexed: 0 };

  bots.forEach((bot, rank) => {
    const match: BotMatch = Object.freeze({
      bot_id: bot.bot_id,
      bot_name: bot.name,
      bot_operator: bot.operator,
      bot_kind: bot.kind,
      verification: Object.freeze({
        range_ids: Object.freeze([...bot.verification.range_ids]) as string[],
        rdns_masks: Object.freeze([...bot.verification.rdns_masks]) as string[],
      }),
    });
    for (const source of bot.patterns) {
      let re: RegExp;
      try {
        re = new RegExp(source, "i");
      } catch {
        stats.invalid++;
        continue;
      }
      stats.patterns++;
      const literals = requiredLiterals(source);
      const alternatives = splitTopLevel(source).length;
      if (literals === null) {
        stats.unindexed++;
        always.push({ re, literal: "", alternatives, sourceCount: bot.sources.length, rank, match });
        continue;
      }
      for (const literal of new Set(literals)) {
        const key = literal.slice(0, KEY_LEN);
        const list = index.get(key);
        const p: CompiledPattern = { re, literal, alternatives, sourceCount: bot.sources.length, rank, match };
        if (list) list.push(p);
        else index.set(key, [p]);
      }
    }
  });

  const cache = new Map<string, BotMatch | null>();

  const evaluate = (ua: string, tokenStart: boolean): CompiledPattern | null => {
    const lower = ua.toLowerCase();
    let best: CompiledPattern | null = null;
    const tried = new Set<CompiledPattern>();
    const better = (p: CompiledPattern, q: CompiledPattern): boolean =>
      p.literal.length !== q.literal.length
        ? p.literal.length > q.literal.length
        : p.alternatives !== q.alternatives
          ? p.alternatives < q.alternatives
          : p.sourceCount !== q.sourceCount
          ? p.sourceCount > q.sourceCount
          : p.rank < q.rank;
    const test = (p: CompiledPattern): void => {
      if (tried.has(p) || (best !== null && !better(p, best))) return;
      tried.add(p);
      // Specificity is the literal that made the pattern a candidate, not the match length:
      // catch-all patterns such as matomo's "Generic Bot" match long spans but only on "bot".
      if (p.re.test(ua)) best = p;
    };
    for (let i = 0; i + KEY_LEN <= lower.length; i++) {
      const list = index.get(lower.slice(i, i + KEY_LEN));
      if (list === undefined) continue;
      for (const p of list) if (tokenStart ? startsToken(lower, p.literal) : lower.includes(p.literal)) test(p);
    }
    // Unindexed patterns (literal "") only win when nothing indexed matched.
    for (const p of always) if (!tokenStart || matchStartsToken(p.re, ua)) test(p);
    return best as CompiledPattern | null;
  };

  const known = bots.map((b) => ({ bot_id: b.bot_id, name: b.name, kind: b.kind })).sort((a, b) => (a.bot_id < b.bot_id ? -1 : a.bot_id > b.bot_id ? 1 : 0));
  return {
    stats,
    known,
    explain(ua: string, opts?: { tokenStart?: boolean }): { match: BotMatch; literal: string } | null {
      const p = evaluate(ua, opts?.tokenStart === true);
      return p === null ? null : { match: p.match, literal: p.literal };
    },
    classify(ua: string): BotMatch | null {
      const hit = cache.get(ua);
      if (hit !== undefined || cache.has(ua)) return hit ?? null;
      const result = evaluate(ua, false)?.match ?? null;
      if (cache.size >= cacheSize) {
        // Map keeps insertion order: drop the oldest entry.
        const oldest = cache.keys().next();
        if (!oldest.done) cache.delete(oldest.value);
      }
      cache.set(ua, result);
      return result;
    },
  };
}

/** Whether `literal` occurs in `lower` where no letter or digit precedes it (or it starts with neither). */
function startsToken(lower: string, literal: string): boolean {
  if (!/^[a-z0-9]/.test(literal)) return lower.includes(literal);
  for (let i = lower.indexOf(literal); i >= 0; i = lower.indexOf(literal, i + 1)) {
    if (i === 0 || !/[a-z0-9]/.test(lower[i - 1]!)) return true;
  }
  return false;
}

/** Whether the first match of `re` in `ua` starts a token (no letter or digit before it). */
function matchStartsToken(re: RegExp, ua: string): boolean {
  const m = re.exec(ua);
  return m !== null && (m.index === 0 || !/[A-Za-z0-9]/.test(ua[m.index - 1]!));
}

/**
 * UA tells of browser automation and HTTP client libraries. Word-bounded where the token could
 * otherwise occur inside an ordinary browser UA.
 */
const AUTOMATION_RE =
  /HeadlessChrome|PhantomJS|SlimerJS|Playwright|Puppeteer|Selenium|WebDriver|Electron\/.*HeadlessChrome|(?:^|[\s(;])(?:curl|Wget|python-requests|python-urllib|Python\/\d|aiohttp|httpx|Go-http-client|node-fetch|undici|axios|okhttp|Java\/|Apache-HttpClient|libwww-perl|Scrapy|HTTPie|PostmanRuntime)/i;

/**
 * True when the UA names an automation framework (headless Chrome, PhantomJS, Playwright,
 * Puppeteer, Selenium) or an HTTP client library (curl, Wget, python-requests, Go-http-client,
 * node-fetch, axios, okhttp, Java, libwww-perl, Scrapy …). An empty UA is not judged here.
 */
export function detectAutomation(ua: string): boolean {
  return AUTOMATION_RE.test(ua);
}

/** A classifier that knows no bots: what a dataset without a registry answers with. */
export function emptyBotClassifier(): BotClassifier {
  return compileBotRegistry([], 1);
}
