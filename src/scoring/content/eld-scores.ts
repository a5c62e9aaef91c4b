/**
 * eld's `detect(text).language` (eld 2.1.0, "medium" database), computed on eld's own data and
 * text processing, with the same answer for every input, about three times faster.
 *
 * eld's detect() spends most of its time on JavaScript shapes rather than on the method: each
 * n-gram's scores are an object with integer keys walked with `for...in` (string keys turned back
 * into array indices), the n-gram set is an object, the per-language scores are copied and walked
 * with `for...in` too, and every call builds a LanguageResult with closures. Here the database is
 * read once into packed Int32Arrays of (language, score) pairs, each entry remembers which call
 * last counted it (eld's n-gram set, without a set), and the scores go into a reused Float64Array.
 *
 * Kept identical to eld, step for step: the same separator regular expression (eld's own,
 * imported from its module), lower-casing, byte encoding through eld's dictionary, the same
 * 4-byte n-grams with a stride of 3, each distinct n-gram counted once, scores as integer sums
 * (so their order does not matter), and the first language with the highest positive score.
 * test/unit/content-language.test.ts compares the two on thousands of texts; eld is pinned in
 * package.json, and the test fails if an upgrade changes what it computes.
 *
 * eld's package exports only its entry points, so its separator and dictionary modules are
 * imported by URL next to the `eld/medium` entry (the same module instances eld itself uses), and
 * its database's file is found there too.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = import.meta.resolve("eld/medium");
const [{ separators }, { dictionary }] = (await Promise.all([import(new URL("../regexPatterns.js", entry).href), import(new URL("../dictionary.js", entry).href)])) as [
  { separators: RegExp },
  { dictionary: string[] },
];

/**
 * eld's n-gram database, read from the text of eld's own module (one object literal) rather than
 * by importing it: evaluating that 2 MB literal costs every thread that scores content (each
 * front and pool thread) about 1.4 s of CPU at start, and reading it about 0.2 s.
 * test/unit/content-language.test.ts checks that the two give the same numbers.
 */
export interface EldDatabase {
  /** ISO 639-1 codes by eld's language number. */
  languages: string[];
  /** Entry number of each n-gram. */
  index: Map<string, number>;
  /** Entry e's (language, score) pairs, eld's numbers as stored, are pairs[starts[e]] to pairs[starts[e + 1]]. */
  starts: Int32Array;
  pairs: Int32Array;
}

/** Reads eld's `ngrams/*.js` module text: `export const ngramsData = {type:..,languages:{0:'am',..},isSubset:false,ngrams:{'gram':{0:12,5:-3},..}}`. */
export function readEldDatabase(source: string, name = "eld's n-gram database"): EldDatabase {
  let i = source.indexOf("ngrams:{");
  const fail = (what: string): never => {
    throw new Error(`${name}: expected ${what}${i >= 0 ? ` at character ${i}` : ""}; eld's layout changed (eld is pinned in package.json)`);
  };
  if (i < 0) fail("ngrams:{");
  const header = /languages:\{([^}]*)\}/.exec(source.slice(0, i)) ?? fail("languages:{...}");
  const languages: string[] = [];
  for (const m of header[1]!.matchAll(/(\d+):'([a-z-]+)'/g)) {
    if (Number(m[1]) !== languages.length) fail(`language ${languages.length}`);
    languages.push(m[2]!);
  }
  if (languages.length === 0) fail("languages");
  i += "ngrams:{".length;
  const index = new Map<string, number>();
  const starts: number[] = [0];
  let pairs = new Int32Array(source.length >> 2);
  let n = 0;
  const int = (): number => {
    const negative = source.charCodeAt(i) === 45;
    if (negative) i++;
    let v = 0;
    const from = i;
    for (let c = source.charCodeAt(i); c >= 48 && c <= 57; c = source.charCodeAt(++i)) v = v * 10 + c - 48;
    if (i === from) fail("an integer");
    return negative ? -v : v;
  };
  const expect = (code: number): void => {
    if (source.charCodeAt(i) !== code) fail(JSON.stringify(String.fromCharCode(code)));
    i++;
  };
  while (source.charCodeAt(i) !== 125) {
    let gram: string;
    const quote = source.charCodeAt(i);
    if (quote === 39) {
      // '...' with \' for a quote, the only escape eld writes
      gram = "";
      let from = ++i;
      for (let c = source.charCodeAt(i); c !== 39; c = source.charCodeAt(i)) {
        if (Number.isNaN(c)) fail("'");
        if (c === 92) {
          if (source.charCodeAt(i + 1) !== 39) fail("\\'");
          gram += source.slice(from, i);
          from = ++i;
        }
        i++;
      }
      gram += source.slice(from, i++);
    } else if (quote === 34) {
      const end = source.indexOf('"', i + 1);
      if (end < 0) fail('"');
      gram = source.slice(i + 1, end);
      if (gram.includes("\\")) fail("a string without escapes");
      i = end + 1;
    } else {
      // an identifier written without quotes
      const end = source.indexOf(":", i);
      gram = source.slice(i, end < 0 ? i : end);
      if (!/^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*$/u.test(gram)) fail("an n-gram");
      i = end;
    }
    expect(58);
    expect(123);
    for (;;) {
      const language = int();
      expect(58);
      const score = int();
      if (language >= languages.length) fail(`a language below ${languages.length}`);
      if (n + 2 > pairs.length) {
        const grown = new Int32Array(pairs.length * 2);
        grown.set(pairs);
        pairs = grown;
      }
      pairs[n++] = language;
      pairs[n++] = score;
      if (source.charCodeAt(i) === 125) break;
      expect(44);
    }
    i++;
    if (index.has(gram)) fail(`an n-gram listed once (${JSON.stringify(gram)})`);
    index.set(gram, starts.length - 1);
    starts.push(n);
    if (source.charCodeAt(i) === 44) i++;
    else if (source.charCodeAt(i) !== 125) fail('"," or "}"');
  }
  if (!/^\}\s*\}\s*;?\s*$/.test(source.slice(i))) fail("the end of the module");
  return { languages, index, starts: Int32Array.from(starts), pairs: pairs.slice(0, n) };
}

const DB = readEldDatabase(readFileSync(fileURLToPath(new URL("../ngrams/medium.js", entry)), "utf8"), "eld/medium's n-gram database");
const LANGS = DB.languages.length;
/** eld subtracts this from every stored score to make its database smaller; it adds it back per n-gram. */
const BASE_NGRAM_SCORE = 53;

/** A database entry, packed: [language, score + BASE_NGRAM_SCORE, ...], and the call that last counted it. */
interface Packed {
  pairs: Int32Array;
  seen: number;
}
/** Database entries met so far (a small map the hot path finds them in); bounded by the database's size. */
const packed = new Map<string, Packed>();
const scores = new Float64Array(LANGS);
let call = 0;

function entryOf(gram: string): Packed | undefined {
  let e = packed.get(gram);
  if (e !== undefined) return e;
  const at = DB.index.get(gram);
  if (at === undefined) return undefined;
  const pairs = DB.pairs.slice(DB.starts[at], DB.starts[at + 1]);
  for (let i = 1; i < pairs.length; i += 2) pairs[i]! += BASE_NGRAM_SCORE;
  e = { pairs, seen: 0 };
  packed.set(gram, e);
  return e;
}

/** Adds a distinct n-gram's scores once per call (eld's n-gram set); n-grams the database lacks add nothing. */
function count(gram: string): void {
  const e = entryOf(gram);
  if (e === undefined || e.seen === call) return;
  e.seen = call;
  const p = e.pairs;
  for (let i = 0; i < p.length; i += 2) scores[p[i]!]! += p[i + 1]!;
}

/** eld's strToUtf8Bytes: the words of `str`, each UTF-8 byte written as one character of eld's dictionary. */
function utf8Words(str: string): string[] {
  let encoded = "";
  const words: string[] = [];
  let countBytes = 0;
  const cutAfter = 350;
  const enforceCutAfter = 380;
  for (let ii = 0; ii < str.length; ii++) {
    let charCode = str.charCodeAt(ii);
    if (charCode < 0x80) {
      if (charCode === 32) {
        if (encoded !== "") {
          words.push(encoded);
          encoded = "";
        }
        if (countBytes > cutAfter) break;
      } else {
        encoded += str[ii];
      }
      countBytes++;
    } else if (charCode < 0x800) {
      encoded += dictionary[0xc0 | (charCode >> 6)]! + dictionary[0x80 | (charCode & 0x3f)]!;
      countBytes += 2;
    } else if (charCode < 0xd800 || charCode >= 0xe000) {
      encoded += dictionary[0xe0 | (charCode >> 12)]! + dictionary[0x80 | ((charCode >> 6) & 0x3f)]! + dictionary[0x80 | (charCode & 0x3f)]!;
      countBytes += 3;
    } else {
      ii++;
      charCode = 0x10000 + (((charCode & 0x3ff) << 10) | (str.charCodeAt(ii) & 0x3ff));
      encoded +=
        dictionary[0xf0 | (charCode >> 18)]! + dictionary[0x80 | ((charCode >> 12) & 0x3f)]! + dictionary[0x80 | ((charCode >> 6) & 0x3f)]! + dictionary[0x80 | (charCode & 0x3f)]!;
      countBytes += 4;
    }
    if (countBytes > enforceCutAfter) break;
  }
  if (encoded !== "") words.push(encoded);
  return words;
}

/** What `eld.detect(text).language` answers (eld/medium, no subset, no text clean-up): an ISO 639-1 code, or "". */
export function eldLanguage(input: string): string {
  const text = input.substring(0, 1000);
  const words = utf8Words(text.replace(separators, " ").trim().toLowerCase());
  call++;
  scores.fill(0);
  for (let w = 0; w < words.length; w++) {
    const word = words[w]!;
    let len = word.length;
    if (len > 70) len = 70;
    let j: number;
    for (j = 0; j + 4 < len; j += 3) count((j === 0 ? " " : "") + word.substring(j, j + 4));
    count((j === 0 ? " " : "") + word.substring(len !== 3 ? len - 4 : 0) + " ");
  }
  let best = -1;
  let bestScore = 0;
  for (let i = 0; i < LANGS; i++) {
    const v = scores[i]!;
    if (v > 0 && v > bestScore) {
      bestScore = v;
      best = i;
    }
  }
  return best < 0 ? "" : DB.languages[best]!;
}
