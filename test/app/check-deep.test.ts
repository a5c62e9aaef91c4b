import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer } from "../integration/helpers/dns-server.js";
import { startApp, type TestApp } from "../helpers/app.js";
import { admin, api, createBeaconProject } from "../integration/helpers/server.js";

/**
 * POST /v1/check/deep over HTTP: the check's answer plus the four blocks, the session's history
 * from real beacon hits, reverse DNS from a local DNS server, credits (4, or 2 when nothing deep
 * resolved) in metadata and in usage, and errors in the envelope.
 */

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const HAM = "Hi, I ordered the blue kettle last Tuesday and it still has not arrived. Could you check the delivery status for order 4411? Thanks, Maria";
const SPAM = "CONGRATULATIONS!!! You have WON a $1000 gift card. Click http://bit.ly/claim-now to claim your prize today, offer expires in 24 hours!";

let server: TestApp;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let p: Awaited<ReturnType<typeof createBeaconProject>>;

beforeAll(async () => {
  dns = await startDnsServer({
    ptr: {
      "73.15.20.30": "c-73-15-20-30.hsd1.ca.comcast.net.",
      "73.15.20.31": "vps12.example-host.test.",
      "73.15.20.32": "mail.spoofed.example.test.",
      "192.0.2.53": "canary.example.test.", // FS_RDNS_CANARY
    },
    a: {
      "c-73-15-20-30.hsd1.ca.comcast.net": ["73.15.20.30"],
      "vps12.example-host.test": ["73.15.20.31"],
      "mail.spoofed.example.test": ["192.0.2.1"],
      "mx1.example-shop.com": ["192.0.2.25"],
      "parked-shop.test": ["192.0.2.80"], // no MX: implicit MX only
    },
    mx: { "example-shop.com": [{ exchange: "mx1.example-shop.com", priority: 10 }], "gmail.com": [{ exchange: "gmail-smtp-in.l.google.com", priority: 5 }] },
    silent: ["73.15.20.33"],
  });
  server = await startApp({ FS_DNS_SERVERS: `127.0.0.1:${dns.port}`, FS_RDNS_TIMEOUT_MS: "300", FS_TRUSTED_PROXIES: "127.0.0.1,::1", FS_RDNS_CANARY: "192.0.2.53" });
  p = await createBeaconProject(server, "pro");
});

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await dns?.close();
});

type Site = Awaited<ReturnType<typeof createBeaconProject>>;

const deep = (body: unknown, key = p.secretKey) => api(server, "POST", "/v1/check/deep", { key, body });
const usedBy = async (site: Site): Promise<number> => (await api(server, "GET", `/v1/orgs/${site.orgId}/usage`, { key: site.secretKey })).body.data.used;
const rules = (r: { body: { data: { rule_matches: Array<{ rule: string }> } } }): string[] => r.body.data.rule_matches.map((m) => m.rule);

/** One beacon hit as the browser sends it (through the trusted proxy: X-Forwarded-For is the client). */
async function beaconHit(site: Site, path: "/v1/collect" | "/v1/report", token: string, session_id: string, o: { ip: string; ua: string; tells?: string[] }) {
  const r = await api(server, "POST", path, {
    key: site.publishableKey,
    body: { token, session_id, kind: path === "/v1/collect" ? "page.view" : "form.submit", signals: { tells: o.tells ?? [] } },
    headers: { "user-agent": o.ua, "x-forwarded-for": o.ip, "accept-encoding": "gzip, deflate, br", "accept-language": "en-US" },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

async function handshake(site: Site): Promise<{ token: string; session_id: string }> {
  return (await api(server, "POST", "/v1/handshake", { key: site.publishableKey, body: {} })).body.data;
}

const submission = (over: Record<string, unknown> = {}, md: Record<string, unknown> = {}) => ({
  form_id: "contact",
  form_data: { name: "Maria", message: HAM },
  metadata: { email: "maria@example-shop.com", ip: "73.15.20.30", user_agent: CHROME, form_loaded_at: Date.now() - 45_000, ...md },
  ...over,
});

describe("POST /v1/check/deep", () => {
  it("answers the check's fields plus four resolved blocks, for 4 credits in metadata and in usage", async () => {
    const site = await createBeaconProject(server);
    const { token, session_id } = await handshake(site);
    await beaconHit(site, "/v1/collect", token, session_id, { ip: "73.15.20.30", ua: CHROME });
    const body = submission();
    const plain = await api(server, "POST", "/v1/check", { key: site.secretKey, body });
    expect(plain.status).toBe(200);
    const before = await usedBy(site);
    const r = await deep({ ...body, session_id }, site.secretKey);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const d = r.body.data;
    // The check's own answer is kept, and its fields are all there.
    expect(d.check).toEqual({ score: plain.body.data.score, decision: plain.body.data.decision });
    expect(d.signals).toEqual(plain.body.data.signals);
    expect(d.fusion.model_version).toBe(`${plain.body.data.fusion.model_version}+deep:1`);
    expect(d.decision).toBe("allow");
    expect(d.confidence).toBeGreaterThan(plain.body.data.confidence);
    expect(d.deep.network).toEqual({ status: "resolved", reason: null, hostname: "c-73-15-20-30.hsd1.ca.comcast.net", hostname_verified: true, name_kind: "other", cache: "miss" });
    expect(d.deep.email.status).toBe("resolved");
    expect(d.deep.email.analysis).toMatchObject({ domain: "example-shop.com", signals: { mx: { found: true, hosts: ["mx1.example-shop.com"] } } });
    expect(d.deep.session).toMatchObject({ status: "resolved", reason: null, session_id, source: "session_id" });
    expect(d.deep.session.summary).toMatchObject({ observation_count: 1, examined: 1, complete: true, kinds: { page_view: 1, form_submit: 0 }, distinct_ips: 1, accounts_bound: 0 });
    expect(d.deep.content.status).toBe("resolved");
    expect(d.deep.content.fields.map((f: { field: string }) => f.field)).toEqual(plain.body.data.signals.content.fields);
    expect(d.deep.content.whole_text_probability).toBe(plain.body.data.signals.content.spam_probability);
    expect(r.body.metadata.credits).toBe(4);
    expect(r.body.metadata.deep).toEqual({ resolved: ["network", "email", "session", "content"], skipped: [], credits: 4 });
    expect((await usedBy(site)) - before).toBe(4);
  });

  it("sums up the session's whole history from real beacon hits, and the findings move the score", async () => {
    const site = await createBeaconProject(server, "pro");
    const { token, session_id } = await handshake(site);
    await beaconHit(site, "/v1/collect", token, session_id, { ip: "73.15.20.30", ua: CHROME });
    await beaconHit(site, "/v1/collect", token, session_id, { ip: "73.15.20.40", ua: CHROME, tells: ["webdriver"] });
    await beaconHit(site, "/v1/report", token, session_id, { ip: "73.15.20.50", ua: FIREFOX });
    // Two accounts already bound to this browser session.
    for (const user of ["acc-1", "acc-2"]) {
      const b = await api(server, "POST", "/v1/sessions/resolve", { key: site.secretKey, body: { external_user_id: user, observation_type: "auth.signup", session_id } });
      expect(b.status).toBe(200);
    }
    const r = await deep(submission({ session_id }), site.secretKey);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const s = r.body.data.deep.session.summary;
    expect(s).toMatchObject({ observation_count: 3, examined: 3, complete: true, kinds: { page_view: 2, form_submit: 1 }, distinct_ips: 3, distinct_user_agents: 2, accounts_bound: 2 });
    expect(s.tells).toContain("webdriver");
    expect(s.decisions.allow + s.decisions.review + s.decisions.block).toBe(3);
    expect(s.worst_score).toBeGreaterThanOrEqual(s.latest_score);
    expect(s.reasons.find((x: { reason: string }) => x.reason === "automation_detected")?.count).toBe(1);
    expect(s.last_seen).toBeGreaterThanOrEqual(s.first_seen);
    expect(rules(r)).toEqual(expect.arrayContaining(["session_automation", "session_ua_changed", "session_ip_hopping", "session_multi_account", "session_worst_verdict"]));
    expect(r.body.data.score).toBeGreaterThan(r.body.data.check.score);
    expect(r.body.data.decision).toBe("block");

    // The same session named by the beacon's field in the form instead of session_id.
    const field = JSON.stringify({ v: 1, token, session_id, action: "contact", signals: { tells: [] } });
    const viaField = await deep(submission({ form_data: { name: "Maria", message: HAM, _fs_signals: field } }), site.secretKey);
    expect(viaField.body.data.deep.session).toMatchObject({ status: "resolved", session_id, source: "beacon_field" });
    expect(viaField.body.data.deep.session.summary.observation_count).toBe(3);
    // The check folded in the latest hit; the deep block adds only what the worst hit says beyond it.
    expect(rules(viaField)).toContain("beacon_session_verdict");
  });

  it("reads forward-confirmed reverse DNS: a server's name, and a name that does not confirm", async () => {
    const server_ = await deep(submission({}, { ip: "73.15.20.31" }));
    expect(server_.body.data.deep.network).toMatchObject({ status: "resolved", hostname: "vps12.example-host.test", hostname_verified: true, name_kind: "server" });
    expect(rules(server_)).toContain("rdns_server_name");
    const spoofed = await deep(submission({}, { ip: "73.15.20.32" }));
    expect(spoofed.body.data.deep.network).toMatchObject({ status: "resolved", hostname: "mail.spoofed.example.test", hostname_verified: false, name_kind: null });
    expect(rules(spoofed)).toContain("rdns_not_confirmed");
    expect(spoofed.body.data.score).toBeGreaterThan(spoofed.body.data.check.score);
    // A domain that takes mail only on its A record.
    const parked = await deep(submission({}, { email: "sales@parked-shop.test" }));
    expect(parked.body.data.deep.email.analysis.signals.mx).toMatchObject({ found: true, implicit: true });
    expect(rules(parked)).toContain("email_implicit_mx");
  });

  it("reads each text field on its own: spam past the joined text's first window is found", async () => {
    // The message fills the classifier's whole window of the joined text; the pitch comes after it.
    const long = Array.from({ length: 14 }, (_, i) => `${HAM} (note ${i + 1})`).join(" ");
    expect(long.length).toBeGreaterThan(1600);
    const r = await deep(submission({ form_data: { message: long, company: SPAM } }));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const c = r.body.data.deep.content;
    expect(c.status).toBe("resolved");
    expect(c.fields.map((f: { field: string }) => f.field)).toEqual(["message", "company"]);
    expect(c.fields[0].windows).toBe(2);
    expect(c.strongest.field).toBe("company");
    expect(c.strongest.spam_probability).toBeGreaterThan(c.whole_text_probability);
    expect(rules(r)).toContain("content_strongest_field");
    expect(r.body.data.score).toBeGreaterThan(r.body.data.check.score);
  });

  it("charges 2 credits when no block could resolve: DNS unavailable, no e-mail, no session, no text", async () => {
    const site = await createBeaconProject(server);
    const before = await usedBy(site);
    const r = await deep({ form_id: "f", metadata: { ip: "73.15.20.33" } }, site.secretKey);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const d = r.body.data.deep;
    expect(d.network).toMatchObject({ status: "skipped", reason: "dns_unavailable", hostname: null });
    expect(d.email).toEqual({ status: "skipped", reason: "not_given", analysis: null });
    expect(d.session).toMatchObject({ status: "skipped", reason: "not_given", summary: null });
    expect(d.content).toMatchObject({ status: "skipped", reason: "not_given", fields: [] });
    expect(r.body.metadata.credits).toBe(2);
    expect(r.body.metadata.deep).toEqual({ resolved: [], skipped: ["network", "email", "session", "content"], credits: 2 });
    expect((await usedBy(site)) - before).toBe(2);
    // A session id that is not this org's is skipped as not found.
    const other = await createBeaconProject(server);
    const theirs = await handshake(other);
    await beaconHit(other, "/v1/collect", theirs.token, theirs.session_id, { ip: "73.15.20.30", ua: CHROME });
    const unknown = await deep({ form_id: "f", metadata: { ip: "73.15.20.33" }, session_id: theirs.session_id }, site.secretKey);
    expect(unknown.body.data.deep.session).toMatchObject({ status: "skipped", reason: "not_found", session_id: theirs.session_id, summary: null });
    expect(unknown.body.metadata.credits).toBe(2);
  });

  it("a free org with 3 credits left: a blind deep analysis is served for 2, one whose blocks resolve is refused whole", async () => {
    const site = await createBeaconProject(server, "free");
    const adjust = await admin(server, "POST", `/v1/admin/orgs/${site.orgId}/usage/adjust`, { credits: 9_997, reason: "test: 3 credits left" });
    expect(adjust.status, JSON.stringify(adjust.body)).toBe(200);
    const refused = await deep(submission(), site.secretKey);
    expect([refused.status, refused.body.error.code, refused.body.metadata.credits]).toEqual([429, "QUOTA_EXCEEDED", 0]);
    expect(await usedBy(site)).toBe(9_997);
    const blind = await deep({ form_id: "f", metadata: { ip: "73.15.20.33" } }, site.secretKey);
    expect([blind.status, blind.body.metadata.credits]).toEqual([200, 2]);
    expect(await usedBy(site)).toBe(9_999);
    // One credit left: the refusal says the call needs more than what remains, not that the quota is used up.
    const short = await deep({ form_id: "f", metadata: { ip: "73.15.20.33" } }, site.secretKey);
    expect([short.status, short.body.error.code, short.body.metadata.ratelimit.remaining]).toEqual([429, "QUOTA_EXCEEDED", 1]);
    expect(short.body.error.message).toMatch(/^This call needs 2 credits and 1 of the monthly quota of 10000 for plan free remain; it resets at /);
  });

  it("answers bad requests in the envelope, charging nothing", async () => {
    const site = await createBeaconProject(server);
    const before = await usedBy(site);
    const none = await deep({ form_id: "f", session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A" }, site.secretKey);
    expect([none.status, none.body.error.code, none.body.metadata.credits]).toEqual([422, "MISSING_REQUIRED_DATA", 0]);
    const badIp = await deep({ form_id: "f", metadata: { ip: "999.1.1.1" } }, site.secretKey);
    expect([badIp.status, badIp.body.error.code]).toEqual([400, "VALIDATION_ERROR"]);
    expect(badIp.body.error.message).toMatch(/^body\.metadata\.ip: /);
    for (const [body, path] of [
      [{ form_id: "f", metadata: { ip: "8.8.8.8" }, extra: 1 }, /extra/],
      [{ form_id: "f", metadata: { ip: "8.8.8.8" }, session_id: "" }, /^body\.session_id/],
      [{ metadata: { ip: "8.8.8.8" } }, /^body\.form_id/],
    ] as const) {
      const r = await deep(body, site.secretKey);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.message).toMatch(path);
    }
    const pub = await api(server, "POST", "/v1/check/deep", { key: site.publishableKey, body: submission() });
    expect([pub.status, pub.body.error.code]).toEqual([403, "KEY_TYPE_NOT_ALLOWED"]);
    expect(await usedBy(site)).toBe(before);
  });
});
