import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

describe("GET /v1/admin/orgs/{orgId}/usage", () => {
  it("answers any org's usage to the admin token as the org's own key gets it, and nothing to a key", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    await api(server, "GET", "/v1/ip/8.8.8.8", { key });
    const own = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
    const operator = await admin(server, "GET", `/v1/admin/orgs/${orgId}/usage`);
    expect(operator.status).toBe(200);
    expect(operator.body.data).toEqual(own.body.data);
    expect((await admin(server, "GET", "/v1/admin/orgs/org_doesnotexist/usage")).status).toBe(404);
    expect((await api(server, "GET", `/v1/admin/orgs/${orgId}/usage`, { key })).status).toBe(401);
  });
});

describe("GET /v1/orgs/{orgId}/usage", () => {
  it("returns every usage field for a free org", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    await api(server, "GET", "/v1/ip/8.8.8.8", { key });
    const r = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      plan: "free",
      monthly_quota: 10000,
      used: 1,
      remaining: 9999,
      period: expect.stringMatching(/^\d{6}$/),
      period_end: expect.any(String),
      overage: 0,
      overage_reported: 0,
      overage_pending: 0,
      subscription_status: "active",
      trial_end: null,
      behind: null,
    });
    expect(r.body.metadata.credits).toBe(0);
  });

  it("period and period_end follow the calendar month (UTC)", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    const t = Date.UTC(2027, 1, 14, 9, 30); // 14 Feb 2027
    const r = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key, headers: { "x-fs-test-now": String(t) } });
    expect(r.body.data.period).toBe("202702");
    expect(r.body.data.period_end).toBe("2027-03-01T00:00:00.000Z");
  });

  it("answers another org's usage exactly as a missing org's: 404, no data", async () => {
    const a = await createOrgWithKey(server);
    const b = await createOrgWithKey(server);
    const r = await api(server, "GET", `/v1/orgs/${b.orgId}/usage`, { key: a.key });
    const missing = await api(server, "GET", `/v1/orgs/org_nope/usage`, { key: a.key });
    expect([r.status, r.body.error.code, missing.status, missing.body.error.code]).toEqual([404, "NOT_FOUND", 404, "NOT_FOUND"]);
    expect(r.body.error.message.replace(b.orgId, "X")).toBe(missing.body.error.message.replace("org_nope", "X"));
    expect(r.body.data).toBeNull();
  });

  it("needs a secret key", async () => {
    const r = await api(server, "GET", `/v1/orgs/${server.demo.orgId}/usage`, { key: server.demo.publishableKey });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("KEY_TYPE_NOT_ALLOWED");
    expect((await api(server, "GET", `/v1/orgs/${server.demo.orgId}/usage`)).status).toBe(401);
  });

  it("counts overage for pro past its quota, never blocking", async () => {
    const { orgId, key } = await createOrgWithKey(server, "pro");
    const adj = await admin(server, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits: 49_999, reason: "test" });
    expect(adj.status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key })).status).toBe(200);
    const r = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
    expect(r.body.data).toMatchObject({ plan: "pro", monthly_quota: 50000, used: 50002, remaining: 0, overage: 2 });
  });

  it("enterprise is unmetered: no quota, no overage, never blocked", async () => {
    const { orgId, key } = await createOrgWithKey(server, "enterprise");
    await admin(server, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits: 5_000_000, reason: "test" });
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key })).status).toBe(200);
    const r = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
    expect(r.body.data).toMatchObject({ plan: "enterprise", monthly_quota: null, remaining: null, overage: 0, used: 5_000_001 });
  });
});
