import { describe, expect, it } from "vitest";
import { startApp, useApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject, createOrgWithKey } from "../integration/helpers/server.js";

/** POST /v1/sessions/resolve and POST /v1/meter over HTTP against the real writer. */

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
let server!: TestApp;
useApp((s) => (server = s), { FS_TRUSTED_PROXIES: "127.0.0.1,::1", FS_ENABLE_METER: "true" });

type Site = Awaited<ReturnType<typeof createBeaconProject>>;

/** A browser session as the beacon makes it: handshake, then one page view. */
async function browserSession(site: Site, ip = "73.15.20.30", tells: string[] = []): Promise<string> {
  const h = await api(server, "POST", "/v1/handshake", { key: site.publishableKey, body: {} });
  const { token, session_id } = h.body.data;
  const c = await api(server, "POST", "/v1/collect", { key: site.publishableKey, body: { token, session_id, signals: { tells } }, headers: { "user-agent": CHROME, "x-forwarded-for": ip, "accept-encoding": "gzip, deflate, br", "accept-language": "en-US" } });
  expect(c.status).toBe(200);
  return session_id;
}

function resolve(site: Site, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return api(server, "POST", "/v1/sessions/resolve", { key: site.secretKey, body: { observation_type: "auth.signup", ...body }, headers });
}

function meter(site: Site, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return api(server, "POST", "/v1/meter", { key: site.secretKey, body, headers });
}

describe("POST /v1/sessions/resolve", () => {
  it("binds a user to a beacon session: every documented field, 2 credits", async () => {
    const site = await createBeaconProject(server);
    const sid = await browserSession(site);
    const r = await resolve(site, { external_user_id: "user-1", session_id: sid, ip: "73.15.20.30", email: "Ann@Example.com", fingerprint: "abc123" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const d = r.body.data;
    expect(d.request_id).toBe(r.body.metadata.request_id);
    expect(d.bound).toBe(true);
    expect(d.verdict).toMatchObject({ decision: "allow", reasons: [] });
    expect(d.verdict.score).toBeLessThan(0.45);
    expect(d.verdict_source).toBe("session");
    expect(d.continuity).toMatchObject({ found: true, observation_count: 1, is_fresh: true });
    expect(d.continuity.first_seen).toBeGreaterThan(Date.now() - 60_000);
    expect(d.continuity.age_seconds).toBeGreaterThanOrEqual(0);
    expect(d.correlation).toMatchObject({ accounts_sharing_session: 0, accounts_sharing_fingerprint: 0, accounts_sharing_ip: 0, linked_emails: 0, accounts_sharing_prefix: 0, known_account: false });
    expect(typeof d.processing_time_ms).toBe("number");
    expect(r.body.metadata.credits).toBe(2);
  });

  it("counts distinct other accounts per session, fingerprint, IP, prefix and emails; the verdict names multi-account use", async () => {
    const site = await createBeaconProject(server);
    const sid = await browserSession(site);
    const base = { session_id: sid, fingerprint: "fp-1", ip: "73.15.20.30" };
    await resolve(site, { ...base, external_user_id: "alice", email: "alice@example.com" });
    const again = await resolve(site, { ...base, external_user_id: "alice", email: "alice@example.com", observation_type: "auth.login" }); // same account again
    expect(again.body.data.correlation.known_account).toBe(true);
    const bob = await resolve(site, { ...base, external_user_id: "bob", email: "bob@example.com" });
    expect(bob.body.data.correlation).toMatchObject({ accounts_sharing_session: 1, accounts_sharing_fingerprint: 1, accounts_sharing_ip: 1, linked_emails: 1 });
    expect(bob.body.data.verdict.reasons).toEqual(expect.arrayContaining(["multi_account:session", "multi_account:fingerprint"]));
    const carol = await resolve(site, { ...base, ip: "73.15.20.31", external_user_id: "carol", email: "carol@example.com" });
    expect(carol.body.data.correlation).toMatchObject({ accounts_sharing_session: 2, accounts_sharing_fingerprint: 2, accounts_sharing_ip: 0, accounts_sharing_prefix: 2, linked_emails: 2 });
    expect(carol.body.data.verdict.reasons).toContain("many_emails");
    expect(carol.body.data.verdict.score).toBeGreaterThan(bob.body.data.verdict.score);
    expect(carol.body.data.verdict.decision).not.toBe("allow");
    // Another org sees none of it.
    const other = await createBeaconProject(server);
    const o = await resolve(other, { ...base, external_user_id: "alice" });
    expect(o.body.data.correlation.accounts_sharing_session).toBe(0);
    expect(o.body.data.continuity.found).toBe(false);
  });

  it("server to server: an IP join only, the verdict from IP reputation; CGNAT addresses are counted but not flagged", async () => {
    const site = await createBeaconProject(server);
    const aws = await resolve(site, { external_user_id: "u1", ip: "3.5.140.2" });
    expect(aws.body.data.verdict_source).toBe("ip");
    expect(aws.body.data.verdict.reasons).toContain("ip_datacenter");
    expect(aws.body.data.continuity).toMatchObject({ found: false, is_fresh: false, observation_count: 0 });
    let last: any;
    for (let i = 0; i < 6; i++) last = await resolve(site, { external_user_id: `cg${i}`, ip: "100.64.12.34" });
    expect(last.body.data.correlation).toMatchObject({ accounts_sharing_ip: 5, shared_network: true });
    expect(last.body.data.verdict.reasons).not.toContain("shared_ip");
    for (let i = 0; i < 5; i++) last = await resolve(site, { external_user_id: `dc${i}`, ip: "73.99.1.2" });
    expect(last.body.data.correlation).toMatchObject({ accounts_sharing_ip: 4, shared_network: false });
    expect(last.body.data.verdict.reasons).toContain("shared_ip");
  });

  it("refuses keys without the sessions scope, and bad bodies with clear errors", async () => {
    const site = await createBeaconProject(server);
    const noScope = await createOrgWithKey(server);
    const r = await api(server, "POST", "/v1/sessions/resolve", { key: noScope.key, body: { external_user_id: "u", observation_type: "auth.login", ip: "8.8.8.8" } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("INSUFFICIENT_SCOPE");
    const none = await resolve(site, { external_user_id: "u", email: "a@b.c" });
    expect(none.status).toBe(422);
    expect(none.body.error.code).toBe("MISSING_REQUIRED_DATA");
    expect(none.body.metadata.credits).toBe(0);
    expect((await resolve(site, { ip: "8.8.8.8" })).body.error.message).toMatch(/^body\.external_user_id/);
    expect((await resolve(site, { external_user_id: "u", ip: "8.8.8.8", observation_type: "auth.logout" })).body.error.message).toMatch(/^body\.observation_type/);
    expect((await resolve(site, { external_user_id: "u", ip: "1.2.3" })).body.error.message).toMatch(/^body\.ip/);
  });
});

describe("POST /v1/meter (preview)", () => {
  it("is off by default: 501 NOT_IMPLEMENTED naming it as announced, nothing charged", async () => {
    const plain = await startApp();
    try {
      const site = await createBeaconProject(plain);
      const r = await api(plain, "POST", "/v1/meter", { key: site.secretKey, body: { resource: "x", identity: { ip: "1.2.3.4" }, limit: { max: 1, window: "1m" } } });
      expect([r.status, r.body.error.code]).toEqual([501, "NOT_IMPLEMENTED"]);
      expect(r.body.error.message).toMatch(/^POST \/v1\/meter is announced and not live yet: .*FS_ENABLE_METER=true\. Nothing was charged\.$/);
    } finally {
      await plain.stop();
      plain.cleanup();
    }
  });

  it("100 concurrent requests against max 10: exactly 10 allowed", async () => {
    const site = await createBeaconProject(server, "pro");
    const answers = await Promise.all(Array.from({ length: 100 }, () => meter(site, { resource: "api/search", identity: { user_id: "u-conc" }, limit: { max: 10, window: "1h" } })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.body.data.action === "allow")).toHaveLength(10);
    expect(answers.filter((a) => a.body.data.action === "throttle")).toHaveLength(90);
    const last = answers.find((a) => a.body.data.action === "throttle")!.body.data;
    expect(last.usage).toMatchObject({ count: 10, limit: 10, window: "1h", remaining: 0 });
    expect(last.usage.retry_after_seconds).toBeGreaterThan(0);
    expect(answers[0]!.body.metadata.credits).toBe(2);
  });

  it("slides: entries leave the window as time passes; the cost option spends a budget", async () => {
    const site = await createBeaconProject(server, "pro");
    const t0 = Date.now();
    const at = (ms: number) => ({ "x-fs-test-now": String(t0 + ms) });
    const body = { resource: "export", identity: { session: "s-meter-1" }, limit: { max: 2, window: "30s" } };
    expect((await meter(site, body, at(0))).body.data.action).toBe("allow");
    expect((await meter(site, body, at(10_000))).body.data.action).toBe("allow");
    const third = await meter(site, body, at(20_000));
    expect(third.body.data).toMatchObject({ action: "throttle", verdict: "over_limit", budget: "session" });
    expect(third.body.data.usage.retry_after_seconds).toBe(10);
    expect((await meter(site, body, at(30_000))).body.data.action).toBe("allow"); // the first left the window (it is (now - 30 s, now])
    const budget = { resource: "credits", identity: { user_id: "spender" }, limit: { max: 10, window: "1d" } };
    expect((await meter(site, { ...budget, cost: 4 })).body.data.usage.count).toBe(4);
    expect((await meter(site, { ...budget, cost: 4 })).body.data.usage.count).toBe(8);
    expect((await meter(site, { ...budget, cost: 4 })).body.data.action).toBe("throttle");
    expect((await meter(site, { ...budget, cost: 2 })).body.data.action).toBe("allow");
  });

  it("multi-account: accounts linked through the beacon and resolve share one budget, and rotating is blocked", async () => {
    const site = await createBeaconProject(server, "pro");
    const sid = await browserSession(site);
    for (const user of ["rot-a", "rot-b", "rot-c"]) await resolve(site, { external_user_id: user, session_id: sid, email: `${user}@example.com` });
    const limit = { max: 3, window: "1h" };
    for (const user of ["rot-a", "rot-b", "rot-c"]) {
      const r = await meter(site, { resource: "signup-bonus", identity: { user_id: user }, limit });
      expect(r.body.data).toMatchObject({ action: "allow", verdict: "multi_account", linked_identities: 2, budget: "account" });
    }
    const fourth = await meter(site, { resource: "signup-bonus", identity: { user_id: "rot-a" }, limit });
    expect(fourth.body.data).toMatchObject({ action: "block", verdict: "multi_account_over_limit", linked_identities: 2 });
    expect(fourth.body.data.confidence).toBeGreaterThan(0.6);
    // By session alone the same budget is found.
    const bySession = await meter(site, { resource: "signup-bonus", identity: { session: sid }, limit });
    expect(bySession.body.data.action).toBe("block");
    // An unrelated account has its own budget.
    const loner = await meter(site, { resource: "signup-bonus", identity: { user_id: "loner" }, limit });
    expect(loner.body.data).toMatchObject({ action: "allow", verdict: "ok", linked_identities: 0, confidence: 1 });
  });

  it("validates at the edge", async () => {
    const site = await createBeaconProject(server);
    const bad = async (body: Record<string, unknown>, path: RegExp) => {
      const r = await meter(site, body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.message).toMatch(path);
    };
    await bad({ resource: "x", identity: {}, limit: { max: 1, window: "1h" } }, /^body\.identity/);
    await bad({ resource: "x", identity: { ip: "1.2.3.4" }, limit: { max: 1, window: "1 hour" } }, /^body\.limit\.window/);
    await bad({ resource: "x", identity: { ip: "1.2.3.4" }, limit: { max: 0, window: "1h" } }, /^body\.limit\.max/);
    await bad({ identity: { ip: "1.2.3.4" }, limit: { max: 1, window: "1h" } }, /^body\.resource/);
    await bad({ resource: "x", identity: { ip: "nope" }, limit: { max: 1, window: "1h" } }, /^body\.identity\.ip/);
  });

  it("bindings and meters survive a restart", async () => {
    const site = await createBeaconProject(server, "pro");
    await resolve(site, { external_user_id: "p1", fingerprint: "persist-fp" });
    await meter(site, { resource: "r", identity: { user_id: "p1" }, limit: { max: 1, window: "1h" } });
    await server.stop();
    await server.restart();
    const again = await resolve(site, { external_user_id: "p2", fingerprint: "persist-fp" });
    expect(again.body.data.correlation.accounts_sharing_fingerprint).toBe(1);
    expect((await meter(site, { resource: "r", identity: { user_id: "p1" }, limit: { max: 1, window: "1h" } })).body.data.action).not.toBe("allow");
  });
});
