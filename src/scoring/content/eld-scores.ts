/**
 * eld's `detect(text).language` (eld 2.1.0, "medium" database), computed on eld's own data and
 * text processing, with the same answer for every input, about three times faster.
 *
 * eld's detect() spends most of its time on JavaScript shapes rather than on the method: each
 * n-gram's scores are an object with integer keys walked with `for...in` (string keys turned back
 * into array indices), the n-gram set is an object, the per-language scores are copied and walked
 * with `for...in` too, and every call builds a LanguageResult with closures. Here each database
 * entry is turned once, on first use, into a packed Int32Array of (language, score) pairs that
 * remembers which call last counted it (eld's n-gram set, without a set), and the scores go into a
 * reused Float64Array.
 *
 * Kept identical to eld, step for step: the same separator regular expression (eld's own,
 * imported from its module), lower-casing, byte encoding through eld's dictionary, the same
 * 4-byte n-grams with a stride of 3, each distinct n-gram counted once, scores as integer sums
 * (so their order does not matter), and the first language with the highest positive score.
 * test/unit/content-language.test.ts compares the two on thousands of texts; eld is pinned in
 * package.json, and the test fails if an upgrade changes what it computes.
 *
 * eld's package exports only its entry points, so its data, separator and dictionary modules are
 * imported by URL next to the `eld/medium` entry: the same module instances eld itself uses (the
 * 2 MB database is loaded once).
 */

interface NgramsData {
  type: string;
  languages: Record<number, string>;
  ngrams: Record<string, Record<number, number>>;
}

const entry = import.meta.resolve("eld/medium");
const [{ ngramsData }, { separators }, { dictionary }] = (await Promise.all([
  import(new URL("../ngrams/medium.js", entry).href),
  import(new URL("../regexPatterns.js", entry).href),
  import(new URL("../dictionary.js", entry).href),
])) as [{ ngramsData: NgramsData }, { separators: RegExp }, { dictionary: string[] }];

const NGRAMS = ngramsData.ngrams;
const LANG_CODES = ngramsData.languages;
const LANGS = Object.keys(LANG_CODES).length;
/** eld subtracts this from every stored score to make its database smaller; it adds it back per n-gram. */
const BASE_NGRAM_SCORE = 53;

/** A database entry, packed: [language, score + BASE_NGRAM_SCORE, ...], and the call that last counted it. */
interface Packed {
  pairs: Int32Array;
  seen: number;
}
/** Database entries met so far; bounded by the database's size (n-grams it does not hold are not kept). */
const packed = new Map<string, Packed>();
const scores = new Float64Array(LANGS);
let call = 0;

function entryOf(gram: string): Packed | undefined {
  let e = packed.get(gram);
  if (e !== undefined) return e;
  const o = NGRAMS[gram];
  if (o === undefined) return undefined;
  const pairs: number[] = [];
  for (const lang in o) pairs.push(Number(lang), o[lang as unknown as number]! + BASE_NGRAM_SCORE);
  e = { pairs: Int32Array.from(pairs), seen: 0 };
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
  return best < 0 ? "" : LANG_CODES[best]!;
}
