/**
 * Text normalisation and hashed features for the content model. Shared by the trainer
 * (scripts/train-content-model.ts) and inference, so both see exactly the same features.
 *
 * Normalisation (one pass over at most MAX_INPUT_CHARS of the text, after lower-casing):
 * - HTML tags and entities become spaces (YouTube comments carry `<br />`, `&#39;`, SMS `&lt;#&gt;`).
 * - Letters (ASCII and any non-ASCII letter-like code point) are kept; every digit becomes `0`,
 *   so prices, phone numbers and codes generalise across corpora.
 * - `$ £ € ! %` and emoji become one-character tokens of their own (a run of the same one counts once).
 * - Zero-width characters, soft hyphens and variation selectors are dropped without a break, so
 *   `fr\u200bee` reads `free`; everything else (punctuation, spaces) is a single separator.
 * The result is the token stream of Enron-Spam's "preprocessed" form (lower-case, tokens split
 * by spaces), so raw SMS, comments, form text and the preprocessed mails all look alike; URLs fall
 * apart into their words (`http www example com`), as they do in that form.
 *
 * Features, hashed into 2^bits buckets (murmur3 finaliser over FNV-1a):
 * - namespace "words": word unigrams and bigrams;
 * - namespace "chars": character 3-, 4- and 5-grams over the normalised stream (spaces included).
 * Each namespace is scaled by 1/sqrt(its feature count), so a long mail and a short SMS produce
 * vectors of the same norm and length itself is not a feature (corpora differ in length and spam
 * rate); below NORM_FLOOR features the count is taken as the floor (see there).
 */

/** Characters of input read; the head of a long mail carries its subject and opening. */
export const MAX_INPUT_CHARS = 1500;
/** Longest normalised stream hashed (code units). */
export const MAX_NORMALISED = 1200;

const SPACE = 32;
const ZERO = 48;
const EMOJI = 0x2605;

const buf = new Uint16Array(MAX_NORMALISED + 4);
/** Scratch feature list: words + bigrams (<= 2 per char) and char n-grams (3 per char). */
const scratch = new Int32Array(6 * (MAX_NORMALISED + 4));

const TAG = /<\/?[a-z!][^<>]{0,200}>/g;
const ENTITY = /&(?:#x?[0-9a-f]{1,6}|[a-z]{2,8});/g;

/** Placeholder words that URLs and e-mail addresses become (letters only, so they survive as one token). */
export const URL_TOKEN = "zzurl";
export const EMAIL_TOKEN = "zzemail";
/** Added once when the whole text is links and nothing else (see LINK_ONLY). */
export const LINK_ONLY_TOKEN = "zzlinkonly";
const TLD = "com|net|org|info|biz|xyz|top|ru|cn|io|co|me|ly|link|click|shop|online|site|store|club|us|uk|de|in|tr|pw|tk|ml|ga|cf|gq|su|app|dev|live|icu|vip|win|bid|loan|work|edu|gov|tv|be|gl|gd|at|cc|to|ws|nl|fr|it|es|pl|jp|au|ca|ch|se|br";
/**
 * A URL in raw form (scheme, www. or a bare host with a common TLD, with its path) or in the
 * "preprocessed" form of the Enron-Spam and Ling-Spam mails, where punctuation is spaced out
 * (`http : / / www . example . com / offer`). Both become URL_TOKEN, so the model learns "a link
 * is here" rather than one corpus's hosts or its way of writing them.
 */
const URL_RE = new RegExp(
  [
    String.raw`(?:https?:\/\/|www\.)[^\s<>"'()\[\]{}]+`,
    String.raw`\bhttps? : \/ \/ [\w-]+(?: [.\/:?=&_~%#-]{1,2} [\w-]+)*`,
    String.raw`\bwww \. [\w-]+(?: \. [\w-]+)+(?: \/ [\w-]+)*`,
    String.raw`\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:${TLD})\b(?!\.[a-z])(?:\/[^\s<>"'()]*)?`,
  ].join("|"),
  "g",
);
/**
 * Cheap pre-check for URL_RE (the text must also hold a dot): a URL has `http`, `www` or a letter
 * or digit, a dot and a letter in a row; most texts have none, and then the full pattern is not
 * run. On the 71,908 corpus texts the features are identical with and without it.
 */
const URL_HINT = /http|www|[a-z0-9]\.[a-z]/;
/** An e-mail address, raw or spaced out (`john @ example . com`). */
const EMAIL_RE = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[\w.-]+ @ [\w-]+(?: \. [\w-]+)+/g;
/** After URL/e-mail replacement: nothing but links (and punctuation or spaces). */
const LINK_ONLY = /^[\s\p{P}\p{S}]*zzurl(?:[\s\p{P}\p{S}]+zzurl)*[\s\p{P}\p{S}]*$/u;
/** `@handle` and `#tag` (comment spam points readers at an account or a tag); e-mail addresses are replaced first. */
const HANDLE_RE = /(?<![\w@])[@#][\p{L}\p{N}_.]{2,}/gu;
/** Placeholder words for handles and tags. */
export const MENTION_TOKEN = "zzmention";
export const HASHTAG_TOKEN = "zzhashtag";
/** "Subject:" opening a mail (Enron-Spam writes it; other mail corpora do not). */
const SUBJECT = /^\s*subject\s*:\s*/;

/** Maps one code unit to what the stream keeps: 0 = separator, -1 = drop, else the code to write. */
function classify(c: number): number {
  if (c < 128) {
    if (c >= 97 && c <= 122) return c;
    if (c >= 48 && c <= 57) return ZERO;
    if (c === 36 || c === 33 || c === 37) return c; // $ ! %
    return 0;
  }
  if (c === 0xa3) return c; // £
  if (c === 0x20ac) return c; // €
  if (c === 0xad || (c >= 0x200b && c <= 0x200f) || c === 0x2060 || c === 0xfeff || (c >= 0xfe00 && c <= 0xfe0f)) return -1;
  if (c < 0xc0 || c === 0xd7 || c === 0xf7) return 0;
  if (c >= 0x2000 && c <= 0x2bff) return c >= 0x2600 ? EMOJI : 0; // punctuation, arrows, symbols; dingbats ~ emoji
  if (c >= 0x3000 && c <= 0x303f) return 0;
  if (c >= 0xd800 && c <= 0xdfff) return EMOJI; // astral: emoji (and rare scripts)
  if (c >= 0xff01 && c <= 0xff5e) return classify(c - 0xfee0); // fullwidth ASCII (already lower-cased)
  return c;
}

/** Standalone tokens: written as their own one-character word. */
function isSymbol(c: number): boolean {
  return c === 36 || c === 33 || c === 37 || c === 0xa3 || c === 0x20ac || c === EMOJI;
}

/**
 * Normalises `text` into the module buffer; returns its length. The stream starts and ends
 * with a space and never holds two spaces in a row.
 */
function normaliseInto(text: string): number {
  let s = text.length > MAX_INPUT_CHARS ? text.slice(0, MAX_INPUT_CHARS) : text;
  s = s.toLowerCase();
  if (s.indexOf("<") >= 0) s = s.replace(TAG, " ");
  if (s.indexOf("&") >= 0) s = s.replace(ENTITY, " ");
  if (s.charCodeAt(0) === 115 || s.charCodeAt(0) <= SPACE) s = s.replace(SUBJECT, "");
  if (s.indexOf("@") >= 0) s = s.replace(EMAIL_RE, " zzemail ");
  if (s.indexOf(".") >= 0 && URL_HINT.test(s)) s = s.replace(URL_RE, " zzurl ");
  if (s.indexOf("@") >= 0 || s.indexOf("#") >= 0) s = s.replace(HANDLE_RE, (m) => (m.charCodeAt(0) === 64 ? " zzmention " : " zzhashtag "));
  let len = 0;
  buf[len++] = SPACE;
  if (s.indexOf(URL_TOKEN) >= 0 && LINK_ONLY.test(s)) {
    for (let i = 0; i < LINK_ONLY_TOKEN.length; i++) buf[len++] = LINK_ONLY_TOKEN.charCodeAt(i);
    buf[len++] = SPACE;
  }
  let lastSymbol = -1;
  const n = s.length;
  for (let i = 0; i < n && len < MAX_NORMALISED; i++) {
    const m = classify(s.charCodeAt(i));
    if (m === -1) continue;
    if (m === 0) {
      if (buf[len - 1] !== SPACE) buf[len++] = SPACE;
      continue;
    }
    if (isSymbol(m)) {
      if (m === EMOJI && s.charCodeAt(i) >= 0xd800 && s.charCodeAt(i) <= 0xdbff) i++; // skip the low surrogate
      if (m === lastSymbol && buf[len - 1] === SPACE) continue;
      if (buf[len - 1] !== SPACE) buf[len++] = SPACE;
      buf[len++] = m;
      buf[len++] = SPACE;
      lastSymbol = m;
      continue;
    }
    lastSymbol = -1;
    buf[len++] = m;
  }
  if (buf[len - 1] !== SPACE) buf[len++] = SPACE;
  return len;
}

/** The normalised stream as a string (for tests, debugging and the trainer's de-duplication). */
export function normaliseText(text: string): string {
  const len = normaliseInto(text);
  return String.fromCharCode(...buf.subarray(1, Math.max(1, len - 1)));
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Extracted features: indices in `indices[0..total)`, words first. Valid until the next call. */
export interface FeatureList {
  indices: Int32Array;
  /** Number of word features (unigrams + bigrams) at the start of `indices`. */
  words: number;
  /** Total number of features. */
  total: number;
}

const result: FeatureList = { indices: scratch, words: 0, total: 0 };

/**
 * Hashes the features of `text` into buckets of `2^bits`. Returns a shared object overwritten
 * by the next call (no allocation on the hot path).
 */
export function extractFeatures(text: string, bits: number): FeatureList {
  const len = normaliseInto(text);
  const shift = 32 - bits;
  let k = 0;
  // Words and bigrams.
  let prev = 0;
  let h = 0;
  let inWord = false;
  for (let i = 1; i < len; i++) {
    const c = buf[i]!;
    if (c === SPACE) {
      if (inWord) {
        scratch[k++] = fmix(h ^ 0x5bd1e995) >>> shift;
        if (prev !== 0) scratch[k++] = fmix(Math.imul(prev, 0x01000193) ^ h ^ 0x27d4eb2f) >>> shift;
        prev = h;
        inWord = false;
      }
      continue;
    }
    if (!inWord) {
      h = 0x811c9dc5;
      inWord = true;
    }
    h = Math.imul(h ^ c, 0x01000193);
  }
  const words = k;
  // Character 3..5-grams.
  for (let i = 0; i + 3 <= len; i++) {
    let g = Math.imul(0x811c9dc5 ^ buf[i]!, 0x01000193);
    g = Math.imul(g ^ buf[i + 1]!, 0x01000193);
    g = Math.imul(g ^ buf[i + 2]!, 0x01000193);
    scratch[k++] = fmix(g ^ 3) >>> shift;
    if (i + 4 > len) continue;
    g = Math.imul(g ^ buf[i + 3]!, 0x01000193);
    scratch[k++] = fmix(g ^ 4) >>> shift;
    if (i + 5 > len) continue;
    g = Math.imul(g ^ buf[i + 4]!, 0x01000193);
    scratch[k++] = fmix(g ^ 5) >>> shift;
  }
  result.words = words;
  result.total = k;
  return result;
}

/**
 * Feature counts below which a namespace is scaled as if it had this many: a two-word message
 * is not blown up to the norm of a full one, so very short texts stay near the prior instead of
 * being decided by one or two words. Used by both trainer and classifier.
 */
export const NORM_FLOOR = { words: 12, chars: 60 } as const;

/** Per-namespace feature value: 1/sqrt(max(count, floor)), 0 for an empty namespace. */
export function namespaceValue(count: number, floor: number): number {
  return count > 0 ? 1 / Math.sqrt(count > floor ? count : floor) : 0;
}

/** The feature settings, as recorded in the model manifest. */
export const FEATURE_SUMMARY = {
  normalisation: "lower-case; HTML tags/entities removed; digits -> 0; $ £ € ! % emoji as tokens; zero-width dropped; other punctuation = separator",
  words: "unigrams + bigrams",
  chars: "3-, 4-, 5-grams over the normalised stream",
  hashing: "FNV-1a + murmur3 finaliser",
  scaling: "each namespace (words, chars) scaled by 1/sqrt(max(feature count, floor))",
  norm_floor: NORM_FLOOR,
} as const;
