import { describe, expect, it } from "vitest";
import { MAX_BOT_RULES, MAX_DRY_RUN_RULES, putBotPolicyBody } from "../../src/http/schemas/bot-policy.js";
import * as botPolicy from "../../src/scoring/bot-policy.js";
import {
  BOT_KINDS,
  DEFAULT_BOT_POLICY,
  POLICY_KINDS,
  applyPolicy,
  decideWithPolicy,
  evaluatePolicy,
  resolvePolicy,
  type PolicySubject,
} from "../../src/scoring/bot-policy.js";

const subject = (over: Partial<PolicySubject>): PolicySubject => ({ bot_id: null, bot_kind: null, bot_verified: null, ...over });

describe("bot-policy module", () => {
  it("exports exactly its public API", () => {
    expect(Object.keys(botPolicy).sort()).toEqual(["BOT_KINDS", "DEFAULT_BOT_POLICY", "POLICY_KINDS", "applyPolicy", "decideWithPolicy", "evaluatePolicy", "resolvePolicy"]);
    expect(POLICY_KINDS).toEqual([...BOT_KINDS, "automation", "client"]);
  });
});

describe("DEFAULT_BOT_POLICY", () => {
  it("allows search crawlers, blocks spoofed bots, scores the rest", () => {
    expect(DEFAULT_BOT_POLICY).toEqual({
      bots: {},
      kinds: {
        search_crawler: "allow", ai_crawler: "score", ai_search: "score", ai_assistant: "score",
        monitor: "score", preview: "score", automation: "score", client: "score",
      },
      spoofed: "block",
      allow_unverified: false,
      dry_run: [],
    });
  });
  it("is frozen all the way down", () => {
    expect(Object.isFrozen(DEFAULT_BOT_POLICY)).toBe(true);
    expect(Object.isFrozen(DEFAULT_BOT_POLICY.bots)).toBe(true);
    expect(Object.isFrozen(DEFAULT_BOT_POLICY.kinds)).toBe(true);
    expect(Object.isFrozen(DEFAULT_BOT_POLICY.dry_run)).toBe(true);
  });
  it("allows a verified search crawler, not an unverifiable or spoofed one", () => {
    const s = { bot_id: "googlebot", bot_kind: "search_crawler" } as const;
    expect(applyPolicy(DEFAULT_BOT_POLICY, subject({ ...s, bot_verified: true }))).toEqual({ action: "allow", rule: "kinds.search_crawler" });
    expect(applyPolicy(DEFAULT_BOT_POLICY, subject({ ...s, bot_verified: null }))).toBeNull();
    expect(applyPolicy(DEFAULT_BOT_POLICY, subject({ ...s, bot_verified: false }))).toEqual({ action: "block", rule: "spoofed" });
  });
  it.each(["ai_crawler", "ai_search", "ai_assistant", "monitor", "preview", "automation", "seo", "other"] as const)(
    "leaves %s to the score, verified or not",
    (kind) => {
      expect(applyPolicy(DEFAULT_BOT_POLICY, subject({ bot_id: "x", bot_kind: kind, bot_verified: true }))).toBeNull();
      expect(applyPolicy(DEFAULT_BOT_POLICY, subject({ bot_id: "x", bot_kind: kind, bot_verified: null }))).toBeNull();
    },
  );
  it("never matches a non-bot", () => {
    expect(applyPolicy(DEFAULT_BOT_POLICY, subject({}))).toBeNull();
  });
});

describe("resolvePolicy", () => {
  it("returns the defaults for null and for an empty document", () => {
    expect(resolvePolicy(null)).toBe(DEFAULT_BOT_POLICY);
    expect(resolvePolicy({})).toEqual(DEFAULT_BOT_POLICY);
  });
  it("merges bots and kinds key by key and replaces scalars", () => {
    const p = resolvePolicy({ bots: { gptbot: "block" }, kinds: { ai_crawler: "block", search_crawler: "score" }, spoofed: "score", allow_unverified: true });
    expect(p).toEqual({
      bots: { gptbot: "block" },
      kinds: { ...DEFAULT_BOT_POLICY.kinds, ai_crawler: "block", search_crawler: "score" },
      spoofed: "score",
      allow_unverified: true,
      dry_run: [],
    });
    expect(Object.isFrozen(p.kinds)).toBe(true);
    expect(DEFAULT_BOT_POLICY.kinds.ai_crawler).toBe("score");
  });
});

describe("applyPolicy order", () => {
  it("spoofed first: a spoofed bot is blocked even when its id is allowed", () => {
    const p = resolvePolicy({ bots: { googlebot: "allow" } });
    expect(applyPolicy(p, subject({ bot_id: "googlebot", bot_kind: "search_crawler", bot_verified: false }))).toEqual({ action: "block", rule: "spoofed" });
  });
  it("with spoofed: score, a spoofed bot is never allowed, but block rules still apply", () => {
    const s = subject({ bot_id: "googlebot", bot_kind: "search_crawler", bot_verified: false });
    expect(applyPolicy(resolvePolicy({ spoofed: "score", bots: { googlebot: "allow" }, allow_unverified: true }), s)).toBeNull();
    expect(applyPolicy(resolvePolicy({ spoofed: "score", bots: { googlebot: "block" } }), s)).toEqual({ action: "block", rule: "bots.googlebot" });
    expect(applyPolicy(resolvePolicy({ spoofed: "score", kinds: { search_crawler: "block" } }), s)).toEqual({ action: "block", rule: "kinds.search_crawler" });
  });
  it("a bots rule wins over the kind rule", () => {
    const p = resolvePolicy({ bots: { gptbot: "allow", bingbot: "block" }, kinds: { ai_crawler: "block" } });
    expect(applyPolicy(p, subject({ bot_id: "gptbot", bot_kind: "ai_crawler", bot_verified: true }))).toEqual({ action: "allow", rule: "bots.gptbot" });
    expect(applyPolicy(p, subject({ bot_id: "bingbot", bot_kind: "search_crawler", bot_verified: true }))).toEqual({ action: "block", rule: "bots.bingbot" });
    expect(applyPolicy(p, subject({ bot_id: "claudebot", bot_kind: "ai_crawler", bot_verified: true }))).toEqual({ action: "block", rule: "kinds.ai_crawler" });
  });
  it("a bots allow applies to an unverifiable bot (the project named it)", () => {
    const p = resolvePolicy({ bots: { uptimerobot: "allow" } });
    expect(applyPolicy(p, subject({ bot_id: "uptimerobot", bot_kind: "monitor", bot_verified: null }))).toEqual({ action: "allow", rule: "bots.uptimerobot" });
  });
  it("a kind allow needs a verified bot unless allow_unverified", () => {
    const s = subject({ bot_id: "uptimerobot", bot_kind: "monitor", bot_verified: null });
    expect(applyPolicy(resolvePolicy({ kinds: { monitor: "allow" } }), s)).toBeNull();
    expect(applyPolicy(resolvePolicy({ kinds: { monitor: "allow" }, allow_unverified: true }), s)).toEqual({ action: "allow", rule: "kinds.monitor" });
  });
  it("a kind block applies regardless of verification", () => {
    const p = resolvePolicy({ kinds: { ai_crawler: "block" } });
    for (const v of [true, null]) {
      expect(applyPolicy(p, subject({ bot_id: "gptbot", bot_kind: "ai_crawler", bot_verified: v }))).toEqual({ action: "block", rule: "kinds.ai_crawler" });
    }
  });
  it("matches automation visits by kind, without a bot id", () => {
    const p = resolvePolicy({ kinds: { automation: "block" } });
    expect(applyPolicy(p, subject({ bot_kind: "automation" }))).toEqual({ action: "block", rule: "kinds.automation" });
  });
  it("matches non-browser clients by kind; a kind allow needs allow_unverified (a client is never verified)", () => {
    expect(applyPolicy(resolvePolicy({ kinds: { client: "block" } }), subject({ bot_kind: "client" }))).toEqual({ action: "block", rule: "kinds.client" });
    expect(applyPolicy(resolvePolicy({ kinds: { client: "allow" } }), subject({ bot_kind: "client" }))).toBeNull();
    expect(applyPolicy(resolvePolicy({ kinds: { client: "allow" }, allow_unverified: true }), subject({ bot_kind: "client" }))).toEqual({ action: "allow", rule: "kinds.client" });
  });
  it("does not find Object.prototype members as rules", () => {
    expect(applyPolicy(DEFAULT_BOT_POLICY, subject({ bot_id: "constructor", bot_kind: "other", bot_verified: true }))).toBeNull();
  });
});

describe("putBotPolicyBody", () => {
  const issues = (v: unknown) => {
    const r = putBotPolicyBody.safeParse(v);
    expect(r.success).toBe(false);
    return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
  };

  it("accepts a full document and an empty one", () => {
    const doc = {
      bots: { gptbot: "block", "chatgpt-user": "allow", "bot_1.x": "allow" },
      kinds: { search_crawler: "allow", ai_crawler: "block", automation: "score" },
      spoofed: "score",
      allow_unverified: true,
    };
    expect(putBotPolicyBody.parse(doc)).toEqual(doc);
    expect(putBotPolicyBody.parse({})).toEqual({});
    expect(resolvePolicy(putBotPolicyBody.parse(doc)).kinds.ai_crawler).toBe("block");
  });
  it("accepts every kind", () => {
    const kinds = Object.fromEntries(POLICY_KINDS.map((k) => [k, "block"]));
    expect(putBotPolicyBody.parse({ kinds }).kinds).toEqual(kinds);
  });
  it("rejects unknown top-level keys by name", () => {
    expect(issues({ spoof: "block" })).toEqual([{ path: "", message: 'Unrecognized key: "spoof"' }]);
  });
  it("rejects an unknown kind at its path", () => {
    expect(issues({ kinds: { robot: "allow" } })).toEqual([{ path: "kinds", message: 'Unrecognized key: "robot"' }]);
  });
  it("rejects bad actions", () => {
    expect(issues({ kinds: { ai_crawler: "maybe" } })[0]!.path).toBe("kinds.ai_crawler");
    expect(issues({ bots: { gptbot: "score" } })[0]!.path).toBe("bots.gptbot");
    expect(issues({ spoofed: "allow" })[0]!.path).toBe("spoofed");
    expect(issues({ allow_unverified: "yes" })[0]!.path).toBe("allow_unverified");
  });
  it.each(["GPTBot", "-bot", ".bot", "a".repeat(65), "bot id", ""])("rejects the bot id %j at its path", (id) => {
    const [first] = issues({ bots: { [id]: "block" } });
    expect(first!.path).toBe(`bots.${id}`);
    expect(first!.message).toMatch(/^not a bot id/);
  });
  it("accepts a 64-character bot id", () => {
    expect(putBotPolicyBody.safeParse({ bots: { ["a".repeat(64)]: "block" } }).success).toBe(true);
  });
  it(`accepts ${MAX_BOT_RULES} bot rules and rejects one more`, () => {
    const rules = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`bot${i}`, "block"]));
    expect(putBotPolicyBody.safeParse({ bots: rules(MAX_BOT_RULES) }).success).toBe(true);
    expect(issues({ bots: rules(MAX_BOT_RULES + 1) })).toEqual([{ path: "bots", message: `at most ${MAX_BOT_RULES} bot rules` }]);
  });
  it("does not let a __proto__ key through", () => {
    const parsed = putBotPolicyBody.safeParse(JSON.parse('{"bots":{"__proto__":"allow"}}'));
    if (parsed.success) expect(Object.hasOwn(parsed.data.bots!, "__proto__")).toBe(false);
    expect(({} as Record<string, unknown>).allow).toBeUndefined();
  });
});

describe("rules in dry run", () => {
  const gptbot = subject({ bot_id: "gptbot", bot_kind: "ai_crawler", bot_verified: true });
  it("are passed over by the live decision and reported as what would have decided", () => {
    const p = resolvePolicy({ bots: { gptbot: "block" }, kinds: { ai_crawler: "allow" }, dry_run: ["bots.gptbot"] });
    expect(evaluatePolicy(p, gptbot)).toEqual({ outcome: { action: "allow", rule: "kinds.ai_crawler" }, dry_run: { action: "block", rule: "bots.gptbot" } });
    expect(applyPolicy(p, gptbot)).toEqual({ action: "allow", rule: "kinds.ai_crawler" });
    expect(decideWithPolicy("review", p, gptbot)).toMatchObject({ decision: "allow", dry_run: { rule: "bots.gptbot" } });
  });
  it("leave the score's decision when no live rule applies; the first dry-run rule is the one reported", () => {
    const p = resolvePolicy({ bots: { gptbot: "block" }, kinds: { ai_crawler: "allow" }, dry_run: ["kinds.ai_crawler", "bots.gptbot"] });
    expect(decideWithPolicy("review", p, gptbot)).toEqual({ decision: "review", outcome: null, dry_run: { action: "block", rule: "bots.gptbot" } });
  });
  it("a spoofed rule in dry run lets a spoofed bot be scored, and never lets an allow rule apply to it", () => {
    const p = resolvePolicy({ bots: { gptbot: "allow" }, dry_run: ["spoofed"] });
    const spoofed = { ...gptbot, bot_verified: false };
    expect(decideWithPolicy("block", p, spoofed)).toEqual({ decision: "block", outcome: null, dry_run: { action: "block", rule: "spoofed" } });
  });
  it("a rule a hit does not meet is not reported", () => {
    const p = resolvePolicy({ kinds: { monitor: "block" }, dry_run: ["kinds.monitor"] });
    expect(evaluatePolicy(p, gptbot)).toEqual({ outcome: null, dry_run: null });
  });
});

describe("putBotPolicyBody dry_run", () => {
  it("takes rule paths and refuses anything else at its index", () => {
    expect(putBotPolicyBody.safeParse({ dry_run: ["spoofed", "bots.gptbot", "kinds.client"] }).success).toBe(true);
    for (const bad of ["kinds.robot", "bots.GPTBot", "spoofed.x", "bots.", "allow_unverified"]) {
      const r = putBotPolicyBody.safeParse({ dry_run: ["spoofed", bad] });
      expect(r.success, bad).toBe(false);
      expect(r.error!.issues[0]!.path).toEqual(["dry_run", 1]);
    }
    expect(putBotPolicyBody.safeParse({ dry_run: Array.from({ length: MAX_DRY_RUN_RULES + 1 }, () => "spoofed") }).success).toBe(false);
  });
});
