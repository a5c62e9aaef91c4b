import { describe, expect, it } from "vitest";
import type { IpFacts } from "../../src/datasets/ip-facts.js";
import { DEFAULT_BOT_POLICY, resolvePolicy } from "../../src/scoring/bot-policy.js";
import {
  SCORE_THRESHOLDS,
  SCORE_WEIGHTS,
  STRONG_TELLS,
  WEAK_TELLS,
  decide,
  needsRdns,
  scoreHit,
  verifyBot,
  type HitBot,
  type HitInput,
} from "../../src/scoring/observation.js";

const noType = { datacenter: false, hosting: false, isp: false, mobile: false, cloud: false };
const noRisk = { proxy: false, vpn: false, tor: false, residential_proxy: false, scanner: false };
function facts(over: Partial<IpFacts>): IpFacts {
  return Object.freeze({
    asn: null, org: null, country: null, type: noType, risk: noRisk, cloud_provider: null, cloud_region: null,
    vpn_provider: null, scanner_org: null, crawler: null, company: null, provenance: {}, ...over,
  });
}

const residential = facts({ asn: 3320, org: "Deutsche Telekom AG", country: "DE", type: { ...noType, isp: true } });
const datacenter = facts({ asn: 16509, type: { ...noType, datacenter: true, hosting: true, cloud: true }, cloud_provider: "aws" });
const vpn = facts({ asn: 39351, risk: { ...noRisk, vpn: true }, vpn_provider: "Mullvad" });
const tor = facts({ risk: { ...noRisk, tor: true } });
const openProxy = facts({ risk: { ...noRisk, proxy: true } });
const resiProxy = facts({ risk: { ...noRisk, residential_proxy: true } });
const scanner = facts({ risk: { ...noRisk, scanner: true }, scanner_org: "censys" });
const googleRange = facts({ asn: 15169, type: { ...noType, datacenter: true, hosting: true }, crawler: { id: "googlebot", operator: "Google" } });
const gptbotRange = facts({ asn: 8075, type: { ...noType, datacenter: true, hosting: true }, crawler: { id: "gptbot", operator: "OpenAI" } });

const googlebot: HitBot = {
  bot_id: "googlebot", bot_name: "Googlebot", bot_operator: "Google", bot_kind: "search_crawler",
  range_ids: ["googlebot"], rdns_masks: ["*.googlebot.com", "*.google.com"],
};
const gptbot: HitBot = {
  bot_id: "gptbot", bot_name: "GPTBot", bot_operator: "OpenAI", bot_kind: "ai_crawler", range_ids: ["gptbot"], rdns_masks: [],
};
const perplexity: HitBot = {
  bot_id: "perplexitybot", bot_name: "PerplexityBot", bot_operator: "Perplexity", bot_kind: "ai_search", range_ids: [], rdns_masks: [],
};
const rdnsOnly: HitBot = {
  bot_id: "yandexbot", bot_name: "YandexBot", bot_operator: "Yandex", bot_kind: "search_crawler", range_ids: [], rdns_masks: ["*.yandex.ru"],
};
const uptime: HitBot = {
  bot_id: "uptimerobot", bot_name: "UptimeRobot", bot_operator: null, bot_kind: "monitor", range_ids: [], rdns_masks: [],
};
const curl: HitBot = { bot_id: "curl", bot_name: "curl", bot_operator: null, bot_kind: "tool", range_ids: [], rdns_masks: [] };

/** A real browser with a valid token on a residential IP; tests override what they probe. */
function hit(over: Partial<HitInput> = {}): HitInput {
  return {
    ua: { browser: "Chrome", os: "Windows", device: null }, automationUa: false, bot: null, clientUa: null, ip: residential,
    tokenValid: true, tells: [], clientUaMismatch: false, rdnsVerified: null, ...over,
  };
}
const sigmoid = (x: number): number => Math.round((1 / (1 + Math.exp(-x))) * 10_000) / 10_000;
const score = (over: Partial<HitInput>): number => scoreHit(hit(over), DEFAULT_BOT_POLICY).score;

describe("SCORE_WEIGHTS", () => {
  it("is frozen", () => {
    expect(Object.isFrozen(SCORE_WEIGHTS)).toBe(true);
    expect(Object.isFrozen(SCORE_THRESHOLDS)).toBe(true);
  });

  it("scores a clean hit as sigmoid(base)", () => {
    const r = scoreHit(hit(), DEFAULT_BOT_POLICY);
    expect(r.score).toBe(sigmoid(SCORE_WEIGHTS.base));
    expect(r.score).toBeCloseTo(0.047, 3);
    expect(r).toEqual({
      score: r.score, decision: "allow", reasons: [],
      ua: { browser: "Chrome", os: "Windows", device: null, bot_kind: null, bot_name: null },
      bot_id: null, bot_operator: null, bot_verified: null, policy: null, dry_run: null,
    });
  });

  it("adds each weight in log-odds (scorecard sum)", () => {
    const w = SCORE_WEIGHTS;
    expect(score({ tokenValid: false, ip: datacenter })).toBe(sigmoid(w.base + w.client_token_missing + w.ip_datacenter));
    expect(score({ ip: vpn, clientUaMismatch: true })).toBe(sigmoid(w.base + w.ip_vpn + w.client_ua_mismatch));
  });

  const base = score({});
  it.each<[string, Partial<HitInput>]>([
    ["automation_detected", { tells: ["webdriver"] }],
    ["ua_bot", { bot: uptime }],
    ["client_token_missing", { tokenValid: false }],
    ["ip_datacenter", { ip: datacenter }],
    ["ip_vpn", { ip: vpn }],
    ["ip_proxy (open proxy)", { ip: openProxy }],
    ["ip_proxy (tor)", { ip: tor }],
    ["ip_scanner", { ip: scanner }],
    ["weak tell", { tells: ["no_plugins"] }],
    ["client UA mismatch", { clientUaMismatch: true }],
  ])("%s raises the score", (_name, over) => {
    expect(score(over)).toBeGreaterThan(base);
  });

  it("bot:verified and bot:spoofed raise the score over an unverifiable claim", () => {
    const unverifiable = score({ bot: googlebot, ip: null });
    expect(score({ bot: googlebot, ip: googleRange })).toBeGreaterThan(unverifiable);
    expect(score({ bot: googlebot, ip: gptbotRange })).toBeGreaterThan(unverifiable);
  });

  it("counts each weak tell once, up to weak_tell_max", () => {
    const one = score({ tells: ["no_plugins"] });
    expect(score({ tells: ["no_plugins", "no_plugins"] })).toBe(one);
    expect(score({ tells: ["no_plugins", "no_languages"] })).toBeGreaterThan(one);
    const max = score({ tells: [...WEAK_TELLS].slice(0, SCORE_WEIGHTS.weak_tell_max) });
    expect(max).toBe(sigmoid(SCORE_WEIGHTS.base + SCORE_WEIGHTS.weak_tell_max * SCORE_WEIGHTS.weak_tell));
    expect(score({ tells: [...WEAK_TELLS] })).toBe(max);
  });

  it("ignores unknown tells", () => {
    expect(scoreHit(hit({ tells: ["battery_low", "WEBDRIVER"] }), DEFAULT_BOT_POLICY)).toEqual(scoreHit(hit(), DEFAULT_BOT_POLICY));
  });
});

describe("scoreHit scenarios", () => {
  const decision = (over: Partial<HitInput>): string => scoreHit(hit(over), DEFAULT_BOT_POLICY).decision;

  it("allows a real browser with a valid token on a residential IP", () => {
    expect(decision({})).toBe("allow");
  });
  it("allows a missing token alone (blockers drop the handshake), with the reason", () => {
    const r = scoreHit(hit({ tokenValid: false }), DEFAULT_BOT_POLICY);
    expect(r.decision).toBe("allow");
    expect(r.reasons).toEqual(["client_token_missing"]);
  });
  it("reviews a datacenter IP with a missing token", () => {
    expect(decision({ ip: datacenter, tokenValid: false })).toBe("review");
  });
  it("reviews a VPN on a datacenter range with a missing token", () => {
    expect(decision({ ip: facts({ type: datacenter.type, risk: vpn.risk }), tokenValid: false })).toBe("review");
  });
  it.each([...STRONG_TELLS])("blocks any strong tell (%s), even with a valid token", (tell) => {
    const r = scoreHit(hit({ tells: [tell] }), DEFAULT_BOT_POLICY);
    expect(r.decision).toBe("block");
    expect(r.reasons).toEqual(["automation_detected"]);
    expect(r.ua.bot_kind).toBe("automation");
    expect(r.ua.bot_name).toBeNull();
  });
  it("blocks a spoofed bot", () => {
    expect(decision({ bot: gptbot, ip: residential })).toBe("block");
  });
  it("reviews an unverifiable bot claim with a valid token, blocks it without one", () => {
    expect(decision({ bot: perplexity })).toBe("review");
    expect(decision({ bot: perplexity, tokenValid: false })).toBe("block");
  });
  it("scores a verified crawler as certainly a bot", () => {
    expect(score({ bot: googlebot, ip: googleRange })).toBeGreaterThan(0.95);
  });
});

describe("reasons", () => {
  const reasons = (over: Partial<HitInput>): string[] => scoreHit(hit(over), DEFAULT_BOT_POLICY).reasons;

  it("automation_detected and ua_bot from an automation UA (HeadlessChrome)", () => {
    const r = scoreHit(hit({ automationUa: true }), DEFAULT_BOT_POLICY);
    expect(r.reasons).toEqual(["automation_detected", "ua_bot"]);
    expect(r.ua).toMatchObject({ bot_kind: "automation", bot_name: null });
    expect(r.bot_id).toBeNull();
  });

  it("keeps bot_id for an automation client the registry knows (curl)", () => {
    const r = scoreHit(hit({ automationUa: true, bot: curl, tokenValid: false }), DEFAULT_BOT_POLICY);
    expect(r.reasons).toEqual(["automation_detected", "ua_bot", "bot:id:curl", "client_token_missing"]);
    expect(r.ua).toMatchObject({ bot_kind: "automation", bot_name: null });
    expect(r.bot_id).toBe("curl");
    expect(r.bot_verified).toBeNull();
  });

  it("ua_client:<tell> and bot_kind client for a non-browser client no list names (0.731 alone: review)", () => {
    const r = scoreHit(hit({ clientUa: "library" }), DEFAULT_BOT_POLICY);
    expect(r.reasons).toEqual(["ua_client:library"]);
    expect(r.ua).toMatchObject({ bot_kind: "client", bot_name: null });
    expect(r).toMatchObject({ bot_id: null, bot_verified: null, policy: null, score: 0.7311, decision: "review" });
    expect(scoreHit(hit({ clientUa: "empty", tokenValid: false }), DEFAULT_BOT_POLICY)).toMatchObject({ score: 0.9526, decision: "block" });
    // Automation and registered bots are reported as such, never as clients.
    expect(scoreHit(hit({ clientUa: "library", tells: ["webdriver"] }), DEFAULT_BOT_POLICY)).toMatchObject({ reasons: ["automation_detected"], ua: { bot_kind: "automation" } });
    expect(scoreHit(hit({ clientUa: "bot_token", bot: uptime }), DEFAULT_BOT_POLICY).reasons).toEqual(["ua_bot", "bot:id:uptimerobot"]);
    expect(scoreHit(hit({ clientUa: "runtime" }), resolvePolicy({ kinds: { client: "block" } }))).toMatchObject({ decision: "block", policy: { rule: "kinds.client" } });
  });

  it("ua_bot and bot:id for a registry bot of another kind, with no kind reason", () => {
    const r = scoreHit(hit({ bot: uptime }), DEFAULT_BOT_POLICY);
    expect(r.reasons).toEqual(["ua_bot", "bot:id:uptimerobot"]);
    expect(r.ua).toMatchObject({ bot_kind: "monitor", bot_name: "UptimeRobot" });
    expect(r.bot_verified).toBeNull();
  });

  it.each(["ai_crawler", "ai_search", "ai_assistant"] as const)("bot:ai_crawler for kind %s, ua.bot_kind keeps the kind", (kind) => {
    const r = scoreHit(hit({ bot: { ...perplexity, bot_kind: kind } }), DEFAULT_BOT_POLICY);
    expect(r.reasons).toContain("bot:ai_crawler");
    expect(r.ua.bot_kind).toBe(kind);
  });

  it("bot:search_crawler and bot:verified for Googlebot from its own range", () => {
    const r = scoreHit(hit({ bot: googlebot, ip: googleRange }), DEFAULT_BOT_POLICY);
    expect(r.reasons.slice(0, 4)).toEqual(["ua_bot", "bot:search_crawler", "bot:id:googlebot", "bot:verified"]);
    expect(r).toMatchObject({ bot_id: "googlebot", bot_operator: "Google", bot_verified: true });
    expect(r.ua).toMatchObject({ bot_kind: "search_crawler", bot_name: "Googlebot" });
  });

  it("bot:spoofed:googlebot for a Googlebot UA from a GPTBot range", () => {
    const r = scoreHit(hit({ bot: googlebot, ip: gptbotRange }), DEFAULT_BOT_POLICY);
    expect(r.reasons).toContain("bot:spoofed:googlebot");
    expect(r.reasons).not.toContain("bot:verified");
    expect(r.bot_verified).toBe(false);
    expect(r.decision).toBe("block");
  });

  it("bot:spoofed:gptbot for a GPTBot UA from a Googlebot range", () => {
    const r = scoreHit(hit({ bot: gptbot, ip: googleRange }), DEFAULT_BOT_POLICY);
    expect(r.reasons).toContain("bot:spoofed:gptbot");
    expect(r.reasons).toContain("bot:ai_crawler");
  });

  it("bot:verified for GPTBot from its own range", () => {
    const r = scoreHit(hit({ bot: gptbot, ip: gptbotRange }), DEFAULT_BOT_POLICY);
    expect(r.reasons).toContain("bot:verified");
    expect(r.bot_verified).toBe(true);
  });

  it.each<[string, IpFacts]>([
    ["ip_datacenter", datacenter],
    ["ip_datacenter", facts({ type: { ...noType, hosting: true } })],
    ["ip_vpn", vpn],
    ["ip_proxy", openProxy],
    ["ip_proxy", tor],
    ["ip_proxy", resiProxy],
    ["ip_scanner", scanner],
  ])("%s from the IP facts", (reason, ip) => {
    expect(reasons({ ip })).toEqual([reason]);
  });

  it("no IP reasons without IP facts; isp and mobile are not reasons", () => {
    expect(reasons({ ip: null })).toEqual([]);
    expect(reasons({ ip: facts({ type: { ...noType, isp: true, mobile: true } }) })).toEqual([]);
  });

  it("weak tells and a UA mismatch score without a reason of their own", () => {
    expect(reasons({ tells: ["no_plugins", "swiftshader"], clientUaMismatch: true })).toEqual([]);
  });

  it("only emits documented reasons (plus policy reasons)", () => {
    const spec = /^(automation_detected|ua_bot|ua_client:(empty|bot_token|runtime|inconsistent|incomplete|no_browser|library)|bot:ai_crawler|bot:search_crawler|bot:id:.+|bot:verified|bot:spoofed:.+|client_token_missing|ip_datacenter|ip_vpn|ip_proxy|ip_scanner|policy:(allow|block):.+|policy_dry_run:(allow|block):.+)$/;
    const all = scoreHit(
      hit({ automationUa: true, bot: googlebot, clientUa: "library", ip: facts({ type: datacenter.type, risk: { proxy: true, vpn: true, tor: true, residential_proxy: true, scanner: true } }), tokenValid: false, tells: [...STRONG_TELLS, ...WEAK_TELLS, "x"], clientUaMismatch: true }),
      DEFAULT_BOT_POLICY,
    );
    for (const r of all.reasons) expect(r).toMatch(spec);
    expect(new Set(all.reasons).size).toBe(all.reasons.length);
  });
});

describe("decide (allow < 0.45 <= review < 0.8 <= block)", () => {
  it.each<[number, string]>([
    [0, "allow"],
    [0.4499, "allow"],
    [0.45, "review"],
    [0.7999, "review"],
    [0.8, "block"],
    [1, "block"],
  ])("%s -> %s", (s, d) => {
    expect(decide(s)).toBe(d);
  });

  it("takes the decision from the reported (rounded) score", () => {
    for (const ip of [residential, datacenter, vpn, tor, scanner, null]) {
      for (const tokenValid of [true, false]) {
        for (let weak = 0; weak <= WEAK_TELLS.size; weak++) {
          for (const clientUaMismatch of [false, true]) {
            const r = scoreHit(hit({ ip, tokenValid, tells: [...WEAK_TELLS].slice(0, weak), clientUaMismatch }), DEFAULT_BOT_POLICY);
            expect(r.policy).toBeNull();
            expect(r.decision).toBe(decide(r.score));
            expect(r.score).toBeGreaterThanOrEqual(0);
            expect(r.score).toBeLessThanOrEqual(1);
          }
        }
      }
    }
    expect(SCORE_THRESHOLDS).toEqual({ review: 0.45, block: 0.8 });
  });
});

describe("verifyBot", () => {
  it("true from the bot's own range, whatever rDNS says", () => {
    expect(verifyBot(googlebot, googleRange, null)).toBe(true);
    expect(verifyBot(googlebot, googleRange, false)).toBe(true);
    expect(verifyBot(gptbot, gptbotRange, null)).toBe(true);
  });
  it("false (spoofed) from another bot's range", () => {
    expect(verifyBot(googlebot, gptbotRange, null)).toBe(false);
    expect(verifyBot(gptbot, googleRange, null)).toBe(false);
  });
  it("false from an ordinary address when the operator publishes ranges", () => {
    expect(verifyBot(gptbot, residential, null)).toBe(false);
    expect(verifyBot(googlebot, datacenter, false)).toBe(false);
  });
  it("true when forward-confirmed rDNS matched, even outside the ranges", () => {
    expect(verifyBot(googlebot, residential, true)).toBe(true);
    expect(verifyBot(rdnsOnly, residential, true)).toBe(true);
  });
  it("with rDNS masks only: false when rDNS failed, null when unchecked", () => {
    expect(verifyBot(rdnsOnly, residential, false)).toBe(false);
    expect(verifyBot(rdnsOnly, residential, null)).toBeNull();
  });
  it("null without ranges or masks", () => {
    expect(verifyBot(perplexity, residential, null)).toBeNull();
    expect(verifyBot(perplexity, googleRange, false)).toBeNull();
  });
  it("fails open (null) without IP facts unless rDNS answered", () => {
    expect(verifyBot(gptbot, null, null)).toBeNull();
    expect(verifyBot(googlebot, null, null)).toBeNull();
    expect(verifyBot(googlebot, null, false)).toBe(false);
    expect(verifyBot(googlebot, null, true)).toBe(true);
  });
});

describe("needsRdns", () => {
  it("true when the bot has masks and its ranges did not verify it", () => {
    expect(needsRdns(googlebot, residential)).toBe(true);
    expect(needsRdns(googlebot, gptbotRange)).toBe(true);
    expect(needsRdns(googlebot, null)).toBe(true);
    expect(needsRdns(rdnsOnly, residential)).toBe(true);
  });
  it("false when already verified by range, or without masks", () => {
    expect(needsRdns(googlebot, googleRange)).toBe(false);
    expect(needsRdns(gptbot, residential)).toBe(false);
    expect(needsRdns(perplexity, null)).toBe(false);
  });
  it("an rDNS-verified Googlebot outside the ranges is verified in scoreHit", () => {
    const r = scoreHit(hit({ bot: googlebot, ip: residential, rdnsVerified: true }), DEFAULT_BOT_POLICY);
    expect(r.bot_verified).toBe(true);
    expect(r.reasons).toContain("bot:verified");
    expect(r.decision).toBe("allow");
  });
});

describe("scoreHit with the bot policy", () => {
  it("allows a verified search crawler by default, with the policy reason", () => {
    const r = scoreHit(hit({ bot: googlebot, ip: googleRange }), DEFAULT_BOT_POLICY);
    expect(r.decision).toBe("allow");
    expect(r.policy).toEqual({ action: "allow", rule: "kinds.search_crawler" });
    expect(r.reasons.at(-1)).toBe("policy:allow:kinds.search_crawler");
    expect(r.score).toBeGreaterThan(0.95);
  });

  it("does not allow an unverifiable search crawler by default", () => {
    const r = scoreHit(hit({ bot: rdnsOnly }), DEFAULT_BOT_POLICY);
    expect(r.bot_verified).toBeNull();
    expect(r.policy).toBeNull();
    expect(r.decision).toBe("review");
  });

  it("reports a matching rule without a policy reason when the decision was already the same", () => {
    const r = scoreHit(hit({ bot: googlebot, ip: gptbotRange }), DEFAULT_BOT_POLICY);
    expect(r.decision).toBe("block");
    expect(r.policy).toEqual({ action: "block", rule: "spoofed" });
    expect(r.reasons.some((x) => x.startsWith("policy:"))).toBe(false);
  });

  it("scores a verified AI crawler by default, blocks it when the project says so", () => {
    expect(scoreHit(hit({ bot: gptbot, ip: gptbotRange }), DEFAULT_BOT_POLICY)).toMatchObject({ decision: "block", policy: null });
    const r = scoreHit(hit({ bot: { ...gptbot, bot_kind: "ai_assistant" }, ip: gptbotRange, tells: [] }), resolvePolicy({ kinds: { ai_assistant: "allow" } }));
    expect(r).toMatchObject({ decision: "allow", policy: { action: "allow", rule: "kinds.ai_assistant" } });
  });

  it("matches automation visits by kinds.automation; a bots rule for a known client wins", () => {
    const p = resolvePolicy({ kinds: { automation: "block" }, bots: { curl: "allow" } });
    // A curl match has a bot rule, which wins over the kind.
    expect(scoreHit(hit({ automationUa: true, bot: curl }), p)).toMatchObject({ decision: "allow", policy: { rule: "bots.curl" } });
    const r = scoreHit(hit({ automationUa: true }), p);
    expect(r.policy).toEqual({ action: "block", rule: "kinds.automation" });
  });

  it("blocks a reviewed bot by id and says so in the reasons", () => {
    const r = scoreHit(hit({ bot: uptime }), resolvePolicy({ bots: { uptimerobot: "block" } }));
    expect(r.decision).toBe("block");
    expect(r.reasons).toContain("policy:block:bots.uptimerobot");
  });

  it("records a rule in dry run that would have changed the decision, without applying it", () => {
    const r = scoreHit(hit({ bot: uptime }), resolvePolicy({ bots: { uptimerobot: "block" }, dry_run: ["bots.uptimerobot"] }));
    const live = scoreHit(hit({ bot: uptime }), DEFAULT_BOT_POLICY);
    expect(r).toEqual({ ...live, reasons: [...live.reasons, "policy_dry_run:block:bots.uptimerobot"], dry_run: { action: "block", rule: "bots.uptimerobot" } });
  });

  it("never applies to plain browser hits", () => {
    const p = resolvePolicy({ kinds: Object.fromEntries(["search_crawler", "automation", "other"].map((k) => [k, "block"])) });
    expect(scoreHit(hit(), p)).toMatchObject({ decision: "allow", policy: null });
  });
});
