import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  mergeBotRegistry,
  parseAiRobotsTxt,
  parseArcjet,
  parseCrawlerUserAgents,
  parseMatomo,
  readBotSources,
  operatorKey,
  type BotSourceInputs,
  type CrawlerRangeRef,
  type MergeStats,
} from "../../scripts/bots/registry.js";
import { loadManifest } from "../../scripts/sources/manifest.js";
import { loadSnapshot, snapshotBytes } from "../../scripts/sources/snapshot.js";
import {
  compileBotRegistry,
  detectAutomation,
  requiredLiterals,
  type BotClassifier,
  type BotEntry,
} from "../../src/datasets/bot-registry.js";

const snapshot = loadSnapshot();
const fromSnapshot = (path: string): Buffer => snapshotBytes(snapshot, path);
const require = createRequire(import.meta.url);

/** The published crawler lists of data/sources.json, as a build with every source has them. */
const CRAWLERS: CrawlerRangeRef[] = loadManifest().sources.flatMap((s) =>
  "crawler" in s && s.crawler ? [{ id: s.crawler.id, operator: s.crawler.operator, urls: [s.upstream, ...(s.official ? [s.official] : [])] }] : [],
);

/**
 * Example UAs that the merged registry gives to another bot than the one their own source entry
 * went into, keyed by that entry's name (arcjet) or pattern (crawler-user-agents), with the bot
 * that wins instead. Each is a UA that carries a longer token of another registered bot or tool,
 * or a bot that two entries of the same source both claim; no other miss is allowed.
 */
const OTHER_WINNER: Record<string, { winners: string[]; why: string }> = {
  // The UA carries a longer token of another registered bot or tool.
  Feedly: { winners: ["feedfetcher-google"], why: "the UA says 'like FeedFetcher-Google'" },
  Feedspot: { winners: ["feedfetcher-google"], why: "the UA says 'like FeedFetcher-Google'" },
  Gwene: { winners: ["googlebot"], why: "the UA ends in 'Googlebot'" },
  centurybot: { winners: ["go-http-client"], why: "the UA is Go-http-client with a contact address" },
  YextBot: { winners: ["headlesschrome"], why: "HeadlessChrome with a YextBot suffix: the automation token is longer" },
  "YextBot\\/": { winners: ["headlesschrome"], why: "as YextBot" },
  Nutch: { winners: ["istellabot"], why: "'istellabot-nutch/Nutch': istellabot runs on Nutch and names itself first" },
  "imessage-preview": { winners: ["facebookexternalhit"], why: "iMessage sends a facebookexternalhit UA" },
  FacebookBot: { winners: ["imessage-preview"], why: "bare 'Facebot' is also arcjet's iMessage-preview pattern, the narrower one" },
  exabot: { winners: ["alexa-crawler"], why: "the example is an Alexabot UA ('Alexabot' contains 'exabot')" },
  "James BOT": { winners: ["generic-bot"], why: "'WebCrawler' (matomo's generic bot literal) is longer than 'James BOT'" },
  PingdomBot: { winners: ["generic-bot"], why: "Chromium UA with a 'PingdomPageSpeed'-style suffix; matomo's generic literal is longer" },
  "[pP]ingdom": { winners: ["generic-bot"], why: "as PingdomBot" },
  "siteimprove-crawler": { winners: ["generic-bot"], why: "'SiteCheck-sitecrawl': matomo's generic literal is longer" },
  "Siteimprove\\.com": { winners: ["generic-bot"], why: "as siteimprove-crawler" },
  "Archive-It": { winners: ["archiveorgbot"], why: "'special_archiver' is archive.org's token; Archive-It is its service" },
  // One source lists a bot's UAs under another of its own entries, which the other sources keep apart.
  BingBot: { winners: ["adidxbot"], why: "arcjet lists adidxbot (Bing Ads) UAs under BingBot and as its own entry" },
  bingbot: { winners: ["adidxbot"], why: "the same adidxbot UAs in crawler-user-agents' bingbot instances" },
  MsnBot: { winners: ["adidxbot", "bingbot"], why: "adidxbot and msnbot-media UAs: arcjet's Adidxbot and matomo's Bingbot regex name them" },
  msnbot: { winners: ["adidxbot", "bingbot"], why: "as MsnBot" },
  "anthropic-crawler": { winners: ["claude-web"], why: "arcjet lumps Claude-Web into one Anthropic entry; ai-robots-txt keeps ClaudeBot and Claude-Web apart" },
  "Ahrefs(Bot|SiteAudit)": { winners: ["ahrefssiteaudit"], why: "one pattern for two bots that arcjet and ai-robots-txt keep apart" },
  "pinterest-crawler": { winners: ["pinterestbot"], why: "arcjet's entry and matomo/ai-robots-txt Pinterestbot stay apart (two arcjet entries)" },
  Hatena: { winners: ["hatena-bookmark"], why: "HatenaBookmark is matomo's own entry for the bookmark fetcher" },
  // The same bot under two names that no id normalisation joins.
  Gigabot: { winners: ["gigablast"], why: "Gigabot is Gigablast's crawler; matomo names it Gigablast" },
  TinEye: { winners: ["tineye-crawler"], why: "'TinEye-bot' vs arcjet's narrower TinEye crawler entry" },
  Sogou: { winners: ["spider"], why: "'Sogou web spider': matomo's Sogou regex names it 'Spider' ($1 group) on a longer literal" },
  "apple-feedfetcher": { winners: ["itms"], why: "bare 'iTMS' UAs: the iTunes Store token is its own registered bot" },
  adbeat_bot: { winners: ["adbeat"], why: "matomo registers 'adbeat.com', longer than 'adbeat_bot'" },
  AwarioRssBot: { winners: ["awario"], why: "matomo's Awario entry covers all Awario bots on a longer literal" },
  "Better Stack": { winners: ["better-uptime-bot"], why: "'Better Uptime Bot' is matomo's entry for the same monitor" },
  ValveSteamBot: { winners: ["steam-chat-url-lookup"], why: "SteamChatURLLookup is its own matomo entry" },
  "builtwith-crawler": { winners: ["builtwith"], why: "'BW/1.1' UAs: matomo's BuiltWith entry has the longer literal" },
  "^BW\\/": { winners: ["builtwith"], why: "as builtwith-crawler" },
  "Bark[rR]owler": { winners: ["exensa-crawler"], why: "Barkrowler is exensa's crawler; arcjet's entry wins on 'exensa.com/crawl'" },
  "rss-parser": { winners: ["buttondown"], why: "'rss-parser / Buttondown': Buttondown's entry has the longer literal" },
  GoogleDocs: { winners: ["google-sheets"], why: "'GoogleDocs; apps-spreadsheets' is matomo's Google Sheets entry" },
  nyt_scraping: { winners: ["scraping-nytimes-com"], why: "matomo registers scraping@nytimes.com on a longer literal" },
  "s4a\\/": { winners: ["seo4ajax-com"], why: "matomo registers the seo4ajax.com URL, longer than 's4a/'" },
};

/** The merged bot that a source entry went into: it carries the entry's source and all its patterns. */
function ownerOf(bots: BotEntry[], source: string, patterns: string[]): BotEntry[] {
  return bots.filter((b) => b.sources.includes(source as BotEntry["sources"][number]) && patterns.every((p) => b.patterns.includes(p)));
}

const BROWSERS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.80",
  "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1",
];

/** [UA, bot_id, bot_kind, operator substring] */
const KNOWN: Array<[string, string, string, string]> = [
  ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "googlebot", "search_crawler", "Google"],
  ["Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.201 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "googlebot", "search_crawler", "Google"],
  ["Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot", "search_crawler", "Microsoft"],
  ["Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)", "gptbot", "ai_crawler", "OpenAI"],
  ["Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot", "oai-searchbot", "ai_search", "OpenAI"],
  ["Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", "chatgpt-user", "ai_assistant", "OpenAI"],
  ["Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", "claudebot", "ai_crawler", "Anthropic"],
  ["Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)", "perplexitybot", "ai_search", "Perplexity"],
  ["Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "applebot", "ai_search", "Apple"],
  ["facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "facebookexternalhit", "preview", "Meta"],
  ["Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "ahrefsbot", "seo", "Ahrefs"],
  ["Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", "uptimerobot", "monitor", "Uptime"],
];

describe("requiredLiterals", () => {
  it("returns only text every match must contain", () => {
    expect(requiredLiterals("Googlebot\\/")).toEqual(["googlebot/"]);
    expect(requiredLiterals("Ahrefs(Bot|SiteAudit)")).toEqual(["ahrefs"]);
    expect(requiredLiterals("AdsBot|(?:APIs)-Google")).toEqual(["adsbot", "-google"]);
    expect(requiredLiterals("[wW]get")).toEqual(["get"]);
    expect(requiredLiterals("[wW]g\\d+")).toBeNull();
    expect(requiredLiterals("Bots?Crawler")).toEqual(["crawler"]);
  });
});

describe("detectAutomation", () => {
  it("flags automation frameworks and HTTP libraries", () => {
    for (const ua of [
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36",
      "Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1",
      "curl/8.5.0",
      "Wget/1.21.4",
      "python-requests/2.31.0",
      "Go-http-client/1.1",
      "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)",
      "axios/1.6.8",
      "okhttp/4.12.0",
      "Java/17.0.2",
      "libwww-perl/6.72",
      "Scrapy/2.11.1 (+https://scrapy.org)",
    ]) {
      expect(detectAutomation(ua), ua).toBe(true);
    }
    for (const ua of BROWSERS) expect(detectAutomation(ua), ua).toBe(false);
  });
});

describe("bot source parsers", () => {
  it("reject drifted formats with a message naming the source", () => {
    expect(() => parseArcjet({ bots: [] })).toThrow(/arcjet well-known-bots\.json/);
    expect(() => parseArcjet([{ id: 1 }, { id: 2 }])).toThrow(/arcjet.*entries fail the schema/);
    expect(() => parseAiRobotsTxt([])).toThrow(/ai-robots-txt robots\.json/);
    expect(() => parseMatomo({ regex: "x" })).toThrow(/matomo bots\.yml/);
    expect(() => parseCrawlerUserAgents([{ regex: "x" }])).toThrow(/crawler-user-agents\.json/);
  });

  it("count single bad entries instead of failing", () => {
    const ok = { pattern: "FooBot", instances: ["FooBot/1.0"], description: "", tags: [] };
    const r = parseCrawlerUserAgents([ok, ok, { pattern: 42 }]);
    expect(r.entries).toHaveLength(2);
    expect(r.bad).toBe(1);
  });
});

describe("merged bot registry (the repository's snapshot)", () => {
  let inputs: BotSourceInputs;
  let bots: BotEntry[];
  let classifier: BotClassifier;
  let stats: MergeStats;

  beforeAll(() => {
    inputs = readBotSources(fromSnapshot);
    const merged = mergeBotRegistry(inputs, CRAWLERS);
    bots = merged.bots;
    stats = merged.stats;
    classifier = compileBotRegistry(bots);
    console.log("bot registry", JSON.stringify({ ...merged.stats, classifier: classifier.stats }));
  });

  it("has more bots than any single source, with unique ids", () => {
    const sizes = [
      parseArcjet(inputs.arcjet).entries.length,
      parseAiRobotsTxt(inputs.aiRobotsTxt).entries.length,
      parseMatomo(inputs.matomo).entries.length,
      parseCrawlerUserAgents(inputs.crawlerUserAgents).entries.length,
    ];
    expect(bots.length).toBeGreaterThan(Math.max(...sizes));
    expect(new Set(bots.map((b) => b.bot_id)).size).toBe(bots.length);
    for (const b of bots) expect(b.bot_id).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
  });

  it("gives every bot an operator where any source names one", () => {
    const named = [
      ...parseArcjet(inputs.arcjet).entries,
      ...parseAiRobotsTxt(inputs.aiRobotsTxt).entries,
      ...parseMatomo(inputs.matomo).entries,
    ].filter((e) => e.operator !== null);
    expect(named.length).toBeGreaterThan(100);
    for (const e of named) {
      const bot = bots.find((b) => b.sources.includes(e.source) && b.patterns.includes(e.patterns[0] ?? ""));
      expect(bot, `${e.source}:${e.name}`).toBeDefined();
      expect(bot?.operator, `${e.source}:${e.name}`).not.toBeNull();
    }
  });

  it("carries arcjet verification (IP ranges, reverse-DNS masks)", () => {
    const google = bots.find((b) => b.bot_id === "googlebot");
    expect(google?.verification.ranges).toBe(true);
    expect(google?.verification.rdns_masks.some((m) => m.includes("googlebot.com"))).toBe(true);
    expect(bots.find((b) => b.bot_id === "gptbot")?.verification.ranges).toBe(true);
  });

  it("links each bot to its operator's published ranges, and only those (spoof checks)", () => {
    const ids = (id: string) => bots.find((b) => b.bot_id === id)?.verification.range_ids ?? [];
    expect(ids("googlebot")).toEqual(["google-special-crawlers", "google-user-triggered-fetchers", "googlebot"]);
    expect(ids("googlebot")).not.toContain("gptbot");
    expect(ids("gptbot")).toContain("gptbot");
    expect(ids("gptbot")).not.toContain("googlebot");
    expect(ids("chatgpt-user")).toContain("chatgpt-user");
    expect(ids("bingbot")).toEqual(["bingbot"]);
    expect(ids("applebot")).toContain("applebot");
    expect(ids("claudebot")).toEqual(["claudebot"]);
    // Through the classifier, as the beacon sees it: a Googlebot UA is verified by Google ranges only.
    const hit = classifier.classify(KNOWN[0]![0]);
    expect(hit?.verification.range_ids).toContain("googlebot");
    expect(hit?.verification.range_ids).not.toContain("gptbot");
    // ranges says whether range_ids is non-empty, for every bot.
    for (const b of bots) expect(b.verification.ranges, b.bot_id).toBe(b.verification.range_ids.length > 0);
    // A list covering one service of an operator links by id or URL only.
    expect(bots.filter((b) => b.verification.range_ids.includes("route53-health-check")).map((b) => b.bot_id)).not.toContain("amazonbot");
    // Every published crawler list that a registered bot claims is linked to some bot.
    const linked = new Set(bots.flatMap((b) => b.verification.range_ids));
    const unlinked = CRAWLERS.filter((c) => !linked.has(c.id)).map((c) => c.id);
    expect(unlinked).toEqual(["pulsetic"]); // the registries name Pulsetic's UA without an operator or id to link by
    expect(stats.with_ranges).toBeGreaterThan(100);
    expect(stats.operators_with_verification).toBeGreaterThan(20);
  });

  it("normalises operator names before linking", () => {
    expect(operatorKey("Google Inc.")).toBe("google");
    expect(operatorKey("Google LLC")).toBe("google");
    expect(operatorKey("Microsoft Corporation")).toBe("microsoft");
    expect(operatorKey("Meta Platforms, Inc.")).toBe("meta");
    expect(operatorKey("Ahrefs Pte Ltd")).toBe("ahrefs");
    expect(operatorKey("Uptime Robot")).toBe(operatorKey("UptimeRobot"));
  });

  it("gives every arcjet example UA to the bot its arcjet entry merged into", () => {
    const misses: string[] = [];
    for (const e of parseArcjet(inputs.arcjet).entries) {
      const own = ownerOf(bots, "arcjet", e.patterns).map((b) => b.bot_id);
      expect(own.length, e.name).toBeGreaterThan(0);
      for (const ua of e.instances) {
        const got = classifier.classify(ua)?.bot_id;
        if (own.includes(got ?? "")) continue;
        if (!OTHER_WINNER[e.name]?.winners.includes(got ?? "")) misses.push(`${e.name}: ${ua} -> ${got}`);
      }
    }
    expect(misses).toEqual([]);
  });

  it("gives every crawler-user-agents example UA to the bot its entry merged into", () => {
    const misses: string[] = [];
    let count = 0;
    for (const e of parseCrawlerUserAgents(inputs.crawlerUserAgents).entries) {
      const own = ownerOf(bots, "crawler-user-agents", e.patterns).map((b) => b.bot_id);
      expect(own.length, e.patterns[0]).toBeGreaterThan(0);
      for (const ua of e.instances) {
        count++;
        const got = classifier.classify(ua)?.bot_id;
        if (own.includes(got ?? "")) continue;
        if (!OTHER_WINNER[e.patterns[0]!]?.winners.includes(got ?? "")) misses.push(`${e.patterns[0]}: ${ua} -> ${got}`);
      }
    }
    expect(count).toBeGreaterThan(2000);
    expect(misses).toEqual([]);
  });

  it("calls no browser UA of the user-agents package a bot (false-positive rate under 0.5%)", () => {
    // The package's whole bundled data set (real browser UAs weighted by traffic), in file order.
    const file = join(dirname(require.resolve("user-agents")), "user-agents.json");
    const entries = JSON.parse(readFileSync(file, "utf8")) as Array<{ userAgent: string }>;
    const uas = [...new Set(entries.map((u) => u.userAgent))];
    expect(entries.length).toBeGreaterThanOrEqual(10_000);
    expect(uas.length).toBeGreaterThan(500);
    const flagged = uas.filter((ua) => classifier.classify(ua) !== null);
    const rate = flagged.length / uas.length;
    const entryRate = entries.filter((u) => classifier.classify(u.userAgent) !== null).length / entries.length;
    console.log(
      `user-agents: ${flagged.length} of ${uas.length} distinct browser UAs classified as bots (${(rate * 100).toFixed(3)}%); ` +
        `${(entryRate * 100).toFixed(3)}% of ${entries.length} entries`,
    );
    expect(rate).toBeLessThan(0.005);
    expect(entryRate).toBeLessThan(0.005);
  });

  it.each(KNOWN)("classifies %s", (ua, id, kind, operator) => {
    const hit = classifier.classify(ua);
    expect(hit?.bot_id).toBe(id);
    expect(hit?.bot_kind).toBe(kind);
    expect(hit?.bot_operator).toContain(operator);
  });

  it("does not call ordinary browsers bots", () => {
    for (const ua of BROWSERS) expect(classifier.classify(ua), ua).toBeNull();
  });

  it("with tokenStart, counts a pattern only where its literal starts a token of the UA", () => {
    const ie = "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0; SLCC1; .NET CLR 2.0.50727; Media Center PC 5.0)";
    expect(classifier.explain(ie)?.literal).toBe("lcc"); // "SLCC1" contains a registered bot's name
    expect(classifier.explain(ie, { tokenStart: true })).toBeNull();
    expect(classifier.explain(KNOWN[0]![0], { tokenStart: true })?.match.bot_id).toBe("googlebot");
    expect(classifier.explain("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/117.0.0.0 Safari/537.36 GTmetrix", { tokenStart: true })?.match.bot_id).toBe("gtmetrix");
  });

  it("classifies every arcjet example UA as some bot", () => {
    const raw = JSON.parse(fromSnapshot("bots/arcjet-well-known-bots/well-known-bots.json").toString("utf8")) as Array<{ instances: { accepted: string[] } }>;
    const uas = raw.flatMap((e) => e.instances.accepted);
    const missed = uas.filter((ua) => classifier.classify(ua) === null);
    expect(missed).toEqual([]);
  });

  it("answers from the cache with the same result", () => {
    const [ua] = KNOWN[0] ?? [""];
    const first = classifier.classify(ua);
    expect(classifier.classify(ua)).toBe(first);
    const small = compileBotRegistry(bots, 2);
    for (const [u] of KNOWN) small.classify(u);
    for (const [u, id] of KNOWN) expect(small.classify(u)?.bot_id).toBe(id);
  });
});
