/**
 * Trainer for the content model: L2-regularised logistic regression over the hashed features of
 * src/scoring/content/features.ts, fit by AdaGrad in seeded order, then pruned and quantised to
 * int8, and Platt calibration fit on separate data.
 */
import { NORM_FLOOR, extractFeatures, namespaceValue } from "../../src/scoring/content/features.js";
import { seededShuffle } from "./split.js";

/** One training example. */
export interface Example {
  text: string;
  label: 0 | 1;
  /** Sample weight (class and source balance). */
  weight: number;
}

export interface TrainOptions {
  bits: number;
  epochs: number;
  /** AdaGrad base learning rate. */
  learningRate: number;
  /** L2 penalty per update on the touched weights ("lazy" L2). */
  l2: number;
  seed: number;
  /** Train on the word namespace only (character n-gram weights stay 0). */
  wordsOnly?: boolean;
  /**
   * NB-weighted logistic regression (Wang & Manning 2012, "NBSVM"): each feature is scaled by its
   * naive Bayes log-count ratio from the training examples (smoothing `alpha`) before the fit,
   * and the fitted weights are interpolated towards their mean magnitude, w' = (1 - beta) mean|w|
   * + beta w. The ratios are folded into the returned weights, so scoring is unchanged.
   * `wordsOnly`: only the word features are NB-scaled (the character n-grams stay plain).
   */
  nb?: { alpha: number; beta: number; wordsOnly?: boolean };
}

/**
 * The shipped settings. `nb`: word features NB-scaled (alpha 1, beta 0.25), chosen by
 * leave-one-source-out (docs/content-model.md): mean AUC 0.7987 against 0.7881 without, worst
 * 0.6673 against 0.6248; NB-scaling the character n-grams too lost (mean 0.7851 at beta 0.25,
 * 0.7793 at beta 1).
 */
export const DEFAULT_TRAIN_OPTIONS: TrainOptions = { bits: 20, epochs: 2, learningRate: 0.25, l2: 1e-6, seed: 20260618, nb: { alpha: 1, beta: 0.25, wordsOnly: true } };

/** Float weights of a trained model. */
export interface FloatModel {
  bits: number;
  bias: number;
  weights: Float32Array;
}

/** Hashed features of one text, kept between epochs and folds (see FeatureCache). */
interface CachedFeatures {
  indices: Int32Array;
  words: number;
}

/** Features by text for one `bits` setting: training re-reads each text every epoch and every fold. */
export type FeatureCache = Map<string, CachedFeatures>;

function featuresOf(text: string, bits: number, cache: FeatureCache | undefined): CachedFeatures {
  const hit = cache?.get(text);
  if (hit) return hit;
  const f = extractFeatures(text, bits);
  const out = { indices: f.indices.slice(0, f.total), words: f.words };
  cache?.set(text, out);
  return out;
}

/**
 * Naive Bayes log-count ratios per hashed feature: r = log((alpha + p) / |alpha + p|_1) -
 * log((alpha + q) / |alpha + q|_1), p and q the sample-weighted counts of spam and ham texts
 * holding the feature (binarised per text, as Wang & Manning), norms over the features seen.
 * Features no training text holds get 0 (no weight at all, as in the plain fit).
 */
export function nbLogCountRatios(examples: readonly Example[], bits: number, alpha: number, cache?: FeatureCache, wordsOnly = false): Float32Array {
  const size = 2 ** bits;
  const p = new Float64Array(size);
  const q = new Float64Array(size);
  const seenIn = new Int32Array(size).fill(-1);
  examples.forEach((ex, n) => {
    const counts = ex.label === 1 ? p : q;
    const f = featuresOf(ex.text, bits, cache);
    for (const j of wordsOnly ? f.indices.subarray(0, f.words) : f.indices) {
      if (seenIn[j] === n) continue;
      seenIn[j] = n;
      counts[j] = counts[j]! + ex.weight;
    }
  });
  let sp = 0;
  let sq = 0;
  for (let j = 0; j < size; j++) {
    if (seenIn[j] === -1) continue;
    sp += alpha + p[j]!;
    sq += alpha + q[j]!;
  }
  const r = new Float32Array(size);
  for (let j = 0; j < size; j++) if (seenIn[j] !== -1) r[j] = Math.log((alpha + p[j]!) / sp) - Math.log((alpha + q[j]!) / sq);
  return r;
}

/** Fits the model. Deterministic for equal examples and options. */
export function trainLogistic(examples: readonly Example[], opts: TrainOptions = DEFAULT_TRAIN_OPTIONS, cache?: FeatureCache): FloatModel {
  const size = 2 ** opts.bits;
  const ratios = opts.nb ? nbLogCountRatios(examples, opts.bits, opts.nb.alpha, cache, opts.nb.wordsOnly) : null;
  // Buckets without a ratio are scaled by 1 when only the words are NB-scaled, else by 0 (no training text holds them).
  const r = ratios && opts.nb?.wordsOnly ? ratios.map((v) => (v === 0 ? 1 : v)) : ratios;
  const w = new Float32Array(size);
  const g2 = new Float32Array(size);
  let bias = 0;
  let biasG2 = 0;
  const { learningRate: lr, l2 } = opts;
  for (let epoch = 0; epoch < opts.epochs; epoch++) {
    const order = seededShuffle(examples, opts.seed + epoch);
    for (const ex of order) {
      const cached = featuresOf(ex.text, opts.bits, cache);
      const idx = cached.indices;
      const f = { words: cached.words, total: idx.length };
      const nc = f.total - f.words;
      const vw = namespaceValue(f.words, NORM_FLOOR.words);
      const vc = namespaceValue(nc, NORM_FLOOR.chars);
      let z = bias;
      for (let i = 0; i < f.words; i++) z += w[idx[i]!]! * vw * (r ? r[idx[i]!]! : 1);
      if (!opts.wordsOnly) for (let i = f.words; i < f.total; i++) z += w[idx[i]!]! * vc * (r ? r[idx[i]!]! : 1);
      const p = 1 / (1 + Math.exp(-z));
      const g = (p - ex.label) * ex.weight;
      const upto = opts.wordsOnly ? f.words : f.total;
      for (let i = 0; i < upto; i++) {
        const j = idx[i]!;
        const grad = g * (i < f.words ? vw : vc) * (r ? r[j]! : 1) + l2 * w[j]!;
        const acc = g2[j]! + grad * grad;
        g2[j] = acc;
        w[j] = w[j]! - (lr * grad) / Math.sqrt(acc + 1e-8);
      }
      biasG2 += g * g;
      bias -= (lr * g) / Math.sqrt(biasG2 + 1e-8);
    }
  }
  if (ratios && opts.nb) foldNbRatios(w, ratios, opts.nb.beta, opts.nb.wordsOnly ?? false);
  return { bits: opts.bits, bias, weights: w };
}

/**
 * Folds the NB scaling into the weights in place: w_j <- ((1 - beta) mean|w| + beta w_j) r_j, the
 * mean over the features the training texts hold (r_j != 0), so the served model stays one weight
 * per feature. `keepUnscaled` leaves the weights without a ratio as they are (words-only scaling).
 */
function foldNbRatios(w: Float32Array, r: Float32Array, beta: number, keepUnscaled: boolean): void {
  let sum = 0;
  let n = 0;
  for (let j = 0; j < w.length; j++) {
    if (r[j] === 0) continue;
    sum += Math.abs(w[j]!);
    n++;
  }
  const mean = n ? sum / n : 0;
  for (let j = 0; j < w.length; j++) if (!keepUnscaled || r[j] !== 0) w[j] = ((1 - beta) * mean + beta * w[j]!) * r[j]!;
}

/**
 * Keeps the `keep` largest weights by magnitude and quantises them to int8 with a step that
 * maps the 99.95th percentile of the kept magnitudes to 127 (the few larger ones are clipped).
 * Returns the int8 weights and the step.
 */
export function quantise(model: FloatModel, keep: number): { weights: Int8Array; scale: number; kept: number } {
  const mags: number[] = [];
  for (let i = 0; i < model.weights.length; i++) if (model.weights[i] !== 0) mags.push(Math.abs(model.weights[i]!));
  mags.sort((a, b) => b - a);
  const cutoff = mags.length > keep ? mags[keep - 1]! : 0;
  const top = mags.slice(0, keep);
  const ref = top[Math.floor(top.length * 0.0005)] ?? 1;
  const scale = ref / 127;
  const out = new Int8Array(model.weights.length);
  let kept = 0;
  for (let i = 0; i < model.weights.length; i++) {
    const v = model.weights[i]!;
    if (v === 0 || Math.abs(v) < cutoff) continue;
    const q = Math.max(-127, Math.min(127, Math.round(v / scale)));
    out[i] = q;
    if (q !== 0) kept++;
  }
  return { weights: out, scale, kept };
}

/**
 * Platt scaling: fits p = 1 / (1 + exp(-(a z + b))) to raw logits z by Newton's method on the
 * weighted log-loss, with Platt's smoothed targets (N+ + 1)/(N+ + 2) and 1/(N- + 2) against
 * over-confidence on small sets. Optional per-row weights `w` (the smoothing then counts weight).
 */
export function fitPlatt(z: readonly number[], y: readonly number[], w?: readonly number[]): { a: number; b: number } {
  // Weights are rescaled to mean 1, so the smoothing counts texts, not weight.
  const wMean = w ? w.reduce((a, b) => a + b, 0) / w.length : 1;
  const weight = (i: number) => (w ? w[i]! / wMean : 1);
  let pos = 0;
  let neg = 0;
  for (let i = 0; i < y.length; i++) {
    if (y[i] === 1) pos++;
    else neg++;
  }
  const tPos = (pos + 1) / (pos + 2);
  const tNeg = 1 / (neg + 2);
  let a = 1;
  let b = 0;
  for (let iter = 0; iter < 100; iter++) {
    let ga = 0, gb = 0, haa = 0, hab = 0, hbb = 0;
    for (let i = 0; i < z.length; i++) {
      const t = y[i] === 1 ? tPos : tNeg;
      const p = 1 / (1 + Math.exp(-(a * z[i]! + b)));
      const wi = weight(i);
      const d = (p - t) * wi;
      const s = Math.max(p * (1 - p), 1e-12) * wi;
      ga += d * z[i]!;
      gb += d;
      haa += s * z[i]! * z[i]!;
      hab += s * z[i]!;
      hbb += s;
    }
    haa += 1e-9;
    hbb += 1e-9;
    const det = haa * hbb - hab * hab;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    a -= da;
    b -= db;
    if (Math.abs(da) < 1e-10 && Math.abs(db) < 1e-10) break;
  }
  return { a, b };
}
