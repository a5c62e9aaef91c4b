import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";

/**
 * POST /v1/feedback, check history and per-org models over HTTP, on the real server (LMDB here,
 * PostgreSQL in the integration-pg project): a label moves that org's next verdict on similar text
 * and no other org's; a repeat counts once; kill -9 keeps it; another org's request is 404 as an
 * unknown one; history past its retention is deleted.
 */

// A sales pitch the global model is unsure about: an org that gets such mail as spam teaches it.
const PITCH = "Hello, we supply premium bamboo flooring and decking for hotels and offices at factory prices. Reply to this message for our catalogue and a free sample pack.";
const PITCH_2 = "Hi there, our factory makes premium bamboo flooring and decking for offices. Reply for a free sample pack and our price list for hotels.";
const PITCH_3 = "Good morning, premium bamboo decking and flooring straight from our factory, ideal for hotels. Ask for our catalogue and a free sample.";
const SIMILAR = "Dear manager, we offer premium bamboo flooring and decking at factory prices for hotels and offices. Reply for a free sample pack and our catalogue.";

let server: TestServer;
let a: { orgId: string; key: string };
let b: { orgId: string; key: string };

beforeAll(async () => {
  server = await startServer();
  a = await createOrgWithKey(server, "pro");
  b = await createOrgWithKey(server, "pro");
});

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
});

async function check(key: string, message: string, headers: Record<string, string> = {}) {
  const r = await api(server, "POST", "/v1/check", { key, body: { form_id: "contact", form_data: { name: "Li Wei", message } }, headers });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { requestId: r.body.metadata.request_id as string, p: r.body.data.signals.content.spam_probability as number, data: r.body.data };
}

function feedback(key: string, body: unknown, headers: Record<string, string> = {}) {
  return api(server, "POST", "/v1/feedback", { key, body, headers });
}

describe("POST /v1/feedback", () => {
  it("moves the org's next verdict on similar text, and not another org's", async () => {
    const beforeA = await check(a.key, SIMILAR);
    const beforeB = await check(b.key, SIMILAR);
    expect(beforeA.p).toBe(beforeB.p); // the same global model for both
    expect(beforeA.data.fusion.model_version).not.toMatch(/\+org:/);

    // Org A marks three pitches as spam: one by its check's request id, two sent again as content.
    const first = await check(a.key, PITCH);
    const r1 = await feedback(a.key, { label: "spam", request_id: first.requestId });
    expect(r1.status, JSON.stringify(r1.body)).toBe(200);
    expect(r1.body.data).toMatchObject({ label: "spam", target: "request", request_id: first.requestId, outcome: "recorded", model_version: 1 });
    expect(r1.body.metadata.credits).toBe(0);
    for (const message of [PITCH_2, PITCH_3]) {
      const r = await feedback(a.key, { label: "spam", form_id: "contact", form_data: { name: "Li Wei", message } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data).toMatchObject({ target: "content", request_id: null, outcome: "recorded" });
    }

    const afterA = await check(a.key, SIMILAR);
    expect(afterA.p).toBeGreaterThan(beforeA.p + 0.1);
    expect(afterA.data.fusion.model_version).toMatch(/\+org:3\+/);
    expect(afterA.data.rule_matches.find((m: { rule: string }) => m.rule === "content_model").detail).toContain("org model v3");
    // Org B's verdict is exactly what it was.
    const afterB = await check(b.key, SIMILAR);
    expect(afterB.p).toBe(beforeB.p);
    expect(afterB.data.score).toBe(beforeB.data.score);

    // The org's figures, and its check marked in its history.
    const figures = await api(server, "GET", `/v1/orgs/${a.orgId}/feedback`, { key: a.key });
    expect(figures.body.data).toMatchObject({ model_version: 3, feedback: { spam: 3, ham: 0, relabelled: 0, repeated: 0 } });
    expect(figures.body.data.agreement).toHaveLength(1);
    expect(figures.body.data.agreement[0].feedback).toBe(3);
    const listed = await api(server, "GET", `/v1/orgs/${a.orgId}/checks?label=spam`, { key: a.key });
    expect(listed.body.data.items.map((c: { request_id: string }) => c.request_id)).toEqual([first.requestId]);
    expect(listed.body.data.items[0]).toMatchObject({ label: "spam", learnable: true, text: null, form_id: "contact" });
  });

  it("counts a repeat once: the same request id again, and a replay with the same Idempotency-Key", async () => {
    const c = await check(a.key, "We build mobile apps and websites for small businesses, fixed price, delivered in two weeks. Shall I send examples?");
    const key = randomUUID();
    const r1 = await feedback(a.key, { label: "spam", request_id: c.requestId }, { "idempotency-key": key });
    expect(r1.body.data.outcome).toBe("recorded");
    const version = r1.body.data.model_version;
    const replay = await feedback(a.key, { label: "spam", request_id: c.requestId }, { "idempotency-key": key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.data).toEqual(r1.body.data);
    const again = await feedback(a.key, { label: "spam", request_id: c.requestId });
    expect(again.body.data).toMatchObject({ outcome: "repeated", model_version: version });
    expect(again.body.data.feedback.spam).toBe(r1.body.data.feedback.spam);
    // Another label for the same check replaces the first: still one example.
    const flip = await feedback(a.key, { label: "ham", request_id: c.requestId });
    expect(flip.body.data).toMatchObject({ outcome: "relabelled", model_version: version + 1 });
    expect(flip.body.data.feedback.spam + flip.body.data.feedback.ham).toBe(r1.body.data.feedback.spam + r1.body.data.feedback.ham);
  });

  it("answers another org's request id exactly as an unknown one: 404", async () => {
    const theirs = await check(b.key, PITCH);
    const unknown = `req_${randomUUID().slice(0, 12)}`;
    const r1 = await feedback(a.key, { label: "spam", request_id: theirs.requestId });
    const r2 = await feedback(a.key, { label: "spam", request_id: unknown });
    expect(r1.status).toBe(404);
    expect(r2.status).toBe(404);
    expect(r1.body.error.code).toBe(r2.body.error.code);
    expect(r1.body.error.message.replace(theirs.requestId, "ID")).toBe(r2.body.error.message.replace(unknown, "ID"));
    // And it taught org A nothing.
    const figures = await api(server, "GET", `/v1/orgs/${a.orgId}/feedback`, { key: a.key });
    expect(figures.body.data.feedback.spam + figures.body.data.feedback.ham).toBe(4);
  });

  it("refuses bad input in the envelope: both or neither target, no text, a bad label", async () => {
    const both = await feedback(a.key, { label: "spam", request_id: "req_x", form_data: { message: PITCH } });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe("VALIDATION_ERROR");
    expect((await feedback(a.key, { label: "spam" })).status).toBe(400);
    expect((await feedback(a.key, { label: "maybe", request_id: "req_x" })).body.error.code).toBe("VALIDATION_ERROR");
    const noText = await feedback(a.key, { label: "spam", form_data: { email: "x@example.com" } });
    expect(noText.status).toBe(422);
    expect(noText.body.error.code).toBe("MISSING_REQUIRED_DATA");
  });
});

describe("check history", () => {
  it("keeps nothing with mode none, and the text with mode text", async () => {
    const org = await createOrgWithKey(server, "pro");
    const dflt = await api(server, "GET", `/v1/orgs/${org.orgId}/check-history`, { key: org.key });
    expect(dflt.body.data).toEqual({ mode: "features", days: 30, default: true });
    expect((await api(server, "PUT", `/v1/orgs/${org.orgId}/check-history`, { key: org.key, body: { mode: "text", days: 7 } })).body.data).toEqual({ mode: "text", days: 7, default: false });
    const kept = await check(org.key, PITCH);
    let list = await api(server, "GET", `/v1/orgs/${org.orgId}/checks`, { key: org.key });
    expect(list.body.data.items[0]).toMatchObject({ request_id: kept.requestId, text: expect.stringContaining("bamboo flooring") });
    await api(server, "PUT", `/v1/orgs/${org.orgId}/check-history`, { key: org.key, body: { mode: "none", days: 7 } });
    list = await api(server, "GET", `/v1/orgs/${org.orgId}/checks`, { key: org.key });
    expect(list.body.data.items).toEqual([]);
    const notKept = await check(org.key, PITCH);
    expect((await feedback(org.key, { label: "spam", request_id: notKept.requestId })).status).toBe(404);
    // Another org's settings and history are not reachable.
    expect((await api(server, "GET", `/v1/orgs/${org.orgId}/checks`, { key: a.key })).status).toBe(404);
    expect((await api(server, "PUT", `/v1/orgs/${org.orgId}/check-history`, { key: a.key, body: { mode: "text", days: 1 } })).status).toBe(404);
  });

  it("deletes an org's checks once its retention ends", async () => {
    const org = await createOrgWithKey(server, "pro");
    const day = 86_400_000;
    // Checks made (by the test clock) 3 and 40 days ago, and one now.
    const old = await check(org.key, PITCH, { "x-fs-test-now": String(Date.now() - 3 * day) });
    const older = await check(org.key, PITCH_2, { "x-fs-test-now": String(Date.now() - 40 * day) });
    const recent = await check(org.key, PITCH_3);
    const ids = async (): Promise<string[]> => (await api(server, "GET", `/v1/orgs/${org.orgId}/checks`, { key: org.key })).body.data.items.map((c: { request_id: string }) => c.request_id);
    // Past the default 30 days: gone at the retention pass (it runs at start, then every 10 minutes).
    expect(await ids()).toEqual([recent.requestId, old.requestId, older.requestId]);
    await server.stop();
    await server.restart();
    expect(await ids()).toEqual([recent.requestId, old.requestId]);
    expect((await feedback(org.key, { label: "spam", request_id: older.requestId })).status).toBe(404);
    // A shorter retention deletes what it no longer keeps at once.
    await api(server, "PUT", `/v1/orgs/${org.orgId}/check-history`, { key: org.key, body: { mode: "features", days: 1 } });
    expect(await ids()).toEqual([recent.requestId]);
    expect((await feedback(org.key, { label: "spam", request_id: old.requestId })).status).toBe(404);
    expect((await feedback(org.key, { label: "spam", request_id: recent.requestId })).status).toBe(200);
  });
});

describe("durability", () => {
  it("kill -9 right after feedback: the org model and the check's label survive", async () => {
    const org = await createOrgWithKey(server, "pro");
    const c = await check(org.key, PITCH);
    const before = await check(org.key, SIMILAR);
    const r = await feedback(org.key, { label: "spam", request_id: c.requestId });
    expect(r.status).toBe(200);
    const adapted = await check(org.key, SIMILAR);
    expect(adapted.p).toBeGreaterThan(before.p);
    await server.kill9();
    await server.restart();
    const after = await check(org.key, SIMILAR);
    expect(after.p).toBe(adapted.p);
    const figures = await api(server, "GET", `/v1/orgs/${org.orgId}/feedback`, { key: org.key });
    expect(figures.body.data).toMatchObject({ model_version: 1, feedback: { spam: 1, ham: 0 } });
    const listed = await api(server, "GET", `/v1/orgs/${org.orgId}/checks?label=spam`, { key: org.key });
    expect(listed.body.data.items.map((x: { request_id: string }) => x.request_id)).toEqual([c.requestId]);
    // The checks answered just before the kill are in the history (journaled with their debits).
    const all = await api(server, "GET", `/v1/orgs/${org.orgId}/checks`, { key: org.key });
    expect(all.body.data.items.map((x: { request_id: string }) => x.request_id)).toContain(adapted.requestId);
  });
});
