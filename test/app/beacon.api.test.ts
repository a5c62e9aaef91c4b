import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createBeaconProject, createOrgWithKey } from "../integration/helpers/server.js";

/** Beacon endpoints over HTTP (without a browser; test/browser runs the real script). */

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
/** In Google's published Googlebot ranges (googlebot.json). */
const GOOGLEBOT_IP = "66.249.66.1";
/** In OpenAI's published GPTBot ranges (gptbot.json: 132.196.86.0/24). */
const GPTBOT_IP = "132.196.86.10";
/** A residential broadband address (Comcast). */
const HOME_IP = "73.15.20.30";

let server!: TestApp;
useApp((s) => (server = s), { FS_TRUSTED_PROXIES: "127.0.0.1,::1" });

type Project = Awaited<ReturnType<typeof createBeaconProject>>;

async function handshake(p: Project, sessionId?: string, headers: Record<string, string> = {}) {
  const r = await api(server, "POST", "/v1/handshake", { key: p.publishableKey, body: sessionId ? { session_id: sessionId } : {}, headers });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { token: string; session_id: string; expires_at: number };
}

async function hit(p: Project, opts: { ua?: string; ip?: string; token?: string; session_id?: string; path?: string; body?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
  return api(server, "POST", opts.path ?? "/v1/collect", {
    key: p.publishableKey,
    body: { action: "pageview", token: opts.token, session_id: opts.session_id, page: "/pricing?email=a@b.c", ...opts.body },
    // Accept-Encoding before Accept-Language, as Chromium's network stack sends them (Node's fetch
    // would add them the other way round, which is a tell: header_order).
    headers: { "user-agent": opts.ua ?? CHROME, "x-forwarded-for": opts.ip ?? HOME_IP, "accept-encoding": "gzip, deflate, br", "accept-language": "en-US,en;q=0.9", ...opts.headers },
  });
}

async function observations(p: Project, query = "") {
  const r = await api(server, "GET", `/v1/projects/${p.projectId}/observations${query}`, { key: p.secretKey });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { items: any[]; next_cursor: string | null };
}

async function observe(p: Project, opts: Parameters<typeof hit>[1]) {
  const r = await hit(p, opts);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const { items } = await observations(p, "?limit=1");
  expect(items[0].id).toBe(r.body.data.observation_id);
  return items[0];
}

describe("handshake", () => {
  it("issues a token bound to a new session, or to the session it is given with that session's token", async () => {
    const p = await createBeaconProject(server);
    const a = await handshake(p);
    expect(a.session_id).toMatch(/^s_[0-9A-Za-z]{22}$/);
    expect(a.token).toMatch(/^v1\./);
    expect(a.expires_at).toBeGreaterThan(Date.now());
    const b = await api(server, "POST", "/v1/handshake", { key: p.publishableKey, body: { session_id: a.session_id, token: a.token } });
    expect(b.body.data.session_id).toBe(a.session_id);
    // A session id alone proves nothing (beacon.session.security.test.ts): a new session.
    expect((await handshake(p, a.session_id)).session_id).not.toBe(a.session_id);
    const c = await handshake(p, "not-a-session");
    expect(c.session_id).not.toBe("not-a-session");
    expect(c.session_id).toMatch(/^s_/);
  });

  it("takes publishable keys only, and answers 0 credits", async () => {
    const p = await createBeaconProject(server);
    const secret = await api(server, "POST", "/v1/handshake", { key: p.secretKey, body: {} });
    expect(secret.status).toBe(403);
    expect(secret.body.error.code).toBe("KEY_TYPE_NOT_ALLOWED");
    const missing = await api(server, "POST", "/v1/handshake", { body: {} });
    expect(missing.status).toBe(401);
    const ok = await api(server, "POST", "/v1/handshake", { key: p.publishableKey, body: {} });
    expect(ok.body.metadata.credits).toBe(0);
  });
});

describe("collect and report", () => {
  it("records a scored page.view with every observation field; the page keeps no query string", async () => {
    const p = await createBeaconProject(server);
    const h = await handshake(p);
    const r = await hit(p, { token: h.token, session_id: h.session_id, body: { signals: { tells: [], fp: "0123456789abcdef", timing: { elapsed_ms: 900, interactions: 4, rtt_ms: 3 }, ua: CHROME } } });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ observation_id: expect.stringMatching(/^obs_/), session_id: h.session_id });
    expect(r.body.metadata.credits).toBe(0);
    const { items } = await observations(p);
    expect(items).toHaveLength(1);
    const o = items[0];
    expect(o).toMatchObject({ kind: "page.view", action: "pageview", session_id: h.session_id, page: "/pricing", token_valid: true, fingerprint: "0123456789abcdef", ip: HOME_IP });
    expect(o.score).toBeGreaterThanOrEqual(0);
    expect(o.score).toBeLessThan(0.45);
    expect(o.decision).toBe("allow");
    expect(o.reasons).toEqual([]);
    expect(o.ua).toEqual({ browser: "Chrome 131", os: "Windows 10", device: "desktop", bot_kind: null, bot_name: null });
    expect(o).toMatchObject({ bot_id: null, bot_operator: null, bot_verified: null });
  });

  it("tell:timing_mismatch for a hit whose handshake is older than its page; a page older than its handshake is fine", async () => {
    const p = await createBeaconProject(server);
    const t0 = Date.now();
    const h = await handshake(p, undefined, { "x-fs-test-now": String(t0) });
    const late = { "x-fs-test-now": String(t0 + 60_000) };
    // From an address of their own: a minute ahead, they would leave the address's rate limit a
    // minute ahead too, and the next tests' hits (at the real time) would be refused.
    const ip = "73.15.20.77";
    const replayed = await hit(p, { ip, token: h.token, session_id: h.session_id, headers: late, body: { signals: { tells: [], timing: { elapsed_ms: 800, interactions: 0 } } } });
    const honest = await hit(p, { ip, token: h.token, session_id: h.session_id, headers: late, body: { signals: { tells: [], timing: { elapsed_ms: 61_000, interactions: 9 } } } });
    expect([replayed.status, honest.status]).toEqual([200, 200]);
    const { items } = await observations(p);
    const byId = new Map(items.map((o: { id: string; reasons: string[]; decision: string }) => [o.id, o]));
    expect(byId.get(replayed.body.data.observation_id)?.reasons).toEqual(["tell:timing_mismatch"]);
    expect(byId.get(replayed.body.data.observation_id)?.decision).toBe("review");
    expect(byId.get(honest.body.data.observation_id)?.reasons).toEqual([]);
  });

  it("stores and lists the page without control characters, bidi controls or lone surrogates; refuses such an action", async () => {
    const p = await createBeaconProject(server);
    const h = await handshake(p);
    const page = "/a\u0000b\u202ec\ud800d\u0007e\u2066f/g\u00e9\ud83d\ude00";
    const r = await hit(p, { token: h.token, session_id: h.session_id, body: { page } });
    expect(r.status).toBe(200);
    const { items } = await observations(p);
    expect(items[0].page).toBe("/abcdef/g\u00e9\ud83d\ude00"); // letters and a real emoji pair kept
    for (const action of ["sign\u202eup", "sign\u0000up", "x\udc00"]) {
      const bad = await hit(p, { token: h.token, session_id: h.session_id, body: { action } });
      expect(bad.status, JSON.stringify(action)).toBe(400);
      expect(bad.body.error.message).toMatch(/^body\.action: control characters, bidirectional controls and lone surrogates are not allowed/);
    }
  });

  it("a hit without a valid token gets client_token_missing (absent, foreign project, other session, expired)", async () => {
    const p = await createBeaconProject(server);
    const q = await createBeaconProject(server);
    const mine = await handshake(p);
    const theirs = await handshake(q);
    const cases: Array<Parameters<typeof hit>[1]> = [
      {},
      { token: theirs.token, session_id: theirs.session_id },
      { token: mine.token, session_id: (await handshake(p)).session_id },
      { token: "v1.garbage", session_id: mine.session_id },
      { token: mine.token, session_id: mine.session_id, headers: { "x-fs-test-now": String(mine.expires_at + 1) } },
    ];
    for (const c of cases) {
      const o = await observe(p, c);
      expect(o.reasons).toContain("client_token_missing");
      expect(o.token_valid).toBe(false);
    }
    const ok = await observe(p, { token: mine.token, session_id: mine.session_id });
    expect(ok.reasons).not.toContain("client_token_missing");
  });

  it("report records a form.submit with the form's action; a mismatched kind is refused", async () => {
    const p = await createBeaconProject(server);
    const h = await handshake(p);
    const r = await hit(p, { path: "/v1/report", token: h.token, session_id: h.session_id, body: { kind: "form.submit", action: "signup" } });
    expect(r.status).toBe(200);
    const { items } = await observations(p);
    expect(items[0]).toMatchObject({ kind: "form.submit", action: "signup", session_id: h.session_id });
    const wrong = await hit(p, { path: "/v1/collect", body: { kind: "form.submit" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toMatch(/^body\.kind/);
  });

  it("client automation tells and automation user agents give automation_detected", async () => {
    const p = await createBeaconProject(server);
    const h = await handshake(p);
    const tell = await observe(p, { token: h.token, session_id: h.session_id, body: { signals: { tells: ["webdriver"] } } });
    expect(tell.reasons).toContain("automation_detected");
    expect(tell.decision).toBe("block");
    const curl = await observe(p, { ua: "curl/8.5.0", token: h.token, session_id: h.session_id });
    expect(curl.reasons).toContain("automation_detected");
    expect(curl.ua.bot_kind).toBe("automation");
    expect(curl.ua.bot_name).toBeNull();
  });

  it("a UA that is neither a browser nor a registered bot is a non-browser client (bot_kind client, ua_client:<tell>); a policy can block the kind", async () => {
    const p = await createBeaconProject(server);
    const h = await handshake(p);
    const lib = await observe(p, { ua: "scalaj-http/1.0", token: h.token, session_id: h.session_id });
    expect(lib.reasons).toContain("ua_client:library");
    expect(lib.reasons).not.toContain("ua_bot");
    expect(lib.ua).toMatchObject({ bot_kind: "client", bot_name: null });
    expect(lib.bot_id).toBeNull();
    expect(lib.decision).toBe("review");
    // An old IE whose "SLCC2" token contains a registered bot's name stays a browser.
    const ie = await observe(p, { ua: "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; WOW64; Trident/4.0; SLCC2; .NET CLR 2.0.50727)", token: h.token, session_id: h.session_id });
    expect(ie.ua).toMatchObject({ browser: "IE 8", bot_kind: null });
    expect(ie.decision).toBe("allow");
    const put = await api(server, "PUT", `/v1/projects/${p.projectId}/bot-policy`, { key: p.secretKey, body: { kinds: { client: "block" }, allow_unverified: true } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const blocked = await observe(p, { ua: "lua-resty-http/0.16.1 (Lua) ngx_lua/10019", token: h.token, session_id: h.session_id });
    expect(blocked).toMatchObject({ decision: "block", policy: { action: "block", rule: "kinds.client" } });
    expect(blocked.reasons).toContain("ua_client:runtime");
  });

  it("IP reputation adds ip_datacenter", async () => {
    const p = await createBeaconProject(server);
    const h = await handshake(p);
    const o = await observe(p, { ip: "3.5.140.2", token: h.token, session_id: h.session_id }); // AWS
    expect(o.reasons).toContain("ip_datacenter");
  });

  it("rejects bad bodies with the failing field named, never a 500", async () => {
    const p = await createBeaconProject(server);
    const bad = await hit(p, { body: { signals: { tells: ["Not A Tell!"] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^body\.signals\.tells\.0/);
    const big = await hit(p, { body: { action: "x".repeat(65) } });
    expect(big.status).toBe(400);
    const notJson = await api(server, "POST", "/v1/collect", { key: p.publishableKey, rawBody: "{", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
  });
});

describe("bot identification and spoofing", () => {
  it("a Googlebot UA from a Googlebot range is verified and allowed by the default policy", async () => {
    const p = await createBeaconProject(server);
    const o = await observe(p, { ua: GOOGLEBOT, ip: GOOGLEBOT_IP });
    expect(o.bot_id).toBe("googlebot");
    expect(o.bot_operator).toMatch(/google/i);
    expect(o.bot_verified).toBe(true);
    expect(o.ua.bot_kind).toBe("search_crawler");
    expect(o.reasons).toEqual(expect.arrayContaining(["ua_bot", "bot:search_crawler", "bot:id:googlebot", "bot:verified"]));
    expect(o.decision).toBe("allow");
    expect(o.reasons.some((r: string) => r.startsWith("policy:allow:"))).toBe(true);
  });

  it("a Googlebot UA from a GPTBot range is spoofed and blocked", async () => {
    const p = await createBeaconProject(server);
    const o = await observe(p, { ua: GOOGLEBOT, ip: GPTBOT_IP });
    expect(o.bot_verified).toBe(false);
    expect(o.reasons).toContain("bot:spoofed:googlebot");
    expect(o.decision).toBe("block");
  });

  it("a GPTBot UA from a Googlebot range is spoofed; from its own range it is a verified AI crawler", async () => {
    const p = await createBeaconProject(server);
    const spoofed = await observe(p, { ua: GPTBOT, ip: GOOGLEBOT_IP });
    expect(spoofed.bot_id).toBe("gptbot");
    expect(spoofed.bot_verified).toBe(false);
    expect(spoofed.reasons).toContain("bot:spoofed:gptbot");
    const real = await observe(p, { ua: GPTBOT, ip: GPTBOT_IP });
    expect(real.bot_verified).toBe(true);
    expect(real.bot_operator).toMatch(/openai/i);
    expect(real.reasons).toEqual(expect.arrayContaining(["bot:ai_crawler", "bot:id:gptbot", "bot:verified"]));
  });
});

describe("bot policy", () => {
  it("GET gives the defaults; PUT changes the next observation's decision and the reasons say so", async () => {
    const p = await createBeaconProject(server);
    const path = `/v1/projects/${p.projectId}/bot-policy`;
    const got = await api(server, "GET", path, { key: p.secretKey });
    expect(got.status).toBe(200);
    expect(got.body.data.policy.kinds.search_crawler).toBe("allow");
    expect(got.body.data.policy.spoofed).toBe("block");
    expect(got.body.data.updated_at).toBeNull();

    // A verified AI crawler scores as a bot: blocked unless the site lets it in.
    const before = await observe(p, { ua: GPTBOT, ip: GPTBOT_IP });
    expect(before.decision).toBe("block");
    expect(before.policy).toBeNull();

    const doc = { bots: { gptbot: "allow" }, kinds: { search_crawler: "block" } };
    const put = await api(server, "PUT", path, { key: p.secretKey, body: doc });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.data.policy.bots).toEqual({ gptbot: "allow" });
    expect(put.body.data.policy.kinds.search_crawler).toBe("block");
    expect(put.body.data.policy.spoofed).toBe("block");
    expect(put.body.data.updated_at).not.toBeNull();
    const gpt = await observe(p, { ua: GPTBOT, ip: GPTBOT_IP });
    expect(gpt.decision).toBe("allow");
    expect(gpt.reasons).toContain("policy:allow:bots.gptbot");
    expect(gpt.policy).toEqual({ action: "allow", rule: "bots.gptbot" });
    const google = await observe(p, { ua: GOOGLEBOT, ip: GOOGLEBOT_IP });
    expect(google.decision).toBe("block");
    expect(google.policy).toEqual({ action: "block", rule: "kinds.search_crawler" });
    expect((await api(server, "GET", path, { key: p.secretKey })).body.data.stored).toEqual(doc);
  });

  it("refuses bad documents, other orgs, unknown projects and publishable keys", async () => {
    const p = await createBeaconProject(server);
    const path = `/v1/projects/${p.projectId}/bot-policy`;
    const bad = await api(server, "PUT", path, { key: p.secretKey, body: { kinds: { search_crawler: "maybe" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/kinds/);
    // Another org's project answers exactly as a missing one: project ids cannot be probed.
    const other = await createOrgWithKey(server);
    const foreign = await api(server, "GET", path, { key: other.key });
    const missing = await api(server, "GET", "/v1/projects/prj_nope/bot-policy", { key: other.key });
    expect([foreign.status, foreign.body.error.code, missing.status, missing.body.error.code]).toEqual([404, "NOT_FOUND", 404, "NOT_FOUND"]);
    expect(foreign.body.error.message.replace(p.projectId, "X")).toBe(missing.body.error.message.replace("prj_nope", "X"));
    expect((await api(server, "PUT", path, { key: other.key, body: { spoofed: "block" } })).status).toBe(404);
    expect((await api(server, "GET", `/v1/projects/${p.projectId}/observations`, { key: other.key })).status).toBe(404);
    expect((await api(server, "GET", path, { key: p.publishableKey })).body.error.code).toBe("KEY_TYPE_NOT_ALLOWED");
  });
});

describe("CORS and allowed origins", () => {
  it("answers preflights and echoes the page's origin", async () => {
    const pre = await server.fetch(`${server.url}/v1/collect`, {
      method: "OPTIONS",
      headers: { origin: "https://shop.example.com", "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://shop.example.com");
    expect(pre.headers.get("access-control-allow-headers")).toMatch(/authorization/);
    const p = await createBeaconProject(server);
    const r = await hit(p, { headers: { origin: "https://shop.example.com" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBe("https://shop.example.com");
  });

  it("a project's allowed_origins refuses other pages (403, no CORS header); subdomain wildcards match", async () => {
    const p = await createBeaconProject(server);
    const patch = await admin(server, "PATCH", `/v1/admin/orgs/${p.orgId}/projects/${p.projectId}`, { allowed_origins: ["https://shop.example.com", "https://*.example.org"] });
    expect(patch.status, JSON.stringify(patch.body)).toBe(200);
    expect(patch.body.data.allowed_origins).toEqual(["https://shop.example.com", "https://*.example.org"]);
    const evil = await hit(p, { headers: { origin: "https://evil.example.net" } });
    expect(evil.status).toBe(403);
    expect(evil.body.error.code).toBe("ORIGIN_NOT_ALLOWED");
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
    expect((await hit(p, { headers: { origin: "https://shop.example.com" } })).status).toBe(200);
    expect((await hit(p, { headers: { origin: "https://a.b.example.org" } })).status).toBe(200);
    expect((await hit(p, { headers: { origin: "https://example.org" } })).status).toBe(403);
    const bad = await admin(server, "PATCH", `/v1/admin/orgs/${p.orgId}/projects/${p.projectId}`, { allowed_origins: ["shop.example.com/path"] });
    expect(bad.status).toBe(400);
    const wrongOrg = await admin(server, "PATCH", `/v1/admin/orgs/org_nope/projects/${p.projectId}`, { allowed_origins: [] });
    expect(wrongOrg.status).toBe(404);
  });
});

describe("quota and listing", () => {
  it("the beacon path is never blocked by quota", async () => {
    const p = await createBeaconProject(server, "free");
    const adj = await admin(server, "POST", `/v1/admin/orgs/${p.orgId}/usage/adjust`, { credits: 10_000, reason: "test: use up the free quota" });
    expect(adj.status).toBe(200);
    const ip = await api(server, "GET", "/v1/ip/8.8.8.8", { key: p.secretKey });
    expect(ip.status).toBe(429);
    expect((await hit(p)).status).toBe(200);
    expect((await api(server, "POST", "/v1/handshake", { key: p.publishableKey, body: {} })).status).toBe(200);
  });

  it("lists newest first in pages; a bad cursor is a 400", async () => {
    const p = await createBeaconProject(server);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await hit(p, { body: { action: `a${i}` } })).body.data.observation_id);
    const seen: string[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page = await observations(p, `?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((o) => o.id));
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(ids.reverse());
    const bad = await api(server, "GET", `/v1/projects/${p.projectId}/observations?cursor=%%%`, { key: p.secretKey });
    expect(bad.status).toBe(400);
    const limit = await api(server, "GET", `/v1/projects/${p.projectId}/observations?limit=0`, { key: p.secretKey });
    expect(limit.status).toBe(400);
  });
});

describe("beacon script and demo", () => {
  it("serves /js/fs.js with an ETag, gzip and revalidation", async () => {
    const r = await server.fetch(`${server.url}/js/fs.js`, { headers: { "accept-encoding": "gzip" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/javascript/);
    expect(r.headers.get("cache-control")).toMatch(/max-age=\d+/);
    const etag = r.headers.get("etag");
    expect(etag).toMatch(/^".+"$/);
    expect((await r.text()).length).toBeGreaterThan(500);
    const again = await server.fetch(`${server.url}/js/fs.js`, { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
  });

  it("the demo's observation feed refuses malformed input with a 400 (never crashes the process)", async () => {
    const bad = await server.fetch(`${server.url}/demo/observations?session_id=%E0%A4%A`);
    expect(bad.status).toBe(400);
    expect((await server.fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("answers a demo submission with the verdict POST /v1/check gives it, in words, charging the demo org nothing", async () => {
    const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    const used = async () => (await api(server, "GET", `/v1/orgs/${server.demo.orgId}/usage`, { key: server.demo.secretKey })).body.data.used;
    const before = await used();
    const submit = async (message: string): Promise<string> => {
      const form = new URLSearchParams({ name: "Ada", email: "ada@gmail.com", message });
      const r = await server.fetch(`${server.url}/demo/submit`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": FIREFOX }, body: form.toString() });
      expect(r.status).toBe(200);
      return r.text();
    };
    const clean = await submit("Hello, I would like a quote for 20 licences for our team. Could you call me next week?");
    const spam = await submit("CLICK HERE to buy cheap followers and likes!!! Best SEO backlinks, guaranteed ranking, WIN a FREE iPhone now http://cheap-followers.example");
    const decision = (html: string): string => /<div class="verdict (allow|review|block)" id="verdict">/.exec(html)?.[1] ?? "none";
    // What POST /v1/check answers the same submission (with a test key: the same scoring, free).
    const key = (await admin(server, "POST", `/v1/admin/orgs/${server.demo.orgId}/keys`, { type: "secret", mode: "test" })).body.data.key;
    for (const [html, message] of [
      [clean, "Hello, I would like a quote for 20 licences for our team. Could you call me next week?"],
      [spam, "CLICK HERE to buy cheap followers and likes!!! Best SEO backlinks, guaranteed ranking, WIN a FREE iPhone now http://cheap-followers.example"],
    ] as const) {
      const api_ = await api(server, "POST", "/v1/check", { key, body: { form_id: "demo-contact", form_data: { name: "Ada", email: "ada@gmail.com", message }, metadata: { email: "ada@gmail.com", user_agent: FIREFOX } } });
      expect(decision(html)).toBe(api_.body.data.decision);
      expect(html).toContain(`risk score ${Math.round(api_.body.data.score * 100)}%`);
      expect(html).toContain("What the text says, as the content model reads it");
    }
    expect(decision(spam)).not.toBe("allow");
    expect(await used()).toBe(before);
  });

  it("serves the demo page with the demo project's publishable key", async () => {
    const r = await server.fetch(`${server.url}/demo`);
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).toContain('src="/js/fs.js"');
    expect(html).toMatch(/data-fs-project-key="fs_pub_live_[0-9A-Za-z]+"/);
    expect(html).toContain('data-fs-action="contact"');
  });
});
