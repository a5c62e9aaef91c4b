import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { leadWords, registeredWordLists, scanLeadWords, scanText } from "../../src/scoring/content/lead-words.js";
import { VARIANTS, answers, type Golden } from "../fixtures/content-texts.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures");

/** Code units 0..0xFFFF that `re` matches as a one-character string. */
function matching(re: RegExp): number[] {
  const out: number[] = [];
  for (let c = 0; c <= 0xffff; c++) if (re.test(String.fromCharCode(c))) out.push(c);
  return out;
}
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe("lead-word pre-check", () => {
  it("rests on ASCII-only \\w and case folding without the u flag (checked over every code unit)", () => {
    expect(matching(/\w/i)).toEqual([...range(48, 57), ...range(65, 90), 95, ...range(97, 122)]);
    expect(matching(/\d/i)).toEqual(range(48, 57));
    for (let c = 97; c <= 122; c++) expect(matching(new RegExp(String.fromCharCode(c), "i"))).toEqual([c - 32, c]);
    expect(matching(/_/i)).toEqual([95]);
  });

  it("the characters flags.ts looks for before ZERO_WIDTH and HOMOGLYPH are all those their classes match", () => {
    expect(matching(/[\u200b-\u200f\u2060\ufeff\u00ad]/i)).toEqual([0xad, ...range(0x200b, 0x200f), 0x2060, 0xfeff]);
    expect(matching(/[\u0400-\u04ff\u0370-\u03ff]/i)).toEqual([0xb5, 0x345, ...range(0x370, 0x4ff), ...range(0x1c80, 0x1c87), 0x1fbe]);
    expect(matching(/[<[]/i)).toEqual([0x3c, 0x5b]);
  });

  it("reads the words from a pattern and refuses patterns it cannot read", () => {
    const lw = leadWords(/\b(?:you(?:'ve| have)? won|refinanc\w*|don'?t miss|borç|şifre|optimi[sz]ation|1st page)\b/i);
    expect([...lw.exact].sort()).toEqual(["bor", "dont", "ifre", "miss", "optimisation", "optimization", "page", "won"]);
    expect([...lw.prefix]).toEqual(["refinanc"]);
    expect(leadWords(/\b(?:seo|rank)/i).prefix).toEqual(new Set(["seo", "rank"]));
    expect(leadWords(/\b(?:let me know|i wanted to know your price)\b/i).exact).toEqual(new Set(["know", "wanted"]));
    for (const bad of [/(?:seo)\b/i, /\b\w+seo\b/i, /\b(seo)\b/i, /\b(?:s.o)\b/i, /\b(?:se+o)\b/i, /\b(?:[a-z]eo)\b/i, /\b(?:x?)\b/i, /\b(?:seo)\b/iu]) {
      expect(() => leadWords(bad), bad.source).toThrow(/lead-words/);
    }
  });

  it("never skips a pattern that matches (every registered pattern on every text)", () => {
    let matched = 0;
    for (const text of VARIANTS) {
      const leads = scanLeadWords(text);
      registeredWordLists().forEach((re, k) => {
        const bare = new RegExp(re.source, re.flags.replace("g", ""));
        if (bare.test(text)) {
          matched++;
          expect((leads >>> k) & 1, `/${re.source.slice(0, 40)}.../ on ${JSON.stringify(text.slice(0, 60))}`).toBe(1);
        }
      });
    }
    expect(matched).toBeGreaterThan(300);
  });

  it("counts ASCII letters and digits and finds the first non-ASCII code unit", () => {
    for (const text of VARIANTS) {
      const scan = scanText(text);
      expect({ upper: scan.upper, lower: scan.lower, digits: scan.digits, firstNonAscii: scan.firstNonAscii }).toEqual({
        upper: text.replace(/[^A-Z]/g, "").length,
        lower: text.replace(/[^a-z]/g, "").length,
        digits: text.replace(/[^0-9]/g, "").length,
        firstNonAscii: text.search(/[^\x00-\x7f]/),
      });
      expect(scan.leads).toBe(scanLeadWords(text));
    }
  });

  it("skips most patterns on ordinary text", () => {
    const leads = scanLeadWords("Hello, I ordered a blue armchair from your shop two weeks ago and it still has not arrived. Thank you, Anna");
    expect(leads.toString(2).replace(/0/g, "").length).toBeLessThanOrEqual(2);
  });

  it("analyze, flags, cold-email and fraud give the golden answers on every text", () => {
    const golden = JSON.parse(readFileSync(join(FIXTURES, "content-golden.json"), "utf8")) as Golden[];
    expect(golden).toHaveLength(VARIANTS.length);
    VARIANTS.forEach((text, i) => expect(answers(text), text).toEqual(golden[i]));
  });
});
