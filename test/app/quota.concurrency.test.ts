import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { ADMIN_TOKEN, admin, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

/** Operator adjustment at a given instant (the test clock), so the period matches the calls that follow. */
const adjustAt = (orgId: string, credits: number, nowMs: number) =>
  api(server, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { key: ADMIN_TOKEN, body: { credits, reason: "test" }, headers: { "x-fs-test-now": String(nowMs) } });

describe("free plan quota: the hard stop at the monthly credits", () => {
  it("with 9,990 of 10,000 used, exactly 10 of 100 concurrent 1-credit calls succeed", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    await admin(server, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits: 9_990, reason: "test" });
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => api(server, "GET", `/v1/ip/8.8.${i % 256}.1`, { key })));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok.length).toBe(10);
    expect(refused.length).toBe(90);
    const usage = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
    expect(usage.body.data).toMatchObject({ used: 10_000, remaining: 0, overage: 0 });
  });

  it("refused calls record nothing: with 10 credits left, 5 of 20 concurrent resolves bind, and only those", async () => {
    const { orgId, key } = await createOrgWithKey(server, "free", ["sessions"]);
    await admin(server, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits: 9_990, reason: "test" });
    const session = `s_quota${Date.now()}`;
    const resolve = (user: string) => api(server, "POST", "/v1/sessions/resolve", { key, body: { external_user_id: user, observation_type: "auth.signup", session_id: session } });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => resolve(`user-${i}`)));
    expect(results.filter((r) => r.status === 200).length).toBe(5);
    expect(results.filter((r) => r.status === 429).length).toBe(15);
    for (const r of results.filter((x) => x.status === 429)) {
      expect(r.body.metadata.credits).toBe(0);
      // Refused while the 5 admitted calls still held their credits: come back in a second (they
      // may fail and give them back); refused after they were charged: at the period's reset.
      const inProgress = /in progress/.test(r.body.error.message);
      expect(r.headers.get("retry-after") === "1").toBe(inProgress);
    }
    const spent = await resolve("user-after");
    expect(spent.status).toBe(429);
    expect(spent.body.error.message).toMatch(/reached/);
    expect(Number(spent.headers.get("retry-after"))).toBeGreaterThan(1);
    expect(spent.body.metadata.ratelimit.remaining).toBe(0);
    // Lift the hard stop and look: the session has the 5 answered accounts, not 20.
    await admin(server, "PATCH", `/v1/admin/orgs/${orgId}`, { plan: "pro" });
    const after = await resolve("user-late");
    expect(after.status).toBe(200);
    expect(after.body.data.correlation.accounts_sharing_session).toBe(5);
    const usage = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
    expect(usage.body.data.used).toBe(10_002);
  });

  it("429 QUOTA_EXCEEDED carries metadata.ratelimit and Retry-After", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    const now = Date.UTC(2026, 10, 30, 23, 59, 0);
    await adjustAt(orgId, 10_000, now);
    const r = await api(server, "GET", "/v1/ip/8.8.8.8", { key, headers: { "x-fs-test-now": String(now) } });
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe("QUOTA_EXCEEDED");
    expect(r.body.data).toBeNull();
    const reset = Date.UTC(2026, 11, 1);
    expect(r.body.metadata.ratelimit).toEqual({ limit: 10_000, remaining: 0, reset, reset_in_seconds: 60 });
    expect(r.headers.get("retry-after")).toBe("60");
  });

  it("usage stays readable when the quota is exhausted, and the next period starts afresh", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    const nov = Date.UTC(2026, 10, 20);
    await adjustAt(orgId, 10_000, nov);
    const usage = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key, headers: { "x-fs-test-now": String(nov) } });
    expect(usage.status).toBe(200);
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key, headers: { "x-fs-test-now": String(nov) } })).status).toBe(429);
    const dec = Date.UTC(2026, 11, 1, 0, 0, 1);
    const next = await api(server, "GET", "/v1/ip/8.8.8.8", { key, headers: { "x-fs-test-now": String(dec) } });
    expect(next.status).toBe(200);
    const decUsage = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key, headers: { "x-fs-test-now": String(dec) } });
    expect(decUsage.body.data).toMatchObject({ period: "202612", used: 1 });
  });

  it("upgrading to pro lifts the hard stop at once", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    await admin(server, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits: 10_000, reason: "test" });
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key })).status).toBe(429);
    await admin(server, "PATCH", `/v1/admin/orgs/${orgId}`, { plan: "pro" });
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key })).status).toBe(200);
  });
});
