/**
 * An org model compiled for scoring checks (front thread): each counted feature's naive Bayes
 * log-ratio and its weight folded into one number once (b · ratio + weight), so a check costs
 * one hash lookup per distinct word of its text, as with naive Bayes alone, and allocates nothing.
 */
import { MAX_TEXT_FEATURES, decodeFeaturesInto, type ContentEvidence } from "../content/evidence.js";
import { DECISION_THRESHOLDS } from "../check.js";
import { ORG_MODEL_SETTINGS, oneSided, priorCalibration, type OrgModel, type OrgModelSettings } from "./model.js";

export interface OrgScorer {
  /** The model's version (feedback applied), as answers name it (`+org:<version>`). */
  version: number;
  /** The org model's probability of spam for a text's evidence; the global one when the evidence is damaged. */
  probability(evidence: ContentEvidence): number;
}

/** The features of the text being scored (checks on one thread are scored one at a time). */
const features = new Int32Array(MAX_TEXT_FEATURES);

/**
 * The highest probability a one-sided model gives a text the global model scores below the review
 * threshold (and the review threshold the lowest it gives one scored at or above it): one-sided
 * labels move a text within its side of the threshold, never across it (model.ts oneSided).
 */
export const ONE_SIDED_CEILING = DECISION_THRESHOLDS.review - 0.001;

/**
 * Compiles `model`; same scores as orgLogit(model, g, nbScore, deltaScore) (model.ts), up to
 * rounding, but for a one-sided model (fewer than ORG_MODEL_MIN_PER_CLASS labels of a class),
 * whose probability stays on the global model's side of the review threshold.
 */
export function compileOrgModel(model: OrgModel, settings: OrgModelSettings = ORG_MODEL_SETTINGS): OrgScorer {
  const { alpha } = settings;
  // A model stored before the one-sided rule may carry a calibration fitted on one class: not used.
  const sided = oneSided(model);
  const { a, b, c } = sided ? priorCalibration(settings) : model.calibration;
  const review = DECISION_THRESHOLDS.review;
  const spamDen = Math.log(model.spam + 2 * alpha);
  const hamDen = Math.log(model.ham + 2 * alpha);
  const table = new FeatureTable(model.counts.size);
  for (const [f, [s, h, w]] of model.counts) table.set(f, b * (Math.log(s + alpha) - spamDen - Math.log(h + alpha) + hamDen) + w);
  return {
    version: model.version,
    probability(evidence) {
      const n = decodeFeaturesInto(evidence.features, features);
      if (n < 0) return 1 / (1 + Math.exp(-evidence.logit));
      let sum = 0;
      for (let i = 0; i < n; i++) sum += table.get(features[i]!);
      const p = 1 / (1 + Math.exp(-(a * evidence.logit + c + sum / Math.sqrt(Math.max(n, settings.nbFloor)))));
      if (!sided) return p;
      return 1 / (1 + Math.exp(-evidence.logit)) < review ? Math.min(p, ONE_SIDED_CEILING) : Math.max(p, review);
    },
  };
}

/**
 * Feature number (non-negative) -> its number in the sum, 0 for a feature not in it: open
 * addressing with linear probing in typed arrays, at most half full (a check's lookups cost a
 * few nanoseconds each, a third of a Map's at an org model's bounds).
 */
class FeatureTable {
  private readonly keys: Int32Array;
  private readonly values: Float64Array;
  private readonly mask: number;
  private readonly shift: number;

  constructor(size: number) {
    let bits = 4;
    while (1 << bits < size * 2) bits++;
    this.keys = new Int32Array(1 << bits).fill(-1);
    this.values = new Float64Array(1 << bits);
    this.mask = (1 << bits) - 1;
    this.shift = 32 - bits;
  }

  set(key: number, value: number): void {
    let i = Math.imul(key, 0x9e3779b1) >>> this.shift;
    while (this.keys[i] !== -1 && this.keys[i] !== key) i = (i + 1) & this.mask;
    this.keys[i] = key;
    this.values[i] = value;
  }

  get(key: number): number {
    let i = Math.imul(key, 0x9e3779b1) >>> this.shift;
    for (;;) {
      const k = this.keys[i]!;
      if (k === key) return this.values[i]!;
      if (k === -1) return 0;
      i = (i + 1) & this.mask;
    }
  }
}
