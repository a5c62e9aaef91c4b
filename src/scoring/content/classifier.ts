/**
 * The spam classifier: a linear model over hashed word and character n-grams (features.ts),
 * with int8 weights, followed by Platt calibration. Pure and allocation-free per call.
 */
import { NORM_FLOOR, extractFeatures, namespaceValue, type FeatureList } from "./features.js";
import type { DecodedModel } from "./model-file.js";

/** Raw (uncalibrated) log-odds of spam for `text`. */
export function rawLogit(model: DecodedModel, text: string): number {
  return logitOfFeatures(model, extractFeatures(text, model.header.bits));
}

/** Raw log-odds of spam for features extracted from a text (extractFeatures). */
export function logitOfFeatures(model: DecodedModel, f: FeatureList): number {
  const { weights, header } = model;
  const idx = f.indices;
  let sw = 0;
  for (let i = 0; i < f.words; i++) sw += weights[idx[i]!]!;
  let sc = 0;
  for (let i = f.words; i < f.total; i++) sc += weights[idx[i]!]!;
  const nc = f.total - f.words;
  const z = sw * namespaceValue(f.words, NORM_FLOOR.words) + sc * namespaceValue(nc, NORM_FLOOR.chars);
  return header.bias + header.scale * z;
}

/** Platt-calibrated probability of spam for a raw logit. */
export function calibrate(model: DecodedModel, z: number): number {
  const { a, b } = model.header.calibration;
  return 1 / (1 + Math.exp(-(a * z + b)));
}

/** Calibrated probability that `text` is spam, in [0, 1]. */
export function spamProbability(model: DecodedModel, text: string): number {
  return calibrate(model, rawLogit(model, text));
}
