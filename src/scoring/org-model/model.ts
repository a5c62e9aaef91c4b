/**
 * An org's own model: a correction on top of the global content model, learned from that org's
 * feedback (POST /v1/feedback). Pure and deterministic: the writer thread applies each feedback
 * with learnFeedback() and stores the result; the few-shot evaluation (scripts/text/few-shot.ts)
 * feeds labelled texts through the same function.
 *
 * The model (Wang & Manning 2012, "NB features" stacked on a strong baseline):
 *   logit_org(x) = a · g(x) + b · nb(x) + c + d(x)
 * - g(x): the global model's calibrated log-odds of the text (evidence.ts);
 * - nb(x): a naive Bayes log-likelihood ratio over the text's distinct word features, from the
 *   org's own counts of each feature in texts it labelled spam and ham, scaled by
 *   1/sqrt(max(features, NB_FLOOR)) so length is not evidence. Features the org never labelled
 *   add nothing, so a text unlike anything labelled keeps the global model's verdict;
 * - d(x): a discriminative correction, the sum of per-feature weights over the text's features
 *   with the same scaling as nb(x), learned online (one logistic-loss gradient step per
 *   feedback on the features of the example, from the org model's prediction before it; L2
 *   decay toward 0, i.e. toward the model without it). Naive Bayes counts every word as
 *   independent evidence, so words that are merely common in the org's (longer) spam push
 *   every longer ham text up; the weights learn where the sum is wrong. Only features the org
 *   counted carry a weight, each within ±deltaBound(settings);
 * - (a, b, c): the org's own calibration, fitted by Newton's method (regularised toward
 *   a = 1, b = PRIOR_B, c = 0, the global model) on the org's latest examples, each scored
 *   prequentially: its nb(x) and d(x) are the ones computed before it was learned, so the fit
 *   sees the model as it does on texts it has not learned.
 *
 * One-sided labels (docs/api.md, "The org's own model"): until the org has labelled at least
 * ORG_MODEL_MIN_PER_CLASS examples of each class, (a, b, c) stay at the prior's centre (labels of
 * one class only have no finite maximum-likelihood intercept: the fit would say how strong the
 * prior is, not what the org's traffic is), and the compiled scorer keeps a text on the global
 * model's side of the review threshold (scorer.ts): nb(x) and d(x) have no other class to compare
 * a word with, so words merely common to all the org's texts look like evidence of the one class.
 *
 * Counts are exact: a relabelled example moves its counts from one class to the other (its
 * weights take one more step, toward the new label). Size is bounded (ORG_MODEL_LIMITS): past
 * the feature cap the rarest features are dropped, with their weights.
 */

/** Bounds of one org's model (docs/operations.md, "Feedback and check history"). */
export const ORG_MODEL_LIMITS = Object.freeze({
  /** Distinct word features counted; past it the rarest go (down to 90% of it). */
  features: 16_384,
  /** Latest examples the calibration is fitted on. */
  recent: 1_000,
});

/**
 * Labels of each class (spam and ham) an org model needs before its calibration is fitted and it
 * may move a text across the review threshold (see oneSided). 3: the fewest with which the
 * intercept is held by the labels of both classes rather than by the prior alone.
 */
export const ORG_MODEL_MIN_PER_CLASS = 3;

/** Whether the model has fewer than ORG_MODEL_MIN_PER_CLASS labels of either class (its one-sided rule applies). */
export function oneSided(model: Pick<OrgModel, "spam" | "ham">): boolean {
  return model.spam < ORG_MODEL_MIN_PER_CLASS || model.ham < ORG_MODEL_MIN_PER_CLASS;
}

/** The calibration of a model without labels of both classes: the prior's centre (the global model's a and c). */
export function priorCalibration(settings: OrgModelSettings = ORG_MODEL_SETTINGS): { a: number; b: number; c: number } {
  return { a: 1, b: settings.priorB, c: 0 };
}

/** Settings of the learner (chosen on the few-shot table, docs/content-model.md). */
export interface OrgModelSettings {
  /** Additive smoothing of the naive Bayes counts. */
  alpha: number;
  /** Feature counts below which nb(x) is scaled as if the text had this many. */
  nbFloor: number;
  /** Prior of the calibration: b = priorB, and its strength (as if this many examples agreed). */
  priorB: number;
  priorStrength: number;
  /** Step size of the per-feature weights' online update (0: no weights, the counts and calibration alone). */
  deltaRate: number;
  /** Their L2 decay toward 0, per step on the feature. */
  deltaDecay: number;
}

export const ORG_MODEL_SETTINGS: OrgModelSettings = Object.freeze({ alpha: 0.5, nbFloor: 12, priorB: 0.5, priorStrength: 2, deltaRate: 4, deltaDecay: 0.01 });

/**
 * The most a feature's weight can reach: a step moves it by at most deltaRate/sqrt(nbFloor)
 * toward a label and shrinks it by deltaRate·deltaDecay of itself, so |w| <= 1/(deltaDecay·sqrt(nbFloor))
 * (28.9 with the shipped settings); learnFeedback clamps to it as well.
 */
export function deltaBound(settings: OrgModelSettings = ORG_MODEL_SETTINGS): number {
  return settings.deltaDecay > 0 ? 1 / (settings.deltaDecay * Math.sqrt(settings.nbFloor)) : 0;
}

/** One example as the calibration sees it: its prequential scores and its label. */
export interface RecentExample {
  /** Hash of the example's key (request id or content), to find it when it is relabelled. */
  key: number;
  /** Global calibrated log-odds, the prequential nb(x) and d(x) (0 in models stored before the weights). */
  g: number;
  nb: number;
  d: number;
  spam: boolean;
}

/** One counted feature: examples labelled spam with it, labelled ham with it, and its weight in d(x). */
export type FeatureEntry = [spam: number, ham: number, weight: number];

export interface OrgModel {
  /** Feedback applied so far (each new label or relabel adds one). */
  version: number;
  /** Examples counted per class (current labels). */
  spam: number;
  ham: number;
  /** Feature -> [examples labelled spam with it, labelled ham with it, its weight in d(x)] (one map: the writer decodes the model at every feedback). */
  counts: Map<number, FeatureEntry>;
  calibration: { a: number; b: number; c: number };
  /** Oldest first, at most ORG_MODEL_LIMITS.recent. */
  recent: RecentExample[];
}

/** An example to learn from: its key, the global model's log-odds and its distinct features (ascending). */
export interface FeedbackExample {
  key: string;
  g: number;
  features: Int32Array;
}

/** What one feedback did: the scores the model gave before it (for the agreement figures). */
export interface LearnOutcome {
  model: OrgModel;
  /** The org model's and the global model's probability of spam for the example, before learning it. */
  orgProbability: number;
  globalProbability: number;
}

export function emptyOrgModel(settings: OrgModelSettings = ORG_MODEL_SETTINGS): OrgModel {
  return { version: 0, spam: 0, ham: 0, counts: new Map(), calibration: priorCalibration(settings), recent: [] };
}

/** nb(x) for features `f` under the model's counts (0 when the org has labelled nothing of it). */
export function nbScore(model: OrgModel, f: ArrayLike<number>, settings: OrgModelSettings = ORG_MODEL_SETTINGS): number {
  const { alpha } = settings;
  const spamDen = Math.log(model.spam + 2 * alpha);
  const hamDen = Math.log(model.ham + 2 * alpha);
  let sum = 0;
  for (let i = 0; i < f.length; i++) {
    const c = model.counts.get(f[i]!);
    if (c) sum += Math.log(c[0] + alpha) - spamDen - Math.log(c[1] + alpha) + hamDen;
  }
  return sum / Math.sqrt(Math.max(f.length, settings.nbFloor));
}

/** d(x) for features `f`: the sum of their weights, scaled as nbScore scales (0 for features without one). */
export function deltaScore(model: OrgModel, f: ArrayLike<number>, settings: OrgModelSettings = ORG_MODEL_SETTINGS): number {
  let sum = 0;
  for (let i = 0; i < f.length; i++) sum += model.counts.get(f[i]!)?.[2] ?? 0;
  return sum / Math.sqrt(Math.max(f.length, settings.nbFloor));
}

/** The org model's log-odds of spam for an example with global log-odds `g`, nb score `nb` and weights' score `d` (the prior's calibration while one-sided). */
export function orgLogit(model: OrgModel, g: number, nb: number, d = 0, settings: OrgModelSettings = ORG_MODEL_SETTINGS): number {
  const { a, b, c } = oneSided(model) ? priorCalibration(settings) : model.calibration;
  return a * g + b * nb + c + d;
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/**
 * Learns one feedback: a new label for an example (`previous` null), or a changed label for one
 * learned before (`previous` its old label; a repeated label changes nothing and is not passed
 * here). Changes `model` in place (the writer decodes a fresh one for each feedback) and returns it.
 */
export function learnFeedback(model: OrgModel, ex: FeedbackExample, spam: boolean, previous: boolean | null, settings: OrgModelSettings = ORG_MODEL_SETTINGS): LearnOutcome {
  const nb = nbScore(model, ex.features, settings);
  const d = deltaScore(model, ex.features, settings);
  const orgProbability = sigmoid(orgLogit(model, ex.g, nb, d, settings));
  const globalProbability = sigmoid(ex.g);
  model.version++;
  const key = keyHash(ex.key);
  // Stored as 32-bit floats (codec.ts): a model read back learns exactly as the one in memory.
  const entry: RecentExample = { key, g: Math.fround(ex.g), nb: Math.fround(nb), d: Math.fround(d), spam };
  if (previous !== null) {
    count(model, ex.features, previous, -1);
    const i = model.recent.findIndex((r) => r.key === key);
    if (i >= 0) model.recent[i] = { ...model.recent[i]!, spam };
    else model.recent.push(entry);
  } else {
    model.recent.push(entry);
  }
  count(model, ex.features, spam, 1);
  stepWeights(model, ex.features, orgProbability - (spam ? 1 : 0), settings);
  if (model.recent.length > ORG_MODEL_LIMITS.recent) model.recent.splice(0, model.recent.length - ORG_MODEL_LIMITS.recent);
  if (model.counts.size > ORG_MODEL_LIMITS.features) dropRarest(model);
  // Fitted only on labels of both classes (ORG_MODEL_MIN_PER_CLASS); until then the prior's centre.
  model.calibration = oneSided(model) ? priorCalibration(settings) : fitCalibration(model.recent, settings, model.calibration);
  return { model, orgProbability, globalProbability };
}

/**
 * Adds (`delta` 1) or removes (-1) one example's counts. A removal is always followed by the
 * addition of the same features (a relabel), so an entry is never left at zero counts and keeps
 * its weight.
 */
function count(m: OrgModel, f: Int32Array, spam: boolean, delta: 1 | -1): void {
  if (spam) m.spam = Math.max(0, m.spam + delta);
  else m.ham = Math.max(0, m.ham + delta);
  const k = spam ? 0 : 1;
  for (let i = 0; i < f.length; i++) {
    let c = m.counts.get(f[i]!);
    if (!c) {
      if (delta < 0) continue; // dropped as rare since
      m.counts.set(f[i]!, (c = [0, 0, 0]));
    }
    c[k] = Math.max(0, c[k] + delta);
  }
}

/**
 * One gradient step of the logistic loss on the weights of an example's features (`err`: the
 * model's probability before it less the label), with L2 decay; each weight clamped to
 * ±deltaBound and kept as a 32-bit float (codec.ts).
 */
function stepWeights(m: OrgModel, f: Int32Array, err: number, settings: OrgModelSettings): void {
  const { deltaRate: rate, deltaDecay: decay } = settings;
  if (rate <= 0 || !Number.isFinite(err)) return;
  const bound = deltaBound(settings);
  const g = err / Math.sqrt(Math.max(f.length, settings.nbFloor));
  for (let i = 0; i < f.length; i++) {
    const c = m.counts.get(f[i]!);
    if (c) c[2] = Math.fround(Math.min(bound, Math.max(-bound, c[2] - rate * (g + decay * c[2]))));
  }
}

/** Keeps the 90% most frequent features (ties: the lower feature number), so the cap is not hit at every feedback; the weights of the others go with them. */
function dropRarest(m: OrgModel): void {
  const keep = Math.floor(ORG_MODEL_LIMITS.features * 0.9);
  const order = [...m.counts].sort((x, y) => x[1][0] + x[1][1] - (y[1][0] + y[1][1]) || x[0] - y[0]);
  for (let i = 0; i < order.length - keep; i++) m.counts.delete(order[i]![0]);
}

/**
 * The calibration (a, b, c) that maximises the likelihood of the examples' labels from their
 * (g, nb) and the offset d, with a Gaussian prior centred on the global model (a = 1, b = priorB,
 * c = 0) of strength priorStrength. Newton's method with a backtracking line search (a step is
 * taken only as far as it lowers the penalised loss, so the fit cannot oscillate or run off in a
 * saturated region), from `start` (the previous fit: one more example moves it little, so two or
 * three steps do) or from the prior's centre when that is already better; deterministic. The
 * loss is strictly convex, so from either start it reaches the same optimum.
 */
export function fitCalibration(examples: readonly RecentExample[], settings: OrgModelSettings = ORG_MODEL_SETTINGS, start?: { a: number; b: number; c: number }): { a: number; b: number; c: number } {
  const prior = [1, settings.priorB, 0] as const;
  const lambda = settings.priorStrength;
  const loss = (w: readonly number[]): number => {
    let l = 0;
    for (let i = 0; i < 3; i++) l += (lambda / 2) * (w[i]! - prior[i]!) ** 2;
    for (const e of examples) {
      const z = w[0]! * e.g + w[1]! * e.nb + w[2]! + e.d;
      // -log p(label): softplus(z) - y·z, computed without overflow.
      l += Math.max(z, 0) + Math.log1p(Math.exp(-Math.abs(z))) - (e.spam ? z : 0);
    }
    return l;
  };
  const warm = start && [start.a, start.b, start.c].every(Number.isFinite) ? [start.a, start.b, start.c] : null;
  let w: number[] = [...prior];
  let f = loss(w);
  if (warm) {
    const fw = loss(warm);
    if (fw < f) [w, f] = [warm, fw];
  }
  for (let iter = 0; iter < 50; iter++) {
    const [a, b, c] = w as [number, number, number];
    let ga = lambda * (a - prior[0]);
    let gb = lambda * (b - prior[1]);
    let gc = lambda * (c - prior[2]);
    let haa = lambda, hab = 0, hac = 0, hbb = lambda, hbc = 0, hcc = lambda;
    for (const e of examples) {
      const p = sigmoid(a * e.g + b * e.nb + c + e.d);
      const r = p - (e.spam ? 1 : 0);
      const q = Math.max(p * (1 - p), 1e-9);
      ga += r * e.g;
      gb += r * e.nb;
      gc += r;
      haa += q * e.g * e.g;
      hab += q * e.g * e.nb;
      hac += q * e.g;
      hbb += q * e.nb * e.nb;
      hbc += q * e.nb;
      hcc += q;
    }
    const step = solve3([[haa, hab, hac], [hab, hbb, hbc], [hac, hbc, hcc]], [ga, gb, gc]);
    if (!step) break;
    let t = 1;
    let next = w;
    let fn = f;
    for (; t >= 1 / 1024; t /= 2) {
      const cand = [a - t * step[0]!, b - t * step[1]!, c - t * step[2]!];
      const fc = loss(cand);
      if (fc <= f) {
        next = cand;
        fn = fc;
        break;
      }
    }
    if (next === w) break; // no step lowers the loss: at the optimum, up to rounding
    w = next;
    f = fn;
    if (t * Math.max(Math.abs(step[0]!), Math.abs(step[1]!), Math.abs(step[2]!)) < 1e-6) break;
  }
  const round = (v: number): number => (Number.isFinite(v) ? Math.fround(v) : 0);
  return { a: round(w[0]!), b: round(w[1]!), c: round(w[2]!) };
}

/** Solves the 3×3 system h·x = g (Cramer's rule); null when it is singular. */
function solve3(h: number[][], g: number[]): number[] | null {
  const det = (m: number[][]): number =>
    m[0]![0]! * (m[1]![1]! * m[2]![2]! - m[1]![2]! * m[2]![1]!) - m[0]![1]! * (m[1]![0]! * m[2]![2]! - m[1]![2]! * m[2]![0]!) + m[0]![2]! * (m[1]![0]! * m[2]![1]! - m[1]![1]! * m[2]![0]!);
  const d = det(h);
  if (!Number.isFinite(d) || Math.abs(d) < 1e-12) return null;
  const out: number[] = [];
  for (let col = 0; col < 3; col++) {
    const m = h.map((row, i) => row.map((v, j) => (j === col ? g[i]! : v)));
    out.push(det(m) / d);
  }
  return out;
}

/** 32-bit FNV-1a of a key (request id or content key): finds a relabelled example among the recent ones. */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
