/**
 * Content flags: cheap, independent checks on the raw text, each a regular expression or a
 * single pass. The list (FLAGS) is fixed and documented; analyze() reports them in this order.
 *
 *   links          a URL, www. host, or bare domain with a common TLD
 *   url_shortener  a link on a known URL shortener (bit.ly, tinyurl.com, t.co, ...)
 *   html_links     HTML anchors or BBCode [url] tags (forum and comment spam)
 *   email_address  an e-mail address in the text
 *   phone_number   9+ digits written as a phone number (spaces, dots, dashes, parentheses, +)
 *   money          an amount with a currency sign or name ($50, 1.000 EUR, Rp 35 ribu, £100)
 *   all_caps       at least 12 ASCII letters and 70% or more of them upper case
 *   obfuscation    zero-width characters, letters spaced out (f r e e), leet inside words
 *                  (fr33, v1agra), or a word mixing Latin with Cyrillic/Greek look-alikes
 *   mixed_scripts  letters of two or more scripts (Latin, Cyrillic, Greek, Arabic, Hebrew,
 *                  Devanagari, Thai, Georgian, Hangul, CJK/kana)
 *   crypto         cryptocurrency vocabulary (bitcoin, usdt, wallet address, ...)
 *   seo            SEO and traffic offers (backlinks, guest post, rank on Google, ...)
 *   loan           loans, credit, debt and financing (also Indonesian/Turkish terms)
 *   prize          prizes, winnings, lotteries, free gifts (also Indonesian/Turkish terms)
 *   urgency        pressure to act now (urgent, limited time, expires, last chance, ...)
 *   credentials    requests for passwords, codes, account verification or card details
 *   link_only      the text is nothing but one or more links (a form field holding only a link
 *                  raises it too, see form-text.ts); the model reads such text and scores it
 *   email_only     the text is nothing but an e-mail address (likewise for a message-like field)
 */

import { registerWordList, scanText, type TextScan } from "./lead-words.js";

export const FLAGS = [
  "links", "url_shortener", "html_links", "email_address", "phone_number", "money", "all_caps", "obfuscation",
  "mixed_scripts", "crypto", "seo", "loan", "prize", "urgency", "credentials", "link_only", "email_only",
] as const;
export type ContentFlag = (typeof FLAGS)[number];

const TLDS = "com|net|org|info|biz|xyz|top|ru|cn|io|co|me|ly|link|click|shop|online|site|store|club|us|uk|de|in|id|tr|pw|tk|ml|ga|cf|gq|su|app|dev|live|icu|vip|win|bid|loan|work";
const LINK = new RegExp(`https?:\\/\\/|\\bwww\\s?\\.\\s?[a-z0-9-]|[a-z0-9]\\.(?:${TLDS})\\b(?!\\.[a-z])`, "i");
const SHORTENER = /\b(?:bit\.ly|tinyurl\.com|goo\.gl|t\.co|ow\.ly|is\.gd|buff\.ly|cutt\.ly|rebrand\.ly|shorturl\.at|tiny\.cc|rb\.gy|t\.ly|s\.id|bitly\.com|tr\.im|v\.gd|linktr\.ee|shorte\.st|adf\.ly)\/[\w-]/i;
const HTML_LINK = /<a\s[^>]*href|\[url[=\]]|\[link[=\]]/i;
const EMAIL = /[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/i;
const PHONE = /(?:\+|\b)\d(?:[\s.()-]{0,2}\d){8,14}\b/;
const MONEY = /[$£€¥₹₺]\s?\d|\d(?:[\d.,]*\d)?\s?(?:[$£€₺]|usd|eur|gbp|dollars?|euros?|pounds?|bucks|tl|lira|ribu|juta|rb|jt)\b|\b(?:rp|usd|eur|gbp|idr|inr|rs)\.?\s?\d/i;
const CRYPTO = /\b(?:bitcoin|btc|ethereum|eth|usdt|tether|crypto(?:currency|currencies)?|blockchain|binance|coinbase|nft|altcoin|wallet address|metamask|defi|forex|trading bot)\b/i;
const SEO = /\b(?:seo|backlinks?|guest posts?|link building|domain authority|da\s?\/\s?pa|(?:first|1st|top) page of google|google(?:'s)? (?:1st|first|top)|rank(?:ing|ings)? (?:on|in) google|google rankings?|(?:more|targeted|organic|website) (?:traffic|visitors)|drive traffic|search engine optimi[sz]ation|serp)\b/i;
const LOAN = /\b(?:loans?|lender|credit score|bad credit|debt (?:relief|consolidation)|debts?|financing|funding|mortgage|payday|refinanc\w*|interest rate|pinjaman|pinjam|kredit|kredi|borç|faizsiz)\b/i;
const PRIZE = /\b(?:you(?:'ve| have)? won|winner|won (?:a|an|the)|prize|lottery|jackpot|congratulations|congrats|claim (?:your|now)|free gift|gift card|selected to receive|hadiah|pemenang|menang|undian|selamat anda|kazandınız|kazandiniz|hediye|çekiliş|cekilis|ikramiye)\b/i;
const URGENCY = /\b(?:urgent(?:ly)?|act now|immediately|limited time|expires?|expiring|last chance|today only|asap|within 24 hours|don'?t miss|hurry|final notice|segera|buruan|hemen|son gün|son gun|acil)\b/i;
const CREDENTIALS = /\b(?:password|passcode|pin code|otp|one[- ]time code|verification code|verify your (?:account|identity|email)|confirm your (?:account|identity|details)|login details|log in to (?:your|verify)|account (?:suspended|locked|on hold)|ssn|social security|card (?:number|details)|cvv|bank details|kode verifikasi|kode otp|şifre|sifre|hesabınız)\b/i;
/** Pre-check bits of the word-list patterns (lead-words.ts): a clear bit means the pattern cannot match. */
const SHORTENER_BIT = registerWordList(SHORTENER);
const CRYPTO_BIT = registerWordList(CRYPTO);
const SEO_BIT = registerWordList(SEO);
const LOAN_BIT = registerWordList(LOAN);
const PRIZE_BIT = registerWordList(PRIZE);
const URGENCY_BIT = registerWordList(URGENCY);
const CREDENTIALS_BIT = registerWordList(CREDENTIALS);
const ONE_LINK = `(?:(?:https?:\\/\\/|www\\.)\\S+|[a-z0-9][a-z0-9-]*(?:\\.[a-z0-9-]+)*\\.(?:${TLDS})(?:[/?#]\\S*)?)`;
/** Nothing but links, separated by white space. */
const LINK_ONLY = new RegExp(`^\\s*${ONE_LINK}(?:\\s+${ONE_LINK})*\\s*$`, "i");
/** Nothing but one e-mail address (a `mailto:` prefix allowed). */
const EMAIL_ONLY = /^\s*(?:mailto:)?[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\s*$/i;

/** Whether `value` is nothing but links (form-text.ts uses this per field). */
export function isLinkOnly(value: string): boolean {
  return value.length < 4096 && LINK_ONLY.test(value);
}

/** Whether `value` is nothing but one e-mail address. */
export function isEmailOnly(value: string): boolean {
  return value.length < 512 && EMAIL_ONLY.test(value);
}

const ZERO_WIDTH = /[\u200b-\u200f\u2060\ufeff\u00ad]/;
const SPACED = /\b(?:[a-z][ .]){3,}[a-z]\b/i;
// A short word with a look-alike digit or $ between letters (v1agra, c4sh, fr3e, ca$h); not
// inside URLs, paths or codes (the look-behind/ahead refuse URL characters), not mp3/covid19/b2b.
// LEET_HINT is the cheap pre-check; the exact pattern runs only when it matches.
const LEET_HINT = /[a-z][013457$][a-z]/i;
const LEET = /(?<![\w/.=?&@$-])[a-z]{1,8}[013457$]{1,2}[a-z]{1,8}(?![\w/.=?&@-])/i;
const HOMOGLYPH = /[a-z][\u0400-\u04ff\u0370-\u03ff]|[\u0400-\u04ff\u0370-\u03ff][a-z]/i;
/** Script of a letter code unit, as a bit: Latin (incl. Latin-1/Extended), Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai, Georgian, Hangul, CJK/kana; 0 otherwise. */
function scriptBit(c: number): number {
  if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7)) return 1;
  if (c < 0x370) return 0;
  if (c <= 0x3ff) return 2;
  if (c >= 0x400 && c <= 0x4ff) return 4;
  if (c >= 0x590 && c <= 0x5ff) return 8;
  if (c >= 0x600 && c <= 0x6ff) return 16;
  if (c >= 0x900 && c <= 0x97f) return 32;
  if (c >= 0xe00 && c <= 0xe7f) return 64;
  if (c >= 0x10a0 && c <= 0x10ff) return 128;
  if (c >= 0xac00 && c <= 0xd7af) return 256;
  if ((c >= 0x3040 && c <= 0x30ff) || (c >= 0x4e00 && c <= 0x9fff)) return 512;
  return 0;
}

/** What scanChars found in the last text (module scratch, so the pass allocates nothing). */
const seen = { allCaps: false, scripts: 0, lookalike: false, zeroWidth: false };

/**
 * ASCII letter case from `scan`; one pass over the non-ASCII rest of the text for the set of
 * scripts and whether any character ZERO_WIDTH or HOMOGLYPH's look-alike class can match is
 * present (under `i` that class also takes U+00B5, U+0345, U+1C80-1C87 and U+1FBE).
 */
function scanChars(text: string, scan: TextScan): typeof seen {
  const { upper, lower } = scan;
  let scripts = upper + lower > 0 ? 1 : 0;
  let lookalike = false;
  let zeroWidth = false;
  if (scan.firstNonAscii >= 0) {
    for (let i = scan.firstNonAscii; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 128) continue;
      scripts |= scriptBit(c);
      if ((c >= 0x370 && c <= 0x4ff) || c === 0xb5 || c === 0x345 || (c >= 0x1c80 && c <= 0x1c87) || c === 0x1fbe) lookalike = true;
      else if (c === 0xad || (c >= 0x200b && c <= 0x200f) || c === 0x2060 || c === 0xfeff) zeroWidth = true;
    }
  }
  seen.allCaps = upper + lower >= 12 && upper >= 0.7 * (upper + lower);
  seen.scripts = scripts;
  seen.lookalike = lookalike;
  seen.zeroWidth = zeroWidth;
  return seen;
}

function bitCount(v: number): number {
  let n = 0;
  for (; v; v &= v - 1) n++;
  return n;
}

function isObfuscated(text: string, chars: typeof seen): boolean {
  if ((chars.zeroWidth && ZERO_WIDTH.test(text)) || (chars.lookalike && HOMOGLYPH.test(text))) return true;
  return SPACED.test(text) || (LEET_HINT.test(text) && LEET.test(text));
}


/**
 * The flags raised by `text`, in FLAGS order. `scan` is scanText(text) (analyze computes it once
 * for flags, cold-email and fraud); each pattern runs only when its pre-check allows a match.
 */
export function detectFlags(text: string, scan: TextScan = scanText(text)): ContentFlag[] {
  const out: ContentFlag[] = [];
  const leads = scan.leads;
  const chars = scanChars(text, scan);
  const hasLink = LINK.test(text);
  if (hasLink) out.push("links");
  if (hasLink && (leads & SHORTENER_BIT) !== 0 && SHORTENER.test(text)) out.push("url_shortener");
  if ((text.includes("<") || text.includes("[")) && HTML_LINK.test(text)) out.push("html_links");
  if (text.includes("@") && EMAIL.test(text)) out.push("email_address");
  if (scan.digits >= 9 && PHONE.test(text)) out.push("phone_number");
  if (scan.digits > 0 && MONEY.test(text)) out.push("money");
  if (chars.allCaps) out.push("all_caps");
  if (isObfuscated(text, chars)) out.push("obfuscation");
  if (bitCount(chars.scripts) >= 2) out.push("mixed_scripts");
  if ((leads & CRYPTO_BIT) !== 0 && CRYPTO.test(text)) out.push("crypto");
  if ((leads & SEO_BIT) !== 0 && SEO.test(text)) out.push("seo");
  if ((leads & LOAN_BIT) !== 0 && LOAN.test(text)) out.push("loan");
  if ((leads & PRIZE_BIT) !== 0 && PRIZE.test(text)) out.push("prize");
  if ((leads & URGENCY_BIT) !== 0 && URGENCY.test(text)) out.push("urgency");
  if ((leads & CREDENTIALS_BIT) !== 0 && CREDENTIALS.test(text)) out.push("credentials");
  if (hasLink && isLinkOnly(text)) out.push("link_only");
  if (text.includes("@") && isEmailOnly(text)) out.push("email_only");
  return out;
}
