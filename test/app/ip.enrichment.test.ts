import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer } from "../integration/helpers/dns-server.js";
import { startApp, type TestApp } from "../helpers/app.js";
import { api } from "../integration/helpers/server.js";

/**
 * The full record over HTTP, against the build from the repository's snapshot, with rdns answered by a local
 * UDP DNS server (no network). Addresses are taken from the snapshot files:
 * 35.180.0.0/16 AWS EC2 eu-west-3; 204.8.96.141 a Tor exit; 134.209.95.237/32 Shodan (on
 * DigitalOcean); 10.20.30.40 listed nowhere.
 */
let server: TestApp;
let dns: Awaited<ReturnType<typeof startDnsServer>>;

beforeAll(async () => {
  dns = await startDnsServer({
    ptr: {
      "35.180.1.1": "ec2-35-180-1-1.eu-west-3.compute.amazonaws.com.",
      "35.180.2.2": "spoofed.example.test.",
      "2600:1f18::1": "v6.example.test.",
      // The rdns canary (FS_RDNS_CANARY): an address this DNS knows a name for.
      "192.0.2.53": "canary.example.test.",
    },
    a: { "ec2-35-180-1-1.eu-west-3.compute.amazonaws.com": ["35.180.1.1"], "spoofed.example.test": ["192.0.2.1"] },
    aaaa: { "v6.example.test": ["2600:1f18::1"] },
    silent: ["35.180.3.3"],
  });
  server = await startApp({ FS_DNS_SERVERS: `127.0.0.1:${dns.port}`, FS_RDNS_TIMEOUT_MS: "300", FS_RDNS_CANARY: "192.0.2.53" });
});
afterAll(async () => {
  await server.stop();
  server.cleanup();
  await dns.close();
});

const key = (): string => server.demo.secretKey;
const get = (path: string) => api(server, "GET", path, { key: key() });

describe("GET /v1/ip/{ip} from the full build", () => {
  it("classifies a cloud range and names provider and region with include=region", async () => {
    const base = await get("/v1/ip/35.180.1.1");
    expect(base.body.data.type).toMatchObject({ cloud: true, datacenter: true, hosting: true });
    expect(base.body.data.flags).toEqual(expect.arrayContaining(["cloud", "datacenter", "hosting"]));
    expect(base.body.data.network.cloud_provider).toBeNull();
    const r = await get("/v1/ip/35.180.1.1?include=region");
    expect(r.body.data.network).toMatchObject({ cloud_provider: "aws", cloud_region: "eu-west-3" });
    expect(r.body.metadata.enrichment).toEqual({ requested: ["region"], resolved: ["region"], credits: 1 });
    expect(r.body.metadata.provenance.cloud.source).toMatch(/aws/);
  });

  it("flags a Tor exit and a named scanner, each with its source", async () => {
    const tor = await get("/v1/ip/204.8.96.141");
    expect(tor.body.data.risk.tor).toBe(true);
    expect(tor.body.data.flags).toContain("tor");
    expect(tor.body.metadata.provenance.tor.source).toMatch(/tor/);
    const scanner = await get("/v1/ip/134.209.95.237");
    expect(scanner.body.data.risk.scanner).toBe(true);
    expect(scanner.body.data.flags).toContain("scanner");
  });

  it("names who is behind a flag: VPN provider, scanner organisation, crawler", async () => {
    const vpn = await get("/v1/ip/23.144.160.86");
    expect(vpn.body.data.risk.vpn).toBe(true);
    expect(vpn.body.data.details.vpn_provider).toMatch(/mullvad/i);
    const scanner = await get("/v1/ip/134.209.95.237");
    expect(scanner.body.data.details.scanner_org).toMatch(/shodan/i);
    const bot = await get("/v1/ip/34.22.85.5?include=region");
    expect(bot.body.data.details.crawler).toMatchObject({ id: "googlebot" });
    expect(bot.body.data.network.cloud_provider).toBe("gcp");
    expect(bot.body.metadata.provenance.crawler.source).toMatch(/googlebot/);
  });

  it("knows mobile carriers whose AS name does not say so, from the curated list", async () => {
    const att = await get("/v1/ip/12.72.1.1?include=company");
    expect(att.body.data.type).toMatchObject({ mobile: true, isp: true, hosting: false });
    expect(att.body.data.company).toMatchObject({ category: "mobile", confidence: "high" });
    expect(att.body.metadata.provenance.mobile.source).toBe("mobile-carrier-asns");
    const three = await get("/v1/ip/92.40.0.1");
    expect(three.body.data.type.mobile).toBe(true);
  });

  it("refuses a repeated include parameter", async () => {
    const r = await get("/v1/ip/8.8.8.8?include=region&include=weather");
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^query\.include/);
  });

  it("returns a clean record for an address no source lists", async () => {
    const r = await get("/v1/ip/10.20.30.40");
    expect(r.body.data.bogon).toBe(true);
    expect(r.body.data.flags).toEqual([]);
    expect(Object.values(r.body.data.type).every((v) => v === false)).toBe(true);
    expect(Object.values(r.body.data.risk).every((v) => v === false)).toBe(true);
    expect(r.body.metadata.provenance).toEqual({});
    expect(r.body.data.details).toEqual({ vpn_provider: null, scanner_org: null, crawler: null });
    const company = await get("/v1/ip/10.20.30.40?include=company");
    expect(company.body.data.company).toBeNull();
    expect(company.body.metadata.enrichment).toEqual({ requested: ["company"], resolved: [], skipped: ["company"], credits: 0 });
  });

  it("adds the company block only with include=company", async () => {
    const plain = await get("/v1/ip/8.8.8.8");
    expect(plain.body.data).not.toHaveProperty("company");
    const r = await get("/v1/ip/8.8.8.8?include=company");
    expect(r.body.data.company).toMatchObject({ name: expect.stringMatching(/Google/), country: "US" });
    expect(["high", "medium", "low"]).toContain(r.body.data.company.confidence);
    expect(typeof r.body.data.company.category).toBe("string");
    expect(r.body.data.company.website === null || typeof r.body.data.company.website === "string").toBe(true);
  });

  it("rdns: forward-confirmed name, +1 credit on a miss, free on a hit", async () => {
    const first = await get("/v1/ip/35.180.1.1?include=rdns");
    expect(first.body.data.network).toMatchObject({ hostname: "ec2-35-180-1-1.eu-west-3.compute.amazonaws.com", hostname_verified: true });
    expect(first.body.metadata.enrichment).toEqual({ requested: ["rdns"], resolved: ["rdns"], cache: { rdns: "miss" }, credits: 2 });
    expect(first.body.metadata.credits).toBe(2);
    const again = await get("/v1/ip/35.180.1.1?include=rdns");
    expect(again.body.metadata.enrichment).toMatchObject({ cache: { rdns: "hit" }, credits: 1 });
    expect(again.body.metadata.credits).toBe(1);
  });

  it("rdns: a PTR that does not confirm is unverified; IPv6 works", async () => {
    const spoof = await get("/v1/ip/35.180.2.2?include=rdns");
    expect(spoof.body.data.network).toMatchObject({ hostname: "spoofed.example.test", hostname_verified: false });
    const v6 = await get("/v1/ip/2600:1f18::1?include=rdns");
    expect(v6.body.data.network).toMatchObject({ hostname: "v6.example.test", hostname_verified: true });
  });

  it("rdns: a timeout is skipped and not charged; no PTR is a charged answer of null", async () => {
    const slow = await get("/v1/ip/35.180.3.3?include=rdns");
    expect(slow.status).toBe(200);
    expect(slow.body.data.network).toMatchObject({ hostname: null, hostname_verified: null });
    expect(slow.body.metadata.enrichment).toEqual({ requested: ["rdns"], resolved: [], skipped: ["rdns"], cache: { rdns: "miss" }, credits: 1 });
    const none = await get("/v1/ip/35.180.4.4?include=rdns");
    expect(none.body.data.network).toMatchObject({ hostname: null, hostname_verified: null });
    expect(none.body.metadata.enrichment).toMatchObject({ resolved: ["rdns"], credits: 2 });
  });

  it("rdns behind a blind resolver (no PTR even for the canary): skipped and not charged, even for 8.8.8.8", async () => {
    // The default canary, 8.8.8.8, has no PTR on this DNS, as on an air-gapped host.
    const blind = await startApp({ FS_DNS_SERVERS: `127.0.0.1:${dns.port}`, FS_RDNS_TIMEOUT_MS: "300" });
    try {
      for (const ip of ["8.8.8.8", "35.180.4.4", "8.8.8.8"]) {
        const r = await api(blind, "GET", `/v1/ip/${ip}?include=rdns`, { key: blind.demo.secretKey });
        expect(r.body.data.network, ip).toMatchObject({ hostname: null, hostname_verified: null });
        expect(r.body.metadata.enrichment, ip).toMatchObject({ resolved: [], skipped: ["rdns"], credits: 1 });
        expect(r.body.metadata.credits, ip).toBe(1);
      }
      // A name the DNS does know is still found, and charged.
      const found = await api(blind, "GET", "/v1/ip/35.180.1.1?include=rdns", { key: blind.demo.secretKey });
      expect(found.body.metadata.enrichment).toMatchObject({ resolved: ["rdns"], credits: 2 });
    } finally {
      await blind.stop();
      blind.cleanup();
    }
  });

  it("include=all asks for every dataset", async () => {
    const r = await get("/v1/ip/35.180.1.1?include=all");
    expect(r.body.metadata.enrichment.requested).toEqual(["region", "company", "rdns"]);
    expect(r.body.data.network.cloud_provider).toBe("aws");
    expect(r.body.data.company).toBeDefined();
    expect(r.body.data.network.hostname).toBe("ec2-35-180-1-1.eu-west-3.compute.amazonaws.com");
  });

  it("charges the credits metadata states", async () => {
    const usage = async () => (await api(server, "GET", `/v1/orgs/${server.demo.orgId}/usage`, { key: key() })).body.data.used;
    const before = await usage();
    const a = await get("/v1/ip/35.180.5.5?include=rdns,region");
    const b = await get("/v1/ip/35.180.5.5?include=rdns");
    expect((await usage()) - before).toBe(a.body.metadata.credits + b.body.metadata.credits);
  });
});
