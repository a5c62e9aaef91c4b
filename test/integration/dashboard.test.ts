import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, api, createBeaconProject, createOrgWithKey, startServer, useServer, type TestServer } from "./helpers/server.js";
import { startStripeServer, type TestStripeServer } from "./helpers/stripe-server.js";
import { scaled } from "../helpers/time.js";

/**
 * The dashboard over HTTP: sign-in, the session cookie, CSRF and Origin checks, HTML errors, and
 * changes made through it as the API sees them. test/browser/dashboard.test.ts runs it in Chromium.
 */

let server!: TestServer;
// Loopback is a trusted proxy, so each test signs in from its own X-Forwarded-For address (the
// sign-in limit counts wrong keys per client address) and can claim https with X-Forwarded-Proto.
useServer((s) => (server = s), { FS_TRUSTED_PROXIES: "127.0.0.1,::1" });

let nextAddress = 10;
const defaultServer = (): TestServer => server;

/** A browser-like client: one cookie jar, its own address, Origin on every POST. */
function browser(opts: { https?: boolean; on?: TestServer } = {}) {
  const server = opts.on ?? defaultServer();
  const ip = `198.51.100.${nextAddress++}`;
  let cookie = "";
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    "x-forwarded-for": ip,
    ...(opts.https ? { "x-forwarded-proto": "https" } : {}),
    ...(cookie ? { cookie } : {}),
    ...extra,
  });
  const remember = (res: Response): void => {
    const set = res.headers.get("set-cookie");
    if (!set) return;
    const [pair] = set.split(";");
    cookie = /=$/.test(pair!) || /max-age=0/i.test(set) ? "" : pair!;
  };
  return {
    ip,
    get cookie() {
      return cookie;
    },
    set cookie(v: string) {
      cookie = v;
    },
    async get(path: string) {
      const res = await fetch(server.url + path, { headers: headers(), redirect: "manual" });
      remember(res);
      return { res, text: await res.text() };
    },
    async post(path: string, fields: Record<string, string | string[]>, extra: Record<string, string> = { origin: server.url }) {
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
      const res = await fetch(server.url + path, {
        method: "POST",
        headers: headers({ "content-type": "application/x-www-form-urlencoded", ...extra }),
        body: body.toString(),
        redirect: "manual",
      });
      remember(res);
      return { res, text: await res.text() };
    },
    /** Signs in; returns the CSRF token of the overview page. */
    async signIn(key: string) {
      const r = await this.post("/dashboard/login", { key });
      expect(r.res.status, r.text).toBe(303);
      expect(r.res.headers.get("location")).toBe("/dashboard");
      const page = await this.get("/dashboard");
      expect(page.res.status).toBe(200);
      return csrfOf(page.text);
    },
  };
}

function csrfOf(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error("no CSRF field in the page");
  return m[1]!;
}

describe("sign-in", () => {
  it("sends a signed-out browser to the sign-in page, a password form with strict headers", async () => {
    const b = browser();
    const home = await b.get("/dashboard");
    expect(home.res.status).toBe(303);
    expect(home.res.headers.get("location")).toBe("/dashboard/login");
    const login = await b.get("/dashboard/login");
    expect(login.res.status).toBe(200);
    expect(login.res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(login.res.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    expect(login.res.headers.get("x-frame-options")).toBe("DENY");
    expect(login.res.headers.get("cache-control")).toBe("no-store");
    expect(login.text).toMatch(/<label for="key">/);
    expect(login.text).toMatch(/<input id="key" name="key" type="password"/);
    const css = await fetch(`${server.url}/dashboard/style.css`);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
  });

  it("refuses a wrong key (401), a publishable key (403), and answers wrong keys past the limit per address 429", async () => {
    const p = await createBeaconProject(server);
    const b = browser();
    const wrong = await b.post("/dashboard/login", { key: "fs_live_" + "x".repeat(44) });
    expect(wrong.res.status).toBe(401);
    expect(wrong.text).toMatch(/That key was not accepted: Invalid API key/);
    expect(wrong.res.headers.get("set-cookie")).toBeNull();
    // A publishable key is a right key of the wrong type: refused, not counted as a guess.
    const pub = await b.post("/dashboard/login", { key: p.publishableKey });
    expect(pub.res.status).toBe(403);
    expect(pub.text).toMatch(/Publishable keys/);
    for (let i = 0; i < 9; i++) expect((await b.post("/dashboard/login", { key: "nope" })).res.status).toBe(401);
    // Ten wrong keys: further wrong keys from the address wait.
    const limited = await b.post("/dashboard/login", { key: "nope" });
    expect(limited.res.status).toBe(429);
    expect(Number(limited.res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.text).toMatch(/Too many wrong keys/);
    // The right key does not (test/app/dashboard-signin.security.test.ts has more).
    await b.signIn(p.secretKey);
  });

  it("sets an HttpOnly SameSite=Strict session cookie that does not hold the key; Secure (and __Host-) over https", async () => {
    const { key } = await createOrgWithKey(server);
    const plain = browser();
    const r = await plain.post("/dashboard/login", { key });
    expect(r.res.status).toBe(303);
    const cookie = r.res.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^fs_dash=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(cookie).not.toContain(key.slice(8));
    const secure = browser({ https: true });
    const s = await secure.post("/dashboard/login", { key });
    expect(s.res.headers.get("set-cookie")).toMatch(/^__Host-fs_dash=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
    expect((await secure.get("/dashboard")).res.status).toBe(200);
    // X-Forwarded-Proto from an untrusted peer is not believed: covered by the trusted-proxy rule
    // (client-address.ts); here the plain cookie is not accepted as the secure one.
    const mixed = browser({ https: true });
    mixed.cookie = plain.cookie;
    expect((await mixed.get("/dashboard")).res.status).toBe(303);
  });

  it("refuses a sign-in posted from another site", async () => {
    const { key } = await createOrgWithKey(server);
    const r = await browser().post("/dashboard/login", { key }, { origin: "https://evil.example" });
    expect(r.res.status).toBe(403);
    expect(r.res.headers.get("set-cookie")).toBeNull();
    expect(r.text).toMatch(/another site/);
    // Behind a trusted proxy, the public name it forwards (X-Forwarded-Host) is this service's.
    const proxied = await browser().post("/dashboard/login", { key }, { origin: "https://fs.example.com", "x-forwarded-host": "fs.example.com" });
    expect(proxied.res.status).toBe(303);
  });
});

describe("changes", () => {
  it("refuses a change without the CSRF token (403) or from another origin (403); applies it with both", async () => {
    const p = await createBeaconProject(server);
    const b = browser();
    const csrf = await b.signIn(p.secretKey);
    const fields = { project: p.projectId, "kind.ai_crawler": "block" };
    const missing = await b.post("/dashboard/policy", fields);
    expect(missing.res.status).toBe(403);
    expect(missing.res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(missing.text).toMatch(/security token/);
    const wrong = await b.post("/dashboard/policy", { ...fields, csrf: csrf.slice(1) + "A" });
    expect(wrong.res.status).toBe(403);
    const foreign = await b.post("/dashboard/policy", { ...fields, csrf }, { origin: "https://evil.example" });
    expect(foreign.res.status).toBe(403);
    const noOrigin = await b.post("/dashboard/policy", { ...fields, csrf }, {});
    expect(noOrigin.res.status).toBe(403);
    const path = `/v1/projects/${p.projectId}/bot-policy`;
    expect((await api(server, "GET", path, { key: p.secretKey })).body.data.stored).toBeNull();

    const ok = await b.post("/dashboard/policy", { ...fields, csrf });
    expect(ok.res.status).toBe(303);
    expect(ok.res.headers.get("location")).toBe(`/dashboard/policy?project=${p.projectId}`);
    const stored = await api(server, "GET", path, { key: p.secretKey });
    expect(stored.body.data.stored).toEqual({ kinds: { ai_crawler: "block" } });
    const page = await b.get(`/dashboard/policy?project=${p.projectId}`);
    expect(page.text).toMatch(/The bot policy is saved; the next hit follows it/);
    expect(page.text).toMatch(/<select id="kind-ai_crawler" name="kind.ai_crawler">.*?<option value="block" selected>/);
    // The bot id field suggests every bot the dataset in service knows.
    expect(page.text).toMatch(/<input id="new-bot" name="new_bot_id" list="known-bots"/);
    const datalist = /<datalist id="known-bots">(.*?)<\/datalist>/.exec(page.text)?.[1] ?? "";
    const suggested = [...datalist.matchAll(/<option value="([a-z0-9][a-z0-9._-]*)">[^<]+ \((\w+)\)<\/option>/g)].map((m) => m[1]);
    expect(suggested).toContain("gptbot");
    expect(suggested).toContain("googlebot");
    expect(page.text).toContain(`${suggested.length.toLocaleString("en-US")} known bots`);
    // A Referer of this service is enough when a browser sends no Origin.
    const viaReferer = await b.post("/dashboard/policy", { project: p.projectId, "bot_id": [], new_bot_id: "gptbot", new_bot_action: "allow", csrf }, { referer: `${server.url}/dashboard/policy` });
    expect(viaReferer.res.status).toBe(303);
    expect((await api(server, "GET", path, { key: p.secretKey })).body.data.stored).toEqual({ bots: { gptbot: "allow" } });
  });

  it("shows a refused change as a message on the page, never a 500", async () => {
    const p = await createBeaconProject(server);
    const b = browser();
    const csrf = await b.signIn(p.secretKey);
    const bad = await b.post("/dashboard/policy", { project: p.projectId, new_bot_id: "Not A Bot!", csrf });
    expect(bad.res.status).toBe(303);
    const page = await b.get(bad.res.headers.get("location")!);
    expect(page.text).toMatch(/role="alert"><p>body\.bots/);
    // Another org's project answers as a missing one.
    const other = await createBeaconProject(server);
    const foreign = await b.post("/dashboard/policy", { project: other.projectId, "kind.seo": "block", csrf });
    expect(foreign.res.status).toBe(303);
    expect((await b.get(foreign.res.headers.get("location")!)).text).toMatch(/No project with id/);
    expect((await api(server, "GET", `/v1/projects/${other.projectId}/bot-policy`, { key: other.secretKey })).body.data.stored).toBeNull();
    const notForm = await fetch(`${server.url}/dashboard/policy`, { method: "POST", headers: { cookie: b.cookie, origin: server.url, "content-type": "application/json", "x-forwarded-for": b.ip }, body: "{}" });
    expect(notForm.status).toBe(415);
    expect(notForm.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const unknown = await b.get("/dashboard/nothing-here");
    expect(unknown.res.status).toBe(404);
    expect(unknown.text).toMatch(/There is no dashboard page for GET \/dashboard\/nothing-here/);
    const wrongMethod = await b.post("/dashboard", {});
    expect(wrongMethod.res.status).toBe(404);
    expect(wrongMethod.res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const hit = await b.get(`/dashboard/observations/hit?project=${p.projectId}&seq=999999`);
    expect(hit.res.status).toBe(404);
  });

  it("lists, creates (scopes no wider than the session's key, live or test mode) and disables keys; a new secret is shown once", async () => {
    const { orgId, key } = await createOrgWithKey(server, "free", ["sessions"]);
    const b = browser();
    const csrf = await b.signIn(key);
    const wider = await b.post("/dashboard/keys", { type: "secret", scopes: ["sessions", "billing"], csrf });
    expect((await b.get(wider.res.headers.get("location")!)).text).toMatch(/lacks billing/);
    const made = await b.post("/dashboard/keys", { type: "secret", scopes: ["sessions"], csrf });
    expect(made.res.status).toBe(303);
    const shown = await b.get("/dashboard/keys");
    const secret = /id="new-secret" class="secret" readonly value="(fs_live_[A-Za-z0-9]+)"/.exec(shown.text)?.[1];
    expect(secret).toBeDefined();
    expect((await b.get("/dashboard/keys")).text).not.toContain(secret!);
    const usage = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key: secret! });
    expect(usage.status).toBe(200);
    const newId = `key_${secret!.slice(8, 20)}`;
    expect(shown.text).toContain(newId);
    // Without its confirmation the form leads to the confirmation page, and nothing changes.
    const asked = await b.post("/dashboard/keys/disable", { key: newId, csrf });
    expect(asked.res.headers.get("location")).toBe(`/dashboard/keys/confirm?do=disable&key=${newId}`);
    expect((await b.get(asked.res.headers.get("location")!)).text).toMatch(/refused \(403 KEY_DISABLED\) from the next request on/);
    expect((await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key: secret! })).status).toBe(200);
    const off = await b.post("/dashboard/keys/disable", { key: newId, csrf, confirm: "yes" });
    expect(off.res.headers.get("location")).toBe("/dashboard/keys");
    expect((await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key: secret! })).body.error.code).toBe("KEY_DISABLED");
    // Another org's key is not found, and stays enabled.
    const other = await createOrgWithKey(server);
    // A test-mode key from the same form: shown once with its prefix, listed as test, charging nothing.
    await b.post("/dashboard/keys", { type: "secret", mode: "test", scopes: ["sessions"], csrf });
    const testShown = await b.get("/dashboard/keys");
    const testSecret = /id="new-secret" class="secret" readonly value="(fs_test_[A-Za-z0-9]+)"/.exec(testShown.text)?.[1];
    expect(testSecret).toBeDefined();
    expect(testShown.text).toMatch(new RegExp(`key_${testSecret!.slice(8, 20)}</td><td>—</td><td>secret</td><td><strong>test</strong>`));
    const testCall = await api(server, "GET", "/v1/ip/8.8.8.8", { key: testSecret! });
    expect(testCall.status).toBe(200);
    expect(testCall.body.metadata.credits).toBe(0);
    const foreign = await b.post("/dashboard/keys/disable", { key: other.keyId, csrf, confirm: "yes" });
    expect((await b.get(foreign.res.headers.get("location")!)).text).toMatch(/No key with id/);
    expect((await api(server, "GET", `/v1/orgs/${other.orgId}/usage`, { key: other.key })).status).toBe(200);
  });

  it("names, rolls (with a grace period), enables and deletes keys, each change confirmed first", async () => {
    const { orgId, key } = await createOrgWithKey(server, "free", ["sessions"]);
    const b = browser();
    const csrf = await b.signIn(key);
    await b.post("/dashboard/keys", { type: "secret", name: "nightly job", scopes: ["sessions"], csrf });
    const made = await b.get("/dashboard/keys");
    const secret = /id="new-secret" class="secret" readonly value="(fs_live_[A-Za-z0-9]+)"/.exec(made.text)![1]!;
    const id = `key_${secret.slice(8, 20)}`;
    expect(made.text).toMatch(new RegExp(`${id}</td><td>nightly job</td>`));
    // Rolling: the confirmation page offers the grace period; the new secret is shown once; both work until it ends.
    const rollPage = await b.get(`/dashboard/keys/confirm?do=roll&key=${id}`);
    expect(rollPage.text).toMatch(/<select id="grace" name="grace_seconds">/);
    expect((await b.post("/dashboard/keys/roll", { key: id, csrf })).res.headers.get("location")).toBe(`/dashboard/keys/confirm?do=roll&key=${id}`);
    const rolled = await b.post("/dashboard/keys/roll", { key: id, csrf, confirm: "yes", grace_seconds: "3600" });
    expect(rolled.res.headers.get("location")).toBe("/dashboard/keys");
    const after = await b.get("/dashboard/keys");
    const fresh = /id="new-secret" class="secret" readonly value="(fs_live_[A-Za-z0-9]+)"/.exec(after.text)![1]!;
    expect(fresh).not.toBe(secret);
    expect(after.text).toMatch(/replaces key_\w+, which keeps working until/);
    for (const k of [secret, fresh]) expect((await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key: k })).status).toBe(200);
    const listed = (await admin(server, "GET", `/v1/admin/orgs/${orgId}/keys`)).body.data.items as Array<{ id: string; name: string | null; expires_at: string | null }>;
    const old = listed.find((k) => k.id === id)!;
    expect(Date.parse(old.expires_at!) - Date.now()).toBeGreaterThan(3_000_000);
    // Disabled, then enabled again (enabling needs no confirmation).
    await b.post("/dashboard/keys/disable", { key: id, csrf, confirm: "yes" });
    expect((await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key: secret })).body.error.code).toBe("KEY_DISABLED");
    expect((await b.get("/dashboard/keys")).text).toMatch(new RegExp(`aria-label="Enable ${id}"`));
    await b.post("/dashboard/keys/enable", { key: id, csrf });
    expect((await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key: secret })).status).toBe(200);
    // Deleted: confirmed first, then refused as an unknown key and gone from the page.
    expect((await b.get(`/dashboard/keys/confirm?do=delete&key=${id}`)).text).toMatch(/deleted for good/);
    expect((await b.post("/dashboard/keys/delete", { key: id, csrf })).res.headers.get("location")).toBe(`/dashboard/keys/confirm?do=delete&key=${id}`);
    expect((await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key: secret })).status).toBe(200);
    await b.post("/dashboard/keys/delete", { key: id, csrf, confirm: "yes" });
    expect((await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key: secret })).body.error.code).toBe("INVALID_KEY");
    expect((await b.get("/dashboard/keys")).text).not.toContain(`${id}</td>`);
    const gone = await b.get(`/dashboard/keys/confirm?do=delete&key=${id}`);
    expect(gone.text).toMatch(/No key with id/);
  });

  it("sets a project's allowed origins and creates a project", async () => {
    const p = await createBeaconProject(server);
    const b = browser();
    const csrf = await b.signIn(p.secretKey);
    await b.post("/dashboard/projects/origins", { project: p.projectId, origins: "https://shop.example.com\r\nhttps://*.example.com\r\n", csrf });
    const list = await admin(server, "GET", `/v1/admin/orgs/${p.orgId}/projects`);
    expect(list.body.data.items[0].allowed_origins).toEqual(["https://shop.example.com", "https://*.example.com"]);
    await b.post("/dashboard/projects", { name: "second site", csrf });
    const after = await admin(server, "GET", `/v1/admin/orgs/${p.orgId}/projects`);
    expect(after.body.data.items.map((x: { name: string }) => x.name).sort()).toEqual(["second site", "site"]);
  });
});

describe("overview and session end", () => {
  it("shows usage and the credits charged today in the chart", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    for (let i = 0; i < 3; i++) expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key })).status).toBe(200);
    const used = (await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key })).body.data.used as number;
    expect(used).toBeGreaterThan(0);
    const b = browser();
    await b.signIn(key);
    const page = await b.get("/dashboard");
    expect(page.text).toMatch(new RegExp(`data-field="used">${used}<`));
    expect(page.text).toMatch(/data-field="plan">free</);
    // The period in words, not its YYYYMM id.
    expect(page.text).toMatch(/<h2 id="usage-h">Usage, (January|February|March|April|May|June|July|August|September|October|November|December) \d{4}<\/h2>/);
    const today = new Date().toISOString().slice(0, 10);
    expect(page.text).toContain(`<title>${today}: ${used} credits</title>`);
    expect(page.text).toMatch(new RegExp(`${used} credits used this period`));
    expect(page.text).toMatch(/<svg role="img"/);
    expect(page.text).toMatch(/Billing is not configured/);
  });

  it("lists a project's hits with their page, address and country", async () => {
    const p = await createBeaconProject(server);
    const hit = await api(server, "POST", "/v1/collect", { key: p.publishableKey, body: { action: "pageview", page: "/pricing?plan=pro" }, headers: { "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0" } });
    expect(hit.status).toBe(200);
    const b = browser();
    await b.signIn(p.secretKey);
    // The page is kept without its query string; the address is the connection's (a loopback: no country).
    await expect
      .poll(async () => (await b.get(`/dashboard/observations?project=${p.projectId}`)).text, { timeout: scaled(10_000) })
      .toMatch(/<th scope="col">Page<\/th><th scope="col">Address<\/th><th scope="col">Country<\/th>[^]*<td><span class="mono">\/pricing<\/span><\/td><td class="mono">127\.0\.0\.1<\/td><td>—<\/td>/);
  });

  it("signs out: the session is gone and its cookie no longer works", async () => {
    const { key } = await createOrgWithKey(server);
    const b = browser();
    const csrf = await b.signIn(key);
    const kept = b.cookie;
    const out = await b.post("/dashboard/logout", { csrf });
    expect(out.res.status).toBe(303);
    expect(out.res.headers.get("location")).toBe("/dashboard/login?m=signed-out");
    expect(out.res.headers.get("set-cookie")).toMatch(/^fs_dash=; .*Max-Age=0/);
    b.cookie = kept;
    const again = await b.get("/dashboard");
    expect(again.res.status).toBe(303);
    expect(again.res.headers.get("location")).toBe("/dashboard/login?m=ended");
  });

  it("ends the session at the next request once its key is disabled", async () => {
    const { key, keyId } = await createOrgWithKey(server);
    const b = browser();
    await b.signIn(key);
    expect((await admin(server, "POST", `/v1/admin/keys/${keyId}/disable`)).status).toBe(200);
    const r = await b.get("/dashboard");
    expect(r.res.status).toBe(303);
    expect(r.res.headers.get("location")).toBe("/dashboard/login?m=ended");
  });
});

describe("own key", () => {
  it("disabling the key the session signed in with warns first, then signs out", async () => {
    const { key, keyId, orgId } = await createOrgWithKey(server);
    const b = browser();
    const csrf = await b.signIn(key);
    const confirm = await b.get(`/dashboard/keys/confirm?do=disable&key=${keyId}`);
    expect(confirm.text).toMatch(/You are signed in with this key: disabling it signs you out/);
    const r = await b.post("/dashboard/keys/disable", { key: keyId, csrf, confirm: "yes" });
    expect(r.res.status).toBe(303);
    expect(r.res.headers.get("location")).toBe("/dashboard/login?m=key-disabled");
    expect(r.res.headers.get("set-cookie")).toMatch(/Max-Age=0/);
    expect((await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key })).body.error.code).toBe("KEY_DISABLED");
    expect((await b.get("/dashboard/login?m=key-disabled")).text).toMatch(/The key you signed in with is disabled/);
  });
});

describe("billing buttons (Stripe-compatible test server)", () => {
  let fake!: TestStripeServer;
  let billed!: TestServer;
  beforeAll(async () => {
    fake = await startStripeServer();
    billed = await startServer({
      FS_TRUSTED_PROXIES: "127.0.0.1,::1",
      STRIPE_SECRET_KEY: "sk_test_fraudscore",
      STRIPE_WEBHOOK_SECRET: "whsec_test_secret",
      STRIPE_PRICE_PRO: "price_pro",
      STRIPE_PRICE_PRO_OVERAGE: "price_pro_overage",
      STRIPE_PRICE_BUSINESS: "price_business",
      STRIPE_PRICE_BUSINESS_OVERAGE: "price_business_overage",
      STRIPE_API_HOST: "127.0.0.1",
      STRIPE_API_PORT: String(fake.port),
      STRIPE_API_PROTOCOL: "http",
    });
  });
  afterAll(async () => {
    await billed?.stop();
    billed?.cleanup();
    await fake?.close();
  });

  it("sends a billing key's session to Stripe Checkout and the portal; a key without the scope gets a message", async () => {
    const { key } = await createOrgWithKey(billed, "free", ["billing"]);
    const b = browser({ on: billed });
    const csrf = await b.signIn(key);
    const overview = await b.get("/dashboard");
    expect(overview.text).toMatch(/<button type="submit">Upgrade \(Stripe Checkout\)<\/button>/);
    const noAccount = await b.post("/dashboard/billing/portal", { csrf });
    expect(noAccount.res.headers.get("location")).toBe("/dashboard");
    expect((await b.get("/dashboard")).text).toMatch(/role="alert"><p>This org has no Stripe customer yet/);
    const checkout = await b.post("/dashboard/billing/checkout", { plan: "pro", csrf });
    expect(checkout.res.status).toBe(303);
    const [session] = [...fake.checkoutSessions.values()];
    expect(checkout.res.headers.get("location")).toBe(session!.session.url);
    expect(session!.session.success_url).toBe(`${billed.url}/dashboard?billing=done`);
    const portal = await b.post("/dashboard/billing/portal", { csrf });
    expect(portal.res.headers.get("location")).toBe([...fake.portalSessions.values()][0]!.url);

    const plain = await createOrgWithKey(billed);
    const p = browser({ on: billed });
    const pcsrf = await p.signIn(plain.key);
    expect((await p.get("/dashboard")).text).toMatch(/<button type="submit" disabled>Upgrade/);
    expect((await p.get("/dashboard")).text).toMatch(/These buttons need a secret key with the <code>billing<\/code> scope/);
    // The action declares the billing scope (dashboard/index.ts): refused before it runs, a 403 page.
    const refused = await p.post("/dashboard/billing/checkout", { plan: "pro", csrf: pcsrf });
    expect(refused.res.status).toBe(403);
    expect(refused.text).toMatch(/needs a secret key with the &#39;billing&#39; scope/);
    expect(fake.checkoutSessions.size).toBe(1);
  });
});
