import { solveChallenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/sha";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer } from "../integration/helpers/dns-server.js";
import { startApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject } from "../integration/helpers/server.js";

/** POST /v1/check over HTTP: the 422 rule, every signal's direction, the beacon's field, credits. */

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const HAM = "Hi, I ordered the blue kettle last Tuesday and it still has not arrived. Could you check the delivery status for order 4411? Thanks, Maria";
const SPAM = "CONGRATULATIONS!!! You have WON a $1000 gift card. Click http://bit.ly/claim-now to claim your prize today, offer expires in 24 hours!";

let server: TestApp;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let p: Awaited<ReturnType<typeof createBeaconProject>>;

beforeAll(async () => {
  dns = await startDnsServer({
    mx: { "example-shop.com": [{ exchange: "mx1.example-shop.com", priority: 10 }], "gmail.com": [{ exchange: "gmail-smtp-in.l.google.com", priority: 5 }] },
    a: { "mx1.example-shop.com": ["192.0.2.25"], "gmail-smtp-in.l.google.com": ["192.0.2.26"] },
    ptr: { "192.0.2.53": "canary.example.test" },
  });
  server = await startApp({ FS_DNS_SERVERS: `127.0.0.1:${dns.port}`, FS_RDNS_TIMEOUT_MS: "500", FS_TRUSTED_PROXIES: "127.0.0.1,::1", FS_RDNS_CANARY: "192.0.2.53" });
  p = await createBeaconProject(server, "pro");
});

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await dns?.close();
});

async function check(body: unknown) {
  const r = await api(server, "POST", "/v1/check", { key: p.secretKey, body });
  return r;
}

async function score(body: Record<string, unknown>): Promise<number> {
  const r = await check(body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.score;
}

const base = (over: Record<string, unknown> = {}, md: Record<string, unknown> = {}) => ({
  form_id: "contact",
  form_data: { name: "Maria", message: HAM, ...over },
  metadata: { email: "maria@example-shop.com", ip: "73.15.20.30", user_agent: CHROME, form_loaded_at: Date.now() - 45_000, honeypot_field: "", ...md },
});

describe("POST /v1/check", () => {
  it("answers the documented check result with 2 credits", async () => {
    const r = await check(base());
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const d = r.body.data;
    expect(d.score).toBeGreaterThanOrEqual(0);
    expect(d.score).toBeLessThan(0.45);
    expect(d.decision).toBe("allow");
    expect(d.confidence).toBeGreaterThan(0.5);
    expect(Object.keys(d.categories).sort()).toEqual(["cold_email", "fraud", "spam"]);
    expect(d.signals.ip).toMatchObject({ country_code: expect.any(String), is_vpn: false, is_datacenter: false, risk: expect.any(Number) });
    expect(d.signals.email).toMatchObject({ disposable: false, domain: "example-shop.com", risk: expect.any(Number) });
    expect(d.signals.content).toMatchObject({ spam_probability: expect.any(Number), language: "en", flags: expect.any(Array) });
    expect(Array.isArray(d.rule_matches)).toBe(true);
    expect(d.fusion).toEqual({ method: expect.any(String), model_version: expect.stringMatching(/^content:.+\+fusion:1$/) });
    expect(r.body.metadata.credits).toBe(2);
  });

  it("422 MISSING_REQUIRED_DATA without email, ip or form data (charged nothing); 400 for a bad IP or body", async () => {
    for (const body of [{ form_id: "f" }, { form_id: "f", metadata: { user_agent: CHROME } }, { form_id: "f", form_data: {} }]) {
      const r = await check(body);
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe("MISSING_REQUIRED_DATA");
      expect(r.body.metadata.credits).toBe(0);
    }
    const bad = await check({ form_id: "f", metadata: { ip: "999.1.1.1" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ param: "body.metadata.ip", problems: [{ param: "body.metadata.ip", message: "'999.1.1.1' is not a valid IPv4 or IPv6 address." }] });
    expect((await check({ metadata: { ip: "8.8.8.8" } })).status).toBe(400);
    expect((await check({ form_id: "f", form_data: { a: { nested: true } } })).status).toBe(400);
    expect((await check({ form_id: "f", metadata: { email: "x@y.z" } })).status).toBe(200);
  });

  it("spam text scores above ham text, and says why", async () => {
    const ham = await check(base());
    const spam = await check(base({ message: SPAM }));
    expect(spam.body.data.score).toBeGreaterThan(ham.body.data.score);
    expect(spam.body.data.signals.content.spam_probability).toBeGreaterThan(ham.body.data.signals.content.spam_probability);
    expect(spam.body.data.signals.content.flags).toEqual(expect.arrayContaining(["links", "url_shortener"]));
    expect(spam.body.data.rule_matches[0]).toMatchObject({ rule: expect.any(String), signal: expect.any(String), contribution: expect.any(Number) });
  });

  it("a message that is only a link is read, scored and flagged link_only; one that is only an address, email_only", async () => {
    const ham = await check(base());
    const link = await check(base({ message: "http://shhort.com/b?r=8f3Kq2" }));
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    const c = link.body.data.signals.content;
    expect(c.fields).toContain("message");
    expect(c.flags).toEqual(expect.arrayContaining(["links", "link_only"]));
    expect(c.spam_probability).toBeGreaterThan(ham.body.data.signals.content.spam_probability);
    expect(link.body.data.score).toBeGreaterThan(ham.body.data.score);
    expect(link.body.data.rule_matches.some((m: { rule: string }) => m.rule === "content_model")).toBe(true);
    const mail = await check(base({ message: "win.big.now@mailinator.com" }));
    expect(mail.body.data.signals.content.fields).toContain("message");
    expect(mail.body.data.signals.content.flags).toContain("email_only");
    // A form whose only text is the link, and the same text on POST /v1/content: the model reads a
    // bare link as the corpora taught it (link-only texts are spam there), not as empty text.
    const only = await check(base({ name: "", message: "http://shhort.com/b?r=8f3Kq2" }));
    expect(only.body.data.signals.content.fields).toEqual(["message"]);
    const alone = await api(server, "POST", "/v1/content", { key: p.secretKey, body: { text: "http://shhort.com/b?r=8f3Kq2" } });
    expect(alone.body.data.flags).toEqual(expect.arrayContaining(["link_only"]));
    expect(alone.body.data.score).toBe(only.body.data.signals.content.spam_probability);
    expect(alone.body.data.decision).not.toBe("allow");
  });

  it("each non-content signal moves the score the right way", async () => {
    const clean = await score(base());
    expect(await score(base({}, { honeypot_field: "http://spam.example" }))).toBeGreaterThan(0.8);
    expect(await score(base({}, { form_loaded_at: Date.now() - 500 }))).toBeGreaterThan(clean);
    expect(await score(base({}, { form_loaded_at: Math.floor((Date.now() - 500) / 1000) }))).toBeGreaterThan(clean); // seconds work too
    expect(await score(base({}, { email: "x7f3k@mailinator.com" }))).toBeGreaterThan(clean);
    expect(await score(base({}, { ip: "3.5.140.2" }))).toBeGreaterThan(clean); // AWS
    expect(await score(base({}, { user_agent: "python-requests/2.31.0" }))).toBeGreaterThan(clean);
    // A client no list names: rule ua_client with the tell as its detail.
    const lib = await check(base({}, { user_agent: "HTTP_Request2/2.3.0 PHP/8.1.2" }));
    expect(lib.body.data.rule_matches).toContainEqual({ rule: "ua_client", signal: "user_agent", contribution: 2.5, detail: "runtime" });
    expect(lib.body.data.score).toBeGreaterThan(clean);
    const dc = await check(base({}, { ip: "3.5.140.2" }));
    expect(dc.body.data.signals.ip.is_datacenter).toBe(true);
    expect(dc.body.data.rule_matches.map((m: { rule: string }) => m.rule)).toContain("ip_datacenter");
    const disposable = await check(base({}, { email: "x7f3k@mailinator.com" }));
    expect(disposable.body.data.signals.email).toMatchObject({ disposable: true, domain: "mailinator.com" });
  });

  it("folds in the beacon's forwarded signals: token verified, session verdict and tells", async () => {
    const h = await api(server, "POST", "/v1/handshake", { key: p.publishableKey, body: {} });
    const { token, session_id } = h.body.data;
    // The page view of a clean browser, then the same for an automated one.
    await api(server, "POST", "/v1/collect", { key: p.publishableKey, body: { token, session_id }, headers: { "user-agent": CHROME, "x-forwarded-for": "73.15.20.30", "accept-encoding": "gzip, deflate, br", "accept-language": "en-US" } });
    const field = (t: string, tells: string[] = []) => JSON.stringify({ v: 1, token: t, session_id, action: "contact", signals: { tells } });
    const withBeacon = await check(base({ _fs_signals: field(token) }));
    expect(withBeacon.status).toBe(200);
    const rules = (r: typeof withBeacon) => r.body.data.rule_matches.map((m: { rule: string }) => m.rule);
    expect(rules(withBeacon)).not.toContain("beacon_token_invalid");
    expect(withBeacon.body.data.signals.content.fields).not.toContain("_fs_signals");
    const forged = await check(base({ _fs_signals: field("v1.prj_x.s_AAAAAAAAAAAAAAAAAAAAAA.zzz.zzzz") }));
    expect(rules(forged)).toContain("beacon_token_invalid");
    expect(forged.body.data.score).toBeGreaterThan(withBeacon.body.data.score);
    const automated = await check(base({ _fs_signals: field(token, ["webdriver"]) }));
    expect(rules(automated)).toContain("beacon_automation");
    expect(automated.body.data.score).toBeGreaterThan(0.45);
    // Another org's token proves nothing here.
    const other = await createBeaconProject(server, "pro");
    const theirs = (await api(server, "POST", "/v1/handshake", { key: other.publishableKey, body: {} })).body.data.token;
    expect(rules(await check(base({ _fs_signals: field(theirs) })))).toContain("beacon_token_invalid");
  });

  it("verifies captcha_token with the challenge product, once", async () => {
    const issued = await api(server, "GET", "/v1/challenge", { key: p.publishableKey });
    expect(issued.status).toBe(200);
    const challenge = issued.body.data.challenge;
    const solution = await solveChallenge({ challenge, deriveKey, timeout: 20_000 });
    const token = Buffer.from(JSON.stringify({ challenge, solution })).toString("base64");
    const spammy = base({}, { ip: "3.5.140.2", form_loaded_at: Date.now() - 3000 }); // middling: room to move both ways
    const without = await check(spammy);
    const solved = await check({ ...spammy, metadata: { ...spammy.metadata, captcha_token: token } });
    const rules = (r: typeof solved) => r.body.data.rule_matches.map((m: { rule: string }) => m.rule);
    expect(rules(solved)).toContain("challenge_valid");
    expect(solved.body.data.score).toBeLessThan(without.body.data.score);
    const replay = await check({ ...spammy, metadata: { ...spammy.metadata, captcha_token: token } });
    expect(rules(replay)).toContain("challenge_replayed");
    expect(replay.body.data.score).toBeGreaterThan(without.body.data.score);
    const garbage = await check({ ...spammy, metadata: { ...spammy.metadata, captcha_token: "not-a-token" } });
    expect(rules(garbage)).toContain("challenge_invalid");
  });
});

describe("POST /v1/content", () => {
  it("scores text alone: calibrated probability, language, flags, categories, 2 credits", async () => {
    const spam = await api(server, "POST", "/v1/content", { key: p.secretKey, body: { text: SPAM } });
    expect(spam.status, JSON.stringify(spam.body)).toBe(200);
    expect(spam.body.data).toMatchObject({ decision: "block", language: "en", flags: expect.arrayContaining(["links"]), model_version: expect.stringMatching(/^content-/) });
    expect(spam.body.data.score).toBe(spam.body.data.spam_probability);
    expect(Object.keys(spam.body.data.categories).sort()).toEqual(["cold_email", "fraud", "spam"]);
    expect(spam.body.metadata.credits).toBe(2);
    const ham = await api(server, "POST", "/v1/content", { key: p.secretKey, body: { text: HAM } });
    expect(ham.body.data.score).toBeLessThan(spam.body.data.score);
    const bad = await api(server, "POST", "/v1/content", { key: p.secretKey, body: { text: "" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^body\.text/);
    expect((await api(server, "POST", "/v1/content", { key: p.secretKey, body: { message: "x" } })).status).toBe(400);
  });
});

