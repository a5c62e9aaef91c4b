import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  mergeBotRegistry,
  parseAiRobotsTxt,
  parseArcjet,
  parseCrawlerUserAgents,
  parseMatomo,
  readBotSources,
  type BotSourceInputs,
} from "../../scripts/bots/registry.js";
import { REPO_ROOT } from "../../src/config/index.js";
import {
  compileBotRegistry,
  detectAutomation,
  requiredLiterals,
  type BotClassifier,
  type BotEntry,
} from "../../src/datasets/bot-registry.js";

const SHARED_DATA = resolve(REPO_ROOT, "../shared/data");
const HAVE_DATA = existsSync(join(SHARED_DATA, "bots/arcjet-well-known-bots/well-known-bots.json"));

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

describe.skipIf(!HAVE_DATA)("merged bot registry (shared/data)", () => {
  let inputs: BotSourceInputs;
  let bots: BotEntry[];
  let classifier: BotClassifier;

  beforeAll(() => {
    inputs = readBotSources(SHARED_DATA);
    const merged = mergeBotRegistry(inputs);
    bots = merged.bots;
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

  it.each(KNOWN)("classifies %s", (ua, id, kind, operator) => {
    const hit = classifier.classify(ua);
    expect(hit?.bot_id).toBe(id);
    expect(hit?.bot_kind).toBe(kind);
    expect(hit?.bot_operator).toContain(operator);
  });

  it("does not call ordinary browsers bots", () => {
    for (const ua of BROWSERS) expect(classifier.classify(ua), ua).toBeNull();
  });

  it("classifies every arcjet example UA as some bot", () => {
    const raw = JSON.parse(
      readFileSync(join(SHARED_DATA, "bots/arcjet-well-known-bots/well-known-bots.json"), "utf8"),
    ) as Array<{ instances: { accepted: string[] } }>;
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
