import { describe, expect, it } from "vitest";
import { loadContentModel } from "../../src/scoring/content/index.js";
import { MAX_TEXT_FEATURES, decodeFeatures, decodeFeaturesInto, encodeFeatures } from "../../src/scoring/content/evidence.js";
import { decodeOrgModel, encodeOrgModel } from "../../src/scoring/org-model/codec.js";
import { ORG_MODEL_LIMITS, ORG_MODEL_SETTINGS, deltaBound, deltaScore, emptyOrgModel, fitCalibration, learnFeedback, nbScore, orgLogit, type OrgModel } from "../../src/scoring/org-model/model.js";
import { compileOrgModel } from "../../src/scoring/org-model/scorer.js";

const content = loadContentModel();
const evidence = (text: string) => content.analyzeWithEvidence(text).evidence;
const example = (key: string, text: string) => {
  const e = evidence(text);
  return { key, g: e.logit, features: decodeFeatures(e.features)! };
};
/** The model's non-zero weights, [feature, weight]. */
const weightsOf = (m: OrgModel): Array<[number, number]> => [...m.counts].filter(([, c]) => c[2] !== 0).map(([f, c]) => [f, c[2]]);
/** Its counts without the weights, [feature, spam, ham], by feature. */
const countsOf = (m: OrgModel): Array<[number, number, number]> => [...m.counts].map(([f, c]): [number, number, number] => [f, c[0], c[1]]).sort((x, y) => x[0] - y[0]);
const learnAll = (m: OrgModel, items: Array<[string, string, boolean]>): OrgModel => items.reduce((acc, [k, t, s]) => learnFeedback(acc, example(k, t), s, null).model, m);

const SPAMS: Array<[string, string, boolean]> = [
  ["s1", "Premium bamboo flooring at factory prices for hotels, reply for a free sample pack", true],
  ["s2", "Our factory sells bamboo decking and flooring wholesale, ask for the catalogue", true],
  ["s3", "Bamboo flooring for offices and hotels straight from the factory, free samples", true],
];
const HAMS: Array<[string, string, boolean]> = [
  ["h1", "Hi, the bamboo chair I ordered arrived broken, can you send a replacement?", false],
  ["h2", "Could you tell me when my order of garden chairs will be delivered?", false],
  ["h3", "Thanks for the quick delivery, the table looks great in our kitchen", false],
];

describe("evidence", () => {
  it("gives the same probability as analyze(), and features that round-trip", () => {
    const text = "Hello, we supply premium bamboo flooring for hotels at factory prices.";
    const r = content.analyzeWithEvidence(text);
    expect(r.analysis).toEqual(content.analyze(text));
    const f = decodeFeatures(r.evidence.features)!;
    expect(f.length).toBeGreaterThan(10);
    for (let i = 1; i < f.length; i++) expect(f[i]!).toBeGreaterThan(f[i - 1]!);
    expect(encodeFeatures(f)).toBe(r.evidence.features);
    expect(1 / (1 + Math.exp(-r.evidence.logit))).toBeCloseTo(r.analysis.spam_probability, 3);
  });

  it("refuses an encoding that is not one", () => {
    expect(decodeFeatures(Buffer.from([0x80, 0x80]).toString("base64"))).toBeNull();
    expect(decodeFeatures(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).toString("base64"))).toBeNull();
    const out = new Int32Array(MAX_TEXT_FEATURES);
    expect(decodeFeaturesInto("A".repeat(10_000), out)).toBe(-1);
    expect(decodeFeatures(encodeFeatures(Int32Array.from({ length: MAX_TEXT_FEATURES + 1 }, (_, i) => i)))).toBeNull();
  });

  it("decodes into a reused array what decodeFeatures returns, without keeping the previous text's features", () => {
    const out = new Int32Array(MAX_TEXT_FEATURES);
    const long = Int32Array.from({ length: MAX_TEXT_FEATURES }, (_, i) => i * 4099 + (i % 7));
    const short = Int32Array.from([3, 200, 70_000, 2 ** 31 - 1]);
    expect(decodeFeaturesInto(encodeFeatures(long), out)).toBe(long.length);
    expect(out.subarray(0, long.length)).toEqual(long);
    expect(decodeFeaturesInto(encodeFeatures(short), out)).toBe(4);
    expect(out.subarray(0, 4)).toEqual(short);
    expect(decodeFeatures(encodeFeatures(short))).toEqual(short);
  });
});

describe("org model", () => {
  it("starts as the global model: no counts, no change to any score", () => {
    const m = emptyOrgModel();
    const e = example("x", SPAMS[0]![1]);
    expect(nbScore(m, e.features)).toBe(0);
    expect(orgLogit(m, e.g, 0)).toBeCloseTo(e.g, 6);
    expect(fitCalibration([])).toEqual({ a: 1, b: ORG_MODEL_SETTINGS.priorB, c: 0 });
  });

  it("learns: similar text moves towards the labels, unrelated text barely moves", () => {
    const m = learnAll(emptyOrgModel(), [...SPAMS, ...HAMS]);
    expect(m).toMatchObject({ version: 6, spam: 3, ham: 3 });
    const s = compileOrgModel(m);
    const pitch = evidence("We sell bamboo flooring from our factory to hotels, free sample pack on request");
    const question = evidence("When will my chairs be delivered? I ordered them last week");
    const global = (e: { logit: number }) => 1 / (1 + Math.exp(-e.logit));
    expect(s.probability(pitch)).toBeGreaterThan(global(pitch) + 0.1);
    expect(s.probability(question)).toBeLessThan(global(question));
  });

  it("relabels exactly: spam then ham counts as ham alone", () => {
    const base = () => learnAll(emptyOrgModel(), HAMS);
    const flipped = learnFeedback(learnFeedback(base(), example("k", SPAMS[0]![1]), true, null).model, example("k", SPAMS[0]![1]), false, true).model;
    const direct = learnFeedback(base(), example("k", SPAMS[0]![1]), false, null).model;
    expect(countsOf(flipped)).toEqual(countsOf(direct));
    // The example's features keep a weight through the relabel (its counts passed through zero).
    expect(weightsOf(flipped).length).toBe(flipped.counts.size);
    expect([flipped.spam, flipped.ham]).toEqual([direct.spam, direct.ham]);
    expect(flipped.recent).toHaveLength(direct.recent.length);
    expect(flipped.recent.at(-1)!.spam).toBe(false);
  });

  it("stores losslessly, and a model read back learns exactly as the one in memory", () => {
    const m = learnAll(emptyOrgModel(), [...SPAMS, ...HAMS.slice(0, 2)]);
    const bytes = encodeOrgModel(m);
    const back = decodeOrgModel(bytes);
    expect(Buffer.compare(encodeOrgModel(back), bytes)).toBe(0);
    const next = example("h3", HAMS[2]![1]);
    expect(Buffer.compare(encodeOrgModel(learnFeedback(back, next, false, null).model), encodeOrgModel(learnFeedback(m, next, false, null).model))).toBe(0);
    expect(back.version).toBe(6);
    expect(weightsOf(back).length).toBeGreaterThan(0);
    expect(back.counts).toEqual(m.counts);
    expect(back.recent.map((r) => r.d)).toEqual(m.recent.map((r) => r.d));
    expect(() => decodeOrgModel(Buffer.from("FSOM"))).toThrow(/bad magic/);
    expect(() => decodeOrgModel(Buffer.concat([Buffer.from("FSOM"), Buffer.alloc(40)]).fill(3, 4, 5))).toThrow(/format 3/);
  });

  it("still loads a model stored in format 1 (before the weights): no weights, and it learns on as format 2", () => {
    const m = learnAll(emptyOrgModel(), [...SPAMS, ...HAMS.slice(0, 2)]);
    const v1 = encodeFormat1(m);
    const back = decodeOrgModel(v1);
    expect(weightsOf(back)).toEqual([]);
    expect(countsOf(back)).toEqual(countsOf(m));
    expect(back.calibration).toEqual(m.calibration);
    expect(back.recent.map((r) => [r.key, r.g, r.nb, r.d, r.spam])).toEqual(m.recent.map((r) => [r.key, r.g, r.nb, 0, r.spam]));
    // Scored as the format-1 model was: a · g + b · nb + c.
    const e = evidence("bamboo flooring delivered to the hotel, thanks");
    const f = decodeFeatures(e.features)!;
    expect(compileOrgModel(back).probability(e)).toBeCloseTo(1 / (1 + Math.exp(-(m.calibration.a * e.logit + m.calibration.b * nbScore(m, f) + m.calibration.c))), 12);
    const next = learnFeedback(back, example("h3", HAMS[2]![1]), false, null).model;
    const bytes = encodeOrgModel(next);
    expect(bytes[4]).toBe(2);
    expect(weightsOf(next).length).toBeGreaterThan(0);
    expect(decodeOrgModel(bytes)).toEqual(next);
  });

  it("compiles to the same score as nbScore, deltaScore and orgLogit", () => {
    const m = learnAll(emptyOrgModel(), [...SPAMS, ...HAMS]);
    const e = evidence("bamboo flooring delivered to the hotel, thanks");
    const f = decodeFeatures(e.features)!;
    expect(deltaScore(m, f)).not.toBe(0);
    expect(compileOrgModel(m).probability(e)).toBeCloseTo(1 / (1 + Math.exp(-orgLogit(m, e.logit, nbScore(m, f), deltaScore(m, f)))), 12);
  });

  it("scores as orgLogit at its bounds, for counted and unseen features alike; damaged evidence gets the global model", () => {
    let m = emptyOrgModel();
    let seed = 5;
    const rand = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const pick = (k: number): Int32Array => Int32Array.from(new Set(Array.from({ length: k }, () => Math.floor(rand() * 2 ** 22)))).sort();
    for (let i = 0; m.counts.size < ORG_MODEL_LIMITS.features * 0.9; i++) m = learnFeedback(m, { key: `k${i}`, g: rand() * 4 - 2, features: pick(80) }, rand() < 0.4, null).model;
    const scorer = compileOrgModel(m);
    const counted = [...m.counts.keys()];
    for (let t = 0; t < 200; t++) {
      const f = Int32Array.from(new Set([...pick(t % 50), ...Array.from({ length: t % 30 }, () => counted[Math.floor(rand() * counted.length)]!)])).sort();
      const g = rand() * 6 - 3;
      expect(scorer.probability({ logit: g, features: encodeFeatures(f) })).toBeCloseTo(1 / (1 + Math.exp(-orgLogit(m, g, nbScore(m, f), deltaScore(m, f)))), 9);
    }
    expect(scorer.probability({ logit: 0.3, features: Buffer.from([0x80]).toString("base64") })).toBeCloseTo(1 / (1 + Math.exp(-0.3)), 12);
  });

  it("weights correct naive Bayes where common words mislead it, and without them it is the counts alone", () => {
    // The org's spam is long, its ham short; both share the common features 0-9. Naive Bayes
    // sees the common features as spam evidence (most texts with them are long spam); the
    // weights learn that they are not, and long ham with only common words comes out lower.
    const items: Array<{ key: string; g: number; features: Int32Array; spam: boolean }> = [];
    for (let i = 0; i < 60; i++) {
      const spam = i % 3 === 0;
      const own = spam ? Array.from({ length: 30 }, (_, j) => 100 + ((i * 7 + j) % 40)) : Array.from({ length: 3 }, (_, j) => 1000 + ((i * 5 + j) % 200));
      items.push({ key: `k${i}`, g: 0, features: Int32Array.from(new Set([...Array.from({ length: spam ? 10 : 4 + (i % 6) }, (_, j) => j), ...own]), (v) => v).sort(), spam });
    }
    const learn = (settings: typeof ORG_MODEL_SETTINGS) => items.reduce((m, x) => learnFeedback(m, x, x.spam, null, settings).model, emptyOrgModel(settings));
    const withWeights = learn(ORG_MODEL_SETTINGS);
    const countsOnly = learn({ ...ORG_MODEL_SETTINGS, deltaRate: 0 });
    expect(weightsOf(countsOnly)).toEqual([]);
    const commonHam = Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1001, 1002]);
    const p = (m: OrgModel, f: Int32Array) => 1 / (1 + Math.exp(-orgLogit(m, 0, nbScore(m, f), deltaScore(m, f))));
    expect(p(withWeights, commonHam)).toBeLessThan(p(countsOnly, commonHam) - 0.05);
    expect(deltaScore(withWeights, commonHam)).toBeLessThan(0);
  });

  it("fits the calibration to the same optimum from a bad warm start as from the prior (no oscillation)", () => {
    // Well-separated labels (large |nb|): undamped Newton steps from a saturated start overshoot.
    let seed = 11;
    const rand = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const examples = Array.from({ length: 200 }, (_, i) => {
      const spam = i % 4 === 0;
      return { key: i, g: rand() * 4 - 3, nb: (spam ? 4 : -3) + rand() * 3, d: 0, spam };
    });
    const cold = fitCalibration(examples);
    for (const start of [{ a: 35.2, b: -24.5, c: -22.6 }, { a: -20, b: 20.2, c: 4 }, { a: 1, b: 60, c: 30 }]) {
      const warm = fitCalibration(examples, ORG_MODEL_SETTINGS, start);
      expect(warm.a).toBeCloseTo(cold.a, 3);
      expect(warm.b).toBeCloseTo(cold.b, 3);
      expect(warm.c).toBeCloseTo(cold.c, 3);
    }
    expect(cold.b).toBeGreaterThan(0);
  });

  it("keeps each weight within its bound, whatever the feedback", () => {
    let m = emptyOrgModel();
    const f = Int32Array.from({ length: 12 }, (_, j) => j);
    // The same text, labelled against the model each time (the largest steps), then relabelled back and forth.
    for (let i = 0; i < 400; i++) m = learnFeedback(m, { key: `k${i}`, g: i % 2 ? 8 : -8, features: f }, i % 2 === 0, null).model;
    for (let i = 0; i < 200; i++) m = learnFeedback(m, { key: "k0", g: 0, features: f }, i % 2 === 1, i % 2 === 0).model;
    expect(weightsOf(m).length).toBeGreaterThan(0);
    for (const [, w] of weightsOf(m)) expect(Math.abs(w)).toBeLessThanOrEqual(deltaBound());
    expect(deltaBound()).toBeCloseTo(1 / (ORG_MODEL_SETTINGS.deltaDecay * Math.sqrt(ORG_MODEL_SETTINGS.nbFloor)), 12);
  });

  it("stays within its bounds", () => {
    let m = emptyOrgModel();
    for (let i = 0; i < ORG_MODEL_LIMITS.recent + 5; i++) {
      const features = Int32Array.from({ length: 40 }, (_, j) => i * 40 + j);
      m = learnFeedback(m, { key: `k${i}`, g: 0, features }, i % 2 === 0, null).model;
    }
    expect(m.counts.size).toBeLessThanOrEqual(ORG_MODEL_LIMITS.features);
    expect(weightsOf(m).length).toBeGreaterThan(0);
    expect(m.recent).toHaveLength(ORG_MODEL_LIMITS.recent);
    expect(encodeOrgModel(m).length).toBeLessThan(200_000);
  });
});

/** The stored form before the weights (format 1, codec.ts), written as that reader's encoder did. */
function encodeFormat1(m: OrgModel): Buffer {
  const parts: number[] = [];
  const feats = [...m.counts.keys()].sort((x, y) => x - y);
  const varint = (v: number): void => {
    while (v >= 0x80) {
      parts.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    parts.push(v);
  };
  let last = 0;
  for (const f of feats) {
    varint(f - last);
    last = f;
    const [s, h] = m.counts.get(f)!;
    varint(s);
    varint(h);
  }
  const head = Buffer.alloc(5 + 24 + 4);
  head.write("FSOM", 0, "latin1");
  head.writeUInt8(1, 4);
  [m.version, m.spam, m.ham].forEach((v, i) => head.writeUInt32LE(v, 5 + 4 * i));
  [m.calibration.a, m.calibration.b, m.calibration.c].forEach((v, i) => head.writeFloatLE(v, 17 + 4 * i));
  head.writeUInt32LE(feats.length, 29);
  const tail = Buffer.alloc(4 + m.recent.length * 13);
  tail.writeUInt32LE(m.recent.length, 0);
  m.recent.forEach((r, i) => {
    const o = 4 + 13 * i;
    tail.writeUInt32LE(r.key, o);
    tail.writeFloatLE(r.g, o + 4);
    tail.writeFloatLE(r.nb, o + 8);
    tail.writeUInt8(r.spam ? 1 : 0, o + 12);
  });
  return Buffer.concat([head, Buffer.from(parts), tail]);
}
