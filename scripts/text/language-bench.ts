/**
 * Compares the language-identification libraries installed for the content model (franc-min,
 * eld, tinyld) on the labelled multilingual corpora: accuracy by language and text length, and
 * time per call. Prints a markdown table; the choice it supports is recorded in
 * src/scoring/content/language.ts.
 *
 *   node dist/scripts/text/language-bench.js --corpora DIR [--per-lang N]
 *
 * Texts: Turkish and Indonesian SMS (native), the machine-translated SMS set (de, fr, hi) and the
 * English SMS Spam Collection; N per language (default 600), chosen by a seeded shuffle.
 * A library's answer counts as right only when it equals the corpus language; "none" (empty,
 * `und`) counts as wrong in accuracy and is also reported on its own.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { franc } from "franc-min";
import { eld as eldLarge } from "eld/large";
import { eld as eldMedium } from "eld/medium";
import { detect as tinyldDetect } from "tinyld";
import { detect as tinyldLightDetect } from "tinyld/light";
import { LANGUAGE_WINDOW, detectLanguage, detectLanguageIn } from "../../src/scoring/content/language.js";
import { loadCorpora, type TextRow } from "./corpora.js";
import { seededShuffle } from "./split.js";

/** ISO 639-3 (franc) to 639-1 for the languages in the sample and their usual confusions. */
const ISO3_TO_1: Record<string, string> = {
  eng: "en", tur: "tr", ind: "id", zlm: "ms", deu: "de", fra: "fr", hin: "hi", nld: "nl", spa: "es", ita: "it", por: "pt",
  sco: "sco", urd: "ur", mar: "mr", nep: "ne", azj: "az", uzn: "uz", jav: "jv", sun: "su", tgl: "tl", ceb: "ceb",
};

interface Contender {
  name: string;
  detect(text: string): string | null;
}

const CONTENDERS: Contender[] = [
  { name: "franc-min 6.2.0", detect: (t) => { const l = franc(t); return l === "und" ? null : (ISO3_TO_1[l] ?? l); } },
  { name: "eld 2.1.0 (medium)", detect: (t) => eldMedium.detect(t).language || null },
  { name: "eld 2.1.0 (large)", detect: (t) => eldLarge.detect(t).language || null },
  { name: "tinyld 1.3.4 (normal)", detect: (t) => tinyldDetect(t) || null },
  { name: "tinyld 1.3.4 (light)", detect: (t) => tinyldLightDetect(t) || null },
  { name: `shipped: eld medium, first ${LANGUAGE_WINDOW} chars, ms->id`, detect: detectLanguage },
  ...[32, 40, 48, 60].filter((w) => w !== LANGUAGE_WINDOW).map((w) => ({ name: `eld medium, first ${w} chars, ms->id`, detect: (t: string) => detectLanguageIn(t, w) })),
];

const BUCKETS = [
  { name: "<30", max: 30 },
  { name: "30-99", max: 100 },
  { name: ">=100", max: Infinity },
];

function sample(rows: TextRow[], perLang: number): TextRow[] {
  const byLang = new Map<string, TextRow[]>();
  for (const r of rows) {
    if (!r.lang || r.source === "youtube" || r.source === "enron" || r.source === "contact_form") continue;
    if (r.text.trim().length < 3) continue;
    const list = byLang.get(r.lang) ?? [];
    list.push(r);
    byLang.set(r.lang, list);
  }
  return [...byLang.entries()].sort(([a], [b]) => a.localeCompare(b)).flatMap(([, list]) => seededShuffle(list, 7).slice(0, perLang));
}

function timePerCall(c: Contender, texts: string[], rounds: number): number {
  for (const t of texts) c.detect(t); // warm-up
  const start = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) for (const t of texts) c.detect(t);
  return Number(process.hrtime.bigint() - start) / 1000 / (rounds * texts.length);
}

function main(): void {
  const { values } = parseArgs({ options: { corpora: { type: "string" }, "per-lang": { type: "string", default: "600" } } });
  if (!values.corpora) throw new Error("usage: node dist/scripts/text/language-bench.js --corpora DIR [--per-lang N]");
  const { rows } = loadCorpora(resolve(values.corpora), ["sms", "turkish", "indonesian", "sms_mt"]);
  const picked = sample(rows, Number(values["per-lang"]));
  const langs = [...new Set(picked.map((r) => r.lang!))];
  const short = picked.map((r) => r.text).filter((t) => t.length <= 80);
  const long300 = picked.filter((r) => r.text.length >= 300).map((r) => r.text.slice(0, 300));
  const mid300 = picked.map((r) => (r.text + " " + r.text + " " + r.text + " " + r.text).slice(0, 300));
  console.log(`node ${process.version}; ${picked.length} texts (${langs.map((l) => `${l} ${picked.filter((r) => r.lang === l).length}`).join(", ")}); ${long300.length} naturally >= 300 chars\n`);
  const header = ["library", "acc all", ...langs.map((l) => `acc ${l}`), ...BUCKETS.map((b) => `acc len ${b.name}`), "none %", "µs/call <=80 ch", "µs/call 300 ch"];
  console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
  for (const c of CONTENDERS) {
    const answers = picked.map((r) => c.detect(r.text));
    const acc = (keep: (r: TextRow) => boolean) => {
      let n = 0, ok = 0;
      picked.forEach((r, i) => { if (keep(r)) { n++; if (answers[i] === r.lang) ok++; } });
      return n ? ((100 * ok) / n).toFixed(1) : "-";
    };
    const none = (100 * answers.filter((a) => a === null).length) / answers.length;
    const cells = [
      c.name,
      acc(() => true),
      ...langs.map((l) => acc((r) => r.lang === l)),
      ...BUCKETS.map((b, k) => acc((r) => r.text.length < b.max && r.text.length >= (BUCKETS[k - 1]?.max ?? 0))),
      none.toFixed(1),
      timePerCall(c, short, 3).toFixed(1),
      timePerCall(c, mid300, 3).toFixed(1),
    ];
    console.log(`| ${cells.join(" | ")} |`);
  }
}

main();
