import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * Issue 39, finding 4: an org's own model driven by labels of one class. 65 spam labels and no ham
 * label fitted the calibration's intercept on one class (no finite optimum: only the prior held
 * it), and nb(x) and d(x) took words common to all the org's texts for spam: unlabelled benign
 * messages went to 0.61-0.90 (review or block). Now, until the org has ORG_MODEL_MIN_PER_CLASS
 * labels of each class, the calibration stays at the prior and the org model keeps a text on the
 * global model's side of the review threshold (docs/api.md, "The org's own model").
 */
let server!: TestApp;
useApp((s) => (server = s), { FS_FEEDBACK_PER_MINUTE: "1000" });

const WORDS = [
  "garden",
  "meeting",
  "invoice",
  "project",
  "team",
  "office",
  "schedule",
  "photo",
  "report",
  "family",
  "weekend",
  "dinner",
  "school",
  "travel",
  "music",
];
/** Polite texts the org calls spam (the global model scores them low): 65 of them, all different. */
const spamText = (i: number): string =>
  `Hello, I noticed your ${WORDS[i % 15]} page and wanted to ask about the ${WORDS[Math.floor(i / 15) % 15]} and the ${WORDS[(i * 7 + 3) % 15]}.`;
/** Benign messages the org never labelled. */
const BENIGN = [
  "Hi, I would like to book a table for four people on Friday evening, please.",
  "Could you tell me when my order will be delivered? Thanks, Anna",
  "Hello, I have a question about the opening hours of your store next week.",
  "Thank you for the quick reply, see you on Monday at the meeting.",
];

async function check(key: string, message: string): Promise<{ score: number; decision: string; p: number; model: string }> {
  const r = await api(server, "POST", "/v1/check", { key, body: { form_id: "contact", form_data: { message } } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { score: r.body.data.score, decision: r.body.data.decision, p: r.body.data.signals.content.spam_probability, model: r.body.data.fusion.model_version };
}

async function label(key: string, label: "spam" | "ham", message: string): Promise<void> {
  const r = await api(server, "POST", "/v1/feedback", { key, body: { label, form_data: { message } } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

describe("an org model from labels of one class", () => {
  it("65 spam labels and no ham: unlabelled benign messages stay allowed, below review", async () => {
    const org = await createOrgWithKey(server, "pro");
    const before = await Promise.all(BENIGN.map((m) => check(org.key, m)));
    for (const b of before) expect(b.decision).toBe("allow");
    for (let i = 0; i < 65; i++) await label(org.key, "spam", spamText(i));
    for (const m of BENIGN) {
      const after = await check(org.key, m);
      expect(after.model).toMatch(/\+org:65\+/);
      expect(after.p).toBeLessThan(0.45);
      expect(after.score).toBeLessThan(0.45);
      expect(after.decision).toBe("allow");
    }
    // Texts like the labelled ones still move up, within their side of the threshold.
    const like = await check(org.key, spamText(100));
    const fresh = await createOrgWithKey(server, "pro");
    expect(like.p).toBeGreaterThan((await check(fresh.key, spamText(100))).p);
  });

  it("with labels of both classes the org model may move a text past review", async () => {
    const org = await createOrgWithKey(server, "pro");
    const target = spamText(200);
    const fresh = await check(org.key, target);
    expect(fresh.decision).toBe("allow");
    for (let i = 0; i < 30; i++) await label(org.key, "spam", spamText(i));
    expect((await check(org.key, target)).p).toBeLessThan(0.45);
    for (let i = 0; i < 3; i++) await label(org.key, "ham", BENIGN[i]!);
    expect((await check(org.key, target)).p).toBeGreaterThanOrEqual(0.45);
  });
});
