import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

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

describe("POST /v1/orgs/{orgId}/model/reset", () => {
  it("answers as a fresh org's after the reset, learns labels again, and the reset survives a restart", async () => {
    const org = await createOrgWithKey(server, "pro");
    const fresh = await createOrgWithKey(server, "pro");
    const text = spamText(7);
    const freshCheck = await check(fresh.key, text);
    for (let i = 0; i < 20; i++) await label(org.key, i < 17 ? "spam" : "ham", i < 17 ? spamText(i) : BENIGN[i - 17]!);
    const trained = await check(org.key, text);
    expect(trained.model).toMatch(/\+org:20\+/);
    expect(trained.p).not.toBe(freshCheck.p);

    // A test key cannot reset it, nor another org's key (404, as an unknown org).
    const testKey = await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/keys`, { mode: "test", type: "secret" });
    expect(testKey.status).toBe(201);
    const byTest = await api(server, "POST", `/v1/orgs/${org.orgId}/model/reset`, { key: testKey.body.data.key });
    expect(byTest.status).toBe(403);
    expect(byTest.body.error.code).toBe("INSUFFICIENT_SCOPE");
    expect((await api(server, "POST", `/v1/orgs/${org.orgId}/model/reset`, { key: fresh.key })).status).toBe(404);
    expect((await check(org.key, text)).model).toMatch(/\+org:20\+/);

    const reset = await api(server, "POST", `/v1/orgs/${org.orgId}/model/reset`, { key: org.key, headers: { "idempotency-key": "reset-1" } });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect(reset.body.data).toMatchObject({ model_version: 0, feedback: { spam: 0, ham: 0, relabelled: 0, repeated: 0 } });
    expect(reset.body.metadata.credits).toBe(0);
    const after = await check(org.key, text);
    expect(after).toEqual({ ...freshCheck, model: freshCheck.model });
    expect(after.model).not.toMatch(/\+org:/);
    const figures = await api(server, "GET", `/v1/orgs/${org.orgId}/feedback`, { key: org.key });
    expect(figures.body.data).toMatchObject({ model_version: 0, feedback: { spam: 0, ham: 0 }, agreement: [] });
    // A retry with the same Idempotency-Key gets the first answer.
    const replay = await api(server, "POST", `/v1/orgs/${org.orgId}/model/reset`, { key: org.key, headers: { "idempotency-key": "reset-1" } });
    expect(replay.body.data).toEqual(reset.body.data);

    // The reset is durable: after a restart the org still answers as a fresh one.
    await server.stop();
    await server.restart();
    expect(await check(org.key, text)).toEqual(after);

    // A label given before the reset is learned anew, not counted as a repeat.
    const again = await api(server, "POST", "/v1/feedback", { key: org.key, body: { label: "spam", form_data: { message: spamText(0) } } });
    expect(again.body.data).toMatchObject({ outcome: "recorded", model_version: 1, feedback: { spam: 1, ham: 0 } });
    expect((await check(org.key, text)).model).toMatch(/\+org:1\+/);
  });
});

describe("the dashboard's reset of the org's model", () => {
  async function signIn(key: string): Promise<string> {
    const res = await server.fetch(`${server.url}/dashboard/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: new URLSearchParams({ key }).toString(),
      redirect: "manual",
    });
    expect(res.status, await res.text()).toBe(303);
    return (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  }
  const get = async (cookie: string, path: string) => server.fetch(`${server.url}${path}`, { headers: { cookie }, redirect: "manual" });
  const post = async (cookie: string, csrf: string, fields: Record<string, string>) =>
    server.fetch(`${server.url}/dashboard/checks/reset-model`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url, cookie },
      body: new URLSearchParams({ csrf, ...fields }).toString(),
      redirect: "manual",
    });
  const version = async (org: { orgId: string; key: string }): Promise<number> =>
    (await api(server, "GET", `/v1/orgs/${org.orgId}/feedback`, { key: org.key })).body.data.model_version;

  it("asks for confirmation first, then resets; a test key's session cannot", async () => {
    const org = await createOrgWithKey(server, "pro");
    for (let i = 0; i < 4; i++) await label(org.key, i % 2 ? "spam" : "ham", i % 2 ? spamText(i) : BENIGN[i]!);
    const cookie = await signIn(org.key);
    const checks = await (await get(cookie, "/dashboard/checks")).text();
    expect(checks).toContain('href="/dashboard/checks/reset-model/confirm"');
    const csrf = /name="csrf" value="([^"]+)"/.exec(checks)![1]!;

    // Without confirm=yes the action only sends the browser to the confirmation page.
    const unconfirmed = await post(cookie, csrf, {});
    expect(unconfirmed.status).toBe(303);
    expect(unconfirmed.headers.get("location")).toBe("/dashboard/checks/reset-model/confirm");
    expect(await version(org)).toBe(4);
    const confirm = await (await get(cookie, "/dashboard/checks/reset-model/confirm")).text();
    expect(confirm).toMatch(/Reset the org&#39;s model\?|Reset the org's model\?/);
    expect(confirm).toContain('name="confirm" value="yes"');

    const done = await post(cookie, csrf, { confirm: "yes" });
    expect(done.status).toBe(303);
    expect(await version(org)).toBe(0);
    expect(await (await get(cookie, "/dashboard/checks")).text()).not.toContain("/dashboard/checks/reset-model/confirm");

    // A test key's session: refused (the live model scores live checks), nothing reset.
    for (let i = 0; i < 2; i++) await label(org.key, i % 2 ? "spam" : "ham", i % 2 ? spamText(i) : BENIGN[i]!);
    const testKey = await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/keys`, { mode: "test", type: "secret" });
    const testCookie = await signIn(testKey.body.data.key);
    const testPage = await (await get(testCookie, "/dashboard/checks")).text();
    expect(testPage).not.toContain("/dashboard/checks/reset-model/confirm");
    const testCsrf = /name="csrf" value="([^"]+)"/.exec(testPage)![1]!;
    expect((await get(testCookie, "/dashboard/checks/reset-model/confirm")).status).toBe(403);
    expect((await post(testCookie, testCsrf, { confirm: "yes" })).status).toBe(403);
    expect(await version(org)).toBe(2);
  });
});
