import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { eld } from "eld/medium";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eldLanguage, readEldDatabase } from "../../src/scoring/content/eld-scores.js";

/** Words of many scripts and languages, with the shapes eld's processing treats apart. */
const WORDS = [
  // en, de, fr, es, tr, id, ms, nl, pl, cs, pt, it, sv
  "hello", "order", "the", "and", "desk", "walnut", "replacement", "don't", "it’s", "rock`n`roll",
  "straße", "größe", "über", "bestellung", "geschäft", "ça", "très", "déjà", "où", "garçon", "año", "niño", "¿qué", "¡hola",
  "teşekkürler", "sipariş", "ğüşıöç", "İstanbul", "ışık", "terima", "kasih", "pesanan", "boleh", "sahaja", "kerana",
  "bedankt", "dziękuję", "zamówienie", "děkuji", "objednávka", "obrigado", "encomenda", "grazie", "tack", "beställning",
  // Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai, Georgian, Armenian, CJK, kana, Hangul, Amharic
  "привет", "заказ", "спасибо", "дякую", "γεια", "ευχαριστώ", "مرحبا", "شكرا", "שלום", "תודה", "नमस्ते", "धन्यवाद",
  "สวัสดี", "ขอบคุณ", "გამარჯობა", "բարեւ", "你好", "谢谢", "ありがとう", "こんにちは", "カタカナ", "안녕하세요", "감사합니다", "ሰላም",
  // lengths around eld's 4-byte n-grams and its 70-byte cut, and an astral letter
  "a", "ab", "abc", "abcd", "abcde", "abcdefg", "x".repeat(69), "y".repeat(71), "é".repeat(40), "𝒜𝒷𝒸", "😀",
];
const SEPARATORS = [" ", "  ", ", ", ". ", "\n", "\t", " - ", "!", "?", " 123 ", "@", "#", "/", " http://x.io/a ", "\u200b", "'", "’", "`"];

describe("eld-scores: the same language as eld.detect", () => {
  it("on the language tests' sentences and on empty or letterless text", () => {
    const texts = [
      "",
      " ",
      "1234 5678",
      "https://x.io",
      "Hello, I bought the walnut desk from your shop two weeks ago and one of the legs arrived with a crack",
      "Merhaba, geçen hafta web sitenizden bir masa sipariş ettim ama hâlâ kargoya verilmedi.",
      "Selamat! Nomor Anda terpilih sebagai pemenang undian berhadiah mobil dan uang tunai",
      "Bonjour, je voudrais savoir si la commande est partie",
      "Guten Tag, ich möchte meine Bestellung ändern",
      "Здравствуйте, я хотел бы узнать статус заказа",
      "नमस्ते, मुझे अपने ऑर्डर की स्थिति जानना है",
    ];
    for (const t of texts) expect(eldLanguage(t), JSON.stringify(t)).toBe(eld.detect(t).language);
  });

  it("on random texts of many scripts, separators, lengths and word shapes", () => {
    const word = fc.oneof(fc.constantFrom(...WORDS), fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }), fc.string({ unit: "binary", minLength: 1, maxLength: 8 }));
    const text = fc.array(fc.tuple(word, fc.constantFrom(...SEPARATORS)), { minLength: 0, maxLength: 40 }).map((parts) => parts.map(([w, s]) => w + s).join(""));
    fc.assert(
      fc.property(text, fc.nat(1200), (t, cut) => {
        for (const s of [t, t.slice(0, 60), t.slice(0, cut), t.toUpperCase()]) {
          if (eldLanguage(s) !== eld.detect(s).language) return false;
        }
        return true;
      }),
      { numRuns: 3000, seed: 15 },
    );
  });

  it("past eld's 1,000-character and 380-byte cuts", () => {
    const long = WORDS.join(" ").repeat(8);
    expect(long.length).toBeGreaterThan(1000);
    for (let i = 0; i < 40; i++) {
      const s = long.slice(i * 37);
      expect(eldLanguage(s)).toBe(eld.detect(s).language);
    }
  });
});

describe("readEldDatabase: eld's n-gram database read from its module's text", () => {
  const file = new URL("../ngrams/medium.js", import.meta.resolve("eld/medium"));

  it("holds the numbers eld's module evaluates to, every n-gram and language", async () => {
    const { ngramsData } = (await import(file.href)) as { ngramsData: { languages: Record<number, string>; ngrams: Record<string, Record<number, number>> } };
    const db = readEldDatabase(readFileSync(fileURLToPath(file), "utf8"));
    expect(db.languages).toEqual(Object.values(ngramsData.languages));
    const grams = Object.keys(ngramsData.ngrams);
    expect(db.index.size).toBe(grams.length);
    for (const gram of grams) {
      const e = db.index.get(gram);
      expect(e, JSON.stringify(gram)).toBeDefined();
      const read = new Map<number, number>();
      for (let i = db.starts[e!]!; i < db.starts[e! + 1]!; i += 2) read.set(db.pairs[i]!, db.pairs[i + 1]!);
      const evaluated = new Map(Object.entries(ngramsData.ngrams[gram]!).map(([l, v]) => [Number(l), v]));
      if (read.size !== evaluated.size || [...evaluated].some(([l, v]) => read.get(l) !== v)) expect(read, JSON.stringify(gram)).toEqual(evaluated);
    }
  });

  it("reads quoted, escaped and bare n-grams, and refuses a layout it does not know", () => {
    const db = readEldDatabase(`export const ngramsData = {type:'M60',languages:{0:'am',1:'ar'},isSubset:false,ngrams:{' ab':{0:3,1:-2},'a\\'b':{1:7},"c'd":{0:1},Lx_Q:{1:0}}};`);
    expect(db.languages).toEqual(["am", "ar"]);
    expect([...db.index.keys()]).toEqual([" ab", "a'b", "c'd", "Lx_Q"]);
    expect([...db.starts]).toEqual([0, 4, 6, 8, 10]);
    expect([...db.pairs]).toEqual([0, 3, 1, -2, 1, 7, 0, 1, 1, 0]);
    for (const bad of [
      "export const ngramsData = {languages:{0:'am'},ngrams:{'ab':{0:x}}};",
      "export const ngramsData = {languages:{0:'am'},ngrams:{'ab':{3:1}}};",
      "export const ngramsData = {languages:{0:'am'},ngrams:{'ab':[0,1]}};",
      "export const ngramsData = {languages:{0:'am'},ngrams:{'ab':{0:1},'ab':{0:2}}};",
      "export const ngramsData = {languages:{0:'am'},ngrams:{'ab':{0:1}},more:{}};",
      "export const ngramsData = {languages:{0:'am'},grams:{}};",
    ]) {
      expect(() => readEldDatabase(bad, "test"), bad).toThrow(/^test: expected .*; eld's layout changed/);
    }
  });
});
