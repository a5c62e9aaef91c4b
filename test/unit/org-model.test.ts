import { describe, expect, it } from "vitest";
import { loadContentModel } from "../../src/scoring/content/index.js";
import { decodeFeatures, encodeFeatures } from "../../src/scoring/content/evidence.js";
import { decodeOrgModel, encodeOrgModel } from "../../src/scoring/org-model/codec.js";
import { ORG_MODEL_LIMITS, ORG_MODEL_SETTINGS, emptyOrgModel, fitCalibration, learnFeedback, nbScore, orgLogit, type OrgModel } from "../../src/scoring/org-model/model.js";
import { compileOrgModel } from "../../src/scoring/org-model/scorer.js";

const content = loadContentModel();
const evidence = (text: string) => content.analyzeWithEvidence(text).evidence;
const example = (key: string, text: string) => {
  const e = evidence(text);
  return { key, g: e.logit, features: decodeFeatures(e.features)! };
};
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
    expect(flipped.counts).toEqual(direct.counts);
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
    expect(() => decodeOrgModel(Buffer.from("FSOM"))).toThrow(/bad magic/);
  });

  it("compiles to the same score as nbScore and orgLogit", () => {
    const m = learnAll(emptyOrgModel(), [...SPAMS, ...HAMS]);
    const e = evidence("bamboo flooring delivered to the hotel, thanks");
    const f = decodeFeatures(e.features)!;
    expect(compileOrgModel(m).probability(e)).toBeCloseTo(1 / (1 + Math.exp(-orgLogit(m, e.logit, nbScore(m, f)))), 12);
  });

  it("stays within its bounds", () => {
    let m = emptyOrgModel();
    for (let i = 0; i < ORG_MODEL_LIMITS.recent + 5; i++) {
      const features = Int32Array.from({ length: 40 }, (_, j) => i * 40 + j);
      m = learnFeedback(m, { key: `k${i}`, g: 0, features }, i % 2 === 0, null).model;
    }
    expect(m.counts.size).toBeLessThanOrEqual(ORG_MODEL_LIMITS.features);
    expect(m.recent).toHaveLength(ORG_MODEL_LIMITS.recent);
    expect(encodeOrgModel(m).length).toBeLessThan(200_000);
  });
});
