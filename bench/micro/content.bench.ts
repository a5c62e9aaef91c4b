/**
 * Content model: analyze() on 300-character form messages (target: at most 20 µs each), and
 * its parts side by side (classifier, language, the shared lead-word scan, flags, cold-email,
 * fraud; the last three given the scan's answer, as analyze does) so a regression points at
 * its cause. Then a check's content cost for an org with its own model (POST /v1/feedback; the
 * model learned to its feature cap) against one without, as the ratio of the two in the same run.
 *
 *   node dist/bench/micro/content.bench.js
 *
 * Uses data/content-model (committed). The messages are built in this file (spam, outreach and
 * ordinary contact-form text in English, Turkish and Indonesian), each cut to exactly 300
 * characters; figures are per message.
 */
import { cpus } from "node:os";
import { Bench } from "tinybench";
import { CONTENT_MODEL_DIR, loadContentModel } from "../../src/scoring/content/index.js";
import { spamProbability } from "../../src/scoring/content/classifier.js";
import { coldEmailScore } from "../../src/scoring/content/cold-email.js";
import { detectFlags } from "../../src/scoring/content/flags.js";
import { fraudScore } from "../../src/scoring/content/fraud.js";
import { scanText } from "../../src/scoring/content/lead-words.js";
import { detectLanguage, LANGUAGE_WINDOW } from "../../src/scoring/content/language.js";
import { eldLanguage } from "../../src/scoring/content/eld-scores.js";
import { eld } from "eld/medium";
import { decodeModel } from "../../src/scoring/content/model-file.js";
import { readFileSync } from "node:fs";
import { decodeFeatures } from "../../src/scoring/content/evidence.js";
import { ORG_MODEL_LIMITS, emptyOrgModel, learnFeedback } from "../../src/scoring/org-model/model.js";
import { compileOrgModel } from "../../src/scoring/org-model/scorer.js";
import { join } from "node:path";

const TIME_MS = 1500;
const WARMUP_MS = 300;
const TARGET_US = 20;

const SEEDS = [
  "Hi, I came across your website and noticed it is not ranking on the first page of Google. Our agency offers affordable SEO, backlinks and guest posts that bring targeted traffic. Let me know if you are interested and I will send you a free audit and our price list. Best regards, Mark",
  "Hello, I ordered a blue armchair from your shop two weeks ago (order 48213) and it still has not arrived. The tracking page has not changed since Monday. Could you check what happened and tell me when I can expect it? I am at home most afternoons. Thank you, Anna",
  "URGENT! Your account has been suspended due to unusual activity. Verify your account within 24 hours at bit.ly/secure-verify or it will be closed. You have also WON a £1000 prize, call 09061701461 now to claim before it expires. Reply STOP to opt out.",
  "Merhaba, geçen hafta web sitenizden bir masa sipariş ettim ama hâlâ kargoya verilmedi. Sipariş numaram 55120. Ne zaman gönderileceğini öğrenebilir miyim? Ayrıca fatura adresimi de değiştirmek istiyorum. Teşekkürler, iyi çalışmalar dilerim.",
  "Selamat! Nomor Anda terpilih sebagai pemenang undian berhadiah mobil dan uang tunai Rp 100 juta. Segera hubungi kami dan kirim kode verifikasi yang masuk ke HP Anda untuk proses pencairan hadiah. Jangan beritahu siapa pun. Buruan sebelum hangus!",
];
const MESSAGES = SEEDS.map((s) => (s + " " + s).slice(0, 300));
/** What detectLanguage hands to eld: the first LANGUAGE_WINDOW characters, cut at a space. */
const WINDOWS = MESSAGES.map((m) => {
  const w = m.slice(0, LANGUAGE_WINDOW);
  const cut = w.lastIndexOf(" ");
  return cut > LANGUAGE_WINDOW / 2 ? w.slice(0, cut) : w;
});

function main(): Promise<void> | void {
  const model = loadContentModel();
  const decoded = decodeModel(readFileSync(join(CONTENT_MODEL_DIR, "model.bin")));
  console.log(`node ${process.version}, ${cpus()[0]?.model ?? "unknown CPU"} (${cpus().length} cores), ${process.platform}/${process.arch}`);
  console.log(`model ${model.version}; ${MESSAGES.length} messages of 300 chars per iteration; tinybench ${TIME_MS} ms per task after ${WARMUP_MS} ms warm-up\n`);
  const scans = MESSAGES.map(scanText);
  const leads = scans.map((s) => s.leads);
  const flags = MESSAGES.map((m, i) => detectFlags(m, scans[i]));
  // An org model at its bounds: the messages labelled, then random texts until the feature cap.
  let orgModel = emptyOrgModel();
  MESSAGES.forEach((m, i) => {
    const e = model.analyzeWithEvidence(m).evidence;
    orgModel = learnFeedback(orgModel, { key: `m${i}`, g: e.logit, features: decodeFeatures(e.features)! }, i % 2 === 0, null).model;
  });
  let seed = 7;
  const rand = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  for (let i = 0; orgModel.counts.size < ORG_MODEL_LIMITS.features * 0.95 && i < 5000; i++) {
    const features = Int32Array.from(new Set(Array.from({ length: 60 }, () => Math.floor(rand() * (1 << decoded.header.bits)))), (v) => v).sort();
    orgModel = learnFeedback(orgModel, { key: `r${i}`, g: rand() * 4 - 2, features }, rand() < 0.4, null).model;
  }
  const scorer = compileOrgModel(orgModel);
  const noWeights = compileOrgModel({ ...orgModel, counts: new Map([...orgModel.counts].map(([f, [s, h]]) => [f, [s, h, 0]])) });
  const weighted = [...orgModel.counts.values()].filter((c) => c[2] !== 0).length;
  const evidences = MESSAGES.map((m) => model.analyzeWithEvidence(m).evidence);
  let sink = 0;
  const tasks: [string, () => void][] = [
    ["analyze (all of it)", () => { for (const m of MESSAGES) sink += model.analyze(m).spam_probability; }],
    ["spam_probability only", () => { for (const m of MESSAGES) sink += spamProbability(decoded, m); }],
    ["language only (eld)", () => { for (const m of MESSAGES) sink += detectLanguage(m)?.length ?? 0; }],
    // The language step's eld call two ways on the same windows: eld-scores.ts (what runs) and eld.detect itself (what ran before; same answers).
    ["eld step: eld-scores", () => { for (const w of WINDOWS) sink += eldLanguage(w).length; }],
    ["eld step: eld.detect", () => { for (const w of WINDOWS) sink += eld.detect(w).language.length; }],
    ["lead-word scan", () => { for (const m of MESSAGES) sink += scanText(m).leads; }],
    ["flags only", () => { MESSAGES.forEach((m, i) => (sink += detectFlags(m, scans[i]).length)); }],
    ["cold_email only", () => { MESSAGES.forEach((m, i) => (sink += coldEmailScore(m, leads[i]))); }],
    ["fraud only", () => { MESSAGES.forEach((m, i) => (sink += fraudScore(m, flags[i]!, leads[i]))); }],
    // A check's content step: with evidence (the default history keeps it), then the org's model on it.
    ["check content: org without a model", () => { for (const m of MESSAGES) sink += model.analyzeWithEvidence(m).analysis.spam_probability; }],
    ["check content: org with a model", () => { for (const m of MESSAGES) { const r = model.analyzeWithEvidence(m); sink += scorer.probability(r.evidence); } }],
    ["org model alone (counts + weights)", () => { for (const e of evidences) sink += scorer.probability(e); }],
    ["org model alone (counts only)", () => { for (const e of evidences) sink += noWeights.probability(e); }],
  ];
  const bench = new Bench({ time: TIME_MS, warmupTime: WARMUP_MS });
  for (const [name, fn] of tasks) bench.add(name, fn);
  return bench.run().then(() => {
    const rows = bench.tasks.map((t) => {
      const r = t.result;
      if (r.state !== "completed") return { task: t.name, state: r.state };
      return {
        task: t.name,
        "µs/message (mean)": +((r.latency.mean * 1000) / MESSAGES.length).toFixed(2),
        "µs/message (p50)": +((r.latency.p50 * 1000) / MESSAGES.length).toFixed(2),
        "rme %": +r.latency.rme.toFixed(2),
        iterations: r.latency.samplesCount,
      };
    });
    console.table(rows);
    const analyze = bench.tasks[0]!.result;
    if (analyze.state === "completed") {
      const us = (analyze.latency.mean * 1000) / MESSAGES.length;
      console.log(`analyze: ${us.toFixed(2)} µs per 300-char message (target <= ${TARGET_US} µs: ${us <= TARGET_US ? "met" : "MISSED"})${sink === -1 ? "" : ""}`);
    }
    const latency = (name: string) => {
      const r = bench.tasks.find((t) => t.name === name)?.result;
      return r && r.state === "completed" ? r.latency : null;
    };
    const none = latency("check content: org without a model");
    const adapted = latency("check content: org with a model");
    if (none && adapted) {
      const ratio = (k: "mean" | "p50"): string => (adapted[k]! / none[k]!).toFixed(3);
      console.log(`org model (${orgModel.counts.size} features, ${weighted} weights): a check's content step costs ${ratio("mean")}× (mean; p50 ${ratio("p50")}×) an org without one`);
    }
  });
}

await main();
