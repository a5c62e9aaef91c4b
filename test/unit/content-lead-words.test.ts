import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONTENT_MODEL_DIR, contentModelFrom } from "../../src/scoring/content/index.js";
import { coldEmailScore } from "../../src/scoring/content/cold-email.js";
import { detectFlags } from "../../src/scoring/content/flags.js";
import { fraudScore } from "../../src/scoring/content/fraud.js";
import { leadWords, registeredWordLists, scanLeadWords, scanText } from "../../src/scoring/content/lead-words.js";
import { MODEL_FILE, decodeModel } from "../../src/scoring/content/model-file.js";
import { analyzeOriginal, coldEmailScoreOriginal, detectFlagsOriginal, fraudScoreOriginal } from "./content-original.js";

const decoded = decodeModel(readFileSync(join(CONTENT_MODEL_DIR, MODEL_FILE)));
const model = contentModelFrom(decoded);

/** Code units 0..0xFFFF that `re` matches as a one-character string. */
function matching(re: RegExp): number[] {
  const out: number[] = [];
  for (let c = 0; c <= 0xffff; c++) if (re.test(String.fromCharCode(c))) out.push(c);
  return out;
}
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/** Representative texts: every word list hit in several spellings, near misses, other languages and scripts, edge cases. */
const TEXTS: string[] = [
  "",
  " ",
  "a",
  "Hi, I came across your website and noticed it is not ranking on the first page of Google. Our agency offers affordable SEO, backlinks and guest posts that bring targeted traffic. Let me know if you are interested and I will send you a free audit and our price list. Best regards, Mark",
  "Hello, I ordered a blue armchair from your shop two weeks ago (order 48213) and it still has not arrived. Could you check what happened? Thank you, Anna",
  "URGENT! Your account has been suspended due to unusual activity. Verify your account within 24 hours at bit.ly/secure-verify or it will be closed. You have also WON a £1000 prize, call 09061701461 now to claim before it expires. Reply STOP to opt out.",
  "Merhaba, geçen hafta web sitenizden bir masa sipariş ettim ama hâlâ kargoya verilmedi. Sipariş numaram 55120. Teşekkürler.",
  "Tebrikler! Çekilişte 5.000 TL ikramiye KAZANDINIZ. Hemen şifre ve hesabınız bilgilerini gönderin, son gün! Borç yok, faizsiz kredi.",
  "ŞİFRE: 1234, xşifre, CEKILIS, ÇEKİLİŞ, hediye çeki, borçlar",
  "Selamat! Nomor Anda terpilih sebagai pemenang undian berhadiah mobil dan uang tunai Rp 100 juta. Segera kirim kode verifikasi / kode OTP. Buruan! Pinjaman tanpa jaminan, rekening BCA, transferkan sekarang.",
  "Ich wollte Ihren Preis wissen. Je voulais connaître votre prix. Je voulais connaitre ton prix. Quería saber tu precio. Eu queria saber o seu preço.",
  "Chciałem poznać twoją cenę. Chtěl jsem znát vaši cenu. Fiyatınızı bilmek istedim. Aš norėjau sužinoti jūsų kainą. Të di çmimin tuaj. Sáng muốn biết giá.",
  "I wanted to know your price. wanted to know your price? Saya ingin tahu harga. ingin tahu harga anda",
  "Buy bitcoin, BTC, ETH, USDT now! Cryptocurrency and cryptocurrencies, blockchain, Binance, Coinbase, NFT, altcoin, wallet address, MetaMask, DeFi, forex, trading bot. Guaranteed returns, passive income, earn $500 daily, ROI 300%, investors, investing.",
  "SEO services: backlink, backlinks, guest post, guest posts, link building, domain authority, DA/PA, DA / PA, da/pa, 1st page of Google, Google's top, rank on Google, ranking in google, rankings on Google, more traffic, website visitors, drive traffic, search engine optimisation, SERP",
  "Loans, loan, lender, credit score, bad credit, debt relief, debt consolidation, debts, financing, funding, mortgage, payday, refinance, REFINANCING, refinanc, interest rate",
  "You've won! you have won, you won, winner, won a, won the, prize, lottery, jackpot, congratulations, congrats, claim your, claim now, free gift, gift card, selected to receive",
  "urgently, act now, immediately, limited time, expire, expires, expiring, last chance, today only, ASAP, within 24 hours, dont miss, don't miss, hurry, final notice, acil, son gun, son gün",
  "password passcode pin code OTP one-time code one time code verification code verify your identity confirm your details login details log in to verify account locked account on hold SSN social security card number CVV bank details",
  "wire transfer, Western Union, MoneyGram, gift cards, iTunes card, processing fee, release fee, clearance fee, transfer fee, bank account, account number, routing number, IBAN, SWIFT code, send the money, pay a fee, PayPal, CashApp, cash app, havale, EFT",
  "We offer web design, website redesign, web development, webdesign, app development, mobile app, build your website, design a new online store, lead generation, leads for your business, digital marketing, marketing agency, Google Ads, PPC, Facebook ads, ad campaigns, explainer videos, logo design, virtual assistants, outsourcing, OUTSOURCED, business funding, merchant loans, working capital, form blasting, contact form ads, organic leads, website traffic, CRM, automation tools, AI chatbot, AI agents.",
  "I'm reaching out, Im reaching out, here's how we can help, heres how we can help, we're a team, were an agency, our portfolio, increase your sales, boost your rankings, improve your online presence, take your business, competitors are, market share, we specialize, packages start, best prices, low price",
  "Let me know. Reply back. Just reply. Get back to me. Schedule a call, book a demo, quick call, free quote, no obligation, call me, WhatsApp, Skype, Telegram, click here, visit our website, would you be interested, interested?",
  "To unsubscribe, opt out, opt-out, reply stop, to stop receiving, remove you from our list.",
  "Near misses: seoul, backlinked, guestpost, linkbuilding, loaner, winners, prizes, urgentness, passwords, wiretransfer, investmentz, bitcoins, _seo, seo_, 2seo, seo2, crm1, ai_agents",
  "Shorteners: tinyurl.com/abc goo.gl/x t.co/y ow.ly/z is.gd/q buff.ly/w cutt.ly/e rebrand.ly/r shorturl.at/t tiny.cc/u rb.gy/i t.ly/o s.id/p bitly.com/a tr.im/s v.gd/d linktr.ee/f shorte.st/g adf.ly/h",
  "f r e e money, fr33 v1agra c4sh, ca$h, Frее (Cyrillic е), Ρrize (Greek Rho), µseo, a\u0345b, \u1c80x, x\u1fbe",
  "fr\u200bee, pass\u00adword, se\u200do, \ufeffurgent, \u2060asap",
  "Mixed: Привет hello مرحبا שלום नमस्ते สวัสดี გამარჯობა 안녕하세요 こんにちは 你好",
  "Emoji 😀🎉 and lone surrogates \ud83d x \ude00 and fullwidth ＳＥＯ ｓｅｏ ＦＲＥＥ",
  "Case tricks: ſeo (long s), \u212aredit (Kelvin sign), İmmediately, ımmediately, LOAN, LoAn, sEo",
  "<a href=\"http://spam.example.com\">cheap</a> [url=http://x.ru]x[/url] [link=x] www.example.com https://example.org user@example.com",
  "https://bit.ly/abc",
  "john.doe@example.com",
  "mailto:jane@example.org",
  "Call +1 (555) 123-4567 or 0800 123 456 789; pay $50, 1.000 EUR, Rp 35 ribu, £100, 20 bucks, 5 TL",
  "ALL CAPS SHOUTING ABOUT A GREAT DEAL TODAY",
  "x".repeat(5000) + " seo",
  "seo ".repeat(2000),
  ("The quick brown fox jumps over the lazy dog. " + "Kahverengi tilki tembel köpeğin üzerinden atlar. ").repeat(120),
  "seo", "SEO", "loan", "otp", "asap", "şifre", "çekiliş", "borç", "refinancer", "interested?",
];

/** Each text as given, upper-cased and cut into windows (words cut at the edges). */
const VARIANTS: string[] = TEXTS.flatMap((t) => [t, t.toUpperCase(), t.toLowerCase(), t.slice(1), t.slice(0, -1), t.slice(7, 307), `x${t}x`, `_${t}_`]);

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

  it("analyze, flags, cold-email and fraud give the original answers on every text", () => {
    for (const text of VARIANTS) {
      const flags = detectFlags(text);
      expect(flags, text).toEqual(detectFlagsOriginal(text));
      expect(coldEmailScore(text), text).toBe(coldEmailScoreOriginal(text));
      expect(fraudScore(text, flags), text).toBe(fraudScoreOriginal(text, flags));
      expect(model.analyze(text), text).toEqual(analyzeOriginal(decoded, text));
    }
  });
});
