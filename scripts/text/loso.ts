/**
 * Leave-one-source-out (LOSO) evaluation of the content model: the basis on which the model's
 * settings are chosen, because an in-distribution split only measures how well the model learned
 * its corpora, not spam.
 *
 *   node dist/scripts/text/loso.js --corpora DIR [--cap N] [--out FILE.json] [--svg FILE.svg]
 *
 * For every source with both classes (TWO_CLASS_SOURCES), a model is fit on all other sources
 * (one-class sources included) and scores the left-out source. One-class sources (20 Newsgroups,
 * Nazario phishing, the contact-form fragments) are left out in turn as well, but only to report
 * their blocked ham or spam caught; they carry no AUC. The machine-translated SMS set is never
 * used (it translates the SMS collection).
 *
 * Calibration: Platt scaling on pooled out-of-fold raw logits. For the table, the calibration
 * that scores source S is fit on the pooled out-of-fold logits of the other sources only, so no
 * number in the table saw its own source in any step; the shipped calibration is fit on all of
 * them. Each text counts once in the pooled fit (see fitPooledPlatt for what else was tried).
 *
 * --cap N keeps at most N rows per source (seeded, class proportions kept) for quick exploration.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { ONE_CLASS_SOURCES, TWO_CLASS_SOURCES, loadCorpora, type SourceName, type TextRow } from "./corpora.js";
import { DEFAULT_TRAIN_OPTIONS, fitPlatt, type FeatureCache, type TrainOptions } from "./logistic.js";
import { evaluate, reliabilityBins, type Bin, type Metrics } from "./metrics.js";
import { DEFAULT_KEEP, SOURCE_WEIGHTS, fitModel, plattProbabilities, rawLogits } from "./pipeline.js";
import { seededShuffle } from "./split.js";
import type { DecodedModel } from "../../src/scoring/content/model-file.js";

/** Languages of each source's text (the LOSO target applies only where another source shares it). */
export const SOURCE_LANGUAGE: Record<SourceName, string> = {
  sms: "en", youtube: "en", enron: "en", turkish: "tr", indonesian: "id", contact_form: "multi", sms_mt: "de/fr/hi",
  lingspam: "en", trec07p: "en", nazario: "en", newsgroups: "en", instagram: "en", janitr: "en", tg_chat: "ru",
};

/** The targets the table is held to (issue 15). */
export const LOSO_TARGETS = { auc: 0.95, ece: 0.05, blockedHamAt08: 0.01 } as const;

/**
 * Regression floors: what the shipped settings reach on the table (rounded against them), held by
 * test/corpora/content-model.test.ts so a change that makes the model worse on unseen sources
 * fails. They sit below LOSO_TARGETS where the targets are not reached yet (see the model card).
 */
export const LOSO_FLOORS = { worstAuc: 0.66, meanAuc: 0.79, pooledEce: 0.05, maxBlockedHamAt08: 0.16 } as const;

/** Sources whose language no other source covers: reported, with no target. */
export const NO_TARGET_SOURCES: readonly SourceName[] = ["turkish", "indonesian", "tg_chat"];

export interface LosoConfig {
  opts: TrainOptions;
  keep: number;
  sourceWeights: Record<SourceName, number>;
  /** At most this many rows per source (seeded, stratified); 0 = all. */
  cap: number;
}

/** Rows per source the trainer uses by default (enough for every source; keeps the big mail corpora from dominating by size). */
export const DEFAULT_CAP = 3000;

export const DEFAULT_LOSO_CONFIG: LosoConfig = { opts: DEFAULT_TRAIN_OPTIONS, keep: DEFAULT_KEEP, sourceWeights: SOURCE_WEIGHTS, cap: DEFAULT_CAP };

/** One left-out source's row of the table. */
export interface LosoRow {
  source: SourceName;
  language: string;
  /** Whether the targets apply (two classes, and its language is covered by another source). */
  target: boolean;
  metrics: Metrics;
  /** Metrics at p >= 0.8 (blocked ham there is the blocking-level false-positive rate). */
  at08: Metrics;
}

export interface LosoResult {
  rows: LosoRow[];
  /** Pooled out-of-fold, each text once, calibrated per fold as in the table. */
  pooled: Metrics;
  pooledAt08: Metrics;
  /** Pooled with every source weighted equally (mean of per-source figures). */
  meanAuc: number;
  worstAuc: number;
  maxEce: number;
  maxBlockedHamAt08: number;
  /** Platt parameters fit on all pooled out-of-fold logits (what ships). */
  calibration: { a: number; b: number };
  bins: Bin[];
  /** Out-of-fold raw logits by source (for other calibrations). */
  oof: Map<SourceName, { z: number[]; y: number[] }>;
}

/** At most `cap` rows of `rows`, seeded, keeping the class proportions. */
export function capRows(rows: readonly TextRow[], cap: number, seed: number): TextRow[] {
  if (!cap || rows.length <= cap) return rows.slice();
  const spam = seededShuffle(rows.filter((r) => r.label === 1), seed);
  const ham = seededShuffle(rows.filter((r) => r.label === 0), seed + 1);
  const ns = Math.round((cap * spam.length) / rows.length);
  return [...spam.slice(0, ns), ...ham.slice(0, cap - ns)];
}

/** Rows grouped by source, capped, machine-translated SMS dropped. */
export function losoRows(rows: readonly TextRow[], cap: number, seed: number): Map<SourceName, TextRow[]> {
  const by = new Map<SourceName, TextRow[]>();
  for (const r of rows) {
    if (r.source === "sms_mt") continue;
    if (!by.has(r.source)) by.set(r.source, []);
    by.get(r.source)!.push(r);
  }
  for (const [s, list] of by) by.set(s, capRows(list, cap, seed));
  return by;
}

/**
 * Platt parameters on pooled out-of-fold logits, each text counted once. Tried and rejected on
 * the table: the same fit with every source weighted equally (pooled ECE 0.093 against 0.026,
 * ham blocked at 0.8 3.2% against 2.1%), and isotonic regression, plain (ECE 0.024 but ham blocked
 * at 0.8 3.1%, AUC lowered by ties) or source-weighted (ECE 0.095). `weighted` keeps the first
 * variant reachable for such comparisons.
 */
export function fitPooledPlatt(parts: readonly { z: number[]; y: number[] }[], weighted = false): { a: number; b: number } {
  const z: number[] = [];
  const y: number[] = [];
  const w: number[] = [];
  for (const p of parts) {
    for (let i = 0; i < p.z.length; i++) {
      z.push(p.z[i]!);
      y.push(p.y[i]!);
      w.push(1 / p.z.length);
    }
  }
  return weighted ? fitPlatt(z, y, w) : fitPlatt(z, y);
}

/**
 * Runs LOSO over every source present in `bySource`. `log` gets one line per fold; `models`, when
 * given, receives each fold's model (the few-shot evaluation starts from them).
 */
export function runLoso(bySource: Map<SourceName, TextRow[]>, cfg: LosoConfig = DEFAULT_LOSO_CONFIG, log: (line: string) => void = () => {}, models?: Map<SourceName, DecodedModel>): LosoResult {
  const sources = [...TWO_CLASS_SOURCES, ...ONE_CLASS_SOURCES].filter((s) => bySource.has(s));
  const oof = new Map<SourceName, { z: number[]; y: number[] }>();
  const cache: FeatureCache = new Map();
  for (const s of sources) {
    const t0 = Date.now();
    const train = sources.filter((o) => o !== s).flatMap((o) => bySource.get(o)!);
    const model = fitModel(train, cfg.opts, cfg.keep, cfg.sourceWeights, 1, cache);
    models?.set(s, model);
    const held = bySource.get(s)!;
    oof.set(s, { z: rawLogits(model, held), y: held.map((r) => r.label) });
    log(`fold ${s}: trained on ${train.length}, scored ${held.length} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
  const rows: LosoRow[] = [];
  const allP: number[] = [];
  const allY: number[] = [];
  for (const s of sources) {
    const others = sources.filter((o) => o !== s).map((o) => oof.get(o)!);
    const platt = fitPooledPlatt(others);
    const { z, y } = oof.get(s)!;
    const p = plattProbabilities(z, platt);
    allP.push(...p);
    allY.push(...y);
    const twoClass = TWO_CLASS_SOURCES.includes(s);
    rows.push({
      source: s,
      language: SOURCE_LANGUAGE[s],
      target: twoClass && !NO_TARGET_SOURCES.includes(s),
      metrics: evaluate(p, y, 0.5),
      at08: evaluate(p, y, 0.8),
    });
  }
  const targeted = rows.filter((r) => r.target);
  const aucs = targeted.map((r) => r.metrics.auc!);
  return {
    rows,
    pooled: evaluate(allP, allY, 0.5),
    pooledAt08: evaluate(allP, allY, 0.8),
    meanAuc: aucs.reduce((a, b) => a + b, 0) / aucs.length,
    worstAuc: Math.min(...aucs),
    maxEce: Math.max(...targeted.map((r) => r.metrics.ece)),
    maxBlockedHamAt08: Math.max(...rows.filter((r) => r.metrics.ham > 0 && !NO_TARGET_SOURCES.includes(r.source)).map((r) => r.at08.bh)),
    calibration: fitPooledPlatt([...oof.values()]),
    bins: reliabilityBins(allP, allY),
    oof,
  };
}

const pct = (v: number) => (100 * v).toFixed(2);
const f4 = (v: number | null) => (v === null ? "–" : v.toFixed(4));

/** The per-source table as markdown (the model card carries this). */
export function losoTable(r: LosoResult): string {
  const lines = [
    "| Left-out source | Language | n | spam | ROC AUC | ECE | ham blocked at p ≥ 0.8 | spam caught at p ≥ 0.8 | ham blocked at p ≥ 0.5 | spam caught at p ≥ 0.5 | target |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|",
  ];
  for (const row of r.rows) {
    const m = row.metrics;
    const hasHam = m.ham > 0, hasSpam = m.spam > 0;
    lines.push(
      `| ${row.source} | ${row.language} | ${m.n} | ${m.spam} | ${f4(m.auc)} | ${f4(m.ece)} | ${hasHam ? pct(row.at08.bh) + "%" : "–"} | ${hasSpam ? pct(row.at08.sc) + "%" : "–"} | ${hasHam ? pct(m.bh) + "%" : "–"} | ${hasSpam ? pct(m.sc) + "%" : "–"} | ${row.target ? "yes" : NO_TARGET_SOURCES.includes(row.source) ? "no (only source in its language)" : "no (one class)"} |`,
    );
  }
  const p = r.pooled;
  lines.push(`| **pooled** | | ${p.n} | ${p.spam} | ${f4(p.auc)} | ${f4(p.ece)} | ${pct(r.pooledAt08.bh)}% | ${pct(r.pooledAt08.sc)}% | ${pct(p.bh)}% | ${pct(p.sc)}% | |`);
  return lines.join("\n");
}

/** One-line summary: the numbers model choice is made on. */
export function losoSummary(r: LosoResult): string {
  return `worst AUC ${r.worstAuc.toFixed(4)}, mean AUC ${r.meanAuc.toFixed(4)}, worst ECE ${r.maxEce.toFixed(4)}, pooled ECE ${r.pooled.ece.toFixed(4)}, worst ham blocked at 0.8 ${pct(r.maxBlockedHamAt08)}%, pooled ${pct(r.pooledAt08.bh)}%`;
}

/** Whether the table meets the targets (sources with target = true; pooled ECE). */
export function losoMeetsTargets(r: LosoResult): { ok: boolean; failures: string[] } {
  const failures: string[] = [];
  for (const row of r.rows) {
    if (row.target && row.metrics.auc! < LOSO_TARGETS.auc) failures.push(`${row.source}: AUC ${row.metrics.auc!.toFixed(4)} < ${LOSO_TARGETS.auc}`);
    if (row.target && row.metrics.ece > LOSO_TARGETS.ece) failures.push(`${row.source}: ECE ${row.metrics.ece.toFixed(4)} > ${LOSO_TARGETS.ece}`);
    if (!NO_TARGET_SOURCES.includes(row.source) && row.metrics.ham > 0 && row.at08.bh > LOSO_TARGETS.blockedHamAt08) failures.push(`${row.source}: ham blocked at 0.8 ${pct(row.at08.bh)}% > 1%`);
  }
  if (r.pooled.ece > LOSO_TARGETS.ece) failures.push(`pooled ECE ${r.pooled.ece.toFixed(4)} > ${LOSO_TARGETS.ece}`);
  return { ok: failures.length === 0, failures };
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { corpora: { type: "string" }, cap: { type: "string" }, out: { type: "string" }, svg: { type: "string" } } });
  if (!values.corpora) {
    console.error("usage: node dist/scripts/text/loso.js --corpora DIR [--cap N] [--out FILE.json] [--svg FILE.svg]");
    return 2;
  }
  const t0 = Date.now();
  const { rows } = loadCorpora(resolve(values.corpora));
  const env = process.env;
  const opts = {
    ...DEFAULT_LOSO_CONFIG.opts,
    ...(env.LOSO_L2 ? { l2: Number(env.LOSO_L2) } : {}),
    ...(env.LOSO_EPOCHS ? { epochs: Number(env.LOSO_EPOCHS) } : {}),
    ...(env.LOSO_LR ? { learningRate: Number(env.LOSO_LR) } : {}),
    ...(env.LOSO_WORDS_ONLY ? { wordsOnly: true } : {}),
    ...(env.LOSO_NB_BETA ? { nb: { alpha: Number(env.LOSO_NB_ALPHA ?? 1), beta: Number(env.LOSO_NB_BETA), wordsOnly: env.LOSO_NB_WORDS !== "0" } } : {}),
    ...(env.LOSO_NO_NB ? { nb: undefined } : {}),
  };
  const sourceWeights = { ...DEFAULT_LOSO_CONFIG.sourceWeights, ...(env.LOSO_SOURCE_WEIGHTS ? (JSON.parse(env.LOSO_SOURCE_WEIGHTS) as Partial<Record<SourceName, number>>) : {}) };
  const cfg = { ...DEFAULT_LOSO_CONFIG, opts, sourceWeights, cap: values.cap === undefined ? DEFAULT_CAP : Number(values.cap) };
  console.log(`options ${JSON.stringify(opts)}, source weights ${JSON.stringify(sourceWeights)}`);
  const result = runLoso(losoRows(rows, cfg.cap, cfg.opts.seed), cfg, console.log);
  console.log(`\n${losoTable(result)}\n\n${losoSummary(result)}`);
  const t = losoMeetsTargets(result);
  console.log(t.ok ? "targets met" : `targets missed:\n  ${t.failures.join("\n  ")}`);
  console.log(`${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (values.out) writeFileSync(values.out, JSON.stringify({ table: result.rows, pooled: result.pooled, calibration: result.calibration, bins: result.bins, oof: Object.fromEntries(result.oof) }, null, 2));
  if (values.svg) {
    const { reliabilitySvg } = await import("./reliability-diagram.js");
    writeFileSync(values.svg, reliabilitySvg(result.bins, "Leave-one-source-out, pooled"));
  }
  return t.ok ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = await main();
