/**
 * The plain baseline of issue 28: a multinomial naive Bayes from npm (`bayes` 1.0.0, as a site
 * could set up in an afternoon), on the same leave-one-source-out folds as the content model's
 * table (scripts/text/loso.ts: the same rows, capped at DEFAULT_CAP per source with the same seed).
 * For every two-class source, the classifier learns every other source's rows (one-class sources
 * included) and scores the left-out one: AUC from its log-odds, and its own posterior probability
 * for ECE and blocked ham at 0.8 (naive Bayes has no separate calibration).
 *
 *   node dist/scripts/text/nb-baseline.js --corpora DIR [--cap N] [--out FILE.json]
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import bayes from "bayes";
import { TWO_CLASS_SOURCES, loadCorpora, type SourceName, type TextRow } from "./corpora.js";
import { DEFAULT_TRAIN_OPTIONS } from "./logistic.js";
import { DEFAULT_CAP, SOURCE_LANGUAGE, losoRows } from "./loso.js";
import { evaluate, roundMetrics, type Metrics } from "./metrics.js";

/** What `bayes()` keeps after learning (its fields, read to score with log-odds instead of a label). */
interface BayesState {
  docCount: Record<string, number>;
  totalDocuments: number;
  tokenizer: (text: string) => string[];
  frequencyTable: (tokens: string[]) => Record<string, number>;
  wordFrequencyCount: Record<string, Record<string, number>>;
  wordCount: Record<string, number>;
  vocabularySize: number;
  learn: (text: string, category: string) => Promise<unknown>;
}

/**
 * P(token | category) with the classifier's add-one smoothing (its `tokenProbability`), reading
 * the counts as own numbers: the package's plain-object counts turn tokens such as
 * "constructor" into NaN, which would make every score NaN.
 */
function tokenProbability(nb: BayesState, token: string, category: string): number {
  const counts = nb.wordFrequencyCount[category]!;
  const v = Object.hasOwn(counts, token) ? counts[token]! : 0;
  const n = Number.isFinite(v) ? v : 0; // its learn() stores NaN for "constructor" and the like
  return (n + 1) / (nb.wordCount[category]! + nb.vocabularySize);
}

/** log P(spam | text) - log P(ham | text) as the classifier computes each class's score in `categorize`. */
export function nbLogOdds(nb: BayesState, text: string): number {
  const freq = nb.frequencyTable(nb.tokenizer(text));
  let odds = Math.log(nb.docCount.spam! / nb.totalDocuments) - Math.log(nb.docCount.ham! / nb.totalDocuments);
  for (const [token, n] of Object.entries(freq)) odds += n * (Math.log(tokenProbability(nb, token, "spam")) - Math.log(tokenProbability(nb, token, "ham")));
  return odds;
}

export interface BaselineRow {
  source: SourceName;
  language: string;
  metrics: Metrics;
}

/** The baseline on every two-class source, each scored by a classifier that never saw it. */
export async function runNbBaseline(bySource: Map<SourceName, TextRow[]>, log: (line: string) => void = () => {}): Promise<BaselineRow[]> {
  const out: BaselineRow[] = [];
  for (const source of TWO_CLASS_SOURCES) {
    const test = bySource.get(source);
    if (!test || test.length === 0) continue;
    const nb = bayes() as unknown as BayesState;
    for (const [other, rows] of bySource) if (other !== source) for (const r of rows) await nb.learn(r.text, r.label === 1 ? "spam" : "ham");
    const odds = test.map((r) => nbLogOdds(nb, r.text));
    // The classifier's own posterior; clamped so that exp never overflows.
    const p = odds.map((o) => 1 / (1 + Math.exp(-Math.max(-700, Math.min(700, o)))));
    const metrics = evaluate(
      p,
      test.map((r) => r.label),
      0.8,
    );
    out.push({ source, language: SOURCE_LANGUAGE[source], metrics });
    log(`${source}: AUC ${metrics.auc?.toFixed(4)} ECE ${metrics.ece.toFixed(4)} blocked ham at 0.8 ${(metrics.bh * 100).toFixed(2)}%`);
  }
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { corpora: { type: "string" }, cap: { type: "string" }, out: { type: "string" } } });
  if (!values.corpora) {
    console.error("usage: node dist/scripts/text/nb-baseline.js --corpora DIR [--cap N] [--out FILE.json]");
    process.exit(2);
  }
  const { rows } = loadCorpora(resolve(values.corpora));
  const cap = values.cap === undefined ? DEFAULT_CAP : Number(values.cap);
  const table = await runNbBaseline(losoRows(rows, cap, DEFAULT_TRAIN_OPTIONS.seed), console.log);
  if (values.out)
    writeFileSync(
      values.out,
      JSON.stringify(
        table.map((r) => ({ source: r.source, language: r.language, ...roundMetrics(r.metrics) })),
        null,
        2,
      ) + "\n",
    );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
