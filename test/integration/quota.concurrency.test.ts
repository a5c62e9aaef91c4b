import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, admin, api, createOrgWithKey, useServer, type TestServer } from "./helpers/server.js";

let server!: TestServer;
useServer((s) => (server = s));

/** Operator adjustment at a given instant (the test clock), so the period matches the calls that follow. */
const adjustAt = (orgId: string, credits: number, nowMs: number) =>
  api(server, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { key: ADMIN_TOKEN, body: { credits, reason: "test" }, headers: { "x-fs-test-now": String(nowMs) } });

describe("free plan quota (SPEC 3, 7, 8)", () => {
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
