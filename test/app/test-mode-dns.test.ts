import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer, type TestDnsServer } from "../integration/helpers/dns-server.js";
import { startApp, type TestApp } from "../helpers/app.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * Outbound DNS of test-mode keys (docs/api.md, "Test mode"): the MX and PTR lookups a test call
 * makes for names its caller chooses go to DNS for at most FS_TEST_MODE_DNS_PER_MINUTE names per
 * org; past it a name is answered from the cache or skipped (`test_budget`). Counted at a local
 * UDP DNS server, on the test clock (the budget does not refill meanwhile).
 */
const DNS_PER_MINUTE = 5;
/** Names each loop asks for: far more than the budget. */
const NAMES = 30;
/** 12:00 UTC on a fixed day. */
const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const at = { "x-fs-test-now": String(T0) };

let server: TestApp;
let dns: TestDnsServer;

beforeAll(async () => {
  dns = await startDnsServer({
    // The canaries: a domain with mail and an address with a PTR name, so "no records" is believed.
    mx: { "mail.example.test": [{ exchange: "mx.mail.example.test", priority: 10 }] },
    ptr: { "192.0.2.53": "canary.example.test." },
  });
  server = await startApp({
    FS_DNS_SERVERS: `127.0.0.1:${dns.port}`,
    FS_RDNS_TIMEOUT_MS: "500",
    FS_MX_CANARY: "mail.example.test",
    FS_RDNS_CANARY: "192.0.2.53",
    FS_TEST_MODE_DNS_PER_MINUTE: String(DNS_PER_MINUTE),
    // The calls' own budget is not what this file is about.
    FS_TEST_MODE_PER_SECOND: "0",
  });
});
afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await dns?.close();
});

/** A fresh org's test key (scope `sessions`, for /v1/auth/check) and its live key. */
async function orgWithTestKey() {
  const org = await createOrgWithKey(server, "pro", ["sessions"]);
  const created = await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/keys`, { type: "secret", mode: "test", scopes: ["sessions"] });
  expect(created.status).toBe(201);
  return { ...org, testKey: created.body.data.key as string };
}

/** DNS queries `run` made. */
async function queriesOf(run: () => Promise<void>): Promise<number> {
  const before = dns.queries;
  await run();
  return dns.queries - before;
}

describe("test-mode keys' DNS lookups", () => {
  it("MX: at most the org's budget of domains goes to DNS; past it a domain is answered from the cache or skipped, and the answer says test_budget", async () => {
    const org = await orgWithTestKey();
    const caches: string[] = [];
    const outcomes: string[] = [];
    const queries = await queriesOf(async () => {
      for (let i = 0; i < NAMES; i++) {
        const r = await api(server, "POST", "/v1/email", { key: org.testKey, headers: at, body: { email: `jane@n${i}.mx-loop.example.test` } });
        expect(r.status).toBe(200);
        caches.push(r.body.metadata.mx_cache);
        outcomes.push(r.body.data.signals.mx.outcome);
      }
    });
    // One lookup is at most MX + A + AAAA (a name without records here: NXDOMAIN, one query), plus
    // the canary's once (then cached). Without the budget: a query per name at least.
    expect(queries).toBeLessThanOrEqual(DNS_PER_MINUTE * 3 + 3);
    expect(caches).toEqual([...Array(DNS_PER_MINUTE).fill("miss"), ...Array(NAMES - DNS_PER_MINUTE).fill("test_budget")]);
    // Skipped: answered as when DNS is unavailable (fail-open).
    expect(outcomes.slice(DNS_PER_MINUTE)).toEqual(Array(NAMES - DNS_PER_MINUTE).fill("unresolved"));
    // A domain the cache has is answered from it, budget or not.
    const cached = await api(server, "POST", "/v1/email", { key: org.testKey, headers: at, body: { email: "john@n0.mx-loop.example.test" } });
    expect(cached.body.metadata.mx_cache).toBe("hit");
    expect(cached.body.data.signals.mx.outcome).toBe("none");

    // The other routes that look up MX say so too.
    const check = await api(server, "POST", "/v1/check", {
      key: org.testKey,
      headers: at,
      body: { form_id: "f", metadata: { email: "jane@check.mx-loop.example.test" } },
    });
    expect(check.body.metadata.mx_cache).toBe("test_budget");
    const auth = await api(server, "POST", "/v1/auth/check", {
      key: org.testKey,
      headers: at,
      body: { observation_type: "auth.signup", email: "jane@auth.mx-loop.example.test" },
    });
    expect(auth.body.metadata.mx_cache).toBe("test_budget");
    expect(auth.body.data.signals.email.reasons).toContain("mx_unresolved");

    // The org's live key is not on the budget: each new domain goes to DNS.
    const live = await queriesOf(async () => {
      for (let i = 0; i < 8; i++) {
        const r = await api(server, "POST", "/v1/email", { key: org.key, headers: at, body: { email: `jane@n${i}.mx-live.example.test` } });
        expect(r.body.metadata.mx_cache).toBe("miss");
      }
    });
    expect(live).toBeGreaterThanOrEqual(8);
  });

  it("reverse DNS: at most the org's budget of addresses goes to DNS, from GET /v1/ip/{ip}?include=rdns and POST /v1/check/deep", async () => {
    const org = await orgWithTestKey();
    const outcomes: string[] = [];
    const skipped: unknown[] = [];
    const queries = await queriesOf(async () => {
      for (let i = 0; i < NAMES; i++) {
        const r = await api(server, "GET", `/v1/ip/35.180.${i}.7?include=rdns`, { key: org.testKey, headers: at });
        expect(r.status).toBe(200);
        outcomes.push(r.body.metadata.enrichment.cache.rdns);
        if (i >= DNS_PER_MINUTE) skipped.push(r.body.metadata.enrichment.skipped);
      }
    });
    // PTR, then A or AAAA of the name (none here: NXDOMAIN), plus the canary's once.
    expect(queries).toBeLessThanOrEqual(DNS_PER_MINUTE * 2 + 2);
    expect(outcomes).toEqual([...Array(DNS_PER_MINUTE).fill("miss"), ...Array(NAMES - DNS_PER_MINUTE).fill("test_budget")]);
    expect(skipped).toEqual(Array(NAMES - DNS_PER_MINUTE).fill(["rdns"]));

    // A deep check, past the budget: its network and email blocks are skipped for it.
    const deep = await queriesOf(async () => {
      const r = await api(server, "POST", "/v1/check/deep", {
        key: org.testKey,
        headers: at,
        body: { form_id: "f", metadata: { ip: "35.181.0.7", email: "jane@deep.mx-loop.example.test" } },
      });
      expect(r.status).toBe(200);
      expect(r.body.data.deep.network).toMatchObject({ status: "skipped", reason: "test_budget" });
      expect(r.body.data.deep.email).toMatchObject({ status: "skipped", reason: "test_budget" });
    });
    expect(deep).toBe(0);
  });
});
