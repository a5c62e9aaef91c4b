import { describe, expect, it } from "vitest";
import { BASE_RATE, FUSION_WEIGHTS, confidenceOf, decide, fuseCheck, type CheckInput } from "../../src/scoring/check.js";

const none: CheckInput = { content: null, email: null, ip: null, honeypotFilled: null, elapsedMs: null, ua: null, challenge: null, beacon: null };
const clean: CheckInput = {
  content: { spam_probability: 0.02, fraud: 0.01, cold_email: 0.01, chars: 240 },
  email: { reasons: ["free_provider"] },
  ip: { datacenter: false, vpn: false, proxy: false, scanner: false },
  honeypotFilled: false,
  elapsedMs: 35_000,
  ua: { present: true, automation: false, bot: false, client: null },
  challenge: null,
  beacon: { tokenValid: true, strongTells: false, verdictScore: 0.047 },
};
const score = (patch: Partial<CheckInput>, base: CheckInput = clean) => fuseCheck({ ...base, ...patch }).score;

describe("fuseCheck", () => {
  it("with no evidence the score is the base rate, with zero confidence", () => {
    const r = fuseCheck(none);
    expect(r.score).toBeCloseTo(BASE_RATE, 4);
    expect(r.rule_matches).toEqual([]);
    expect(r.confidence).toBe(0);
    expect(r.decision).toBe("allow");
  });

  it("a clean submission with every signal is allowed with high confidence", () => {
    const r = fuseCheck(clean);
    expect(r.score).toBeLessThan(0.05);
    expect(r.decision).toBe("allow");
    expect(r.confidence).toBeGreaterThan(0.9);
  });

  it("the content model's calibrated probability carries through when it is the only signal", () => {
    for (const p of [0.03, 0.3, 0.6, 0.9]) {
      const r = fuseCheck({ ...none, content: { spam_probability: p, fraud: 0, cold_email: 0, chars: 300 } });
      expect(r.score).toBeCloseTo(p, 3);
      expect(r.rule_matches[0]).toMatchObject({ rule: "content_model", signal: "content" });
    }
  });

  it("each risk signal moves the score up, each reassuring one down", () => {
    const base = score({});
    expect(score({ honeypotFilled: true })).toBeGreaterThan(0.45);
    expect(score({ elapsedMs: 800 })).toBeGreaterThan(base);
    expect(score({ elapsedMs: 2500 })).toBeGreaterThan(base);
    expect(score({ elapsedMs: 800 })).toBeGreaterThan(score({ elapsedMs: 2500 }));
    expect(score({ elapsedMs: 3 * 86_400_000 })).toBeGreaterThan(base);
    expect(score({ elapsedMs: -120_000 })).toBeGreaterThan(base);
    expect(score({ ua: { present: true, automation: true, bot: false, client: null } })).toBeGreaterThan(base);
    expect(score({ ua: { present: false, automation: false, bot: false, client: null } })).toBeGreaterThan(base);
    expect(score({ ua: { present: true, automation: false, bot: false, client: "library" } })).toBeGreaterThan(base);
    expect(score({ email: { reasons: ["disposable_domain"] } })).toBeGreaterThan(base);
    expect(score({ email: { reasons: ["invalid_syntax"] } })).toBeGreaterThan(score({ email: { reasons: ["possible_typo"] } }));
    expect(score({ ip: { datacenter: true, vpn: false, proxy: false, scanner: false } })).toBeGreaterThan(base);
    expect(score({ ip: { datacenter: false, vpn: false, proxy: true, scanner: false } })).toBeGreaterThan(base);
    expect(score({ beacon: { tokenValid: true, strongTells: true, verdictScore: 0.95 } })).toBeGreaterThan(0.45);
    expect(score({ beacon: { tokenValid: false, strongTells: false, verdictScore: null } })).toBeGreaterThan(base);
    expect(score({ beacon: { tokenValid: true, strongTells: false, verdictScore: 0.9 } })).toBeGreaterThan(base);
    const spammy: CheckInput = { ...clean, content: { spam_probability: 0.6, fraud: 0.1, cold_email: 0.1, chars: 200 } };
    expect(score({ challenge: { valid: true, reason: null } }, spammy)).toBeLessThan(score({}, spammy));
    expect(score({ challenge: { valid: false, reason: "bad_signature" } }, spammy)).toBeGreaterThan(score({}, spammy));
    expect(score({ challenge: { valid: false, reason: "already_used" } }, spammy)).toBeGreaterThan(score({ challenge: { valid: false, reason: "bad_signature" } }, spammy));
  });

  it("caps overlapping IP flags", () => {
    const r = fuseCheck({ ...none, ip: { datacenter: true, vpn: true, proxy: true, scanner: true } });
    const ipTotal = r.rule_matches.filter((m) => m.signal === "ip").reduce((s, m) => s + m.contribution, 0);
    expect(ipTotal).toBeCloseTo(FUSION_WEIGHTS.ip_contribution_cap, 6);
  });

  it("explains every contribution, largest first, and the score is their sum", () => {
    const r = fuseCheck({ ...clean, honeypotFilled: true, email: { reasons: ["disposable_domain"] }, elapsedMs: 900 });
    expect(r.rule_matches.map((m) => m.rule)).toEqual(expect.arrayContaining(["honeypot_filled", "email_disposable", "submit_too_fast", "content_model"]));
    const abs = r.rule_matches.map((m) => Math.abs(m.contribution));
    expect([...abs].sort((a, b) => b - a)).toEqual(abs);
    const total = r.rule_matches.reduce((s, m) => s + m.contribution, 0);
    expect(r.score).toBeCloseTo(1 / (1 + Math.exp(-(Math.log(BASE_RATE / (1 - BASE_RATE)) + total))), 3);
    expect(r.decision).toBe("block");
  });

  it("categories: spam is the fused score, cold_email from the content, fraud moved by email and IP", () => {
    const r = fuseCheck({ ...clean, content: { spam_probability: 0.5, fraud: 0.2, cold_email: 0.7, chars: 200 } });
    expect(r.categories.spam).toBe(r.score);
    expect(r.categories.cold_email).toBe(0.7);
    const risky = fuseCheck({ ...clean, content: { spam_probability: 0.5, fraud: 0.2, cold_email: 0.7, chars: 200 }, email: { reasons: ["disposable_domain"] } });
    expect(risky.categories.fraud).toBeGreaterThan(r.categories.fraud);
  });

  it("decides by the documented thresholds", () => {
    expect(decide(0.4499)).toBe("allow");
    expect(decide(0.45)).toBe("review");
    expect(decide(0.7999)).toBe("review");
    expect(decide(0.8)).toBe("block");
  });

  it("confidence grows with text length and with each signal family", () => {
    const short = confidenceOf({ ...none, content: { spam_probability: 0.5, fraud: 0, cold_email: 0, chars: 20 } });
    const long = confidenceOf({ ...none, content: { spam_probability: 0.5, fraud: 0, cold_email: 0, chars: 400 } });
    expect(long).toBeGreaterThan(short);
    expect(confidenceOf({ ...none, email: { reasons: [] } })).toBe(0.2);
    expect(confidenceOf(clean)).toBe(1);
  });
});
