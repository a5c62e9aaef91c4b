import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { WebhookReceiver } from "../helpers/webhook-receiver.js";
import { ADMIN_TOKEN, admin, api, createBeaconProject } from "../integration/helpers/server.js";

/**
 * Issue 39, finding 1: a publishable key is public, and 64 client addresses used an org's daily
 * observation budget up in 30 s; past it, hits were answered and not recorded at all, so a
 * scripted visitor that a fresh org blocks was then allowed (no session, no verdict). Past a
 * budget only the full observation is dropped: the session and its verdict keep updating.
 * Small budget, a few hundred hits.
 */

const BUDGET = 50;
const PREFIX_SHARE = 5;
let app!: TestApp;
// Loopback is the trusted proxy, so each request can name its client address.
useApp((a) => (app = a), {
  FS_TRUSTED_PROXIES: "127.0.0.1,::1",
  FS_OBSERVATION_BUDGET_PER_DAY: String(BUDGET),
  // Webhook events to the local receiver (http, a private address), polled often.
  FS_WEBHOOK_ALLOW_HTTP: "true",
  FS_WEBHOOK_ALLOW_PRIVATE: "true",
  FS_WEBHOOK_POLL_MS: "100",
  FS_OBSERVATION_BUDGET_PREFIX_PER_DAY: String(PREFIX_SHARE),
});

const receiver = new WebhookReceiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
type Site = Awaited<ReturnType<typeof createBeaconProject>>;

function collect(site: Site, address: string, userAgent: string, body: Record<string, unknown> = {}) {
  return api(app, "POST", "/v1/collect", {
    key: site.publishableKey,
    body: { action: "pageview", page: "/", ...body },
    headers: { "user-agent": userAgent, "x-forwarded-for": address },
  });
}

/** `count` page views, each from one of 64 addresses in 64 distinct /24s. */
async function flood(site: Site, count: number): Promise<void> {
  for (let i = 0; i < count; i += 16) {
    const batch = Array.from({ length: Math.min(16, count - i) }, (_, j) => collect(site, `198.18.${(i + j) % 64}.7`, CHROME, { signals: { tells: [] } }));
    for (const r of await Promise.all(batch)) expect(r.status).toBe(200);
  }
}

async function verdictOf(site: Site, sessionId: string) {
  const r = await api(app, "POST", "/v1/sessions/resolve", {
    key: site.secretKey,
    body: { observation_type: "auth.signup", external_user_id: `u_${sessionId}`, session_id: sessionId },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { verdict: { decision: string; score: number }; verdict_source: string; continuity: { found: boolean; observation_count: number } };
}

async function listed(site: Site): Promise<number> {
  const r = await api(app, "GET", `/v1/projects/${site.projectId}/observations?limit=100`, { key: site.secretKey });
  expect(r.status).toBe(200);
  return r.body.data.items.length;
}

/** A series of GET /metrics, NaN when absent. */
async function metric(series: string): Promise<number> {
  const text = await (await app.fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : Number.NaN;
}

describe("past the observation budget", () => {
  it("a scripted visitor's session is still judged and blocked after 64 addresses used the org's budget up", async () => {
    const site = await createBeaconProject(app);
    const endpoint = await admin(app, "POST", `/v1/admin/orgs/${site.orgId}/webhooks`, {
      url: receiver.url,
      events: ["session.blocked", "observations.dropped"],
    });
    expect(endpoint.status).toBe(201);
    receiver.secret = endpoint.body.data.secret;
    await flood(site, BUDGET * 3);
    expect(await listed(site)).toBeLessThanOrEqual(BUDGET);

    // python-requests, no token, from an address of its own: a fresh org blocks it.
    const hit = await collect(site, "203.0.113.9", "python-requests/2.31.0");
    expect(hit.status).toBe(200);
    const sessionId = hit.body.data.session_id as string;
    const v = await verdictOf(site, sessionId);
    expect(v.continuity.found).toBe(true);
    expect(v.verdict_source).toBe("session");
    expect(v.verdict.decision).toBe("block");
    // Its full observation is the one dropped, counted for its project.
    expect(await listed(site)).toBeLessThanOrEqual(BUDGET);
    expect(await metric(`fs_beacon_observations_dropped_total{project="${site.projectId}"}`)).toBe(BUDGET * 3 + 1 - BUDGET);
    // session.blocked still fires; observations.dropped announces the drops once.
    const mine = () => receiver.received.filter((r) => r.verified?.data.org_id === site.orgId).map((r) => r.verified!);
    await expect.poll(() => mine().some((e) => e.type === "session.blocked" && e.data.session_id === sessionId), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => mine().filter((e) => e.type === "observations.dropped").length, { timeout: 15_000 }).toBe(1);
    expect(mine().find((e) => e.type === "observations.dropped")!.data).toMatchObject({ project_id: site.projectId, recorded: BUDGET, livemode: true });

    // The dashboard shows the project's budget use and drops.
    const login = await app.fetch(`${app.url}/dashboard/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url, "x-forwarded-for": "192.0.2.200" },
      body: new URLSearchParams({ key: site.secretKey }).toString(),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await app.fetch(`${app.url}/dashboard`, { headers: { cookie, "x-forwarded-for": "192.0.2.200" } })).text();
    const row = page.slice(page.indexOf(`<tr data-project="${site.projectId}">`)).split("</tr>")[0]!;
    expect(row).toContain(`data-field="prj-recorded">${BUDGET} (0%)<`);
    expect(row).toContain(`data-field="prj-dropped">${BUDGET * 2 + 1}<`);
    expect(page).toMatch(/An observation budget was used up today/);
  });
});

describe("the budget's spread", () => {
  it("64 addresses of one IPv4 /24, or of one IPv6 /56, record no more than the prefix's share; another prefix is still recorded", async () => {
    const site = await createBeaconProject(app);
    const many = (address: (i: number) => string) => Promise.all(Array.from({ length: 64 }, (_, i) => collect(site, address(i), CHROME)));
    for (const r of await many((i) => `198.51.100.${i + 1}`)) expect(r.status).toBe(200);
    await expect.poll(() => listed(site)).toBe(PREFIX_SHARE);
    // 2001:db8:0:100::/56 is in one /48 (2001:db8::/48).
    for (const r of await many((i) => `2001:db8:0:1${(i >> 4).toString(16)}${(i & 15).toString(16)}::1`)) expect(r.status).toBe(200);
    await expect.poll(() => listed(site)).toBe(2 * PREFIX_SHARE);
    // A visitor of another network is still recorded, within the org's budget.
    expect((await collect(site, "192.0.2.77", CHROME)).status).toBe(200);
    await expect.poll(() => listed(site)).toBe(2 * PREFIX_SHARE + 1);
    expect(await metric(`fs_beacon_observations_dropped_total{project="${site.projectId}"}`)).toBe(2 * (64 - PREFIX_SHARE));
  });
});

describe("a restart", () => {
  it("does not reset the day's budget: the store keeps the count", async () => {
    const site = await createBeaconProject(app);
    for (const r of await Promise.all(Array.from({ length: 64 }, (_, i) => collect(site, `198.19.${i}.7`, CHROME)))) expect(r.status).toBe(200);
    await expect.poll(() => listed(site)).toBe(BUDGET);
    await app.stop();
    await app.restart();
    // Past the budget still: this one is not stored, and its session is.
    const hit = await collect(site, "192.0.2.99", "python-requests/2.31.0");
    expect(hit.status).toBe(200);
    const v = await verdictOf(site, hit.body.data.session_id as string);
    expect(v.continuity.found).toBe(true);
    expect(v.verdict.decision).toBe("block");
    expect(await listed(site)).toBe(BUDGET);
  });
});
