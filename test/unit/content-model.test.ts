import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONTENT_MODEL_DIR, loadContentModel } from "../../src/scoring/content/index.js";
import { normaliseText } from "../../src/scoring/content/features.js";
import { decodeModel, encodeModel } from "../../src/scoring/content/model-file.js";
import { encodePng } from "../../scripts/text/png.js";

// The evaluations on the labelled corpora (held-out split, the DocEng 2011 protocol) need the
// corpora, which do not ship: test/corpora/content-model.test.ts, run by `npm run test:corpora`.
const manifest = JSON.parse(readFileSync(join(CONTENT_MODEL_DIR, "manifest.json"), "utf8")) as { version: string };

describe("content model file", () => {
  it("loads, and its version matches manifest.json", () => {
    const model = loadContentModel();
    expect(model.version).toBe(manifest.version);
    expect(model.version).toMatch(/^content-2\.[0-9a-f]{12}$/);
  });

  it("round-trips through encode/decode byte for byte", () => {
    const bytes = readFileSync(join(CONTENT_MODEL_DIR, "model.bin"));
    const decoded = decodeModel(bytes);
    expect(Buffer.compare(encodeModel(decoded.header, decoded.weights), bytes)).toBe(0);
    expect(bytes.length).toBeLessThan(1_000_000);
  });

  it("refuses a file that is not a model", () => {
    expect(() => decodeModel(Buffer.from("not a model at all"))).toThrow(/bad magic/);
  });
});

describe("spam_probability", () => {
  const model = loadContentModel();
  const p = (t: string) => model.analyze(t).spam_probability;

  it("scores spam above ham", () => {
    const spam = [
      "WINNER!! You have been selected to receive a £900 prize reward! To claim call 09061701461. Claim code KL341. Valid 12 hours only.",
      "Check out my channel for free giveaways!!! subscribe and like, link in bio http://bit.ly/free-iphone",
      "Boost your website traffic! We offer cheap backlinks and guest posts, first page of Google guaranteed. Reply now.",
    ];
    const ham = [
      "Hi Anna, thanks for the quick reply. I'll bring the documents to the meeting on Tuesday.",
      "Could you tell me when my order will be delivered? I ordered the blue chair two weeks ago.",
      "This song always makes me think of summer, love it",
    ];
    for (const s of spam) expect(p(s)).toBeGreaterThan(0.8);
    for (const h of ham) expect(p(h)).toBeLessThan(0.5);
    expect(Math.min(...spam.map(p))).toBeGreaterThan(Math.max(...ham.map(p)));
  });

  it("adding spam cues moves the probability up", () => {
    const base = "Hello, I have a question about your opening hours on Saturday.";
    expect(p(`${base} Click here to claim your FREE prize now, txt WIN to 80082!`)).toBeGreaterThan(p(base));
  });

  it("is a probability for empty and odd input", () => {
    for (const t of ["", " ", "!!!", "😀😀", "a".repeat(20_000)]) {
      const v = p(t);
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1);
    }
  });

  it("normalises the raw and the preprocessed-mail styles alike", () => {
    expect(normaliseText("Visit http://www.Example.com/Offer NOW!!!")).toBe(normaliseText("visit http : / / www . example . com / offer now !"));
    expect(normaliseText("fr\u200bee £1000 &lt;#&gt; <br />ok")).toBe("free £ 0000 ok");
  });
});

describe("png encoder", () => {
  it("writes chunks with their CRC-32 and a valid reliability diagram", () => {
    const pixel = encodePng(1, 1, new Uint8Array([255, 0, 0]));
    // The IHDR chunk of every 1x1 8-bit RGB PNG, its CRC included.
    expect(pixel.subarray(8, 33).toString("hex")).toBe("0000000d4948445200000001000000010802000000907753de");
    const png = readFileSync(join(CONTENT_MODEL_DIR, "reliability.png"));
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
    expect(png.subarray(12, 16).toString("latin1")).toBe("IHDR");
  });
});
