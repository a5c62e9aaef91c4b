import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer } from "../integration/helpers/dns-server.js";
import { startApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject } from "../integration/helpers/server.js";

/**
 * Bots whose operator publishes host names, not ranges (Baiduspider: `@.baidu.com`), are
 * verified by forward-confirmed reverse DNS, served here by a local DNS server.
 */
const BAIDU = "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)";
const GENUINE = "203.0.113.10";
const IMPOSTOR = "203.0.113.20";
const NO_PTR = "203.0.113.30";

let server: TestApp;
let dns: Awaited<ReturnType<typeof startDnsServer>>;

beforeAll(async () => {
  dns = await startDnsServer({
    ptr: { "192.0.2.53": "canary.example.test", [GENUINE]: "baiduspider-203-0-113-10.crawl.baidu.com", [IMPOSTOR]: "host-20.cheap-vps.example" },
    a: { "baiduspider-203-0-113-10.crawl.baidu.com": [GENUINE], "host-20.cheap-vps.example": [IMPOSTOR] },
  });
  server = await startApp({ FS_DNS_SERVERS: `127.0.0.1:${dns.port}`, FS_RDNS_TIMEOUT_MS: "500", FS_TRUSTED_PROXIES: "127.0.0.1,::1", FS_RDNS_CANARY: "192.0.2.53" });
});

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await dns?.close();
});

async function observe(ip: string) {
  const p = await createBeaconProject(server);
  const r = await api(server, "POST", "/v1/collect", { key: p.publishableKey, body: {}, headers: { "user-agent": BAIDU, "x-forwarded-for": ip } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const list = await api(server, "GET", `/v1/projects/${p.projectId}/observations`, { key: p.secretKey });
  return list.body.data.items[0];
}

describe("bot verification by reverse DNS", () => {
  it("a PTR inside the operator's domain, confirmed forward, verifies the bot", async () => {
    const o = await observe(GENUINE);
    expect(o.bot_id).toBe("baiduspider");
    expect(o.bot_verified).toBe(true);
    expect(o.reasons).toContain("bot:verified");
  });

  it("a PTR elsewhere, or none, makes the claim spoofed", async () => {
    for (const ip of [IMPOSTOR, NO_PTR]) {
      const o = await observe(ip);
      expect(o.bot_verified).toBe(false);
      expect(o.reasons).toContain("bot:spoofed:baiduspider");
      expect(o.decision).toBe("block");
    }
  });
});
