import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONTENT_MODEL_DIR, contentModelFrom, type ContentAnalysis } from "../../src/scoring/content/index.js";
import { coldEmailScore } from "../../src/scoring/content/cold-email.js";
import { detectFlags } from "../../src/scoring/content/flags.js";
import { fraudScore } from "../../src/scoring/content/fraud.js";
import { MODEL_FILE, decodeModel } from "../../src/scoring/content/model-file.js";
import { loadCorpora } from "../../scripts/text/corpora.js";
import { seededRandom } from "../../scripts/text/split.js";
import { analyzeOriginal, coldEmailScoreOriginal, detectFlagsOriginal, fraudScoreOriginal } from "../unit/content-original.js";
import { textCorporaDir } from "./dirs.js";

const decoded = decodeModel(readFileSync(join(CONTENT_MODEL_DIR, MODEL_FILE)));
const model = contentModelFrom(decoded);

/** Window length of the sliding windows (the size of a typical form message) and their step. */
const WINDOW = 300;
const STEP = 97;

/** Bit-identical answers: the same numbers (Object.is), language and flags in the same order. */
function sameAnalysis(a: ContentAnalysis, b: ContentAnalysis): boolean {
  return Object.is(a.spam_probability, b.spam_probability) && a.language === b.language && a.flags.join() === b.flags.join() &&
    Object.is(a.cold_email, b.cold_email) && Object.is(a.fraud, b.fraud);
}

describe("lead-word pre-check: analyze() equals the original on the corpora", () => {
  it("every corpus text, its sliding windows and random cuts give the original answers", () => {
    const { rows } = loadCorpora(textCorporaDir());
    const random = seededRandom(19); // a failure replays
    let texts = 0;
    const diffs: string[] = [];
    const check = (text: string, where: string): void => {
      texts++;
      const now = model.analyze(text);
      const before = analyzeOriginal(decoded, text);
      if (!sameAnalysis(now, before)) {
        diffs.push(`${where}: ${JSON.stringify(now)} != ${JSON.stringify(before)}`);
      }
      // The parts called on their own (each computes its own pre-check) agree too.
      const flags = detectFlags(text);
      if (flags.join() !== detectFlagsOriginal(text).join()) diffs.push(`${where}: flags alone`);
      if (!Object.is(coldEmailScore(text), coldEmailScoreOriginal(text))) diffs.push(`${where}: cold_email alone`);
      if (!Object.is(fraudScore(text, flags), fraudScoreOriginal(text, flags))) diffs.push(`${where}: fraud alone`);
    };
    for (const row of rows) {
      const t = row.text;
      check(t, row.id);
      check(t.toUpperCase(), `${row.id} upper`);
      for (let at = STEP; at < Math.min(t.length, 20_000); at += STEP) check(t.slice(at, at + WINDOW), `${row.id} @${at}`);
      const a = Math.floor(random() * t.length);
      check(t.slice(a, a + 1 + Math.floor(random() * 600)), `${row.id} cut @${a}`);
    }
    console.log(`lead-word pre-check: ${rows.length} corpus texts, ${texts} texts compared (texts, upper-cased, ${WINDOW}-char windows every ${STEP}, random cuts), ${diffs.length} differences`);
    expect(diffs.slice(0, 20)).toEqual([]);
    expect(texts).toBeGreaterThan(rows.length * 3);
  });
});
