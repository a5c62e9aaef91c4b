/**
 * Calibrations of the content model's raw logits chosen for the per-source target (issue 28:
 * ECE <= 0.05 on each left-out source, not only pooled), compared by leave-one-source-out on the
 * out-of-fold logits that scripts/text/loso.ts writes (--out):
 *
 *   node dist/scripts/text/calibration.js --oof FILE.json
 *
 * Each calibration is a Platt curve p = 1 / (1 + exp(-(a z + b))); they differ in the objective
 * its two parameters are chosen by. For every left-out source S, the parameters are chosen on
 * the other sources' out-of-fold logits only and S is scored with them, so the per-source ECE
 * printed is the one a new source would see.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { fitPlatt } from "./logistic.js";
import { ECE_BINS, evaluate } from "./metrics.js";

/** Out-of-fold raw logits and labels of one source. */
export interface SourceLogits {
  z: readonly number[];
  y: readonly number[];
}

export interface Platt {
  a: number;
  b: number;
}

/** How the two Platt parameters are chosen from sources' out-of-fold logits. */
export type CalibrationObjective = "pooled" | "source-weighted" | "mean-source-ece" | "max-source-ece";

/** ECE of p = sigmoid(a z + b) against y over ECE_BINS equal-width bins (metrics.ts's definition, without the rest). */
export function plattEce(part: SourceLogits, c: Platt): number {
  const count = new Float64Array(ECE_BINS);
  const sumP = new Float64Array(ECE_BINS);
  const sumY = new Float64Array(ECE_BINS);
  for (let i = 0; i < part.z.length; i++) {
    const p = 1 / (1 + Math.exp(-(c.a * part.z[i]! + c.b)));
    const k = Math.min(ECE_BINS - 1, Math.floor(p * ECE_BINS));
    count[k] = count[k]! + 1;
    sumP[k] = sumP[k]! + p;
    sumY[k] = sumY[k]! + part.y[i]!;
  }
  let ece = 0;
  for (let k = 0; k < ECE_BINS; k++) ece += Math.abs(sumP[k]! - sumY[k]!);
  return ece / part.z.length;
}

/** Grid the per-source objectives search: slope a in 0.05..2, intercept b in -4..4. */
const A_GRID = Array.from({ length: 40 }, (_, i) => 0.05 * (i + 1));
const B_GRID = Array.from({ length: 81 }, (_, i) => -4 + 0.1 * i);

/** Platt parameters minimising the mean or the worst ECE over `parts` (two-class sources), by grid search. */
function fitBySourceEce(parts: readonly SourceLogits[], reduce: "mean" | "max"): Platt {
  let best: Platt = { a: 1, b: 0 };
  let bestLoss = Infinity;
  for (const a of A_GRID) {
    for (const b of B_GRID) {
      let loss = 0;
      for (const part of parts) {
        const e = plattEce(part, { a, b });
        loss = reduce === "max" ? Math.max(loss, e) : loss + e / parts.length;
        if (reduce === "max" && loss >= bestLoss) break;
      }
      if (loss < bestLoss) {
        bestLoss = loss;
        best = { a, b };
      }
    }
  }
  return best;
}

/**
 * Platt parameters for `parts` under `objective`. `pooled`: each text once (the shipped fit so
 * far); `source-weighted`: every source the same total weight in the log-loss; the ECE objectives
 * take only sources with both classes (a one-class source's ECE rewards pushing every text to
 * its class, whatever the ranking).
 */
export function fitCalibration(parts: readonly SourceLogits[], objective: CalibrationObjective): Platt {
  if (objective === "mean-source-ece" || objective === "max-source-ece") {
    const twoClass = parts.filter((p) => p.y.includes(1) && p.y.includes(0));
    return fitBySourceEce(twoClass, objective === "max-source-ece" ? "max" : "mean");
  }
  const z = parts.flatMap((p) => [...p.z]);
  const y = parts.flatMap((p) => [...p.y]);
  if (objective === "pooled") return fitPlatt(z, y);
  return fitPlatt(
    z,
    y,
    parts.flatMap((p) => p.z.map(() => 1 / p.z.length)),
  );
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { oof: { type: "string" }, targets: { type: "string" } } });
  if (!values.oof) {
    console.error("usage: node dist/scripts/text/calibration.js --oof FILE.json [--targets src1,src2]");
    return 2;
  }
  const oof = (JSON.parse(readFileSync(values.oof, "utf8")) as { oof: Record<string, SourceLogits> }).oof;
  const sources = Object.keys(oof);
  const targets = values.targets?.split(",") ?? sources;
  for (const objective of ["pooled", "source-weighted", "mean-source-ece", "max-source-ece"] as const) {
    const cells: string[] = [];
    let worst = 0;
    let worstBh = 0;
    for (const s of sources) {
      const c = fitCalibration(
        sources.filter((o) => o !== s).map((o) => oof[o]!),
        objective,
      );
      const { z, y } = oof[s]!;
      const p = z.map((v) => 1 / (1 + Math.exp(-(c.a * v + c.b))));
      const m = evaluate(p, y, 0.8);
      if (targets.includes(s) && m.spam > 0 && m.ham > 0) {
        worst = Math.max(worst, m.ece);
        worstBh = Math.max(worstBh, m.bh);
      }
      cells.push(`${s} ${m.ece.toFixed(3)}/${(100 * m.bh).toFixed(1)}%/${(100 * m.sc).toFixed(1)}%`);
    }
    const all = fitCalibration(Object.values(oof), objective);
    console.log(
      `${objective} (all: a ${all.a.toFixed(3)} b ${all.b.toFixed(3)}): worst ECE ${worst.toFixed(4)}, worst ham blocked at 0.8 ${(100 * worstBh).toFixed(2)}% [ECE/ham blocked/spam caught at 0.8]\n  ${cells.join("\n  ")}`,
    );
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
