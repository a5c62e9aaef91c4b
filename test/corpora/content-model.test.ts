import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONTENT_MODEL_DIR, contentModelFrom, loadContentModel } from "../../src/scoring/content/index.js";
import { decodeModel } from "../../src/scoring/content/model-file.js";
import { loadCorpora } from "../../scripts/text/corpora.js";
import { evaluate } from "../../scripts/text/metrics.js";
import { PAPER_BEST, plattProbabilities, rawLogits, runPaperProtocol, splitOf } from "../../scripts/text/pipeline.js";
import { textCorporaDir } from "./dirs.js";

const TEXT = textCorporaDir();
const manifest = JSON.parse(readFileSync(join(CONTENT_MODEL_DIR, "manifest.json"), "utf8")) as {
  version: string;
  calibration: { a: number; b: number };
  metrics: { test: { ece: number; auc: number } };
};

describe("held-out evaluation on the labelled corpora", () => {
  it("is calibrated on the held-out test split: ECE < 0.02, AUC > 0.99, as in the manifest", () => {
    const { rows } = loadCorpora(TEXT, ["sms", "youtube", "enron", "turkish", "indonesian"]);
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
    const { rows } = loadCorpora(TEXT, ["sms"]);
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

