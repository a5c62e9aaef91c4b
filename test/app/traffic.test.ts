import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, useApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject } from "../integration/helpers/server.js";

/**
 * GET /v1/projects/{projectId}/traffic: its figures against a recomputation from the project's
 * stored observations and the org's check history (both as their own listings answer them),
 * after hits through the real beacon route and checks through POST /v1/check at chosen times.
 */

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
const CURL = "curl/8.5.0";
const GOOGLEBOT_IP = "66.249.66.1";
const GPTBOT_IP = "132.196.86.10";
const HOME_IP = "73.15.20.30";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let server!: TestApp;
useApp((s) => (server = s), { FS_TRUSTED_PROXIES: "127.0.0.1,::1" });

type Project = Awaited<ReturnType<typeof createBeaconProject>>;

async function hit(p: Project, at: number, ua: string, ip: string): Promise<void> {
  const r = await api(server, "POST", "/v1/collect", {
    key: p.publishableKey,
    body: { action: "pageview", page: "/" },
    headers: {
      "user-agent": ua,
      "x-forwarded-for": ip,
      "accept-encoding": "gzip, deflate, br",
      "accept-language": "en-US,en;q=0.9",
      "x-fs-test-now": String(at),
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

async function checkAt(p: Project, at: number, text: string): Promise<void> {
  const r = await api(server, "POST", "/v1/check", {
    key: p.secretKey,
    body: { form_id: "contact", form_data: { message: text } },
    headers: { "x-fs-test-now": String(at) },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

async function traffic(p: Project, query: string) {
  const r = await api(server, "GET", `/v1/projects/${p.projectId}/traffic?${query}`, { key: p.secretKey });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.metadata.credits).toBe(0);
  return r.body.data;
}

/** Every stored observation of the project, through its listing. */
async function allObservations(p: Project): Promise<any[]> {
  const out: any[] = [];
  for (let cursor = ""; ;) {
    const r = await api(server, "GET", `/v1/projects/${p.projectId}/observations?limit=100${cursor}`, { key: p.secretKey });
    out.push(...r.body.data.items);
    if (!r.body.data.next_cursor) return out;
    cursor = `&cursor=${r.body.data.next_cursor}`;
  }
}

/** Counts by key, with share of `total` and blocked, sorted by key (the route's order is by hits). */
function countBy(items: any[], keysOf: (o: any) => Array<string | number | null>, total: number) {
  const m = new Map<string | number | null, { hits: number; blocked: number }>();
  for (const o of items)
    for (const k of keysOf(o)) {
      const c = m.get(k) ?? { hits: 0, blocked: 0 };
      c.hits++;
      if (o.decision === "block") c.blocked++;
      m.set(k, c);
    }
  return [...m].map(([key, c]) => ({ key, hits: c.hits, share: Math.round((c.hits / total) * 10_000) / 10_000, blocked: c.blocked })).sort(byKey);
}

function byKey(a: { key: unknown }, b: { key: unknown }): number {
  return String(a.key) < String(b.key) ? -1 : String(a.key) > String(b.key) ? 1 : 0;
}

function rows(list: any[], key: string) {
  return list.map((r) => ({ key: r[key], hits: r.hits, share: r.share, blocked: r.blocked })).sort(byKey);
}

function seriesOf(items: Array<{ ts: number; decision: string }>, from: number, to: number, step: number) {
  const out = [];
  for (let t = from; t < to; t += step) {
    const inBucket = items.filter((o) => o.ts >= t && o.ts < t + step);
    out.push({
      start: new Date(t).toISOString(),
      allow: inBucket.filter((o) => o.decision === "allow").length,
      review: inBucket.filter((o) => o.decision === "review").length,
      block: inBucket.filter((o) => o.decision === "block").length,
    });
  }
  return out;
}

describe("GET /v1/projects/{projectId}/traffic", () => {
  // Two UTC days, starting at midnight two days ago; hits and checks sent in time order.
  const t0 = Math.floor(Date.now() / DAY) * DAY - 2 * DAY;
  let p!: Project;

  beforeAll(async () => {
    p = await createBeaconProject(server, "pro");
    // Block AI crawlers, so the bot tables have blocked hits.
    expect((await api(server, "PUT", `/v1/projects/${p.projectId}/bot-policy`, { key: p.secretKey, body: { kinds: { ai_crawler: "block" } } })).status).toBe(
      200,
    );
    await hit(p, t0 - HOUR, CHROME, HOME_IP); // before the range
    await hit(p, t0 + HOUR, CHROME, HOME_IP);
    await hit(p, t0 + HOUR + 5 * 60_000, CHROME, HOME_IP);
    await hit(p, t0 + 2 * HOUR, GOOGLEBOT, GOOGLEBOT_IP);
    await checkAt(p, t0 + 3 * HOUR, "Hello, I would like a quote for 40 chairs.");
    await hit(p, t0 + 26 * HOUR, CHROME, HOME_IP);
    await hit(p, t0 + 27 * HOUR, GPTBOT, GPTBOT_IP);
    await hit(p, t0 + 27 * HOUR + 60_000, CURL, HOME_IP);
    await checkAt(p, t0 + 28 * HOUR, "BUY CHEAP PILLS http://spam.example http://spam.example http://spam.example");
    await hit(p, t0 + 2 * DAY + HOUR, CHROME, HOME_IP); // after the range
  });

  it("counts the range's hits by hour and decision, kind, reason, bot, network and country as the stored observations say", async () => {
    const from = new Date(t0).toISOString();
    const to = new Date(t0 + 2 * DAY).toISOString();
    const data = await traffic(p, `from=${from}&to=${to}&bucket=hour`);
    const stored = (await allObservations(p)).map((o) => ({ ...o, ts: Date.parse(o.created_at) }));
    const inRange = stored.filter((o) => o.ts >= t0 && o.ts < t0 + 2 * DAY);
    expect(stored).toHaveLength(8);
    expect(inRange).toHaveLength(6);
    const n = inRange.length;
    const networks = new Map<string, { asn: number | null; org: string | null }>();
    for (const ip of new Set(inRange.map((o) => o.ip as string))) {
      const r = await api(server, "GET", `/v1/ip/${ip}`, { key: p.secretKey });
      networks.set(ip, { asn: r.body.data.network.asn, org: r.body.data.network.org });
    }

    expect(data).toMatchObject({ project_id: p.projectId, from, to, bucket: "hour", partial: false });
    expect(data.totals).toEqual({
      hits: n,
      allow: inRange.filter((o) => o.decision === "allow").length,
      review: inRange.filter((o) => o.decision === "review").length,
      block: inRange.filter((o) => o.decision === "block").length,
    });
    expect(data.series).toEqual(seriesOf(inRange, t0, t0 + 2 * DAY, HOUR));
    expect(rows(data.kinds, "kind")).toEqual(countBy(inRange, (o) => [o.ua.bot_kind ?? "human"], n));
    expect(rows(data.reasons, "reason")).toEqual(countBy(inRange, (o) => o.reasons, n));
    expect(rows(data.bots, "bot_id")).toEqual(
      countBy(
        inRange.filter((o) => o.bot_id),
        (o) => [o.bot_id],
        n,
      ),
    );
    expect(rows(data.countries, "country")).toEqual(countBy(inRange, (o) => [o.country], n));
    expect(rows(data.asns, "asn")).toEqual(countBy(inRange, (o) => [networks.get(o.ip)!.asn], n));
    for (const a of data.asns) expect(a.org).toBe([...networks.values()].find((x) => x.asn === a.asn)!.org);
    // What the seed was meant to give, so the recomputation above compares something.
    expect(data.kinds.map((k: { kind: string }) => k.kind)).toEqual(expect.arrayContaining(["human", "search_crawler", "ai_crawler"]));
    expect(data.bots.find((b: { bot_id: string }) => b.bot_id === "gptbot")).toMatchObject({ hits: 1, blocked: 1, bot_kind: "ai_crawler" });
    expect(data.totals.block).toBeGreaterThanOrEqual(1);

    // The org's checks, by their history listing.
    const checks = (await api(server, "GET", `/v1/orgs/${p.orgId}/checks?limit=100`, { key: p.secretKey })).body.data.items.map((c: any) => ({
      ts: Date.parse(c.created_at),
      decision: c.decision,
    }));
    expect(checks).toHaveLength(2);
    expect(data.checks.scope).toBe("org");
    expect(data.checks.partial).toBe(false);
    expect(data.checks.series).toEqual(seriesOf(checks, t0, t0 + 2 * DAY, HOUR));
    expect(data.checks.totals.checks).toBe(2);
  });

  it("buckets by day, and defaults to days for a range over 48 hours", async () => {
    const stored = (await allObservations(p)).map((o) => ({ ts: Date.parse(o.created_at), decision: o.decision }));
    const from = new Date(t0 - DAY).toISOString();
    const to = new Date(t0 + 3 * DAY).toISOString();
    const data = await traffic(p, `from=${from}&to=${to}`);
    expect(data.bucket).toBe("day");
    expect(data.series).toEqual(seriesOf(stored, t0 - DAY, t0 + 3 * DAY, DAY));
    expect(data.totals.hits).toBe(stored.length);
    // Dates alone are UTC midnights.
    const day = new Date(t0).toISOString().slice(0, 10);
    const byDate = await traffic(p, `from=${day}&to=${new Date(t0 + DAY).toISOString().slice(0, 10)}`);
    expect(byDate).toMatchObject({ from: new Date(t0).toISOString(), to: new Date(t0 + DAY).toISOString(), bucket: "hour" });
    expect(byDate.totals.hits).toBe(3);
  });

  it("refuses a backwards or too long range and malformed times with VALIDATION_ERROR, another org's project with NOT_FOUND", async () => {
    const get = (q: string, key = p.secretKey) => api(server, "GET", `/v1/projects/${p.projectId}/traffic?${q}`, { key });
    for (const q of [
      "from=2026-11-20&to=2026-11-20",
      "from=2026-11-21&to=2026-11-20",
      "from=2026-01-01&to=2026-03-01&bucket=hour",
      "from=2020-01-01&to=2026-01-01",
      "from=yesterday",
      "bucket=week",
      "to=2026-13-45",
    ]) {
      const r = await get(q);
      expect(r.status, q).toBe(400);
      expect(r.body.error.code, q).toBe("VALIDATION_ERROR");
      // The range is checked after the query's schema (it needs both ends), and is named as its problems are.
      expect(r.body.error.problems, q).toEqual([{ param: r.body.error.param, message: expect.any(String) }]);
      expect(r.body.error.message, q).toBe(`${r.body.error.param}: ${r.body.error.problems[0].message}`);
    }
    const other = await createBeaconProject(server);
    const r = await get("", other.secretKey);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("NOT_FOUND");
  });
});

describe("the dashboard's Traffic page and CSV download, as the API counts", () => {
  it("downloads a table as text/csv attachment with the API's rows; refuses an unknown table (400), another org's project (404), bad dates (a message)", async () => {
    const p = await createBeaconProject(server, "pro");
    const t = Math.floor(Date.now() / DAY) * DAY - DAY;
    await hit(p, t + HOUR, CHROME, HOME_IP);
    await hit(p, t + 2 * HOUR, GOOGLEBOT, GOOGLEBOT_IP);
    const login = await server.fetch(`${server.url}/dashboard/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: new URLSearchParams({ key: p.secretKey }).toString(),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    const get = (path: string) => server.fetch(`${server.url}${path}`, { headers: { cookie }, redirect: "manual" });
    const day = new Date(t).toISOString().slice(0, 10);
    const q = (table: string, project = p.projectId) => `/dashboard/traffic.csv?${new URLSearchParams({ project, range: "dates", from: day, to: day, table })}`;

    const csv = await get(q("bots"));
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toBe(
      `attachment; filename="traffic-${p.projectId}-bots-${day}-${new Date(t + DAY).toISOString().slice(0, 10)}.csv"`,
    );
    const counted = await traffic(p, `from=${day}&to=${new Date(t + DAY).toISOString()}`);
    expect(await csv.text()).toBe(
      `bot_id,bot_name,bot_kind,hits,share,blocked\r\n${counted.bots.map((b: any) => `${b.bot_id},${b.bot_name},${b.bot_kind},${b.hits},${b.share},${b.blocked}\r\n`).join("")}`,
    );
    expect(counted.bots).toHaveLength(1);

    const unknown = await get(q("everything"));
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await unknown.text()).toContain("table: one of decisions, kinds, reasons, bots, asns, countries, checks.");
    const other = await createBeaconProject(server);
    expect((await get(q("kinds", other.projectId))).status).toBe(404);

    const page = await get(`/dashboard/traffic?project=${p.projectId}&range=dates&from=${day}&to=not-a-date`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await page.text()).toContain('role="alert"><p>Give both dates, from and to, as YYYY-MM-DD.</p>');
  });
});

describe("GET /v1/projects/{projectId}/traffic past FS_TRAFFIC_SCAN_LIMIT", () => {
  let small!: TestApp;
  beforeAll(async () => {
    small = await startApp({ FS_TRUSTED_PROXIES: "127.0.0.1,::1", FS_TRAFFIC_SCAN_LIMIT: "3" });
  });
  afterAll(async () => {
    await small?.stop();
    small?.cleanup();
  });

  it("says partial and counts the newest observations only", async () => {
    const p = await createBeaconProject(small);
    const t = Date.now() - HOUR;
    for (let i = 0; i < 5; i++) {
      const r = await api(small, "POST", "/v1/collect", {
        key: p.publishableKey,
        body: { action: "pageview", page: "/" },
        headers: { "user-agent": CHROME, "x-forwarded-for": HOME_IP, "x-fs-test-now": String(t + i * 1000) },
      });
      expect(r.status).toBe(200);
    }
    const r = await api(small, "GET", `/v1/projects/${p.projectId}/traffic`, { key: p.secretKey });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ partial: true, scanned: 3, totals: { hits: 3 } });
  });

  /** Hits and checks of a new project, one an hour from `t0`, at the given hours. */
  async function seeded(t0: number, hitHours: number[], checkHours: number[]) {
    const p = await createBeaconProject(small);
    for (const h of hitHours) {
      const r = await api(small, "POST", "/v1/collect", {
        key: p.publishableKey,
        body: { action: "pageview", page: "/" },
        headers: { "user-agent": CHROME, "x-forwarded-for": HOME_IP, "x-fs-test-now": String(t0 + h * HOUR + 1000) },
      });
      expect(r.status).toBe(200);
    }
    for (const h of checkHours) {
      const r = await api(small, "POST", "/v1/check", {
        key: p.secretKey,
        body: { form_id: "contact", form_data: { message: "Where is my order?" } },
        headers: { "x-fs-test-now": String(t0 + h * HOUR + 2000) },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const list = async (path: string) =>
      ((await api(small, "GET", `${path}?limit=100`, { key: p.secretKey })).body.data.items as Array<{ created_at: string; decision: string }>)
        .map((o) => ({ ts: Date.parse(o.created_at), decision: o.decision }))
        .sort((a, b) => b.ts - a.ts);
    return { p, hits: await list(`/v1/projects/${p.projectId}/observations`), checks: await list(`/v1/orgs/${p.orgId}/checks`) };
  }

  it("past the limit, the figures are exactly those of the newest observations and the newest checks, per bucket", async () => {
    const t0 = Math.floor(Date.now() / HOUR) * HOUR - 6 * HOUR;
    const { p, hits, checks } = await seeded(t0, [0, 1, 2, 3, 4], [0, 1, 2, 3, 4]);
    expect([hits.length, checks.length]).toEqual([5, 5]);
    const r = await api(small, "GET", `/v1/projects/${p.projectId}/traffic?from=${new Date(t0).toISOString()}&to=${new Date(t0 + 6 * HOUR).toISOString()}`, {
      key: p.secretKey,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const data = r.body.data;
    expect(data).toMatchObject({ partial: true, scanned: 3, totals: { hits: 3 } });
    expect(data.series).toEqual(seriesOf(hits.slice(0, 3), t0, t0 + 6 * HOUR, HOUR));
    expect(data.checks).toMatchObject({ partial: true, totals: { checks: 3 } });
    expect(data.checks.series).toEqual(seriesOf(checks.slice(0, 3), t0, t0 + 6 * HOUR, HOUR));
  });

  it("is not partial when the limit holds the whole range and only older records are left unread", async () => {
    const t0 = Math.floor(Date.now() / HOUR) * HOUR - 6 * HOUR;
    // One hit and one check an hour before the range, then the limit's worth in it.
    const { p, hits, checks } = await seeded(t0, [0, 2, 3, 4], [0, 2, 3, 4]);
    const from = t0 + HOUR;
    const r = await api(small, "GET", `/v1/projects/${p.projectId}/traffic?from=${new Date(from).toISOString()}&to=${new Date(t0 + 6 * HOUR).toISOString()}`, {
      key: p.secretKey,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const data = r.body.data;
    expect(data).toMatchObject({ partial: false, totals: { hits: 3 } });
    expect(data.series).toEqual(seriesOf(hits.slice(0, 3), from, t0 + 6 * HOUR, HOUR));
    expect(data.checks).toMatchObject({ partial: false, totals: { checks: 3 } });
    expect(data.checks.series).toEqual(seriesOf(checks.slice(0, 3), from, t0 + 6 * HOUR, HOUR));
  });
});
