import { describe, expect, it } from "vitest";
import { DECISION_THRESHOLDS, decide } from "../../src/scoring/check.js";
import { MAGIC_EMAIL_DOMAINS, MAGIC_IPS, magicDecision } from "../../src/scoring/test-mode.js";

describe("magicDecision (test mode's magic inputs)", () => {
  it("decides each documented e-mail domain and IP, with a score inside the decision's band", () => {
    for (const [domain, decision] of Object.entries(MAGIC_EMAIL_DOMAINS)) {
      const m = magicDecision(`Someone@${domain.toUpperCase()}`, undefined)!;
      expect(m.decision).toBe(decision);
      expect(decide(m.score)).toBe(decision);
    }
    for (const [ip, decision] of Object.entries(MAGIC_IPS)) expect(magicDecision(undefined, ` ${ip} `)!.decision).toBe(decision);
    expect(DECISION_THRESHOLDS.block).toBeLessThan(0.99);
  });

  it("takes the strictest when several are given, and nothing for ordinary inputs", () => {
    expect(magicDecision("a@allow.fraudscore.test", "203.0.113.66")!.decision).toBe("block");
    expect(magicDecision("a@review.fraudscore.test", "203.0.113.11")!.decision).toBe("review");
    expect(magicDecision("jane@gmail.com", "8.8.8.8")).toBeNull();
    expect(magicDecision("block.fraudscore.test", undefined)).toBeNull();
    expect(magicDecision("a@sub.block.fraudscore.test", undefined)).toBeNull();
    expect(magicDecision(undefined, undefined)).toBeNull();
  });
});
