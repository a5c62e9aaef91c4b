/**
 * Leave-one-list-out evaluation of the User-Agent classifier (scripts/bots/ua-eval.ts): hides each
 * bot registry and the automation pattern in turn, rebuilds the classifier and prints recall on the
 * hidden list's entries, then false positives on real and unusual browsers, as Markdown tables.
 *
 *   npm run build && node dist/scripts/ua-eval.js [--examples]
 *
 * Exit code 0 when every target is met, 1 when one is missed.
 */
import { evaluateUaClassifier, formatUaEvaluation } from "./bots/ua-eval.js";

const started = Date.now();
const result = evaluateUaClassifier();
console.log(formatUaEvaluation(result, process.argv.includes("--examples")));
console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s)`);
process.exitCode = result.met.falsePositives && result.met.bots && result.met.clients ? 0 : 1;
