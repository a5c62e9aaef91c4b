import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject } from "../integration/helpers/server.js";
import { scaled } from "../helpers/time.js";

/**
 * Issue 25, finding 7: a hit without a token was filed in whatever session it named, so one
 * forged hit (UA HeadlessChrome, tell webdriver) moved a victim's deep check from allow 0.23 to
 * block 0.9989; a handshake naming the victim's session id handed out a valid token for it too.
 * Now a hit or a handshake continues a session only with a token issued for that session;
 * anything else starts a session of its own, which the answer names.
 */

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const HEADLESS = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36";
const HOME_IP = "73.15.20.30";
const DAY = 86_400_000;

let server!: TestApp;
// Loopback is a trusted proxy (X-Forwarded-For names the client); reverse DNS answers nothing, at once.
useApp((s) => (server = s), { FS_TRUSTED_PROXIES: "127.0.0.1,::1", FS_DNS_SERVERS: "127.0.0.1:9", FS_RDNS_TIMEOUT_MS: "200", FS_RDNS_CANARY: "", FS_MX_CANARY: "" });

type Site = Awaited<ReturnType<typeof createBeaconProject>>;

async function handshake(site: Site, body: { session_id?: string; token?: string } = {}, headers: Record<string, string> = {}) {
  const r = await api(server, "POST", "/v1/handshake", { key: site.publishableKey, body, headers: { "x-forwarded-for": HOME_IP, ...headers } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { token: string; session_id: string; expires_at: number };
}

async function hit(site: Site, o: { token?: string; session_id?: string; ua: string; tells?: string[]; ip?: string; headers?: Record<string, string> }) {
  const r = await api(server, "POST", "/v1/collect", {
    key: site.publishableKey,
    body: { token: o.token, session_id: o.session_id, page: "/signup", signals: { tells: o.tells ?? [] } },
    headers: { "user-agent": o.ua, "x-forwarded-for": o.ip ?? HOME_IP, "accept-encoding": "gzip, deflate, br", "accept-language": "en-US", ...o.headers },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { observation_id: string; session_id: string };
}

async function history(site: Site, sessionId: string): Promise<string[]> {
  const r = await api(server, "GET", `/v1/projects/${site.projectId}/observations?session_id=${sessionId}`, { key: site.secretKey });
  expect(r.status).toBe(200);
  return r.body.data.items.map((o: { id: string }) => o.id);
}

async function deepCheck(site: Site, sessionId: string) {
  const r = await api(server, "POST", "/v1/check/deep", {
    key: site.secretKey,
    body: {
      form_id: "signup",
      form_data: { name: "Maria", message: "Hi, I would like to open an account for my bakery. Thanks, Maria" },
      metadata: { ip: HOME_IP, user_agent: CHROME, form_loaded_at: Date.now() - 45_000 },
      session_id: sessionId,
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const d = r.body.data;
  const s = d.deep.session.summary;
  return { score: d.score, decision: d.decision, session: { observation_count: s.observation_count, worst_score: s.worst_score, latest_score: s.latest_score, tells: s.tells } };
}

describe("beacon session integrity", () => {
  it("a forged hit without the victim's token is filed in a session of its own and moves nothing of the victim's", async () => {
    const site = await createBeaconProject(server, "pro");
    const victim = await handshake(site);
    const real = await hit(site, { token: victim.token, session_id: victim.session_id, ua: CHROME });
    expect(real.session_id).toBe(victim.session_id);
    const before = await deepCheck(site, victim.session_id);
    expect(before.decision).toBe("allow");

    // The forged hit: no token, the victim's session id, a headless browser with a strong tell.
    const forged = await hit(site, { session_id: victim.session_id, ua: HEADLESS, tells: ["webdriver"], ip: "3.5.140.2" });
    expect(forged.session_id).not.toBe(victim.session_id);
    expect(forged.session_id).toMatch(/^s_[0-9A-Za-z]{22}$/);
    // A handshake naming the victim's session, without its token or with another session's, gets a new session;
    // a hit naming the victim's session with another session's valid token too.
    const claimed = await handshake(site, { session_id: victim.session_id });
    expect(claimed.session_id).not.toBe(victim.session_id);
    const otherToken = await handshake(site, { session_id: victim.session_id, token: claimed.token });
    expect(otherToken.session_id).not.toBe(victim.session_id);
    const viaHandshake = await hit(site, { token: claimed.token, session_id: victim.session_id, ua: HEADLESS, tells: ["webdriver"] });
    expect([victim.session_id, claimed.session_id]).not.toContain(viaHandshake.session_id);
    // With its own session named, the attacker's token files hits in the attacker's session.
    expect((await hit(site, { token: claimed.token, session_id: claimed.session_id, ua: HEADLESS })).session_id).toBe(claimed.session_id);

    await expect.poll(() => history(site, forged.session_id), { timeout: scaled(5000) }).toEqual([forged.observation_id]);
    expect(await history(site, victim.session_id)).toEqual([real.observation_id]);
    const after = await deepCheck(site, victim.session_id);
    expect(after).toEqual(before);
  });

  it("the session's own beacon continues it with its token, even expired, within the observation retention", async () => {
    const site = await createBeaconProject(server);
    const first = await handshake(site);
    await hit(site, { token: first.token, session_id: first.session_id, ua: CHROME });
    const again = await handshake(site, { session_id: first.session_id, token: first.token });
    expect(again.session_id).toBe(first.session_id);
    // A visitor back a week later with the token of their last page (long expired).
    const weekLater = { "x-fs-test-now": String(first.expires_at + 7 * DAY) };
    const back = await handshake(site, { session_id: first.session_id, token: first.token }, weekLater);
    expect(back.session_id).toBe(first.session_id);
    // A page left open past its token's lifetime still files its hit in its session (token_valid false).
    const late = await hit(site, { token: first.token, session_id: first.session_id, ua: CHROME, headers: weekLater });
    expect(late.session_id).toBe(first.session_id);
    // Past the retention (30 days by default) the session is gone: a new one.
    const gone = await handshake(site, { session_id: first.session_id, token: first.token }, { "x-fs-test-now": String(first.expires_at + 31 * DAY) });
    expect(gone.session_id).not.toBe(first.session_id);
    // Another project's token proves nothing here.
    const elsewhere = await createBeaconProject(server);
    const theirs = await handshake(elsewhere);
    expect((await handshake(site, { session_id: theirs.session_id, token: theirs.token })).session_id).not.toBe(theirs.session_id);
  });
});
