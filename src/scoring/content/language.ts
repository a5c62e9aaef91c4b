/**
 * Language of a text, ISO 639-1, with eld (Nito-ELD, "medium" n-gram database).
 *
 * Chosen by scripts/text/language-bench.ts over franc-min 6.2.0 and tinyld 1.3.4 on 3,600 labelled
 * texts (600 each of en, de, fr, hi, tr, id): eld is the most accurate on every language it
 * supports (95-98%) and 4-6x faster than the others (~12 µs for a text of <= 80 characters,
 * against 51 µs for franc-min and 70 µs for tinyld; franc-min 69%, tinyld 88.5% overall).
 * It has no Indonesian: it answers `ms` (Malay, the closest language it knows), which we report
 * as `id` unless Malaysian-only words show up (Indonesian has about ten times the speakers).
 *
 * Cost grows with length (~0.12 µs per character), so only the first LANGUAGE_WINDOW characters
 * are read, cut at a word boundary: as shipped this scores 93.3% on that benchmark (Indonesian
 * included) and keeps language identification under half of the 20 µs per-message budget.
 * eld's answer is computed by eld-scores.ts on eld's own data, identical and about three times
 * faster than calling eld.detect.
 */
import { eldLanguage } from "./eld-scores.js";

/** Characters of text read for language identification. */
export const LANGUAGE_WINDOW = 60;
/** Fewer letters than this: too short to tell, the answer is null. */
export const MIN_LETTERS = 10;

const MALAY_ONLY = /\b(?:boleh|sahaja|kerana|wang|awak|percuma|ringgit|sila|kenapa|bagaimanapun|daripada)\b/;

/** Letters in `s`: ASCII letters, plus every non-ASCII code unit that has a case or is past Latin-1 punctuation. */
function countLetters(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 0xc0 && c !== 0xd7 && c !== 0xf7 && (c < 0x2000 || c > 0x2bff))) n++;
  }
  return n;
}

/** ISO 639-1 code of `text`'s language, or null when it is too short or eld cannot tell. */
export function detectLanguage(text: string): string | null {
  return detectLanguageIn(text, LANGUAGE_WINDOW);
}

/** detectLanguage reading the first `size` characters (the language benchmark compares sizes). */
export function detectLanguageIn(text: string, size: number): string | null {
  let window = text.length > size ? text.slice(0, size) : text;
  if (text.length > size) {
    const cut = window.lastIndexOf(" ");
    if (cut > size / 2) window = window.slice(0, cut);
  }
  if (countLetters(window) < MIN_LETTERS) return null;
  const lang = eldLanguage(window); // eld.detect(window).language, faster (eld-scores.ts)
  if (!lang) return null;
  if (lang === "ms") return MALAY_ONLY.test(text.toLowerCase()) ? "ms" : "id";
  return lang;
}
