/**
 * The content flags, cold-email and fraud scores as they were before the lead-word pre-check
 * (src/scoring/content/lead-words.ts), copied unchanged: the reference the differential tests
 * compare the shipped code with (test/unit/content-lead-words.test.ts on fixed strings,
 * test/corpora/content-lead-words.test.ts on the corpora). Not product code.
 */
import { spamProbability } from "../../src/scoring/content/classifier.js";
import { detectLanguage } from "../../src/scoring/content/language.js";
import type { DecodedModel } from "../../src/scoring/content/model-file.js";
import type { ContentAnalysis } from "../../src/scoring/content/index.js";

type ContentFlag = string;

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
const ONE_LINK = `(?:(?:https?:\\/\\/|www\\.)\\S+|[a-z0-9][a-z0-9-]*(?:\\.[a-z0-9-]+)*\\.(?:${TLDS})(?:[/?#]\\S*)?)`;
/** Nothing but links, separated by white space. */
const LINK_ONLY = new RegExp(`^\\s*${ONE_LINK}(?:\\s+${ONE_LINK})*\\s*$`, "i");
/** Nothing but one e-mail address (a `mailto:` prefix allowed). */
const EMAIL_ONLY = /^\s*(?:mailto:)?[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\s*$/i;

/** Whether `value` is nothing but links (form-text.ts uses this per field). */
function isLinkOnly(value: string): boolean {
  return value.length < 4096 && LINK_ONLY.test(value);
}

/** Whether `value` is nothing but one e-mail address. */
function isEmailOnly(value: string): boolean {
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

/** One pass: ASCII letter case counts and the set of scripts seen. */
function scanLetters(text: string): { allCaps: boolean; scripts: number } {
  let upper = 0;
  let lower = 0;
  let scripts = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) upper++;
    else if (c >= 97 && c <= 122) lower++;
    else if (c < 128) continue;
    scripts |= scriptBit(c);
  }
  return { allCaps: upper + lower >= 12 && upper >= 0.7 * (upper + lower), scripts };
}

function bitCount(v: number): number {
  let n = 0;
  for (; v; v &= v - 1) n++;
  return n;
}

function isObfuscated(text: string): boolean {
  if (ZERO_WIDTH.test(text) || HOMOGLYPH.test(text)) return true;
  return SPACED.test(text) || (LEET_HINT.test(text) && LEET.test(text));
}


/** The flags raised by `text`, in FLAGS order. */
export function detectFlagsOriginal(text: string): ContentFlag[] {
  const out: ContentFlag[] = [];
  const hasLink = LINK.test(text);
  if (hasLink) out.push("links");
  if (hasLink && SHORTENER.test(text)) out.push("url_shortener");
  if (HTML_LINK.test(text)) out.push("html_links");
  if (text.includes("@") && EMAIL.test(text)) out.push("email_address");
  if (PHONE.test(text)) out.push("phone_number");
  if (MONEY.test(text)) out.push("money");
  const letters = scanLetters(text);
  if (letters.allCaps) out.push("all_caps");
  if (isObfuscated(text)) out.push("obfuscation");
  if (bitCount(letters.scripts) >= 2) out.push("mixed_scripts");
  if (CRYPTO.test(text)) out.push("crypto");
  if (SEO.test(text)) out.push("seo");
  if (LOAN.test(text)) out.push("loan");
  if (PRIZE.test(text)) out.push("prize");
  if (URGENCY.test(text)) out.push("urgency");
  if (CREDENTIALS.test(text)) out.push("credentials");
  if (hasLink && isLinkOnly(text)) out.push("link_only");
  if (text.includes("@") && isEmailOnly(text)) out.push("email_only");
  return out;
}

const OFFER = /\b(?:seo|search engine optimi[sz]ation|backlinks?|link building|guest posts?|web ?(?:site)? ?(?:design|development|redesign)|web developer|website (?:design|development|redesign|audit)|app development|mobile app|(?:build|design|develop|redesign) (?:your |a |new |modern )?(?:websites?|web ?sites?|apps?|online stores?)|lead generation|leads? for your|(?:digital|social media|email|content|affiliate|video) marketing|marketing (?:services?|agency|campaigns?)|google ads|ppc|facebook ads|ad campaigns?|explainer videos?|animated videos?|graphic design|logo design|virtual assistants?|outsourc\w*|(?:business|merchant) (?:funding|loans?|financing)|working capital|form blasting|contact form ads|(?:more|targeted|organic) (?:traffic|visitors|leads|customers)|website traffic|google rankings?|(?:first|1st) page (?:of|on) google|crm|automation (?:services?|tools?)|ai (?:chatbot|agents?|automation))\b/gi;
const PITCH = /\b(?:i (?:came|stumbled) across your|(?:i|we) (?:noticed|checked|visited|looked at|reviewed) your (?:website|site|business|company)|your (?:website|site) (?:is|isn'?t|could|needs|has|lacks)|are you still looking|we (?:can|could|will) help|here'?s how we can help|i'?m reaching out|i am reaching out|(?:i|we) (?:wanted|want) to (?:reach out|offer|introduce)|our (?:agency|team|company|services|experts|portfolio)|we are an? (?:agency|team|company)|we'?re an? (?:agency|team|company)|(?:increase|boost|grow|double) your (?:sales|traffic|revenue|business|leads|rankings?|visibility)|(?:enhance|improve) your online presence|your online presence|take your business|competitors? (?:to|are)|market share|we specialize|we offer|i offer|affordable (?:price|rates?|packages?)|packages? start|(?:low|best) prices?)\b/i;
const PRICE = /\b(?:i wanted to know your price|wanted to know your price|quería saber tu precio|queria saber tu precio|volevo sapere il tuo prezzo|ich wollte (?:ihren|deinen) preis wissen|je voulais conna[iî]tre (?:votre|ton) prix|eu queria saber o seu pre[cç]o|ik wilde (?:je|uw) prijs weten|saya ingin tahu harga|jeg ønskede at kende din pris|jag ville veta ditt pris|chciałem poznać twoją cenę|chtěl jsem znát vaši cenu|fiyatınızı bilmek istedim|volia saber el seu preu|ek wou jou prys ken|aš norėjau sužinoti jūsų kainą|halusin tietää hintasi|ego volo scire vestri pretium|eisiau gwybod eich pris|të di çmimin tuaj|sáng muốn biết giá|ingin tahu harga anda)\b/i;
const CTA = /\b(?:let me know|reply (?:to this|back|with|yes)|just reply|get back to me|schedule a (?:call|meeting|demo)|book a (?:call|meeting|demo)|quick call|free (?:quote|audit|consultation|trial|demo|analysis|report)|no obligation|call me|contact me|whatsapp|skype|telegram|click here|visit (?:our|my) (?:site|website)|would you be interested|are you interested|if interested|interested\?)\b/i;
const OPTOUT = /\b(?:unsubscribe|opt[- ]out|reply stop|to stop receiving|remove you from)\b/i;


/** Cold-outreach score of `text` in [0, 1] (4 decimals). */
export function coldEmailScoreOriginal(text: string): number {
  const W = { offer: 0.9, second_offer: 0.3, pitch: 0.8, price: 2.0, cta: 0.4, optout: 0.4 } as const;
  let s = 0;
  OFFER.lastIndex = 0;
  const first = OFFER.exec(text);
  let hook = false;
  if (first) {
    s += W.offer;
    hook = true;
    let next: RegExpExecArray | null;
    while ((next = OFFER.exec(text)) !== null) {
      if (next[0].toLowerCase() !== first[0].toLowerCase()) {
        s += W.second_offer;
        break;
      }
    }
  }
  if (PITCH.test(text)) {
    s += W.pitch;
    hook = true;
  }
  if (PRICE.test(text)) s += W.price;
  if (hook && CTA.test(text)) s += W.cta;
  if (hook && OPTOUT.test(text)) s += W.optout;
  return Math.round((1 - Math.exp(-s)) * 1e4) / 1e4;
}

const PAYMENT = /\b(?:wire transfer|western union|moneygram|gift cards?|itunes cards?|processing fee|release fee|clearance fee|transfer fee|bank account|account number|routing number|iban|swift code|send (?:the )?money|pay (?:the|a) fee|paypal|cash ?app|rekening|transfer(?:kan)?|havale|eft|iban)\b/i;
const INVEST = /\b(?:invest(?:ment|ing|or)?s?|profits?|returns?|roi|trading|double your|passive income|earn \$?\d|guaranteed (?:income|returns?|profit))\b/i;

const FW = { credentials: 0.45, payment: 0.35, prize: 0.35, crypto_invest: 0.4, loan: 0.2, urgency: 0.2, shortener: 0.2, link: 0.1 } as const;

/** Fraud cues of `text` given its flags, as a score in [0, 1] (4 decimals). */
export function fraudScoreOriginal(text: string, flags: readonly ContentFlag[]): number {
  const has = (f: ContentFlag) => flags.includes(f);
  let keep = 1;
  let cues = 0;
  const add = (w: number) => {
    keep *= 1 - w;
    cues++;
  };
  if (has("credentials")) add(FW.credentials);
  if (PAYMENT.test(text)) add(FW.payment);
  if (has("prize")) add(FW.prize);
  if (has("crypto") && INVEST.test(text)) add(FW.crypto_invest);
  if (has("loan")) add(FW.loan);
  if (has("url_shortener")) add(FW.shortener);
  if (cues > 0) {
    if (has("urgency")) keep *= 1 - FW.urgency;
    if (has("links")) keep *= 1 - FW.link;
  }
  return Math.round((1 - keep) * 1e4) / 1e4;
}

/** analyze() as it was: the original flags, cold-email and fraud with the (unchanged) classifier and language. */
export function analyzeOriginal(model: DecodedModel, input: string): ContentAnalysis {
  const text = input.length > 5000 ? input.slice(0, 5000) : input;
  const flags = detectFlagsOriginal(text);
  return {
    spam_probability: Math.round(spamProbability(model, text) * 1e4) / 1e4,
    language: detectLanguage(text),
    flags,
    cold_email: coldEmailScoreOriginal(text),
    fraud: fraudScoreOriginal(text, flags),
  };
}
