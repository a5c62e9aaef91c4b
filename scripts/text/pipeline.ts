/**
 * The content model's training pipeline, shared by scripts/train-content-model.ts and the unit
 * test that re-runs the paper protocol: sample weighting, fit, prune and quantise, calibrate,
 * score with the runtime classifier (so what is measured is what ships).
 */
import { rawLogit } from "../../src/scoring/content/classifier.js";
import { normaliseText } from "../../src/scoring/content/features.js";
import { MODEL_FORMAT, decodeModel, encodeModel, type DecodedModel } from "../../src/scoring/content/model-file.js";
import type { SourceName, TextRow } from "./corpora.js";
import { DEFAULT_TRAIN_OPTIONS, fitPlatt, quantise, trainLogistic, type Example, type FeatureCache, type TrainOptions } from "./logistic.js";
import { evaluate, type Metrics } from "./metrics.js";
import { seededShuffle, unitHash } from "./split.js";

/**
 * Share of the total training weight per source; within a source, spam and ham get half each.
 * Enron gets the most (varied mail, closest to the held-out mail); the SMS-like Turkish and
 * Indonesian sets less, so the model does not lean on their peculiarities; the contact-form
 * fragments are spam-only and not whole messages, so they get a token weight.
 */
export const SOURCE_WEIGHTS: Record<SourceName, number> = {
  sms: 1, youtube: 1, enron: 1, turkish: 0.6, indonesian: 0.4, contact_form: 0.15, sms_mt: 0,
  lingspam: 1, trec07p: 1, nazario: 0.5, newsgroups: 0.5, instagram: 1, janitr: 1, tg_chat: 0.4,
};

/** Non-zero weights kept after pruning (sets the model file size, ~3 bytes each). */
export const DEFAULT_KEEP = 80_000;

/**
 * How far each source's classes are balanced: a class's share of its source's weight is
 * proportional to count^(1 - CLASS_BALANCE); 1 = equal halves, 0 = natural proportions.
 */
export const CLASS_BALANCE = 1;

/** Examples with source-weighted, class-balanced sample weights (mean weight 1 over the set). */
export function weightExamples(rows: readonly TextRow[], sourceWeights: Record<SourceName, number> = SOURCE_WEIGHTS, classBalance = CLASS_BALANCE): Example[] {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(`${r.source}:${r.label}`, (counts.get(`${r.source}:${r.label}`) ?? 0) + 1);
  // A class a source lacks has no share, so a one-class source puts all its weight on its class.
  const share = (source: SourceName, label: number) => {
    const n = counts.get(`${source}:${label}`) ?? 0;
    return n === 0 ? 0 : n ** (1 - classBalance);
  };
  const raw = rows.map((r) => {
    const classShare = share(r.source, r.label) / (share(r.source, 0) + share(r.source, 1));
    return (sourceWeights[r.source] * classShare) / counts.get(`${r.source}:${r.label}`)!;
  });
  const mean = raw.reduce((a, b) => a + b, 0) / raw.length;
  return rows.map((r, i) => ({ text: r.text, label: r.label, weight: raw[i]! / mean }));
}

/** Fits, prunes and quantises; the result has identity calibration and no version yet. */
export function fitModel(rows: readonly TextRow[], opts: TrainOptions = DEFAULT_TRAIN_OPTIONS, keep = DEFAULT_KEEP, sourceWeights = SOURCE_WEIGHTS, classBalance = CLASS_BALANCE, cache?: FeatureCache): DecodedModel {
  const float = trainLogistic(weightExamples(rows, sourceWeights, classBalance), opts, cache);
  const q = quantise(float, keep);
  // Round-trip through the file format so the scorer reads exactly what would be written.
  const bytes = encodeModel({ format: MODEL_FORMAT, version: "unversioned", bits: opts.bits, scale: q.scale, bias: float.bias, calibration: { method: "platt", a: 1, b: 0 } }, q.weights);
  return decodeModel(bytes);
}

/** Raw logits of `rows` under `model`. */
export function rawLogits(model: DecodedModel, rows: readonly TextRow[]): number[] {
  return rows.map((r) => rawLogit(model, r.text));
}

/** Applies Platt parameters to raw logits. */
export function plattProbabilities(z: readonly number[], c: { a: number; b: number }): number[] {
  return z.map((v) => 1 / (1 + Math.exp(-(c.a * v + c.b))));
}

export type Split = "train" | "calibration" | "test";

/**
 * The production split: 70% train, 10% calibration, 20% test, by a hash of source + normalised
 * text, so texts that normalise alike (template spam, re-sent messages) never straddle splits.
 */
export function splitOf(row: TextRow): Split {
  const u = unitHash(`${row.source}\n${normaliseText(row.text)}`, "content-split-v1");
  return u < 0.7 ? "train" : u < 0.8 ? "calibration" : "test";
}

/** Published DocEng 2011 Table 7 best result (linear SVM, tok1). */
export const PAPER_BEST = { classifier: "Linear SVM (tok1)", accuracy: 0.9764, mcc: 0.893, spam_caught: 0.831, blocked_ham: 0.0018 } as const;

/**
 * Options for the paper protocol: the shipped settings with 6 passes instead of 2. The protocol
 * is in-distribution (SMS against SMS, 1,674 training texts), where more passes help; the
 * shipped model's 2 passes were chosen on the leave-one-source-out table, where fewer passes
 * generalise better to sources the model never saw.
 */
export const PAPER_TRAIN_OPTIONS: TrainOptions = { ...DEFAULT_TRAIN_OPTIONS, epochs: 6 };

/** Training rows of the paper's split. */
export const PAPER_TRAIN_ROWS = 1674;

export interface PaperResult {
  trainRows: number;
  testRows: number;
  calibration: { method: string; a: number; b: number };
  /** Operating threshold chosen from out-of-fold predictions within the 30% (chooseThreshold). */
  threshold: number;
  /** Test metrics at `threshold`. */
  metrics: Metrics;
  /** Test metrics at p >= 0.5, for reference. */
  metricsAtHalf: Metrics;
  /** Test probabilities and labels (for threshold sweeps and tests). */
  p: number[];
  y: number[];
}

/**
 * Almeida, Gómez Hidalgo & Yamakami (DocEng 2011) protocol: train on the first 30% of the SMS
 * Spam Collection in file order (ids sms-0001..sms-1674), test on the remaining 70%. Platt
 * calibration uses 5-fold out-of-fold logits within the 30% (each fold scored by a model fit on
 * the other four), then the final model is fit on the whole 30%. The operating threshold comes
 * from the same out-of-fold predictions (chooseThreshold); metrics at p >= 0.5 are kept too.
 */
export function runPaperProtocol(smsRows: readonly TextRow[], opts: TrainOptions = PAPER_TRAIN_OPTIONS, keep = DEFAULT_KEEP, classBalance = CLASS_BALANCE): PaperResult {
  const ordered = [...smsRows].sort((a, b) => Number(a.id.slice(4)) - Number(b.id.slice(4)));
  // The paper's 30%: 1,674 of 5,574 messages (rows 1,675-5,574 are its test set).
  const cut = PAPER_TRAIN_ROWS;
  if (ordered.length !== 5574) throw new Error(`paper protocol: expected 5,574 SMS rows, got ${ordered.length}`);
  const train = ordered.slice(0, cut);
  const test = ordered.slice(cut);
  const folds = 5;
  const shuffled = seededShuffle(train, opts.seed);
  const oofZ: number[] = [];
  const oofY: number[] = [];
  for (let k = 0; k < folds; k++) {
    const fitRows = shuffled.filter((_, i) => i % folds !== k);
    const heldRows = shuffled.filter((_, i) => i % folds === k);
    const m = fitModel(fitRows, opts, keep, SOURCE_WEIGHTS, classBalance);
    oofZ.push(...rawLogits(m, heldRows));
    oofY.push(...heldRows.map((r) => r.label));
  }
  const platt = fitPlatt(oofZ, oofY);
  const threshold = chooseThreshold(plattProbabilities(oofZ, platt), oofY, PAPER_BEST.blocked_ham);
  const model = fitModel(train, opts, keep, SOURCE_WEIGHTS, classBalance);
  const p = plattProbabilities(rawLogits(model, test), platt);
  const y = test.map((r) => r.label);
  return {
    trainRows: train.length,
    testRows: test.length,
    calibration: { method: "platt (5-fold out-of-fold, within the 30%)", ...platt },
    threshold,
    metrics: evaluate(p, y, threshold),
    metricsAtHalf: evaluate(p, y, 0.5),
    p,
    y,
  };
}

/**
 * The operating threshold, chosen on training data only: the smallest t in 0.50, 0.55, ..., 0.95
 * whose out-of-fold blocked-ham rate is at most `maxBlockedHam` (0.95 when none is).
 */
export function chooseThreshold(p: readonly number[], y: readonly number[], maxBlockedHam: number): number {
  for (let k = 10; k <= 19; k++) {
    const t = k / 20;
    if (evaluate(p, y, t).bh <= maxBlockedHam) return t;
  }
  return 0.95;
}
