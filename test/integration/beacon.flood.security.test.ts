import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, admin, api, createBeaconProject, createOrgWithKey, useServer, type TestServer } from "./helpers/server.js";
import { scaled } from "../helpers/time.js";

/**
 * Issue 25, finding 2: a publishable key is public, and it used to record as fast as a client
 * could send (65,746 hits in 30 s from one address, none refused, 3.7 KB of state each, kept 30
 * days). Now beacon writes are limited per client address and per project (429 RATE_LIMITED),
 * an org records at most FS_OBSERVATION_BUDGET_PER_DAY observations a day (the rest are
 * answered, dropped and counted), and a project that lists its origins takes no write without
 * an Origin. Bounded: a few thousand requests, a few seconds.
 */

let server!: TestServer;
const ADDRESS_LIMIT = 600; // the default
const PROJECT_LIMIT = 900;
const BUDGET = 300;
// Loopback is a trusted proxy, so each request can name its client address.
useServer((s) => (server = s), {
  FS_TRUSTED_PROXIES: "127.0.0.1,::1",
  FS_BEACON_PROJECT_LIMIT: String(PROJECT_LIMIT),
  FS_OBSERVATION_BUDGET_PER_DAY: String(BUDGET),
});

interface Outcome {
  status: number;
  headers: Headers;
  body: any;
}

/** `total` page views of `key` on `connections` concurrent clients; `address(i)` is the i-th request's client. */
async function flood(key: string, total: number, connections: number, address: (i: number) => string): Promise<Outcome[]> {
  const out: Outcome[] = [];
  let next = 0;
  const client = async (): Promise<void> => {
    while (next < total) {
      const i = next++;
      const res = await fetch(`${server.url}/v1/collect`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-forwarded-for": address(i), "user-agent": "HeadlessChrome/131" },
        body: JSON.stringify({ action: "pageview", page: `/p/${i}`, signals: { tells: ["webdriver"] } }),
      });
      out.push({ status: res.status, headers: res.headers, body: await res.json() });
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  return out;
}

async function recordedObservations(p: { projectId: string; secretKey: string }): Promise<number> {
  let n = 0;
  let cursor = "";
  for (;;) {
    const r = await api(server, "GET", `/v1/projects/${p.projectId}/observations?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { key: p.secretKey });
    expect(r.status).toBe(200);
    n += r.body.data.items.length;
    if (r.body.data.next_cursor === null) return n;
    cursor = r.body.data.next_cursor;
  }
}

async function metric(series: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : Number.NaN;
}

describe("a flood with one publishable key", () => {
  it("is refused past the address and project limits, records no more than the org's budget, and other orgs keep being answered", async () => {
    const site = await createBeaconProject(server);
    const other = await createOrgWithKey(server, "pro");
    // Another org's keyed calls during the flood: each answered, none refused, none slow.
    let flooding = true;
    const otherAnswers: Array<{ status: number; ms: number }> = [];
    const otherOrg = (async () => {
      while (flooding) {
        const t0 = performance.now();
        const r = await api(server, "GET", "/v1/ip/8.8.8.8", { key: other.key });
        otherAnswers.push({ status: r.status, ms: performance.now() - t0 });
      }
    })();

    const t0 = performance.now();
    // One address, 16 connections, as the review did.
    const one = await flood(site.publishableKey, 1500, 16, () => "203.0.113.7");
    const secondsOne = (performance.now() - t0) / 1000;
    const okOne = one.filter((o) => o.status === 200).length;
    expect(okOne).toBeGreaterThanOrEqual(ADDRESS_LIMIT);
    // The burst, plus what the window refills while the flood runs (10 a second).
    expect(okOne).toBeLessThanOrEqual(ADDRESS_LIMIT + Math.ceil(secondsOne * (ADDRESS_LIMIT / 60)) + 1);
    const refused = one.filter((o) => o.status !== 200);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.body.error.code).toBe("RATE_LIMITED");
      expect(r.body.metadata.credits).toBe(0);
      expect(r.headers.get("ratelimit-policy")).toBe(`"address";q=${ADDRESS_LIMIT};w=60`);
      expect(r.headers.get("ratelimit")).toMatch(/^"address";r=0;t=\d+$/);
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // A refusal as GET /openapi.json documents it.
    expect(server.contract.check("POST", "/v1/collect", 429, refused[0]!.body)).toBeNull();
    expect(refused[0]!.body.error.message).toMatch(/client address/);

    // Many addresses: the project's own limit holds.
    const t1 = performance.now();
    const many = await flood(site.publishableKey, 800, 16, (i) => `198.18.${i >> 8}.${i & 255}`);
    const secondsAll = (performance.now() - t0) / 1000;
    const okMany = many.filter((o) => o.status === 200).length;
    const byProject = many.filter((o) => o.status === 429);
    expect(byProject.length).toBeGreaterThan(0);
    for (const r of byProject) expect(r.headers.get("ratelimit-policy")).toBe(`"project";q=${PROJECT_LIMIT};w=60`);
    expect(okOne + okMany).toBeLessThanOrEqual(PROJECT_LIMIT + Math.ceil(secondsAll * (PROJECT_LIMIT / 60)) + 1);
    flooding = false;
    await otherOrg;
    expect((performance.now() - t1) / 1000).toBeLessThan(60);

    expect(otherAnswers.length).toBeGreaterThan(0);
    expect(otherAnswers.map((a) => a.status).every((s) => s === 200)).toBe(true);
    // Generous: a loaded 2-core machine; the review saw 231 ms at p99 for another org.
    expect(Math.max(...otherAnswers.map((a) => a.ms))).toBeLessThan(5000);

    // Storage: the org's budget, not the flood, decides what is kept.
    const answered = okOne + okMany;
    expect(answered).toBeGreaterThan(BUDGET);
    await expect.poll(() => recordedObservations(site), { timeout: scaled(10_000) }).toBe(BUDGET);
    expect(await metric(`fs_beacon_observations_dropped_total{project="${site.projectId}"}`)).toBe(answered - BUDGET);
    expect(await metric('fs_beacon_rate_limited_total{limit="address"}')).toBe(refused.length);
    expect(await metric('fs_beacon_rate_limited_total{limit="project"}')).toBe(byProject.length);

    // The org sees it on its dashboard.
    const login = await fetch(`${server.url}/dashboard/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url, "x-forwarded-for": "192.0.2.200" },
      body: new URLSearchParams({ key: site.secretKey }).toString(),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await fetch(`${server.url}/dashboard`, { headers: { cookie, "x-forwarded-for": "192.0.2.200" } })).text();
    expect(page).toContain(`data-field="obs-recorded">${BUDGET}<`);
    expect(page).toContain(`data-field="obs-dropped">${(answered - BUDGET).toLocaleString("en-US")}<`);
    expect(page).toMatch(/An observation budget was used up today/);
  });
});

describe("allowed origins", () => {
  it("refuses a beacon write without an Origin when the project lists its origins; reads and listed origins are served", async () => {
    const site = await createBeaconProject(server);
    const patch = await admin(server, "PATCH", `/v1/admin/orgs/${site.orgId}/projects/${site.projectId}`, { allowed_origins: ["https://shop.example.com"] });
    expect(patch.status, JSON.stringify(patch.body)).toBe(200);
    const headers = { "x-forwarded-for": "192.0.2.90" };
    for (const path of ["/v1/handshake", "/v1/collect", "/v1/report"]) {
      const bare = await api(server, "POST", path, { key: site.publishableKey, body: {}, headers });
      expect(bare.status, path).toBe(403);
      expect(bare.body.error.code).toBe("ORIGIN_NOT_ALLOWED");
      expect(bare.body.error.message).toMatch(/no Origin header/);
      const page = await api(server, "POST", path, { key: site.publishableKey, body: {}, headers: { ...headers, origin: "https://shop.example.com" } });
      expect(page.status, path).toBe(200);
      expect(page.headers.get("access-control-allow-origin")).toBe("https://shop.example.com");
    }
    // The round-trip probe records nothing: a same-origin GET carries no Origin.
    expect((await api(server, "GET", "/v1/probe", { key: site.publishableKey, headers })).status).toBe(200);
    // A project without a list takes calls without an Origin as before.
    const open = await createBeaconProject(server);
    expect((await api(server, "POST", "/v1/collect", { key: open.publishableKey, body: {}, headers })).status).toBe(200);
  });
});
