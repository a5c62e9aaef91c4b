import { describe, expect, it } from "vitest";
import { extractFeatures } from "../../src/scoring/content/features.js";
import { fitCalibration, plattEce, type SourceLogits } from "../../scripts/text/calibration.js";
import { DEFAULT_TRAIN_OPTIONS, nbLogCountRatios, trainLogistic, type Example } from "../../scripts/text/logistic.js";
import { seededRandom } from "../../scripts/text/split.js";

/** The content model's trainer (scripts/text/logistic.ts) and calibrations (scripts/text/calibration.ts). */
const BITS = 16;
const SPAM = ["win a free prize now", "cheap pills click here now", "free money claim your prize", "click here to win cash"];
const HAM = ["lunch at noon tomorrow", "the meeting notes are attached", "see you at the meeting", "notes from lunch today"];
const examples: Example[] = [...SPAM.map((text) => ({ text, label: 1 as const, weight: 1 })), ...HAM.map((text) => ({ text, label: 0 as const, weight: 1 }))];
const bucketsOf = (text: string) => {
  const f = extractFeatures(text, BITS);
  return [...f.indices.slice(0, f.total)];
};

describe("NB-weighted logistic regression (NBSVM)", () => {
  it("gives spam-only features a positive log-count ratio, ham-only ones a negative one, unseen buckets 0", () => {
    const r = nbLogCountRatios(examples, BITS, 1);
    const prize = bucketsOf("prize")[0]!;
    const meeting = bucketsOf("meeting")[0]!;
    expect(r[prize]).toBeGreaterThan(0);
    expect(r[meeting]).toBeLessThan(0);
    const seen = new Set(examples.flatMap((e) => bucketsOf(e.text)));
    for (let j = 0; j < r.length; j++) if (!seen.has(j)) expect(r[j]).toBe(0);
  });

  it("words-only scaling gives ratios to word features alone", () => {
    const r = nbLogCountRatios(examples, BITS, 1, undefined, true);
    const words = new Set(
      examples.flatMap((e) => {
        const f = extractFeatures(e.text, BITS);
        return [...f.indices.slice(0, f.words)];
      }),
    );
    for (let j = 0; j < r.length; j++) if (r[j] !== 0) expect(words.has(j)).toBe(true);
    expect(r[bucketsOf("prize")[0]!]).toBeGreaterThan(0);
  });

  it("folds the ratios into the weights: one weight per feature, none outside the training texts' features, spam above ham", () => {
    const opts = { ...DEFAULT_TRAIN_OPTIONS, bits: BITS, epochs: 4, nb: { alpha: 1, beta: 0.25 } };
    const m = trainLogistic(examples, opts);
    const seen = new Set(examples.flatMap((e) => bucketsOf(e.text)));
    for (let j = 0; j < m.weights.length; j++) if (m.weights[j] !== 0) expect(seen.has(j)).toBe(true);
    const score = (t: string) => bucketsOf(t).reduce((s, j) => s + m.weights[j]!, m.bias);
    expect(score("claim a free prize")).toBeGreaterThan(score("meeting notes for lunch"));
    // beta = 0: every weight is the NB ratio times one constant (the mean weight magnitude).
    const nbOnly = trainLogistic(examples, { ...opts, nb: { alpha: 1, beta: 0 } });
    const r = nbLogCountRatios(examples, BITS, 1);
    const j0 = bucketsOf("prize")[0]!;
    const k = nbOnly.weights[j0]! / r[j0]!;
    expect(k).toBeGreaterThan(0);
    for (const j of seen) expect(nbOnly.weights[j]!).toBeCloseTo(k * r[j]!, 5);
  });
});

describe("calibration objectives", () => {
  // Two sources with one ranking and different spam rates (20% and 60%).
  const rand = seededRandom(7);
  const source = (rate: number): SourceLogits => {
    const y = Array.from({ length: 2000 }, () => (rand() < rate ? 1 : 0));
    return { y, z: y.map((v) => (v ? 1 : -1) + 2 * (rand() - 0.5) * 2.5) };
  };
  const parts = [source(0.2), source(0.6)];

  it("the worst-source objective has a worst per-source ECE no higher than the pooled fit's", () => {
    const worst = (c: { a: number; b: number }) => Math.max(...parts.map((p) => plattEce(p, c)));
    const pooled = fitCalibration(parts, "pooled");
    const minMax = fitCalibration(parts, "max-source-ece");
    expect(worst(minMax)).toBeLessThanOrEqual(worst(pooled) + 1e-12);
    for (const objective of ["pooled", "source-weighted", "mean-source-ece"] as const) {
      const c = fitCalibration(parts, objective);
      expect(Number.isFinite(c.a) && Number.isFinite(c.b), objective).toBe(true);
    }
  });
});
