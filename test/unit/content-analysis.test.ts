import { describe, expect, it } from "vitest";
import { FLAGS, loadContentModel } from "../../src/scoring/content/index.js";
import { coldEmailScore } from "../../src/scoring/content/cold-email.js";
import { detectFlags } from "../../src/scoring/content/flags.js";
import { fraudScore } from "../../src/scoring/content/fraud.js";
import { detectLanguage } from "../../src/scoring/content/language.js";

const model = loadContentModel();

describe("analyze", () => {
  it("returns every field with the documented ranges", () => {
    const a = model.analyze("Hello, I would like to book a table for four people on Friday evening.");
    expect(Object.keys(a).sort()).toEqual(["cold_email", "flags", "fraud", "language", "spam_probability"]);
    expect(a.language).toBe("en");
    expect(a.flags).toEqual([]);
    expect(a.cold_email).toBe(0);
    expect(a.fraud).toBe(0);
  });
});

describe("language", () => {
  it.each([
    ["Hello, I would like to know when my order will arrive please", "en"],
    ["Merhaba, siparişim hala gelmedi, bana yardımcı olabilir misiniz?", "tr"],
    ["Halo kak, pesanan saya belum sampai, tolong dibantu ya", "id"],
    ["Guten Tag, ich möchte einen Termin für nächste Woche vereinbaren.", "de"],
    ["Bonjour, je voudrais savoir si vous livrez à Lyon la semaine prochaine.", "fr"],
    ["नमस्ते, मुझे आपकी सेवा के बारे में जानकारी चाहिए", "hi"],
  ])("%s -> %s", (text, lang) => expect(detectLanguage(text)).toBe(lang));

  it("is null when the text is too short to tell", () => {
    for (const t of ["", "ok", "hi :)", "1234 5678", "https://x.io"]) expect(detectLanguage(t)).toBeNull();
  });
});

describe("flags", () => {
  const has = (text: string, flag: string) => expect(detectFlags(text)).toContain(flag);
  const hasNot = (text: string, flag: string) => expect(detectFlags(text)).not.toContain(flag);

  it("only reports documented flags", () => {
    const all = detectFlags("URGENT!!! WIN BITCOIN NOW AT bit.ly/abc, call +1 (555) 123-4567, $500 loan, fr33 v1agra, пример seo backlinks, password");
    for (const f of all) expect(FLAGS).toContain(f);
  });
  it("link_only and email_only: the whole text is links, or one address", () => {
    has("http://shhort.com/b?r=8f3Kq2", "link_only");
    has("  www.cheap-stuff.biz\n https://x.example/a  ", "link_only");
    has("shhort.com/b?r=abc", "link_only");
    hasNot("see https://example.org/page", "link_only");
    hasNot("Hello", "link_only");
    has("win.big.now@mailinator.com", "email_only");
    hasNot("write to jane@example.com please", "email_only");
    hasNot("a@b.co c@d.co", "email_only");
    // Long or hostile input: answered (the patterns have no nested ambiguity to backtrack on).
    hasNot("http://x.com/ ".repeat(300) + "!!! ok", "link_only");
    hasNot("a.".repeat(2000) + "com x", "link_only");
    hasNot("a@".repeat(200), "email_only");
  });

  it("links and shorteners", () => {
    has("see https://example.org/page", "links");
    has("visit www.cheap-stuff.biz today", "links");
    has("go to shop.example.xyz", "links");
    has("bit.ly/3xYz7 for details", "url_shortener");
    hasNot("see https://example.org/page", "url_shortener");
    hasNot("I met him at 5.30 at the station.", "links");
    has('<a href="http://spam.example">cheap</a>', "html_links");
    has("[url=http://spam.example]cheap[/url]", "html_links");
  });
  it("contact details and money", () => {
    has("write to john.doe@example.com", "email_address");
    has("call me on +44 7911 123456", "phone_number");
    has("call (332) 208-1772", "phone_number");
    hasNot("order 1234 arrived", "phone_number");
    has("only $49.99 today", "money");
    has("hanya Rp 35 ribu", "money");
    has("win 500 dollars", "money");
    hasNot("see you at 10", "money");
  });
  it("shouting, obfuscation and scripts", () => {
    has("CLAIM YOUR FREE PRIZE NOW", "all_caps");
    hasNot("Thanks, see you at the BBC office", "all_caps");
    has("get fr3e v1agra here", "obfuscation");
    has("f r e e money", "obfuscation");
    has("fr\u200bee money", "obfuscation");
    has("pаypal login", "obfuscation"); // Cyrillic а inside a Latin word
    hasNot("I bought an mp3 player and a 4g router, covid19 tests, b2b", "obfuscation");
    hasNot("see https://example.com/a1b3c", "obfuscation");
    has("Hello Привет", "mixed_scripts");
    hasNot("Merhaba, nasılsınız?", "mixed_scripts");
  });
  it("topics", () => {
    has("invest in bitcoin today", "crypto");
    has("we sell backlinks and guest posts", "seo");
    has("fast payday loans, bad credit ok", "loan");
    has("Congratulations, you have won a prize", "prize");
    has("act now, offer expires tonight", "urgency");
    has("please verify your account and send the password", "credentials");
  });
});

describe("cold_email", () => {
  it("scores sales outreach high", () => {
    expect(coldEmailScore("Hi, I came across your website and noticed it's not on the first page of Google. Our agency offers SEO and link building. Would you be interested in a free audit?")).toBeGreaterThan(0.85);
    expect(coldEmailScore("Hi, I wanted to know your price.")).toBeGreaterThan(0.8);
    expect(coldEmailScore("Hola, quería saber tu precio.")).toBeGreaterThan(0.8);
    expect(coldEmailScore("Are you still looking at getting your website done? We build websites at affordable prices. Reply with yes.")).toBeGreaterThan(0.8);
    expect(coldEmailScore("We do explainer videos and animated videos for businesses like yours. Let me know.")).toBeGreaterThan(0.5);
  });
  it("leaves ordinary messages near zero", () => {
    for (const t of [
      "Hello, my order has not arrived yet, can you check?",
      "What time do you open on Saturday?",
      "I'd like a quote for repainting my kitchen, around 12 square metres.",
      "Your pussy cat photo is so cute",
    ]) expect(coldEmailScore(t)).toBeLessThan(0.3);
  });
});

describe("fraud", () => {
  const f = (t: string) => fraudScore(t, detectFlags(t));
  it("combines phishing and scam cues", () => {
    expect(f("URGENT: your account is suspended. Verify your account at bit.ly/secure-login within 24 hours")).toBeGreaterThan(0.6);
    expect(f("Congratulations! You have won $1,000,000. Pay the processing fee by Western Union to claim.")).toBeGreaterThan(0.5);
    expect(f("Invest in crypto with guaranteed returns, double your bitcoin in 7 days")).toBeGreaterThan(0.3);
  });
  it("stays at zero for ordinary text, and urgency alone is not fraud", () => {
    expect(f("Can we move the meeting to Thursday?")).toBe(0);
    expect(f("Urgent: the printer on floor 2 is out of paper")).toBe(0);
  });
});
