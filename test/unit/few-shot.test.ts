import { describe, expect, it } from "vitest";
import { loadContentModel } from "../../src/scoring/content/index.js";
import { ORG_MODEL_SETTINGS } from "../../src/scoring/org-model/model.js";
import { feedThroughApplier, feedWithSettings, fewShotMeetsTargets, runFewShot, type EvidenceRow } from "../../scripts/text/few-shot.js";
import { MemoryDb } from "../../scripts/text/memory-store.js";

/** The few-shot evaluation (scripts/text/few-shot.ts): the writer's feedback path on in-memory databases. */
const content = loadContentModel();
const SPAM = ["bamboo flooring at factory prices, reply for a free sample", "premium bamboo decking wholesale from our factory, ask for the catalogue", "factory direct bamboo flooring for hotels, free samples today"];
const HAM = ["the bamboo chair I ordered arrived broken, please send a replacement", "when will my order of garden chairs be delivered?", "thanks, the table looks great in our kitchen"];
const rows: EvidenceRow[] = [];
for (let i = 0; i < 24; i++) {
  const spam = i % 2 === 1;
  const text = `${(spam ? SPAM : HAM)[i % 3]} (${i})`;
  rows.push({ id: `t${i}`, label: spam ? 1 : 0, evidence: content.analyzeWithEvidence(text).evidence });
}

describe("MemoryDb", () => {
  it("orders keys as LMDB does and honours start, end, reverse and limit", () => {
    const db = new MemoryDb<number, [string, number]>();
    for (const [k, v] of [[["b", 2], 3], [["a", 10], 2], [["a", 9], 1], [["c", 0], 4]] as Array<[[string, number], number]>) db.putSync(k, v);
    expect([...db.getRange()].map((r) => r.value)).toEqual([1, 2, 3, 4]);
    expect([...db.getRange({ start: ["a", 10], end: ["c", 0] })].map((r) => r.value)).toEqual([2, 3]);
    expect([...db.getRange({ reverse: true, limit: 2 })].map((r) => r.key)).toEqual([["c", 0], ["b", 2]]);
    db.removeSync(["b", 2]);
    expect(db.get(["b", 2])).toBeUndefined();
    expect([...db.getKeys()]).toHaveLength(3);
  });
});

describe("few-shot evaluation", () => {
  it("scores the same through the writer's feedback path as with learnFeedback directly", () => {
    const viaApplier = feedThroughApplier(rows.slice(0, 12));
    const direct = feedWithSettings(rows.slice(0, 12), ORG_MODEL_SETTINGS);
    for (const r of rows.slice(12)) expect(viaApplier(r.evidence)).toBeCloseTo(direct(r.evidence), 6);
    // With no label, the global model alone.
    expect(feedThroughApplier([])(rows[0]!.evidence)).toBeCloseTo(1 / (1 + Math.exp(-rows[0]!.evidence.logit)), 12);
  });

  it("reports every K per source and checks the K = 200 targets", () => {
    const table = runFewShot(new Map([["sms", rows]]), 2, feedThroughApplier, [0, 8]);
    expect(table.map((r) => [r.k, r.repeats, r.n])).toEqual([[0, 1, 24], [8, 2, 16]]);
    expect(table[1]!.auc).toBeGreaterThan(0.9);
    expect(fewShotMeetsTargets([{ ...table[1]!, k: 200, auc: 0.96, bh08: 0.005 }]).ok).toBe(true);
    expect(fewShotMeetsTargets([{ ...table[1]!, k: 200, auc: 0.94, bh08: 0.02 }]).failures).toHaveLength(2);
  });
});
