import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer } from "../integration/helpers/dns-server.js";
import { startApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * POST /v1/auth/check over HTTP against the real writer: the verdict and its reasons, credits in
 * metadata and in usage, and that a pre-flight never binds (a resolve after it still sees the
 * account as new, and the counts it reads do not move).
 */

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

let server: TestApp;
let dns: Awaited<ReturnType<typeof startDnsServer>>;

beforeAll(async () => {
  dns = await startDnsServer({
    mx: { "example-shop.com": [{ exchange: "mx1.example-shop.com", priority: 10 }], "gmail.com": [{ exchange: "gmail-smtp-in.l.google.com", priority: 5 }] },
    a: { "mx1.example-shop.com": ["192.0.2.25"] },
  });
  server = await startApp({ FS_DNS_SERVERS: `127.0.0.1:${dns.port}`, FS_RDNS_TIMEOUT_MS: "300", FS_TRUSTED_PROXIES: "127.0.0.1,::1" });
});

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await dns?.close();
});

type Site = Awaited<ReturnType<typeof createBeaconProject>>;

/** A browser session as the beacon makes it: handshake, then one page view. */
async function browserSession(site: Site, ip = "73.15.20.30"): Promise<string> {
  const h = await api(server, "POST", "/v1/handshake", { key: site.publishableKey, body: {} });
  const { token, session_id } = h.body.data;
  const c = await api(server, "POST", "/v1/collect", { key: site.publishableKey, body: { token, session_id }, headers: { "user-agent": CHROME, "x-forwarded-for": ip, "accept-encoding": "gzip, deflate, br", "accept-language": "en-US" } });
  expect(c.status).toBe(200);
  return session_id;
}

const preflight = (site: Site, body: Record<string, unknown>) => api(server, "POST", "/v1/auth/check", { key: site.secretKey, body: { observation_type: "auth.signup", ...body } });
const resolve = (site: Site, body: Record<string, unknown>) => api(server, "POST", "/v1/sessions/resolve", { key: site.secretKey, body: { observation_type: "auth.signup", ...body } });
const usedBy = async (site: Site): Promise<number> => (await api(server, "GET", `/v1/orgs/${site.orgId}/usage`, { key: site.secretKey })).body.data.used;

describe("POST /v1/auth/check", () => {
  it("answers a verdict with reasons for a clean signup, 2 credits in metadata and in usage, binding nothing", async () => {
    const site = await createBeaconProject(server);
    const sid = await browserSession(site);
    const before = await usedBy(site);
    const r = await preflight(site, { session_id: sid, ip: "73.15.20.30", user_agent: CHROME, email: "maria@example-shop.com", fingerprint: "fp-1" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const d = r.body.data;
    expect(d.request_id).toBe(r.body.metadata.request_id);
    expect(d.bound).toBe(false);
    expect(d.observation_type).toBe("auth.signup");
    expect(d.verdict).toMatchObject({ decision: "allow", reasons: [] });
    expect(d.verdict.score).toBeLessThan(0.45);
    expect(d.verdict_source).toBe("session");
    expect(d.continuity).toMatchObject({ found: true, observation_count: 1, is_fresh: true });
    expect(d.correlation).toEqual({ accounts_sharing_session: 0, accounts_sharing_fingerprint: 0, accounts_sharing_ip: 0, accounts_sharing_prefix: 0, linked_emails: 0, shared_network: false, known_account: null });
    expect(d.signals.ip).toMatchObject({ is_datacenter: false, is_vpn: false });
    expect(d.signals.user_agent).toMatchObject({ browser: expect.stringMatching(/^Chrome/), automation: false, bot: null });
    expect(d.signals.email).toMatchObject({ disposable: false, domain: "example-shop.com", reasons: [], weighed: true });
    expect(r.body.metadata.credits).toBe(2);
    expect((await usedBy(site)) - before).toBe(2);
  });

  it("never binds: the counts it reads do not move, and a resolve after it still sees the account as new", async () => {
    const site = await createBeaconProject(server);
    const sid = await browserSession(site);
    const ids = { session_id: sid, fingerprint: "fp-shared", ip: "73.15.20.30", email: "alice@example-shop.com" };
    const zero = { accounts_sharing_session: 0, accounts_sharing_fingerprint: 0, accounts_sharing_ip: 0, accounts_sharing_prefix: 0, linked_emails: 0 };
    // Pre-flights of alice, twice: nothing is bound, so nothing is counted.
    for (let i = 0; i < 2; i++) {
      const a = await preflight(site, { ...ids, external_user_id: "alice" });
      expect(a.body.data.correlation).toMatchObject({ ...zero, known_account: false });
    }
    // Bob signs up and is bound: he does not see alice on the session.
    const bob = await resolve(site, { ...ids, external_user_id: "bob", email: "bob@example-shop.com" });
    expect(bob.body.data.correlation).toMatchObject({ ...zero, known_account: false });
    // Alice's pre-flight now sees bob, and says she is not known yet.
    const again = await preflight(site, { ...ids, external_user_id: "alice" });
    expect(again.body.data.correlation).toMatchObject({ accounts_sharing_session: 1, accounts_sharing_fingerprint: 1, accounts_sharing_ip: 1, accounts_sharing_prefix: 1, linked_emails: 1, known_account: false });
    expect(again.body.data.verdict.reasons).toEqual(expect.arrayContaining(["multi_account:session", "multi_account:fingerprint"]));
    // The resolve after it is alice's first: the same counts, and the verdict the pre-flight gave.
    const alice = await resolve(site, { ...ids, external_user_id: "alice" });
    expect(alice.body.data.correlation).toMatchObject({ accounts_sharing_session: 1, accounts_sharing_fingerprint: 1, accounts_sharing_ip: 1, linked_emails: 1, known_account: false });
    expect(alice.body.data.verdict.score).toBe(again.body.data.verdict.score);
    // Once bound, a pre-flight knows her and still counts only the others.
    const known = await preflight(site, { ...ids, external_user_id: "alice", observation_type: "auth.login" });
    expect(known.body.data.correlation).toMatchObject({ accounts_sharing_session: 1, linked_emails: 1, known_account: true });
    // Without an account, every account bound to the identifiers counts.
    const anyone = await preflight(site, { session_id: sid });
    expect(anyone.body.data.correlation).toMatchObject({ accounts_sharing_session: 2, linked_emails: 2, known_account: null });
  });

  it("gives its reasons: automation user agent, disposable e-mail on signups only, an unknown session, a datacenter IP", async () => {
    const site = await createBeaconProject(server);
    const curl = await preflight(site, { ip: "73.15.20.30", user_agent: "curl/8.5.0" });
    expect(curl.body.data.verdict.reasons).toContain("ua_automation");
    expect(curl.body.data.signals.user_agent.automation).toBe(true);
    const signup = await preflight(site, { email: "x7f3k@mailinator.com" });
    expect(signup.body.data.verdict.reasons).toContain("email_disposable");
    expect(signup.body.data.signals.email).toMatchObject({ disposable: true, weighed: true });
    expect(signup.body.data.verdict_source).toBe("none");
    const login = await preflight(site, { email: "x7f3k@mailinator.com", observation_type: "auth.login" });
    expect(login.body.data.verdict.reasons).not.toContain("email_disposable");
    expect(login.body.data.signals.email).toMatchObject({ disposable: true, weighed: false });
    expect(login.body.data.verdict.score).toBeLessThan(signup.body.data.verdict.score);
    // A session id this org's beacon never issued (here: another org's).
    const other = await createBeaconProject(server);
    const theirs = await browserSession(other);
    const unknown = await preflight(site, { session_id: theirs });
    expect(unknown.body.data.verdict.reasons).toContain("session_unknown");
    expect(unknown.body.data.continuity.found).toBe(false);
    const dc = await preflight(site, { ip: "3.5.140.2" });
    expect(dc.body.data.verdict_source).toBe("ip");
    expect(dc.body.data.verdict.reasons).toContain("ip_datacenter");
    expect(dc.body.data.signals.ip.is_datacenter).toBe(true);
    // Evidence adds up: all of it together is riskier than any part.
    const all = await preflight(site, { session_id: theirs, ip: "3.5.140.2", user_agent: "curl/8.5.0", email: "x7f3k@mailinator.com" });
    expect(all.body.data.verdict.decision).toBe("block");
  });

  it("refuses keys without the sessions scope and bad bodies, in the envelope and uncharged", async () => {
    const site = await createBeaconProject(server);
    const before = await usedBy(site);
    const noScope = await createOrgWithKey(server);
    const r = await api(server, "POST", "/v1/auth/check", { key: noScope.key, body: { observation_type: "auth.login", ip: "8.8.8.8" } });
    expect([r.status, r.body.error.code]).toEqual([403, "INSUFFICIENT_SCOPE"]);
    const none = await preflight(site, { user_agent: CHROME, external_user_id: "u" });
    expect([none.status, none.body.error.code, none.body.metadata.credits]).toEqual([422, "MISSING_REQUIRED_DATA", 0]);
    for (const [body, path] of [
      [{ ip: "1.2.3" }, /^body\.ip/],
      [{ ip: "8.8.8.8", observation_type: "auth.logout" }, /^body\.observation_type/],
      [{ ip: "8.8.8.8", event: "login" }, /event/],
      [{ session_id: "" }, /^body\.session_id/],
      [{ ip: "8.8.8.8", user_agent: "x".repeat(2049) }, /^body\.user_agent/],
    ] as const) {
      const bad = await preflight(site, body);
      expect(bad.status, JSON.stringify(bad.body)).toBe(400);
      expect(bad.body.error.code).toBe("VALIDATION_ERROR");
      expect(bad.body.error.message).toMatch(path);
    }
    expect((await api(server, "POST", "/v1/auth/check", { key: site.secretKey, body: { ip: "8.8.8.8" } })).body.error.message).toMatch(/^body\.observation_type/);
    expect(await usedBy(site)).toBe(before);
  });
});
