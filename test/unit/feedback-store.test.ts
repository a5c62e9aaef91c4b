import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContentModel } from "../../src/scoring/content/index.js";
import { decodeOrgModel } from "../../src/scoring/org-model/codec.js";
import { compileOrgModel } from "../../src/scoring/org-model/scorer.js";
import { CHARGE_CODEC } from "../../src/store/charge-journal.js";
import { scopedId, type CheckHistoryRecord } from "../../src/store/records.js";
import { openState, stateTransaction, type LmdbStateDbs } from "../../src/store/state-env.js";
import { IntentApplier } from "../../src/store/writer/apply.js";

/** The writer's side of check history and feedback (writer/feedback.ts) on a real LMDB environment. */

let dir: string;
let dbs: LmdbStateDbs;
let applier: IntentApplier;
const tx = <T>(fn: () => T): T => stateTransaction(dbs, fn);
const content = loadContentModel();
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 20, 12);

function history(orgId: string, requestId: string, ts: number, text: string | null = "Premium bamboo flooring at factory prices, reply for samples"): CheckHistoryRecord {
  return {
    request_id: requestId, org_id: orgId, ts, form_id: "contact", score: 0.5, decision: "review", spam_probability: 0.5, language: "en", flags: [], org_model: 0,
    email_domain: null, evidence: text === null ? null : content.analyzeWithEvidence(text).evidence, text: null,
  };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-feedback-"));
  dbs = openState(dir, false);
  applier = new IntentApplier(dbs);
  for (const id of ["org_a", "org_b"]) tx(() => applier.apply({ op: "org.create", org: { id, name: id, plan: "pro", subscription_status: "active", trial_end: null, created_at: "2026-01-01T00:00:00Z" } }));
});
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

const feedback = (orgId: string, requestId: string, label: "spam" | "ham") => tx(() => applier.apply({ op: "feedback.apply", orgId, label, target: { kind: "request", requestId }, nowMs: NOW }));

describe("check history and feedback (writer)", () => {
  it("stores a check journaled with its debit, replayed once", () => {
    const rec = history("org_a", "req_1", NOW - 1000);
    const line = CHARGE_CODEC.encode({ seq: 1, orgId: "org_a", credits: 2, period: "202611", history: rec });
    const back = CHARGE_CODEC.decode(line)!;
    expect(back.history).toEqual(rec);
    tx(() => applier.applyCharges([back]));
    tx(() => applier.applyCharges([back]));
    expect(dbs.checks.get(["org_a", rec.ts, "req_1"])).toEqual(rec);
    expect(dbs.checkIds.get(["org_a", "req_1"])).toBe(rec.ts);
    expect(dbs.usage.get("org_a:202611")).toEqual({ used: 2, overage: 0 });
  });

  it("learns a label once, relabels, and finds no other org's check", () => {
    const first = feedback("org_a", "req_1", "spam");
    expect(first).toMatchObject({ ok: true, outcome: "recorded", learning: { model_version: 1, feedback: { spam: 1, ham: 0 } } });
    expect(feedback("org_a", "req_1", "spam")).toMatchObject({ ok: true, outcome: "repeated", model: null, learning: { model_version: 1, feedback: { repeated: 1 } } });
    expect(feedback("org_a", "req_1", "ham")).toMatchObject({ ok: true, outcome: "relabelled", learning: { model_version: 2, feedback: { spam: 0, ham: 1, relabelled: 1 } } });
    expect(dbs.checks.get(["org_a", NOW - 1000, "req_1"])!.label).toBe("ham");
    expect(feedback("org_b", "req_1", "spam")).toMatchObject({ ok: false, error: "NOT_FOUND" });
    expect(dbs.orgModels.get("org_b")).toBeUndefined();
  });

  it("changes no other org's model: another org's stored model and its scores stay as they were", () => {
    const texts = ["Premium bamboo flooring at factory prices, reply for samples", "Thanks, the chairs arrived and look great", "Wholesale bamboo decking, ask for our catalogue", "When will my table be delivered?"];
    for (const id of ["org_d", "org_e"]) tx(() => applier.apply({ op: "org.create", org: { id, name: id, plan: "pro", subscription_status: "active", trial_end: null, created_at: "2026-01-01T00:00:00Z" } }));
    texts.forEach((t, i) => tx(() => applier.feedback.keepCheck(history("org_e", `e${i}`, NOW - 100 + i, t))));
    texts.forEach((_, i) => expect(feedback("org_e", `e${i}`, i % 2 === 0 ? "spam" : "ham")).toMatchObject({ ok: true }));
    const stored = Buffer.from(dbs.orgModels.get("org_e")!);
    const probe = content.analyzeWithEvidence("bamboo flooring for the hotel lobby").evidence;
    const before = compileOrgModel(decodeOrgModel(stored)).probability(probe);
    for (let i = 0; i < 20; i++) {
      tx(() => applier.feedback.keepCheck(history("org_d", `d${i}`, NOW - 50 + i, `${texts[i % 4]} (${i})`)));
      expect(feedback("org_d", `d${i}`, i % 4 === 0 ? "ham" : "spam")).toMatchObject({ ok: true });
    }
    expect(dbs.orgModels.get("org_d")).toBeDefined();
    expect(Buffer.compare(Buffer.from(dbs.orgModels.get("org_e")!), stored)).toBe(0);
    expect(compileOrgModel(decodeOrgModel(dbs.orgModels.get("org_e")!)).probability(probe)).toBe(before);
  });

  it("refuses feedback on a check without text", () => {
    tx(() => applier.feedback.keepCheck(history("org_a", "req_notext", NOW, null)));
    expect(feedback("org_a", "req_notext", "spam")).toMatchObject({ ok: false, error: "CONFLICT" });
  });

  it("deletes checks past the org's retention, and all of them for mode none", () => {
    for (const [id, age] of [["old", 40], ["mid", 10], ["new", 0]] as const) tx(() => applier.feedback.keepCheck(history("org_b", id, NOW - age * DAY)));
    tx(() => applier.feedback.prune(NOW));
    const ids = () => [...dbs.checks.getKeys({ start: ["org_b"], end: ["org_b", Number.MAX_SAFE_INTEGER] })].map((k) => k[2]);
    expect(ids()).toEqual(["mid", "new"]);
    expect(dbs.checkIds.get(["org_b", "old"])).toBeUndefined();
    // org_a's checks (default 30 days) are untouched.
    expect(dbs.checks.get(["org_a", NOW - 1000, "req_1"])).toBeDefined();
    tx(() => applier.apply({ op: "history.set", orgId: "org_b", setting: { mode: "features", days: 5 }, nowMs: NOW }));
    expect(ids()).toEqual(["new"]);
    tx(() => applier.apply({ op: "history.set", orgId: "org_b", setting: { mode: "none", days: 5 }, nowMs: NOW }));
    expect(ids()).toEqual([]);
    expect(tx(() => applier.apply({ op: "history.set", orgId: "org_none", setting: { mode: "none", days: 5 }, nowMs: NOW }))).toMatchObject({ ok: false, error: "NOT_FOUND" });
  });

  it("keeps an org's test checks (its test scope, issue 29) as long as the org's own setting says", () => {
    const test = scopedId("org_a", true);
    tx(() => applier.apply({ op: "history.set", orgId: "org_a", setting: { mode: "features", days: 60 }, nowMs: NOW }));
    for (const [id, age] of [["t_old", 70], ["t_mid", 40], ["t_new", 0]] as const) tx(() => applier.feedback.keepCheck(history(test, id, NOW - age * DAY)));
    const ids = () => [...dbs.checks.getKeys({ start: [test], end: [test, Number.MAX_SAFE_INTEGER] })].map((k) => k[2]);
    // The retention pass reads the org's 60 days, not the default 30 of a scope without a setting.
    tx(() => applier.feedback.prune(NOW));
    expect(ids()).toEqual(["t_mid", "t_new"]);
    // Changing the org's setting deletes its test checks past it at once, as its live ones.
    tx(() => applier.apply({ op: "history.set", orgId: "org_a", setting: { mode: "features", days: 5 }, nowMs: NOW }));
    expect(ids()).toEqual(["t_new"]);
    expect(dbs.orgLearning.get(test)).toBeUndefined();
  });

  it("prunes in bounded steps and goes on where it stopped", () => {
    for (let i = 0; i < 30; i++) tx(() => applier.feedback.keepCheck(history("org_c", `r${i}`, NOW - 100 * DAY + i, null)));
    let passes = 0;
    for (;;) {
      passes++;
      const r = tx(() => applier.feedback.prune(NOW, 7));
      if (!r.more) break;
    }
    expect(passes).toBeGreaterThanOrEqual(5);
    expect([...dbs.checks.getKeys({ start: ["org_c"], end: ["org_c", Number.MAX_SAFE_INTEGER] })]).toEqual([]);
  });
});
