import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

const usedOf = async (orgId: string, key: string) => (await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key })).body.data.used as number;

describe("POST /v1/ip/batch", () => {
  it("answers each address as GET /v1/ip/{ip} does, in order, charging one credit per distinct address that is not a bogon", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    const ips = ["8.8.8.8", "10.0.0.1", "2001:4860:4860::8888", "8.8.8.8", "1.1.1.1"];
    const batch = await api(server, "POST", "/v1/ip/batch", { key, body: { ips, include: ["company", "region"] } });
    expect(batch.status).toBe(200);
    expect(batch.body.data.items).toHaveLength(ips.length);
    // Three distinct public addresses; 8.8.8.8 twice is charged once, the private 10.0.0.1 not at all.
    expect(batch.body.metadata.credits).toBe(3);
    expect(batch.body.metadata.enrichment).toMatchObject({ requested: ["company", "region"], credits: 3 });
    expect(await usedOf(orgId, key)).toBe(3);
    for (const [i, ip] of ips.entries()) {
      const one = await api(server, "GET", `/v1/ip/${encodeURIComponent(ip)}?include=company,region`, { key });
      expect(batch.body.data.items[i].record).toEqual(one.body.data);
      expect(batch.body.data.items[i].provenance).toEqual(one.body.metadata.provenance);
    }
    expect(batch.body.data.items[1].record.bogon).toBe(true);
    expect(batch.body.metadata.source).toBe((await api(server, "GET", "/v1/ip/8.8.8.8", { key })).body.metadata.source);
  });

  it("costs nothing for bogons only, and refuses the whole batch for one entry that is not an address", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    const bogons = await api(server, "POST", "/v1/ip/batch", { key, body: { ips: ["192.168.1.1", "::1"] } });
    expect(bogons.status).toBe(200);
    expect(bogons.body.metadata.credits).toBe(0);
    const bad = await api(server, "POST", "/v1/ip/batch", { key, body: { ips: ["8.8.8.8", "not-an-ip"] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "body.ips.1" });
    expect(bad.body.error.message).toMatch(/'not-an-ip' is not a valid IPv4 or IPv6 address/);
    expect(await usedOf(orgId, key)).toBe(0);
  });

  it("refuses an empty batch, more than 100 addresses, rdns and unknown fields", async () => {
    const { key } = await createOrgWithKey(server);
    const refused = async (body: unknown, param: string) => {
      const r = await api(server, "POST", "/v1/ip/batch", { key, body });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(r.body.error.param).toBe(param);
    };
    await refused({ ips: [] }, "body.ips");
    await refused({ ips: Array.from({ length: 101 }, (_, i) => `8.8.${i >> 8}.${i & 255}`) }, "body.ips");
    await refused({ ips: ["8.8.8.8"], include: ["rdns"] }, "body.include.0");
    await refused({ ips: ["8.8.8.8"], extra: true }, "body");
    await refused({}, "body.ips");
  });

  it("is refused whole (429, nothing charged) when it costs more than the org has left", async () => {
    const { orgId, key } = await createOrgWithKey(server, "free");
    const adjusted = await admin(server, "POST", `/v1/admin/orgs/${orgId}/usage/adjust`, { credits: 9_998, reason: "test" });
    expect(adjusted.status).toBe(200);
    const over = await api(server, "POST", "/v1/ip/batch", { key, body: { ips: ["8.8.8.8", "1.1.1.1", "9.9.9.9"] } });
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe("QUOTA_EXCEEDED");
    expect(over.body.metadata.credits).toBe(0);
    expect(await usedOf(orgId, key)).toBe(9_998);
    const fits = await api(server, "POST", "/v1/ip/batch", { key, body: { ips: ["8.8.8.8", "8.8.8.8", "1.1.1.1"] } });
    expect(fits.status).toBe(200);
    expect(await usedOf(orgId, key)).toBe(10_000);
    // At the quota, what costs nothing is still answered: bogons alone, by batch, by path and as the caller's own address.
    const bogons = await api(server, "POST", "/v1/ip/batch", { key, body: { ips: ["10.0.0.1", "192.168.1.1"] } });
    expect(bogons.status).toBe(200);
    expect(bogons.body.metadata.credits).toBe(0);
    const one = await api(server, "GET", "/v1/ip/10.0.0.1", { key });
    expect(one.status).toBe(200);
    expect(one.body.data.bogon).toBe(true);
    const me = await api(server, "GET", "/v1/ip/me", { key });
    expect(me.status).toBe(200);
    expect(me.body.data.bogon).toBe(true);
    for (const refused of [await api(server, "GET", "/v1/ip/8.8.8.8", { key }), await api(server, "POST", "/v1/ip/batch", { key, body: { ips: ["10.0.0.1", "8.8.8.8"] } })]) {
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe("QUOTA_EXCEEDED");
    }
    expect(await usedOf(orgId, key)).toBe(10_000);
  });
});
