import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createBeaconProject } from "../integration/helpers/server.js";

/**
 * Issue 29: what test-mode keys record (beacon observations and sessions, session bindings, check
 * history, feedback and the org model it trains) is kept apart from live data, as Stripe's test
 * mode is: each mode's keys see their own only, and a test session is unknown to a live key.
 */

let server!: TestApp;
const TEST_HISTORY_PER_DAY = 3;
useApp((s) => (server = s), { FS_TRUSTED_PROXIES: "127.0.0.1,::1", FS_TEST_HISTORY_PER_DAY: String(TEST_HISTORY_PER_DAY) });

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const BROWSER = { "user-agent": CHROME, "x-forwarded-for": "73.15.20.30", "accept-encoding": "gzip, deflate, br", "accept-language": "en-US,en;q=0.9" };
const PITCH = "Cheap followers and guaranteed backlinks for your site, best SEO package, limited offer, click now";

/** A beacon project with live and test keys of both types. */
async function projectWithTestKeys() {
  const p = await createBeaconProject(server);
  const key = async (body: object) => {
    const r = await admin(server, "POST", `/v1/admin/orgs/${p.orgId}/keys`, { mode: "test", ...body });
    expect(r.status).toBe(201);
    return r.body.data.key as string;
  };
  return { ...p, testSecret: await key({ type: "secret", scopes: ["sessions"] }), testPublishable: await key({ type: "publishable", project_id: p.projectId }) };
}

type Project = Awaited<ReturnType<typeof projectWithTestKeys>>;

/** A handshake and a page view with this publishable key: the hit's observation id and session. */
async function visit(key: string, token?: { token: string; session_id: string }) {
  const hs = token ?? (await api(server, "POST", "/v1/handshake", { key, body: {}, headers: BROWSER })).body.data;
  const r = await api(server, "POST", "/v1/collect", { key, body: { action: "pageview", token: hs.token, session_id: hs.session_id, page: "/signup" }, headers: BROWSER });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { observationId: r.body.data.observation_id as string, sessionId: r.body.data.session_id as string, token: hs.token as string };
}

async function listed(p: Project, key: string, query = ""): Promise<string[]> {
  const r = await api(server, "GET", `/v1/projects/${p.projectId}/observations${query}`, { key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.items.map((o: { id: string }) => o.id);
}

async function checkIds(p: Project, key: string): Promise<string[]> {
  const r = await api(server, "GET", `/v1/orgs/${p.orgId}/checks`, { key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.items.map((c: { request_id: string }) => c.request_id);
}

describe("test-mode data is kept apart from live data", () => {
  it("observations recorded with fs_pub_test_ are listed for test keys only, and live ones for live keys only", async () => {
    const p = await projectWithTestKeys();
    const live = await visit(p.publishableKey);
    const test = await visit(p.testPublishable);
    expect(await listed(p, p.secretKey)).toEqual([live.observationId]);
    expect(await listed(p, p.testSecret)).toEqual([test.observationId]);
    // Filtered by session: the other mode's session lists nothing.
    expect(await listed(p, p.secretKey, `?session_id=${test.sessionId}`)).toEqual([]);
    expect(await listed(p, p.testSecret, `?session_id=${live.sessionId}`)).toEqual([]);
    expect(await listed(p, p.testSecret, `?session_id=${test.sessionId}`)).toEqual([test.observationId]);
  });

  it("a session minted under a test key is unknown to live keys, answered as an unknown one, and the other way round", async () => {
    const p = await projectWithTestKeys();
    const test = await visit(p.testPublishable);
    const live = await visit(p.publishableKey);
    const resolve = (key: string, session_id: string) =>
      api(server, "POST", "/v1/sessions/resolve", { key, body: { external_user_id: "user_1", observation_type: "auth.login", session_id } });
    const unknown = (await resolve(p.secretKey, "s_0000000000000000000000")).body.data;
    const liveOnTest = (await resolve(p.secretKey, test.sessionId)).body.data;
    expect(liveOnTest.continuity).toEqual(unknown.continuity);
    expect(liveOnTest.verdict_source).toBe(unknown.verdict_source);
    expect((await resolve(p.testSecret, test.sessionId)).body.data.continuity).toMatchObject({ found: true, observation_count: 1 });
    expect((await resolve(p.testSecret, live.sessionId)).body.data.continuity.found).toBe(false);
    expect((await resolve(p.secretKey, live.sessionId)).body.data.continuity.found).toBe(true);
    // The pre-flight and the deep check read sessions the same way.
    const auth = await api(server, "POST", "/v1/auth/check", { key: p.secretKey, body: { observation_type: "auth.login", session_id: test.sessionId } });
    expect(auth.body.data.continuity.found).toBe(false);
    const deep = await api(server, "POST", "/v1/check/deep", { key: p.secretKey, body: { form_id: "signup", session_id: test.sessionId, metadata: { ip: "8.8.8.8" } } });
    expect(deep.body.data.deep.session).toMatchObject({ status: "skipped", reason: "not_found" });
    const testDeep = await api(server, "POST", "/v1/check/deep", { key: p.testSecret, body: { form_id: "signup", session_id: test.sessionId, metadata: { ip: "8.8.8.8" } } });
    expect(testDeep.body.data.deep.session).toMatchObject({ status: "resolved" });
    // A test session's token continues nothing on a live key: the live hit starts a session of its own.
    const crossed = await visit(p.publishableKey, { token: test.token, session_id: test.sessionId });
    expect(crossed.sessionId).not.toBe(test.sessionId);
  });

  it("a test key's bindings are its own: accounts a live resolve bound are not counted for a test key", async () => {
    const p = await projectWithTestKeys();
    const resolve = (key: string, user: string) => api(server, "POST", "/v1/sessions/resolve", { key, body: { external_user_id: user, observation_type: "auth.signup", fingerprint: "fp-shared-1" } });
    await resolve(p.secretKey, "live_a");
    expect((await resolve(p.secretKey, "live_b")).body.data.correlation.accounts_sharing_fingerprint).toBe(1);
    expect((await resolve(p.testSecret, "test_a")).body.data.correlation.accounts_sharing_fingerprint).toBe(0);
  });

  it("check history: a test key's checks are listed for test keys only, and feedback crosses no mode", async () => {
    const p = await projectWithTestKeys();
    const check = async (key: string) => {
      const r = await api(server, "POST", "/v1/check", { key, body: { form_id: "contact", form_data: { name: "Li Wei", message: PITCH } } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.metadata.request_id as string;
    };
    const live = await check(p.secretKey);
    const test = await check(p.testSecret);
    expect(await checkIds(p, p.secretKey)).toEqual([live]);
    expect(await checkIds(p, p.testSecret)).toEqual([test]);
    const feedback = (key: string, request_id: string) => api(server, "POST", "/v1/feedback", { key, body: { label: "spam", request_id } });
    expect((await feedback(p.secretKey, test)).body.error.code).toBe("NOT_FOUND");
    expect((await feedback(p.testSecret, live)).body.error.code).toBe("NOT_FOUND");
    expect((await feedback(p.testSecret, test)).body.data.outcome).toBe("recorded");
    expect((await api(server, "GET", `/v1/orgs/${p.orgId}/checks?label=spam`, { key: p.testSecret })).body.data.items.map((c: { request_id: string }) => c.request_id)).toEqual([test]);
    expect((await api(server, "GET", `/v1/orgs/${p.orgId}/checks?label=spam`, { key: p.secretKey })).body.data.items).toEqual([]);
  });

  it("a test key's checks, charged nothing, are kept up to FS_TEST_HISTORY_PER_DAY a day; live checks are not counted", async () => {
    const p = await projectWithTestKeys();
    const check = (key: string) => api(server, "POST", "/v1/check", { key, body: { form_id: "contact", form_data: { message: PITCH } } });
    for (let i = 0; i < TEST_HISTORY_PER_DAY + 2; i++) expect((await check(p.testSecret)).status).toBe(200);
    for (let i = 0; i < 2; i++) await check(p.secretKey);
    expect(await checkIds(p, p.testSecret)).toHaveLength(TEST_HISTORY_PER_DAY);
    expect(await checkIds(p, p.secretKey)).toHaveLength(2);
  });

  it("a test key's feedback never moves the live org model, which live checks keep using", async () => {
    const p = await projectWithTestKeys();
    const body = { form_id: "contact", form_data: { name: "Li Wei", message: PITCH } };
    const before = await api(server, "POST", "/v1/check", { key: p.secretKey, body });
    for (const word of ["garden", "kitchen", "bicycle"]) {
      const r = await api(server, "POST", "/v1/feedback", { key: p.testSecret, body: { label: "ham", form_data: { message: `${PITCH} ${word}` } } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const figures = async (key: string) => (await api(server, "GET", `/v1/orgs/${p.orgId}/feedback`, { key })).body.data;
    expect(await figures(p.secretKey)).toMatchObject({ model_version: 0, feedback: { spam: 0, ham: 0 } });
    expect(await figures(p.testSecret)).toMatchObject({ model_version: 3, feedback: { ham: 3 } });
    const after = await api(server, "POST", "/v1/check", { key: p.secretKey, body });
    expect(after.body.data.signals.content.spam_probability).toBe(before.body.data.signals.content.spam_probability);
    // The test keys' checks are scored with the model their feedback trained.
    const test = await api(server, "POST", "/v1/check", { key: p.testSecret, body });
    expect(test.body.data.signals.content.spam_probability).toBeLessThan(before.body.data.signals.content.spam_probability);
  });
});

describe("the dashboard's live / test data switch", () => {
  async function signIn(key: string): Promise<string> {
    const res = await server.fetch(`${server.url}/dashboard/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: new URLSearchParams({ key }).toString(),
      redirect: "manual",
    });
    await res.arrayBuffer();
    expect(res.status).toBe(303);
    return (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  }
  async function html(cookie: string, path: string): Promise<string> {
    const res = await server.fetch(`${server.url}${path}`, { headers: { cookie }, redirect: "manual" });
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(200);
    return text;
  }

  it("shows live observations and checks by default, and the test keys' with data=test", async () => {
    const p = await projectWithTestKeys();
    const live = await visit(p.publishableKey);
    const test = await visit(p.testPublishable);
    const check = async (key: string) => (await api(server, "POST", "/v1/check", { key, body: { form_id: "contact", form_data: { message: PITCH } } })).body.metadata.request_id as string;
    const liveCheck = await check(p.secretKey);
    const testCheck = await check(p.testSecret);
    const cookie = await signIn(p.secretKey);

    const hits = await html(cookie, `/dashboard/observations?project=${p.projectId}`);
    expect(hits).toContain('data-mode="live"');
    expect(hits).toContain(live.sessionId);
    expect(hits).not.toContain(test.sessionId);
    const testHits = await html(cookie, `/dashboard/observations?project=${p.projectId}&data=test`);
    expect(testHits).toContain('data-mode="test"');
    expect(testHits).toContain(test.sessionId);
    expect(testHits).not.toContain(live.sessionId);
    // A hit's page follows the switch: a test hit is found with data=test only.
    const seq = /observations\/hit\?project=[^&]+&amp;seq=(\d+)&amp;data=test/.exec(testHits)?.[1];
    expect(seq).toBeDefined();
    expect(await html(cookie, `/dashboard/observations/hit?project=${p.projectId}&seq=${seq}&data=test`)).toContain(test.sessionId);

    const checks = await html(cookie, "/dashboard/checks");
    expect(checks).toContain(liveCheck);
    expect(checks).not.toContain(testCheck);
    const testChecks = await html(cookie, "/dashboard/checks?data=test");
    expect(testChecks).toContain(testCheck);
    expect(testChecks).not.toContain(liveCheck);
  });
});
