import { createHash, type Hash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCorpora, type SourceName } from "../../scripts/text/corpora.js";
import { seededRandom } from "../../scripts/text/split.js";
import { answers } from "../fixtures/content-texts.js";
import { textCorporaDir } from "./dirs.js";

/** Window length of the sliding windows (the size of a typical form message) and their step. */
const WINDOW = 300;
const STEP = 97;

/**
 * Per corpus source: how many texts were checked and the SHA-256 of their answers, one JSON line
 * each (test/fixtures/content-texts.ts `answers`), taken from the code before the lead-word
 * pre-check. The texts are each corpus text, upper-cased, 300-character windows every 97, and one
 * random cut (seed 19).
 */
const GOLDEN = JSON.parse(readFileSync(join(import.meta.dirname, "content-golden.json"), "utf8")) as Record<string, { texts: number; sha256: string }>;

describe("lead-word pre-check: flags, cold-email, fraud and analyze() keep their golden answers on the corpora", () => {
  it("every corpus text, its sliding windows and random cuts, per source", () => {
    // The corpora the golden answers were taken on (later ones come after them in CORPUS_FILES, so the draws below are unchanged).
    const { rows } = loadCorpora(textCorporaDir(), Object.keys(GOLDEN) as SourceName[]);
    const random = seededRandom(19); // a failure replays
    const hashes = new Map<string, Hash>();
    const counts = new Map<string, number>();
    for (const row of rows) {
      let hash = hashes.get(row.source);
      if (!hash) hashes.set(row.source, (hash = createHash("sha256")));
      const t = row.text;
      const texts = [t, t.toUpperCase()];
      for (let at = STEP; at < Math.min(t.length, 20_000); at += STEP) texts.push(t.slice(at, at + WINDOW));
      const a = Math.floor(random() * t.length);
      texts.push(t.slice(a, a + 1 + Math.floor(random() * 600)));
      for (const text of texts) hash.update(JSON.stringify(answers(text)) + "\n");
      counts.set(row.source, (counts.get(row.source) ?? 0) + texts.length);
    }
    const now = Object.fromEntries([...hashes].sort(([a], [b]) => a.localeCompare(b)).map(([source, h]) => [source, { texts: counts.get(source)!, sha256: h.digest("hex") }]));
    console.log(`lead-word pre-check: ${rows.length} corpus texts, ${[...counts.values()].reduce((a, b) => a + b, 0)} texts compared`);
    expect(now).toEqual(GOLDEN);
  });
});
