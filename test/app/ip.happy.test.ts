import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

describe("GET /v1/ip/{ip}", () => {
  it("answers ASN, org and country for an IPv4 address from the built dataset", async () => {
    const r = await api(server, "GET", "/v1/ip/8.8.8.8", { key: server.demo.secretKey });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.body.version).toBe("1");
    expect(r.body.error).toBeNull();
    expect(r.body.data).toMatchObject({
      ip: "8.8.8.8",
      ip_version: 4,
      bogon: false,
      network: { asn: 15169, hostname: null, hostname_verified: null, cloud_provider: null, cloud_region: null },
      location: { country: "US" },
    });
    expect(r.body.data.network.org).toMatch(/Google/);
  });

  it("answers for IPv6 and treats IPv4-mapped IPv6 as the IPv4 address", async () => {
    const v6 = await api(server, "GET", "/v1/ip/2001:4860:4860::8888", { key: server.demo.secretKey });
    expect(v6.status).toBe(200);
    expect(v6.body.data).toMatchObject({ ip_version: 6, network: { asn: 15169 } });
    const mapped = await api(server, "GET", "/v1/ip/::ffff:1.1.1.1", { key: server.demo.secretKey });
    const plain = await api(server, "GET", "/v1/ip/1.1.1.1", { key: server.demo.secretKey });
    expect(mapped.status).toBe(200);
    expect(mapped.body.data.network).toEqual(plain.body.data.network);
    expect(mapped.body.data.location).toEqual(plain.body.data.location);
    expect(plain.body.data.network.asn).toBe(13335);
  });

  it("returns nulls, not guesses, for an address no dataset covers", async () => {
    const r = await api(server, "GET", "/v1/ip/10.1.2.3", { key: server.demo.secretKey });
    expect(r.status).toBe(200);
    expect(r.body.data.network.asn).toBeNull();
    expect(r.body.data.network.org).toBeNull();
    expect(r.body.data.location.country).toBeNull();
  });

  it("has every type and risk attribute false and no flags where no source lists the address", async () => {
    const r = await api(server, "GET", "/v1/ip/192.168.7.7", { key: server.demo.secretKey });
    expect(r.body.data.type).toEqual({ datacenter: false, hosting: false, isp: false, mobile: false, cloud: false });
    expect(r.body.data.risk).toEqual({ proxy: false, vpn: false, tor: false, residential_proxy: false, scanner: false });
    expect(r.body.data.flags).toEqual([]);
  });

  it("lists exactly the true attributes in flags", async () => {
    const r = await api(server, "GET", "/v1/ip/35.180.1.1", { key: server.demo.secretKey });
    const trueAttrs = [...Object.entries(r.body.data.type), ...Object.entries(r.body.data.risk)].filter(([, v]) => v).map(([k]) => k);
    expect(r.body.data.flags).toEqual(trueAttrs);
    expect(trueAttrs.length).toBeGreaterThan(0);
  });

  it("states provenance, credits and enrichment in metadata", async () => {
    const r = await api(server, "GET", "/v1/ip/8.8.8.8?include=region,company", { key: server.demo.secretKey });
    expect(r.status).toBe(200);
    const m = r.body.metadata;
    expect(m.source).toMatch(/ip-location-db/);
    expect(Number.isNaN(Date.parse(m.built_at))).toBe(false);
    expect(m.credits).toBe(1);
    expect(m.enrichment).toEqual({ requested: ["region", "company"], resolved: ["region", "company"], credits: 1 });
    expect(typeof m.request_id).toBe("string");
    expect(typeof m.processing_time_ms).toBe("number");
  });

  it("charges 1 credit per successful lookup and nothing for failures", async () => {
    const usage = async () => (await api(server, "GET", `/v1/orgs/${server.demo.orgId}/usage`, { key: server.demo.secretKey })).body.data.used;
    const before = await usage();
    await api(server, "GET", "/v1/ip/8.8.8.8", { key: server.demo.secretKey });
    await api(server, "GET", "/v1/ip/9.9.9.9", { key: server.demo.secretKey });
    await api(server, "GET", "/v1/ip/not-an-ip", { key: server.demo.secretKey });
    await api(server, "GET", "/v1/ip/8.8.8.8?include=bogus", { key: server.demo.secretKey });
    expect(await usage()).toBe(before + 2);
  });

  it("flags a bogon (private, loopback, documentation, multicast... space) and charges nothing for it, rdns not asked", async () => {
    const usage = async () => (await api(server, "GET", `/v1/orgs/${server.demo.orgId}/usage`, { key: server.demo.secretKey })).body.data.used;
    const before = await usage();
    for (const ip of ["10.0.0.1", "127.0.0.1", "192.168.1.1", "100.64.0.1", "203.0.113.9", "224.0.0.1", "::1", "fe80::1", "2001:db8::1", "::ffff:10.0.0.1"]) {
      const r = await api(server, "GET", `/v1/ip/${ip}?include=rdns`, { key: server.demo.secretKey });
      expect(r.status, ip).toBe(200);
      expect(r.body.data, ip).toMatchObject({ ip, bogon: true, network: { asn: null, org: null, hostname: null, hostname_verified: null }, location: { country: null }, flags: [] });
      expect(r.body.metadata.credits, ip).toBe(0);
      expect(r.body.metadata.enrichment, ip).toEqual({ requested: ["rdns"], resolved: [], skipped: ["rdns"], credits: 0 });
    }
    const plain = await api(server, "GET", "/v1/ip/10.0.0.1", { key: server.demo.secretKey });
    expect(plain.body.data.bogon).toBe(true);
    expect(plain.body.metadata.credits).toBe(0);
    // Public neighbours of those ranges are not bogons, and are charged.
    for (const ip of ["11.0.0.1", "100.128.0.1", "203.0.114.1", "2001:db9::1"]) {
      const r = await api(server, "GET", `/v1/ip/${ip}`, { key: server.demo.secretKey });
      expect(r.body.data.bogon, ip).toBe(false);
      expect(r.body.metadata.credits, ip).toBe(1);
    }
    expect(await usage()).toBe(before + 4);
  });
});
