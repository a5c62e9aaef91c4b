/**
 * Evaluation metrics for the content model: ROC AUC, accuracy, MCC, spam caught / blocked ham,
 * Brier score and expected calibration error, plus the reliability bins behind the diagram.
 */

/** Equal-width probability bins used for ECE and the reliability diagram. */
export const ECE_BINS = 10;

export interface Metrics {
  n: number;
  spam: number;
  ham: number;
  /** ROC AUC (ties count one half); null when one class is missing. */
  auc: number | null;
  accuracy: number;
  mcc: number;
  /** Spam caught: spam with p >= threshold / all spam (recall). */
  sc: number;
  /** Blocked ham: ham with p >= threshold / all ham (false-positive rate). */
  bh: number;
  precision: number;
  brier: number;
  /** Expected calibration error over ECE_BINS equal-width bins, weighted by bin share. */
  ece: number;
  threshold: number;
}

/** One reliability bin. */
export interface Bin {
  lo: number;
  hi: number;
  count: number;
  meanP: number;
  fracSpam: number;
}

export function reliabilityBins(p: readonly number[], y: readonly number[], bins = ECE_BINS): Bin[] {
  const out: Bin[] = Array.from({ length: bins }, (_, k) => ({ lo: k / bins, hi: (k + 1) / bins, count: 0, meanP: 0, fracSpam: 0 }));
  p.forEach((v, i) => {
    const b = out[Math.min(bins - 1, Math.floor(v * bins))]!;
    b.count++;
    b.meanP += v;
    b.fracSpam += y[i]!;
  });
  for (const b of out) if (b.count) {
    b.meanP /= b.count;
    b.fracSpam /= b.count;
  }
  return out;
}

export function rocAuc(p: readonly number[], y: readonly number[]): number | null {
  const order = p.map((v, i) => i).sort((a, b) => p[a]! - p[b]!);
  const pos = y.filter((v) => v === 1).length;
  const neg = y.length - pos;
  if (!pos || !neg) return null;
  let rankSum = 0;
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && p[order[j + 1]!] === p[order[i]!]) j++;
    const avgRank = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) if (y[order[k]!] === 1) rankSum += avgRank;
    i = j + 1;
  }
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg);
}

/** All metrics for probabilities `p` against labels `y` (1 = spam) at `threshold`. */
export function evaluate(p: readonly number[], y: readonly number[], threshold = 0.5): Metrics {
  let tp = 0, fp = 0, tn = 0, fn = 0, brier = 0;
  p.forEach((v, i) => {
    const spam = y[i] === 1;
    const flagged = v >= threshold;
    if (spam && flagged) tp++;
    else if (spam) fn++;
    else if (flagged) fp++;
    else tn++;
    brier += (v - y[i]!) ** 2;
  });
  const n = p.length;
  const denom = Math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn));
  const bins = reliabilityBins(p, y);
  const ece = bins.reduce((s, b) => s + (b.count / n) * Math.abs(b.meanP - b.fracSpam), 0);
  return {
    n, spam: tp + fn, ham: tn + fp,
    auc: rocAuc(p, y),
    accuracy: (tp + tn) / n,
    mcc: denom ? (tp * tn - fp * fn) / denom : 0,
    sc: tp + fn ? tp / (tp + fn) : 0,
    bh: tn + fp ? fp / (tn + fp) : 0,
    precision: tp + fp ? tp / (tp + fp) : 0,
    brier: brier / n,
    ece,
    threshold,
  };
}

/** Rounds every number of a metrics object for the manifest (stable, diff-friendly). */
export function roundMetrics(m: Metrics): Record<string, number | null> {
  const r = (v: number | null, d = 4) => (v === null ? null : Number(v.toFixed(d)));
  return {
    n: m.n, spam: m.spam, ham: m.ham, auc: r(m.auc), accuracy: r(m.accuracy), mcc: r(m.mcc), spam_caught: r(m.sc),
    blocked_ham: r(m.bh), precision: r(m.precision), brier: r(m.brier), ece: r(m.ece), threshold: m.threshold,
  };
}
