import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer, type TestDnsServer } from "../integration/helpers/dns-server.js";
import { startApp, type TestApp } from "../helpers/app.js";
import { api, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * POST /v1/email over HTTP, with MX answered by a local UDP DNS server (no network). Domains under
 * `.test` (RFC 6761) are served by that server; anything else it answers NXDOMAIN, so a real
 * provider such as gmail.com reads as "none" here (tests use it only where MX does not matter),
 * and the MX canary is set to a `.test` domain with mail.
 */
let server: TestApp;
let dns: TestDnsServer;

beforeAll(async () => {
  dns = await startDnsServer({
    mx: {
      "shop.example.test": [
        { exchange: "mx2.shop.example.test.", priority: 20 },
        { exchange: "mx1.shop.example.test.", priority: 10 },
      ],
      "nomail.example.test": [{ exchange: ".", priority: 0 }],
    },
    a: { "web-only.example.test": ["192.0.2.7"] },
    silent: ["slow.example.test"],
  });
  // The canary (a domain known to have mail) is one the local DNS serves: its answers are believed.
  server = await startApp({ FS_DNS_SERVERS: `127.0.0.1:${dns.port}`, FS_RDNS_TIMEOUT_MS: "300", FS_MX_CANARY: "shop.example.test" });
});
afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await dns?.close();
});

describe("POST /v1/email behind a blind resolver", () => {
  it("does not believe NXDOMAIN when the canary domain has no mail either: mx_unresolved, not no_mx", async () => {
    // gmail.com (the default canary) is NXDOMAIN on the local DNS, as on an air-gapped host.
    const blind = await startApp({ FS_DNS_SERVERS: `127.0.0.1:${dns.port}`, FS_RDNS_TIMEOUT_MS: "300" });
    try {
      const r = await api(blind, "POST", "/v1/email", { key: blind.demo.secretKey, body: { email: "a@missing.example.test" } });
      expect(r.status).toBe(200);
      expect(r.body.data.signals.mx).toMatchObject({ found: null, outcome: "unresolved" });
      expect(r.body.data.reasons).toContain("mx_unresolved");
      expect(r.body.data.reasons).not.toContain("no_mx");
      expect(r.body.data.decision).toBe("allow");
      // Nor for the canary's own domain: a gmail.com address is never called mailless, in
      // /v1/email or in /v1/check.
      const gmail = await api(blind, "POST", "/v1/email", { key: blind.demo.secretKey, body: { email: "jane.doe@gmail.com" } });
      expect(gmail.body.data.signals.mx).toMatchObject({ found: null, outcome: "unresolved" });
      expect(gmail.body.data.reasons).not.toContain("no_mx");
      expect(gmail.body.data.decision).toBe("allow");
      const check = await api(blind, "POST", "/v1/check", { key: blind.demo.secretKey, body: { form_id: "signup", metadata: { email: "jane.doe@gmail.com" } } });
      expect(JSON.stringify(check.body.data.rule_matches)).not.toMatch(/no_mx/);
      expect(check.body.data.signals.email.risk).toBeLessThan(0.45);
      // Found answers are still believed.
      const ok = await api(blind, "POST", "/v1/email", { key: blind.demo.secretKey, body: { email: "a@shop.example.test" } });
      expect(ok.body.data.signals.mx).toMatchObject({ found: true, outcome: "found" });
    } finally {
      await blind.stop();
      blind.cleanup();
    }
  });
});

const post = (body: unknown, key = server.demo.secretKey) => api(server, "POST", "/v1/email", { key, body });

describe("POST /v1/email", () => {
  it("allows a company address with MX records and charges 3 credits", async () => {
    const r = await post({ email: "Jane.Doe@Shop.Example.test" });
    expect(r.status).toBe(200);
    expect(r.body.error).toBeNull();
    expect(r.body.data).toMatchObject({
      email: "Jane.Doe@Shop.Example.test",
      normalized: "jane.doe@shop.example.test",
      domain: "shop.example.test",
      decision: "allow",
      reasons: [],
      signals: {
        valid_syntax: true,
        disposable: false,
        free_provider: false,
        role_account: false,
        plus_address: false,
        typo_suggestion: null,
        mx: { found: true, outcome: "found", hosts: ["mx1.shop.example.test", "mx2.shop.example.test"], implicit: false },
      },
    });
    expect(r.body.data.score).toBeLessThan(0.45);
    expect(r.body.metadata).toMatchObject({ credits: 3, mx_cache: "miss" });
    const again = await post({ email: "other@shop.example.test" });
    expect(again.body.metadata).toMatchObject({ credits: 3, mx_cache: "hit" });
  });

  it("blocks a domain without mail (null MX, NXDOMAIN)", async () => {
    for (const email of ["a@nomail.example.test", "a@missing.example.test"]) {
      const r = await post({ email });
      expect(r.body.data.decision, email).toBe("block");
      expect(r.body.data.reasons).toContain("no_mx");
      expect(r.body.data.signals.mx).toMatchObject({ found: false, outcome: "none" });
    }
  });

  it("accepts an implicit MX (A record only) with a light reason", async () => {
    const r = await post({ email: "a@web-only.example.test" });
    expect(r.body.data.signals.mx).toMatchObject({ found: true, implicit: true, hosts: ["web-only.example.test"] });
    expect(r.body.data.reasons).toEqual(["implicit_mx"]);
  });

  it("fails open when DNS does not answer in time", async () => {
    const t0 = Date.now();
    const r = await post({ email: "a@slow.example.test" });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(r.status).toBe(200);
    expect(r.body.data.signals.mx).toMatchObject({ found: null, outcome: "unresolved" });
    expect(r.body.data.reasons).toEqual(["mx_unresolved"]);
    expect(r.body.data.decision).toBe("allow");
  });

  it("blocks a disposable domain, and names the role, the tag, the typo", async () => {
    expect((await post({ email: "x@mailinator.com" })).body.data).toMatchObject({ decision: "block", signals: { disposable: true } });
    const role = await post({ email: "Info+promo@shop.example.test" });
    expect(role.body.data.signals).toMatchObject({ role_account: true, role_category: "notification", plus_address: true });
    expect(role.body.data.normalized).toBe("info@shop.example.test");
    const typo = await post({ email: "jane@gmsil.com" });
    expect(typo.body.data.signals.typo_suggestion).toBe("jane@gmail.com");
    expect(typo.body.data.reasons).toContain("possible_typo");
  });

  it("uses the merged disposable lists behind the guard (datasets/email-lists.ts)", async () => {
    // MX is NXDOMAIN here for these real names, so only the list signals are checked.
    const disposable = async (email: string): Promise<{ disposable: boolean; free_provider: boolean }> => (await post({ email })).body.data.signals;
    // fakefilter only (not on the lists shipped before), and a free-list host under a listed service.
    expect(await disposable("x@webxio.pro")).toMatchObject({ disposable: true, free_provider: false });
    expect(await disposable("x@shitaway.usa.cc")).toMatchObject({ disposable: true, free_provider: false });
    // A provider four lists name by mistake, a forwarding service, an institution, a registry namespace.
    for (const email of ["jane@21cn.com", "jane@duck.com", "jane@privaterelay.appleid.com", "jane@cs.ox.ac.uk", "jane@acme.za.com"]) {
      expect((await disposable(email)).disposable, email).toBe(false);
    }
    const check = await api(server, "POST", "/v1/check", { key: server.demo.secretKey, body: { form_id: "signup", metadata: { email: "jane@duck.com" } } });
    expect(check.body.data.signals.email).toMatchObject({ disposable: false, domain: "duck.com" });
  });

  it("answers invalid syntax with 200, block and invalid_syntax, without DNS, for 3 credits", async () => {
    const before = dns.queries;
    const r = await post({ email: "jane@@shop.example.test" });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ normalized: null, domain: null, decision: "block", reasons: ["invalid_syntax"] });
    expect(r.body.data.signals).toMatchObject({ valid_syntax: false, syntax_error: "multiple_at", mx: { outcome: "skipped" } });
    expect(r.body.metadata).toMatchObject({ credits: 3, mx_cache: "skipped" });
    expect(dns.queries).toBe(before);
  });

  it("refuses a missing, non-string or unknown field with 400 naming it, charging nothing", async () => {
    for (const [body, field] of [
      [{}, "body.email"],
      [{ email: 42 }, "body.email"],
      [{ email: "a@b.test", mail: "x" }, "mail"],
    ] as const) {
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(r.body.data).toBeNull();
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(r.body.error.message).toContain(field);
      expect(r.body.metadata.credits).toBe(0);
    }
  });

  it("needs a secret key", async () => {
    expect((await api(server, "POST", "/v1/email", { body: { email: "a@b.test" } })).status).toBe(401);
    const { key } = await createOrgWithKey(server);
    expect((await post({ email: "a@shop.example.test" }, key)).status).toBe(200);
  });
});
