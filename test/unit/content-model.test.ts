import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/config/index.js";
import { CONTENT_MODEL_DIR, contentModelFrom, loadContentModel } from "../../src/scoring/content/index.js";
import { normaliseText } from "../../src/scoring/content/features.js";
import { decodeModel, encodeModel } from "../../src/scoring/content/model-file.js";
import { loadCorpora } from "../../scripts/text/corpora.js";
import { evaluate } from "../../scripts/text/metrics.js";
import { PAPER_BEST, plattProbabilities, rawLogits, runPaperProtocol, splitOf } from "../../scripts/text/pipeline.js";
import { crc32 } from "../../scripts/text/png.js";

const SHARED = join(REPO_ROOT, "../shared/data");
const hasCorpora = existsSync(join(SHARED, "text/sms_spam_collection.csv"));
const manifest = JSON.parse(readFileSync(join(CONTENT_MODEL_DIR, "manifest.json"), "utf8")) as {
  version: string;
  calibration: { a: number; b: number };
  metrics: { test: { ece: number; auc: number } };
};

describe("content model file", () => {
  it("loads, and its version matches manifest.json", () => {
    const model = loadContentModel();
    expect(model.version).toBe(manifest.version);
    expect(model.version).toMatch(/^content-1\.[0-9a-f]{12}$/);
  });

  it("round-trips through encode/decode byte for byte", () => {
    const bytes = readFileSync(join(CONTENT_MODEL_DIR, "model.bin"));
    const decoded = decodeModel(bytes);
    expect(Buffer.compare(encodeModel(decoded.header, decoded.weights), bytes)).toBe(0);
    expect(bytes.length).toBeLessThan(1_000_000);
  });

  it("refuses a file that is not a model", () => {
    expect(() => decodeModel(Buffer.from("not a model at all"))).toThrow(/bad magic/);
  });
});

describe("spam_probability", () => {
  const model = loadContentModel();
  const p = (t: string) => model.analyze(t).spam_probability;

  it("scores spam above ham", () => {
    const spam = [
      "WINNER!! You have been selected to receive a £900 prize reward! To claim call 09061701461. Claim code KL341. Valid 12 hours only.",
      "Check out my channel for free giveaways!!! subscribe and like, link in bio http://bit.ly/free-iphone",
      "Boost your website traffic! We offer cheap backlinks and guest posts, first page of Google guaranteed. Reply now.",
    ];
    const ham = [
      "Hi Anna, thanks for the quick reply. I'll bring the documents to the meeting on Tuesday.",
      "Could you tell me when my order will be delivered? I ordered the blue chair two weeks ago.",
      "This song always makes me think of summer, love it",
    ];
    for (const s of spam) expect(p(s)).toBeGreaterThan(0.8);
    for (const h of ham) expect(p(h)).toBeLessThan(0.5);
    expect(Math.min(...spam.map(p))).toBeGreaterThan(Math.max(...ham.map(p)));
  });

  it("adding spam cues moves the probability up", () => {
    const base = "Hello, I have a question about your opening hours on Saturday.";
    expect(p(`${base} Click here to claim your FREE prize now, txt WIN to 80082!`)).toBeGreaterThan(p(base));
  });

  it("is a probability for empty and odd input", () => {
    for (const t of ["", " ", "!!!", "😀😀", "a".repeat(20_000)]) {
      const v = p(t);
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1);
    }
  });

  it("normalises the raw and the preprocessed-mail styles alike", () => {
    expect(normaliseText("Visit http://www.Example.com/Offer NOW!!!")).toBe(normaliseText("visit http : / / www . example . com / offer now !"));
    expect(normaliseText("fr\u200bee £1000 &lt;#&gt; <br />ok")).toBe("free £ 0000 ok");
  });
});

describe.skipIf(!hasCorpora)("held-out evaluation (needs ../shared/data/text)", () => {
  it("is calibrated on the held-out test split: ECE < 0.02, AUC > 0.99, as in the manifest", () => {
    const { rows } = loadCorpora(SHARED, ["sms", "youtube", "enron", "turkish", "indonesian"]);
    const test = rows.filter((r) => splitOf(r) === "test");
    const model = loadContentModel();
    const decoded = decodeModel(readFileSync(join(CONTENT_MODEL_DIR, "model.bin")));
    const prob = plattProbabilities(rawLogits({ ...decoded, header: { ...decoded.header, calibration: { method: "platt", a: 1, b: 0 } } }, test), decoded.header.calibration);
    const m = evaluate(prob, test.map((r) => r.label));
    expect(m.ece).toBeLessThan(0.02);
    expect(m.auc!).toBeGreaterThan(0.99);
    expect(m.ece).toBeCloseTo(manifest.metrics.test.ece, 3);
    // The public analyze() agrees with the pipeline's scorer (up to its 4-decimal rounding).
    expect(model.analyze(test[0]!.text).spam_probability).toBeCloseTo(prob[0]!, 3);
    expect(contentModelFrom(decoded).version).toBe(manifest.version);
  });

  it("beats Almeida et al. (DocEng 2011) on their SMS protocol: accuracy and MCC higher, blocked ham no worse", () => {
    const { rows } = loadCorpora(SHARED, ["sms"]);
    const result = runPaperProtocol(rows);
    expect(result.trainRows).toBe(1674);
    expect(result.testRows).toBe(3900);
    expect(result.metrics.accuracy).toBeGreaterThan(PAPER_BEST.accuracy);
    expect(result.metrics.mcc).toBeGreaterThan(PAPER_BEST.mcc);
    expect(result.metrics.bh).toBeLessThanOrEqual(PAPER_BEST.blocked_ham);
    // At p >= 0.5 accuracy and MCC still beat the paper.
    expect(result.metricsAtHalf.accuracy).toBeGreaterThan(PAPER_BEST.accuracy);
    expect(result.metricsAtHalf.mcc).toBeGreaterThan(PAPER_BEST.mcc);
  });
});

describe("png encoder", () => {
  it("computes the standard CRC-32 and writes a valid reliability diagram", () => {
    expect(crc32(Buffer.from("123456789"))).toBe(0xcbf43926);
    const png = readFileSync(join(CONTENT_MODEL_DIR, "reliability.png"));
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
    expect(png.subarray(12, 16).toString("latin1")).toBe("IHDR");
  });
});
