import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, useApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject } from "../integration/helpers/server.js";
import { applyPolicy, resolvePolicy, type BotPolicy, type PolicyKind } from "../../src/scoring/bot-policy.js";
import { decide as decideCheck, type DecisionThresholds } from "../../src/scoring/check.js";
import { decide as decideHit } from "../../src/scoring/observation.js";

/**
 * POST /v1/projects/{projectId}/bot-policy/replay over real hits (the beacon route) and real
 * checks (POST /v1/check), its figures checked against a recomputation from the stored records
 * (the listings) with the public scoring functions; and rules in dry run.
 */

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
const CURL = "curl/8.5.0";
/** In Google's published Googlebot ranges. */
const GOOGLEBOT_IP = "66.249.66.1";
/** In OpenAI's published GPTBot ranges. */
const GPTBOT_IP = "132.196.86.10";
/** A residential broadband address (Comcast). */
const HOME_IP = "73.15.20.30";
const HAM = "Hi, I ordered the blue kettle last Tuesday and it still has not arrived. Could you check the delivery status for order 4411? Thanks, Maria";
const SPAM = "CONGRATULATIONS!!! You have WON a $1000 gift card. Click http://bit.ly/claim-now to claim your prize today, offer expires in 24 hours!";

let server!: TestApp;
useApp((s) => (server = s), { FS_TRUSTED_PROXIES: "127.0.0.1,::1" });

type Project = Awaited<ReturnType<typeof createBeaconProject>>;

async function hit(p: Project, ua: string, ip: string, page: string) {
  const r = await api(server, "POST", "/v1/collect", {
    key: p.publishableKey,
    body: { action: "pageview", page },
    headers: { "user-agent": ua, "x-forwarded-for": ip, "accept-encoding": "gzip, deflate, br", "accept-language": "en-US,en;q=0.9" },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.observation_id as string;
}

/** A mix of browsers, verified and spoofed crawlers and automation, from the beacon route. */
async function seedHits(p: Project) {
  const seeds: Array<[string, string]> = [
    [CHROME, HOME_IP],
    [CHROME, "73.15.20.31"],
    [GOOGLEBOT, GOOGLEBOT_IP],
    [GOOGLEBOT, "66.249.66.2"],
    [GPTBOT, GPTBOT_IP],
    [GPTBOT, GPTBOT_IP],
    [GPTBOT, HOME_IP],
    [CURL, "73.15.20.32"],
  ];
  for (const [i, [ua, ip]] of seeds.entries()) await hit(p, ua, ip, `/page-${i}`);
  return seeds.length;
}

async function stored<T>(path: string, key: string): Promise<T[]> {
  const r = await api(server, "GET", path, { key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.items as T[];
}

async function replay(p: Project, body: unknown) {
  return api(server, "POST", `/v1/projects/${p.projectId}/bot-policy/replay`, { key: p.secretKey, body });
}

interface StoredHit {
  id: string;
  score: number;
  decision: string;
  bot_id: string | null;
  bot_verified: boolean | null;
  ua: { bot_kind: string | null };
  reasons: string[];
  policy: unknown;
  dry_run: unknown;
}

/** Counts of an expected replay: each stored record re-decided with the public functions. */
function tally<T>(items: T[], from: (t: T) => string, to: (t: T) => string, keys: (t: T) => Record<string, string>) {
  const transitions: Record<string, number> = {};
  const groups: Record<string, Record<string, number>> = {};
  let changed = 0;
  for (const t of items) {
    if (from(t) === to(t)) continue;
    changed++;
    const k = `${from(t)}>${to(t)}`;
    transitions[k] = (transitions[k] ?? 0) + 1;
    for (const [dim, key] of Object.entries(keys(t))) {
      groups[dim] ??= {};
      groups[dim][key] = (groups[dim][key] ?? 0) + 1;
    }
  }
  return { changed, transitions, groups };
}

const asCounts = (list: Array<{ count: number } & Record<string, unknown>>, name: string) => Object.fromEntries(list.map((g) => [g[name], g.count]));
const transitionCounts = (list: Array<{ from: string; to: string; count: number }>) => Object.fromEntries(list.map((t) => [`${t.from}>${t.to}`, t.count]));

describe("POST /v1/projects/{projectId}/bot-policy/replay", () => {
  it("re-decides the stored hits under a proposed policy: the figures match a recomputation from the stored observations", async () => {
    const p = await createBeaconProject(server);
    const n = await seedHits(p);
    const proposal: Partial<BotPolicy> = { kinds: { ai_crawler: "allow", search_crawler: "score", automation: "block" }, bots: { googlebot: "allow" }, spoofed: "score" };

    const r = await replay(p, { policy: proposal, days: 7, examples: 20 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.metadata.credits).toBe(0);
    const hits = r.body.data.hits;

    const items = await stored<StoredHit>(`/v1/projects/${p.projectId}/observations?limit=100`, p.secretKey);
    expect(items).toHaveLength(n);
    const policy = resolvePolicy(proposal);
    const subject = (o: StoredHit) => ({ bot_id: o.bot_id, bot_kind: o.ua.bot_kind as PolicyKind | null, bot_verified: o.bot_verified });
    const redecide = (o: StoredHit) => applyPolicy(policy, subject(o))?.action ?? decideHit(o.score);
    const want = tally(items, (o) => o.decision, redecide, (o) => ({ kind: o.ua.bot_kind ?? "browser", reason: applyPolicy(policy, subject(o))?.rule ?? "score" }));

    expect(want.changed).toBeGreaterThan(0);
    expect(hits).toMatchObject({ scanned: n, changed: want.changed, partial: false });
    expect(transitionCounts(hits.transitions)).toEqual(want.transitions);
    expect(asCounts(hits.by_kind, "kind")).toEqual(want.groups.kind);
    expect(asCounts(hits.by_reason, "reason")).toEqual(want.groups.reason);
    // Every example is a stored hit whose decision changes as the example says.
    const byId = new Map(items.map((o) => [o.id, o]));
    for (const g of [...hits.by_kind, ...hits.by_reason]) {
      expect(g.examples.length).toBe(g.count); // 20 per group: all of them here
      for (const e of g.examples) {
        const o = byId.get(e.id)!;
        expect(e).toMatchObject({ from: o.decision, to: redecide(o), bot_id: o.bot_id, score: o.score });
        expect(e.page).toMatch(/^\/page-\d$/);
      }
    }
    expect(r.body.data.checks).toBeNull();

    // Saving changes nothing stored: the policy in force is still the default.
    const after = await api(server, "GET", `/v1/projects/${p.projectId}/bot-policy`, { key: p.secretKey });
    expect(after.body.data.stored).toBeNull();
  });

  it("keeps at most `examples` examples per group, and replays nothing older than `days`", async () => {
    const p = await createBeaconProject(server);
    const n = await seedHits(p);
    const r = await replay(p, { policy: { kinds: { search_crawler: "block", ai_crawler: "block", automation: "allow" }, allow_unverified: true }, examples: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.days).toBe(7);
    expect(r.body.data.hits.scanned).toBe(n);
    for (const g of r.body.data.hits.by_kind) expect(g.examples.length).toBe(1);
    // A replay of the same policy as in force changes nothing.
    const same = await replay(p, { policy: {} });
    expect(same.body.data.hits).toMatchObject({ scanned: n, changed: 0, transitions: [], by_kind: [], by_reason: [] });
  });

  it("re-decides the org's stored checks with proposed thresholds: the figures match a recomputation from the stored checks", async () => {
    const p = await createBeaconProject(server, "pro");
    const texts = [HAM, HAM, SPAM, `${HAM} See http://example.com`, SPAM.toLowerCase()];
    for (const [i, message] of texts.entries()) {
      const c = await api(server, "POST", "/v1/check", {
        key: p.secretKey,
        body: { form_id: i % 2 ? "contact" : "signup", form_data: { name: "Maria", message }, metadata: { ip: HOME_IP, user_agent: CHROME, form_loaded_at: Date.now() - 45_000, honeypot_field: "" } },
      });
      expect(c.status, JSON.stringify(c.body)).toBe(200);
    }
    const checks = await stored<{ request_id: string; score: number; decision: string; form_id: string }>(`/v1/orgs/${p.orgId}/checks?limit=100`, p.secretKey);
    expect(checks).toHaveLength(texts.length);
    // Thresholds between the stored scores, so that some decisions move.
    const scores = checks.map((c) => c.score).sort((a, b) => a - b);
    const thresholds: DecisionThresholds = { review: Math.max(0.001, scores[0]! / 2), block: Math.min(0.99, Math.max(scores[2]!, scores[0]! + 0.001)) };
    const want = tally(checks, (c) => c.decision, (c) => decideCheck(c.score, thresholds), (c) => ({ form: c.form_id }));
    expect(want.changed).toBeGreaterThan(0);

    const r = await replay(p, { thresholds, days: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.hits).toBeNull();
    const got = r.body.data.checks;
    expect(got).toMatchObject({ scanned: texts.length, changed: want.changed, partial: false });
    expect(transitionCounts(got.transitions)).toEqual(want.transitions);
    expect(asCounts(got.by_form, "form_id")).toEqual(want.groups.form);
    const byId = new Map(checks.map((c) => [c.request_id, c]));
    for (const e of got.by_form.flatMap((g: { examples: unknown[] }) => g.examples)) expect(e).toMatchObject({ from: byId.get(e.request_id)!.decision, to: decideCheck(e.score, thresholds) });
  });

  it("refuses a body without a policy or thresholds, bad days and thresholds, with VALIDATION_ERROR naming the field; another org's project is 404", async () => {
    const p = await createBeaconProject(server);
    const other = await createBeaconProject(server);
    const cases: Array<[unknown, RegExp]> = [
      [{}, /give a policy, thresholds or both/],
      [{ policy: {}, days: 31 }, /days/],
      [{ policy: {}, days: 0 }, /days/],
      [{ thresholds: { review: 0.9, block: 0.5 } }, /review must be below block/],
      [{ policy: { kinds: { robots: "block" } } }, /robots/],
      [{ policy: { dry_run: ["kinds.nope"] } }, /dry_run/],
    ];
    for (const [body, message] of cases) {
      const r = await replay(p, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(r.body.error.message).toMatch(message);
    }
    const foreign = await api(server, "POST", `/v1/projects/${other.projectId}/bot-policy/replay`, { key: p.secretKey, body: { policy: {} } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("NOT_FOUND");
  });
});

describe("POST /v1/projects/{projectId}/bot-policy/replay past FS_REPLAY_SCAN_LIMIT", () => {
  const CAP = 5;
  let capped!: TestApp;
  beforeAll(async () => {
    capped = await startApp({ FS_TRUSTED_PROXIES: "127.0.0.1,::1", FS_REPLAY_SCAN_LIMIT: String(CAP) });
  });
  afterAll(async () => {
    await capped?.stop();
    capped?.cleanup();
  });

  const MINUTE = 60_000;
  /** A hit stored at `at` (epoch ms). */
  async function hitAt(p: Project, ua: string, ip: string, at: number) {
    const r = await api(capped, "POST", "/v1/collect", {
      key: p.publishableKey,
      body: { action: "pageview", page: "/" },
      headers: { "user-agent": ua, "x-forwarded-for": ip, "accept-encoding": "gzip, deflate, br", "accept-language": "en-US,en;q=0.9", "x-fs-test-now": String(at) },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data.observation_id as string;
  }
  const replayOn = (p: Project, body: unknown) => api(capped, "POST", `/v1/projects/${p.projectId}/bot-policy/replay`, { key: p.secretKey, body });
  async function listed<T>(path: string, key: string): Promise<T[]> {
    const r = await api(capped, "GET", path, { key });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data.items as T[];
  }

  it("re-decides only the newest FS_REPLAY_SCAN_LIMIT hits and says partial; exactly the cap is not partial", async () => {
    const p = await createBeaconProject(capped);
    const t = Date.now() - 60 * MINUTE;
    // Three older search crawler hits, then the cap's worth of AI crawler hits, a minute apart.
    const older: string[] = [];
    for (let i = 0; i < 3; i++) older.push(await hitAt(p, GOOGLEBOT, GOOGLEBOT_IP, t + i * MINUTE));
    const newest: string[] = [];
    for (let i = 0; i < CAP; i++) newest.push(await hitAt(p, GPTBOT, GPTBOT_IP, t + (10 + i) * MINUTE));
    const items = await listed<StoredHit>(`/v1/projects/${p.projectId}/observations?limit=100`, p.secretKey);
    expect(items).toHaveLength(3 + CAP);
    // A proposal that turns every stored decision of each kind around.
    const other = (id: string) => (items.find((o) => o.id === id)!.decision === "block" ? "allow" : "block");
    const proposal: Partial<BotPolicy> = { kinds: { search_crawler: other(older[0]!), ai_crawler: other(newest[0]!) } };
    const r = await replayOn(p, { policy: proposal, days: 1, examples: 20 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const hits = r.body.data.hits;

    const policy = resolvePolicy(proposal);
    const subject = (o: StoredHit) => ({ bot_id: o.bot_id, bot_kind: o.ua.bot_kind as PolicyKind | null, bot_verified: o.bot_verified });
    const redecide = (o: StoredHit) => applyPolicy(policy, subject(o))?.action ?? decideHit(o.score);
    const kept = items.filter((o) => newest.includes(o.id));
    const want = tally(kept, (o) => o.decision, redecide, (o) => ({ kind: o.ua.bot_kind ?? "browser", reason: applyPolicy(policy, subject(o))?.rule ?? "score" }));
    // The older hits would change too: had they been re-decided, the figures would show them.
    expect(items.filter((o) => older.includes(o.id) && o.decision !== redecide(o))).toHaveLength(3);
    expect(want.changed).toBe(CAP);

    expect(hits).toMatchObject({ scanned: CAP, changed: want.changed, partial: true });
    expect(transitionCounts(hits.transitions)).toEqual(want.transitions);
    expect(asCounts(hits.by_kind, "kind")).toEqual(want.groups.kind);
    expect(asCounts(hits.by_reason, "reason")).toEqual(want.groups.reason);
    const exampled = hits.by_kind.flatMap((g: { examples: Array<{ id: string }> }) => g.examples.map((e) => e.id));
    expect(exampled.every((id: string) => newest.includes(id))).toBe(true);

    // A period holding exactly the cap's worth is whole.
    const whole = await createBeaconProject(capped);
    for (let i = 0; i < CAP; i++) await hitAt(whole, CURL, `73.15.20.${60 + i}`, t + i * MINUTE);
    const all = await replayOn(whole, { policy: proposal, days: 1 });
    expect(all.body.data.hits).toMatchObject({ scanned: CAP, partial: false });
  });

  it("re-decides only the newest FS_REPLAY_SCAN_LIMIT checks and says partial", async () => {
    const p = await createBeaconProject(capped, "pro");
    const t = Date.now() - 60 * MINUTE;
    const check = async (form: string, at: number) => {
      const c = await api(capped, "POST", "/v1/check", {
        key: p.secretKey,
        body: { form_id: form, form_data: { name: "Maria", message: HAM }, metadata: { ip: HOME_IP, user_agent: CHROME, form_loaded_at: at - 45_000, honeypot_field: "" } },
        headers: { "x-fs-test-now": String(at) },
      });
      expect(c.status, JSON.stringify(c.body)).toBe(200);
    };
    // Two older checks of one form, then the cap's worth of another form's.
    for (let i = 0; i < 2; i++) await check("older", t + i * MINUTE);
    for (let i = 0; i < CAP; i++) await check("newest", t + (10 + i) * MINUTE);
    const checks = await listed<{ request_id: string; score: number; decision: string; form_id: string }>(`/v1/orgs/${p.orgId}/checks?limit=100`, p.secretKey);
    expect(checks).toHaveLength(2 + CAP);
    // Thresholds under every stored score: each check would become a block.
    const low = Math.min(...checks.map((c) => c.score));
    const thresholds: DecisionThresholds = { review: Math.max(0.001, low / 3), block: Math.max(0.002, low / 2) };
    expect(checks.every((c) => c.decision !== decideCheck(c.score, thresholds))).toBe(true);

    const r = await replayOn(p, { thresholds, days: 1, examples: 20 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.checks).toMatchObject({ scanned: CAP, changed: CAP, partial: true, by_form: [{ form_id: "newest", count: CAP }] });
  });
});

describe("rules in dry run", () => {
  it("leave the live decision unchanged and record what they would have done on the observation", async () => {
    const p = await createBeaconProject(server);
    const put = await api(server, "PUT", `/v1/projects/${p.projectId}/bot-policy`, { key: p.secretKey, body: { bots: { googlebot: "block" }, kinds: { automation: "allow" }, dry_run: ["bots.googlebot"] } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.data.policy.dry_run).toEqual(["bots.googlebot"]);
    const id = await hit(p, GOOGLEBOT, GOOGLEBOT_IP, "/");
    const chrome = await hit(p, CHROME, HOME_IP, "/");
    const items = await stored<StoredHit>(`/v1/projects/${p.projectId}/observations`, p.secretKey);
    const o = items.find((i) => i.id === id)!;
    // Live: the default rule for verified search crawlers still decides.
    expect(o.decision).toBe("allow");
    expect(o.policy).toEqual({ action: "allow", rule: "kinds.search_crawler" });
    expect(o.dry_run).toEqual({ action: "block", rule: "bots.googlebot" });
    expect(o.reasons).toContain("policy_dry_run:block:bots.googlebot");
    const c = items.find((i) => i.id === chrome)!;
    expect(c).toMatchObject({ dry_run: null, policy: null });
    expect(c.reasons.some((r) => r.startsWith("policy_dry_run:"))).toBe(false);

    // The replay of the same policy without the dry run shows the change it would make.
    const r = await replay(p, { policy: { bots: { googlebot: "block" }, kinds: { automation: "allow" } } });
    expect(r.body.data.hits.by_reason).toEqual([{ reason: "bots.googlebot", count: 1, examples: [expect.objectContaining({ id, from: "allow", to: "block" })] }]);
  });
});

describe("POST /dashboard/policy/preview", () => {
  async function signIn(key: string): Promise<{ cookie: string; csrf: string }> {
    const res = await server.fetch(`${server.url}/dashboard/login`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url }, body: new URLSearchParams({ key }).toString(), redirect: "manual" });
    await res.arrayBuffer();
    expect(res.status).toBe(303);
    const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
    const page = await (await server.fetch(`${server.url}/dashboard/policy`, { headers: { cookie } })).text();
    return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]! };
  }
  const preview = (cookie: string, fields: Record<string, string>) =>
    server.fetch(`${server.url}/dashboard/policy/preview`, { method: "POST", headers: { cookie, origin: server.url, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString(), redirect: "manual" });

  it("shows the replay of the edited form, refuses a form without the session's token, and shows a refused document as a message", async () => {
    const p = await createBeaconProject(server);
    await seedHits(p);
    const { cookie, csrf } = await signIn(p.secretKey);
    const fields = { project: p.projectId, "kind.search_crawler": "score", days: "7" };
    const api7 = (await replay(p, { policy: { kinds: { search_crawler: "score" } }, days: 7 })).body.data.hits;

    const ok = await preview(cookie, { ...fields, csrf });
    const html = await ok.text();
    expect(ok.status).toBe(200);
    expect(html).toContain(`<span data-field="replay-scanned">${api7.scanned}</span>`);
    expect(html).toContain(`<span data-field="replay-changed">${api7.changed}</span>`);
    expect(html).toMatch(/<option value="score" selected>score<\/option>/);

    const forged = await preview(cookie, { ...fields, csrf: "x" });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain("security token");

    const bad = await preview(cookie, { ...fields, csrf, new_bot_id: "Not A Bot!" });
    expect(bad.status).toBe(200);
    expect(await bad.text()).toMatch(/role="alert"><p>This policy cannot be previewed or saved: .*not a bot id/);
    // Nothing was saved by any of them.
    expect((await api(server, "GET", `/v1/projects/${p.projectId}/bot-policy`, { key: p.secretKey })).body.data.stored).toBeNull();
  });
});
