/**
 * Pre-check for the word-list patterns of flags.ts, cold-email.ts and fraud.ts (`\b(?:seo|
 * backlinks?|guest posts?|...)\b`, case-insensitive). Every string such a pattern matches holds
 * some word as a whole word of the text (`you have won` holds `won`), so one pass that looks each
 * word of the text up in a table tells, for all registered patterns at once, which of them can
 * match. A pattern whose bit is clear cannot match and is skipped; a set bit only means "run it",
 * so the answers are exactly those of the patterns alone.
 *
 * The words are read from the pattern's own source when it is registered (leadWords): for every
 * string it can match, a run of [a-z0-9_] that starts after `\b` or a character outside
 * [A-Za-z0-9_] (so a text word starts there too), lower-cased: the first such run of 5+
 * characters that is not COMMON, else the longest. It must equal a text word when `\b` or such a
 * character follows, else start one (`refinanc\w*`). This holds because without the `u` flag
 * `\w` and `\b` are ASCII-only and `i` folds an ASCII letter only to its other ASCII case
 * (test/unit/content-lead-words.test.ts checks both over every code unit).
 * The same pass (scanText) counts the ASCII letters and digits flags.ts needs.
 */

/** A parsed pattern element: characters, a group of alternatives, an optional element, `\b`, or any word characters (`\w`, `\w*`). */
type Tok =
  | { t: "chars"; chars: string[] }
  | { t: "group"; alts: Tok[][] }
  | { t: "opt"; tok: Tok }
  | { t: "b" }
  | { t: "word" };

/** The words a pattern's matches are found by: text words equal to one of `exact`, or starting with one of `prefix`. */
export interface LeadWords {
  exact: Set<string>;
  prefix: Set<string>;
}

const isAsciiWord = (ch: string): boolean => /^[A-Za-z0-9_]$/.test(ch);

/** Parses the subset of pattern syntax the word lists use; throws on anything else. */
function parse(src: string): Tok[] {
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`lead-words: ${why} at ${i} in /${src}/`);
  };
  const escape = (c: string): Tok => {
    if (c === "b") return { t: "b" };
    if (c === "w") return { t: "word" };
    if (c === "s") return { t: "chars", chars: [" "] }; // any white space ends a word alike
    if (c === "d") return { t: "chars", chars: [..."0123456789"] };
    if (/[./$?'()[\]\-\\]/.test(c)) return { t: "chars", chars: [c] };
    return fail(`escape \\${c}`);
  };
  const cls = (): Tok => {
    const chars: string[] = [];
    let word = false;
    for (; i < src.length && src[i] !== "]"; i++) {
      const c = src[i]!;
      if (c === "\\") {
        const e = escape(src[++i] ?? "");
        if (e.t === "word") word = true; // [\w-]: taken as "any word character" (it may also end the word)
        else if (e.t !== "chars") fail("class escape");
        else chars.push(...e.chars);
      } else if (c === "-" && chars.length > 0 && src[i + 1] !== "]") fail("class range");
      else if (c === "^" && chars.length === 0) fail("negated class");
      else chars.push(c);
    }
    if (src[i++] !== "]") fail("unclosed class");
    return word ? { t: "word" } : { t: "chars", chars };
  };
  /** Alternatives up to the closing `)` (inside a group) or the end of the source. */
  const alts = (inGroup: boolean): Tok[][] => {
    const out: Tok[][] = [[]];
    while (i < src.length) {
      const c = src[i++]!;
      let tok: Tok;
      if (c === ")") {
        if (!inGroup) fail("unbalanced ')'");
        return out;
      }
      if (c === "|") {
        out.push([]);
        continue;
      }
      if (c === "(") {
        if (src.slice(i, i + 2) !== "?:") fail("capturing or look-around group");
        i += 2;
        tok = { t: "group", alts: alts(true) };
      } else if (c === "[") tok = cls();
      else if (c === "\\") tok = escape(src[i++] ?? "");
      else if ("*+{}.^$".includes(c)) tok = fail(`'${c}'`);
      else tok = { t: "chars", chars: [c] };
      const q = src[i];
      if (q === "?") {
        i++;
        tok = { t: "opt", tok };
      } else if (q === "*" && tok.t === "word") i++;
      else if (q === "*" || q === "+" || q === "{") fail(`quantifier '${q}'`);
      out[out.length - 1]!.push(tok);
    }
    if (inGroup) fail("unclosed group");
    return out;
  };
  return [{ t: "group", alts: alts(false) }];
}

/**
 * Common words, never chosen as the key of a phrase when it has another word (`you have won` is
 * found by `won`, `let me know` by `know`), so ordinary text rarely sets a bit.
 */
const COMMON = new Set(["a", "i", "s", "t", "an", "at", "be", "do", "if", "in", "is", "it", "me", "my", "no", "of", "on", "or", "to", "we", "the", "and", "are", "for", "you", "your", "our", "can", "get", "let", "with", "this", "that", "have", "has", "was", "will", "from", "not", "all", "any", "just", "more", "here", "were", "could", "would", "what", "when", "about", "there", "still"]);

/** A whole word of a match: text words equal to `word` (exact) or starting with it. */
interface Run {
  word: string;
  exact: boolean;
}

/**
 * The words `pattern`'s matches are found by (see the module comment): for every string the
 * pattern can match, one word it must contain as a whole text word (the first uncommon one of 5+
 * characters, else the longest, preferring uncommon ones). Throws when some match has no such
 * word, or the pattern uses syntax parse() refuses.
 */
export function leadWords(pattern: RegExp): LeadWords {
  if (/[uv]/.test(pattern.flags)) throw new Error(`lead-words: /${pattern.source}/ has the u or v flag`);
  const out: LeadWords = { exact: new Set(), prefix: new Set() };
  const choose = (runs: Run[]): void => {
    let best: Run | undefined;
    const rank = (r: Run): number => (COMMON.has(r.word) ? 0 : 1000) + r.word.length;
    for (const r of runs) if (!best || rank(r) > rank(best)) best = r;
    if (!best) throw new Error(`lead-words: /${pattern.source}/ can match without a whole word`);
    (best.exact ? out.exact : out.prefix).add(best.word);
  };
  // Walks every string the pattern can match. `run` is the word being read, `bounded` whether it
  // (or the next one) starts at a word boundary: after \b or a character outside [A-Za-z0-9_].
  const walk = (toks: Tok[], runs: Run[], run: string, bounded: boolean): void => {
    // Ends the word being read; null when it is key enough (5+ letters, uncommon) and the walk stops.
    const close = (exact: boolean): Run[] | null => {
      if (run === "" || !bounded) return runs;
      const r = { word: run, exact };
      if (run.length >= 5 && !COMMON.has(run)) {
        choose([r]);
        return null;
      }
      return [...runs, r];
    };
    const then = (next: Run[] | null, rest: Tok[], nextBounded: boolean): void => {
      if (next) walk(rest, next, "", nextBounded);
    };
    if (toks.length === 0) {
      const last = close(false); // no \b at the end: the text word may go on
      if (last) choose(last);
      return;
    }
    const [tok, ...rest] = toks as [Tok, ...Tok[]];
    switch (tok.t) {
      case "b":
        return then(close(true), rest, true);
      case "word":
        return then(close(false), rest, false); // \w, \w*: the text word goes on or ends, unknown
      case "opt":
        walk(rest, runs, run, bounded);
        return walk([tok.tok, ...rest], runs, run, bounded);
      case "group":
        for (const alt of tok.alts) walk([...alt, ...rest], runs, run, bounded);
        return;
      case "chars":
        for (const ch of tok.chars) {
          if (isAsciiWord(ch)) walk(rest, runs, run + ch.toLowerCase(), bounded);
          else then(close(true), rest, true);
        }
    }
  };
  walk(parse(pattern.source), [], "", false);
  return out;
}

const BASIS = 0x811c9dc5;
const PRIME = 0x01000193;
const TABLE_SIZE = 4096;
const SLOT_MASK = TABLE_SIZE - 1;

/** Open-addressed word tables: FNV-1a hash of the lower-cased word -> bits of the patterns it can start. */
const exactKeys = new Int32Array(TABLE_SIZE);
const exactBits = new Int32Array(TABLE_SIZE);
const prefixKeys = new Int32Array(TABLE_SIZE);
const prefixBits = new Int32Array(TABLE_SIZE);
/** prefixAt[n] = 1 when some prefix word has n characters (checked as a text word reaches that length). */
const prefixAt = new Uint8Array(64);
let maxExact = 0;
/** ASCII code unit -> the code hashed for it (A-Z lower-cased), 0 for a character outside [A-Za-z0-9_]. */
const WORD_CODE = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95) WORD_CODE[c] = c;
  else if (c >= 65 && c <= 90) WORD_CODE[c] = c | 32;
}
/** The registered patterns, in bit order. */
const registered: RegExp[] = [];

function hashWord(w: string): number {
  let h = BASIS;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), PRIME);
  return h;
}

function slotOf(h: number): number {
  return (h ^ (h >>> 15)) & SLOT_MASK;
}

/** Slots in use per table; a table is never filled past half, so lookup always meets a free slot. */
const used = new Map<Int32Array, number>();

function insert(keys: Int32Array, bits: Int32Array, w: string, bit: number): void {
  const h = hashWord(w);
  let s = slotOf(h);
  while (bits[s] !== 0 && keys[s] !== h) s = (s + 1) & SLOT_MASK;
  if (bits[s] === 0) {
    const n = (used.get(bits) ?? 0) + 1;
    if (n * 2 > TABLE_SIZE) throw new Error("lead-words: table too small");
    used.set(bits, n);
  }
  keys[s] = h;
  bits[s]! |= bit;
}

function lookup(keys: Int32Array, bits: Int32Array, h: number): number {
  let s = slotOf(h);
  for (;;) {
    const b = bits[s]!;
    if (b === 0 || keys[s] === h) return b;
    s = (s + 1) & SLOT_MASK;
  }
}

/**
 * Registers a word-list pattern (at module load); returns its bit in scanText's `leads`.
 * Throws when its words cannot be read (see leadWords) or 31 are registered.
 */
export function registerWordList(pattern: RegExp): number {
  if (registered.length >= 31) throw new Error("lead-words: at most 31 patterns");
  const lw = leadWords(pattern);
  const bit = 1 << registered.length;
  registered.push(pattern);
  for (const w of lw.exact) {
    insert(exactKeys, exactBits, w, bit);
    maxExact = Math.max(maxExact, w.length);
  }
  for (const w of lw.prefix) {
    if (w.length >= prefixAt.length) throw new Error(`lead-words: prefix '${w}' too long`);
    insert(prefixKeys, prefixBits, w, bit);
    prefixAt[w.length] = 1;
  }
  return bit;
}

/** The registered patterns; pattern k has bit 1 << k (for tests). */
export function registeredWordLists(): readonly RegExp[] {
  return registered;
}

/** What one pass over a text found (scanText). */
export interface TextScan {
  /** Bits of the registered patterns that may match: a clear bit means that pattern cannot match. */
  leads: number;
  /** ASCII upper-case letters, lower-case letters and digits in the text (flags.ts reads them). */
  upper: number;
  lower: number;
  digits: number;
  /** Index of the first code unit >= 128, -1 when the text is all ASCII. */
  firstNonAscii: number;
}

/**
 * One pass over `text`: which registered patterns may match (see the module comment), and the
 * ASCII letter and digit counts, which the flags would otherwise count in a pass of their own.
 */
export function scanText(text: string): TextScan {
  let found = 0;
  let h = BASIS;
  let len = 0;
  let upper = 0;
  let lower = 0;
  let digits = 0;
  let firstNonAscii = -1;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const w = c < 128 ? WORD_CODE[c]! : 0;
    if (w !== 0) {
      if (c >= 97) lower++;
      else if (c >= 65) upper += c === 95 ? 0 : 1;
      else digits++;
      h = Math.imul(h ^ w, PRIME);
      if (++len < 64 && prefixAt[len] === 1) found |= lookup(prefixKeys, prefixBits, h);
      continue;
    }
    if (c >= 128 && firstNonAscii < 0) firstNonAscii = i;
    if (len !== 0) {
      if (len <= maxExact) found |= lookup(exactKeys, exactBits, h);
      h = BASIS;
      len = 0;
    }
  }
  if (len !== 0 && len <= maxExact) found |= lookup(exactKeys, exactBits, h);
  return { leads: found, upper, lower, digits, firstNonAscii };
}

/** scanText(text).leads: the bits of the registered patterns that may match `text`. */
export function scanLeadWords(text: string): number {
  return scanText(text).leads;
}
