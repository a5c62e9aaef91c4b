import { describe, expect, it } from "vitest";
import { ReplayTally } from "../../src/scoring/replay.js";

describe("ReplayTally", () => {
  it("counts changes by transition and by each dimension, most frequent first, with the first examples", () => {
    const t = new ReplayTally<string>(["kind", "reason"], 2);
    const rows: Array<[string, string, string, string]> = [
      ["allow", "allow", "browser", "score"],
      ["review", "block", "ai_crawler", "kinds.ai_crawler"],
      ["review", "block", "ai_crawler", "kinds.ai_crawler"],
      ["review", "block", "ai_crawler", "kinds.ai_crawler"],
      ["allow", "block", "search_crawler", "bots.googlebot"],
    ];
    rows.forEach(([from, to, kind, reason], i) => t.scan(from, to, () => ({ kind, reason }), () => `e${i}`));
    expect(t.count).toBe(5);
    expect(t.summary()).toEqual({
      scanned: 5,
      changed: 4,
      transitions: [
        { from: "review", to: "block", count: 3 },
        { from: "allow", to: "block", count: 1 },
      ],
      groups: {
        kind: [
          { key: "ai_crawler", count: 3, examples: ["e1", "e2"] },
          { key: "search_crawler", count: 1, examples: ["e4"] },
        ],
        reason: [
          { key: "kinds.ai_crawler", count: 3, examples: ["e1", "e2"] },
          { key: "bots.googlebot", count: 1, examples: ["e4"] },
        ],
      },
    });
  });

  it("makes keys and examples only for changed items, and each example once", () => {
    let made = 0;
    const t = new ReplayTally<number>(["a", "b"], 5);
    t.scan("allow", "allow", () => { throw new Error("keys of an unchanged item"); }, () => { throw new Error("example of an unchanged item"); });
    t.scan("allow", "review", () => ({ a: "x", b: "y" }), () => ++made);
    expect(made).toBe(1);
    expect(t.summary().groups).toEqual({ a: [{ key: "x", count: 1, examples: [1] }], b: [{ key: "y", count: 1, examples: [1] }] });
  });

  it("rejects a negative example limit", () => {
    expect(() => new ReplayTally([], -1)).toThrow(/examplesPerGroup/);
  });
});
