import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { creditsChart, daysBetween, niceMax } from "../../src/dashboard/chart.js";
import { periodName } from "../../src/dashboard/overview.js";
import { policyFromForm } from "../../src/dashboard/policy.js";
import { explainReason } from "../../src/dashboard/reasons.js";
import { cookieName, csrfValid, LoginLimiter, readCookie, sameOrigin, sessionCookie, signInAddress, SessionStore, type DashboardSession, type SessionLink } from "../../src/dashboard/sessions.js";
import { parseIp } from "../../src/shared/ip.js";
import { putBotPolicyBody } from "../../src/http/schemas/bot-policy.js";
import type { OrgRecord } from "../../src/store/records.js";
import { openState, stateTransaction, type LmdbStateDbs } from "../../src/store/state-env.js";
import { IntentApplier } from "../../src/store/writer/apply.js";

const MIN = 60_000;

describe("dashboard sessions", () => {
  it("creates random sessions that end after the idle time, each request restarting the clock", () => {
    const store = new SessionStore(30 * MIN);
    const a = store.create("org_a", "key_a", 0);
    const b = store.create("org_a", "key_a", 0);
    expect(a.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.id).not.toBe(b.id);
    expect(a.session.csrf).not.toBe(b.session.csrf);
    expect(store.get(a.id, 29 * MIN)?.orgId).toBe("org_a");
    expect(store.get(a.id, 58 * MIN)?.keyId).toBe("key_a"); // 29 min after the last request
    expect(store.get(a.id, 88 * MIN)).toBeNull(); // 30 idle minutes
    expect(store.get(a.id, 88 * MIN + 1)).toBeNull(); // and it stays gone
    expect(store.get(b.id, 30 * MIN)).toBeNull(); // idle since 0
  });

  it("forgets destroyed sessions and sessions of a key, never stores the cookie value itself", () => {
    const store = new SessionStore(MIN);
    const a = store.create("org_a", "key_a", 0);
    const b = store.create("org_a", "key_b", 0);
    const c = store.create("org_a", "key_b", 0);
    store.destroy(a.id);
    expect(store.get(a.id, 1)).toBeNull();
    store.destroyForKey("key_b");
    expect(store.get(b.id, 1)).toBeNull();
    expect(store.get(c.id, 1)).toBeNull();
    expect(store.get(undefined, 1)).toBeNull();
    expect(store.get("x".repeat(500), 1)).toBeNull();
    const d = store.create("org_a", "key_a", 0);
    expect(JSON.stringify([...(store as unknown as { sessions: Map<string, unknown> }).sessions.keys()])).not.toContain(d.id);
  });

  it("keeps at most max sessions, dropping idle ones first, then the oldest of the org holding the most", () => {
    const store = new SessionStore(10 * MIN, { max: 2, perOrg: 10 });
    const a = store.create("o", "k", 0);
    const b = store.create("o", "k", 5 * MIN);
    const c = store.create("o", "k", 11 * MIN); // a is idle: swept
    expect(store.size).toBe(2);
    expect(store.get(a.id, 11 * MIN)).toBeNull();
    store.get(b.id, 12 * MIN);
    const d = store.create("o", "k", 13 * MIN); // both live: b (signed in first) goes
    expect(store.get(b.id, 13 * MIN)).toBeNull();
    expect(store.get(c.id, 13 * MIN)).not.toBeNull();
    expect(store.get(d.id, 13 * MIN)).not.toBeNull();
  });

  it("caps each org: its own oldest session goes, never another org's (issue 25, item 6)", () => {
    const store = new SessionStore(30 * MIN, { max: 1000, perOrg: 3 });
    const victim = store.create("org_b", "kb", 0);
    const own = Array.from({ length: 50 }, (_, i) => store.create("org_a", "ka", 1 + i));
    expect(store.get(victim.id, 100)).not.toBeNull();
    expect(store.sizeOf("org_a")).toBe(3);
    expect(own.filter((s) => store.get(s.id, 100) !== null)).toEqual(own.slice(-3));
  });

  it("when every org together fills the bound, the org holding the most loses its oldest", () => {
    const store = new SessionStore(30 * MIN, { max: 6, perOrg: 4 });
    const b = store.create("org_b", "kb", 0);
    const a = [1, 2, 3].map((t) => store.create("org_a", "ka", t));
    const c = [4, 5].map((t) => store.create("org_c", "kc", t)); // 6 of 6
    const b2 = store.create("org_b", "kb", 6); // full: org_a (3) loses its oldest, not org_b (1)
    expect(store.size).toBe(6);
    expect(store.get(a[0]!.id, 7)).toBeNull();
    for (const s of [b, b2, a[1]!, a[2]!, ...c]) expect(store.get(s.id, 7)).not.toBeNull();
    // Orgs tied for the most (org_a, org_b and org_c hold 2 each): the one signing in gives way.
    const c3 = store.create("org_c", "kc", 8);
    expect(store.get(c[0]!.id, 9)).toBeNull();
    for (const s of [b, b2, a[1]!, a[2]!, c[1]!, c3]) expect(store.get(s.id, 9)).not.toBeNull();
  });

  it("several threads (SessionLink) keep the same sessions of a capped org and tell each other what ended", () => {
    type Msg = [string, DashboardSession | null];
    const queues: Msg[][] = [[], []];
    const takers: ((d: string, s: DashboardSession | null) => void)[] = [];
    const link = (i: number): SessionLink => ({
      publish: (d, s) => queues[1 - i]!.push([d, s && structuredClone(s)]),
      subscribe: (take) => void (takers[i] = take),
    });
    const deliver = (): void => {
      for (let i = 0; i < 2; i++) for (const [d, s] of queues[i]!.splice(0)) takers[i]!(d, s);
    };
    const t0 = new SessionStore(30 * MIN, { max: 100, perOrg: 2 }, link(0));
    const t1 = new SessionStore(30 * MIN, { max: 100, perOrg: 2 }, link(1));
    const victim = t1.create("org_b", "kb", 0);
    // Sign-ins alternate between the threads, and two land before either hears of the other.
    const a1 = t0.create("org_a", "ka", 1);
    deliver();
    const a2 = t1.create("org_a", "ka", 2);
    const a3 = t0.create("org_a", "ka", 3);
    deliver();
    const a4 = t1.create("org_a", "ka", 4);
    deliver();
    for (const t of [t0, t1]) {
      expect(t.sizeOf("org_a")).toBe(2);
      expect([a1, a2, a3, a4].map((s) => t.get(s.id, 5) !== null)).toEqual([false, false, true, true]);
      expect(t.get(victim.id, 5)).not.toBeNull();
    }
  });
  it("accepts only the session's own CSRF token", () => {
    const store = new SessionStore(MIN);
    const { session } = store.create("o", "k", 0);
    const other = store.create("o", "k", 0).session;
    expect(csrfValid(session, session.csrf)).toBe(true);
    expect(csrfValid(session, other.csrf)).toBe(false);
    expect(csrfValid(session, null)).toBe(false);
    expect(csrfValid(session, "")).toBe(false);
    expect(csrfValid(session, session.csrf.slice(1))).toBe(false);
  });
});

describe("sign-in limit", () => {
  it("answers wrong keys 429 past max per address until the window passes; each further one restarts it; a success clears nothing", () => {
    const l = new LoginLimiter(3, 10 * MIN);
    for (let i = 0; i < 3; i++) {
      expect(l.retryAfter("a", "", i)).toBe(0);
      l.fail("a", "", i);
    }
    expect(l.retryAfter("a", "", 1000)).toBe(599);
    expect(l.retryAfter("b", "", 1000)).toBe(0);
    expect(l.retryAfter("a", "", 10 * MIN)).toBe(0); // the window passed
    // Past the limit, a further wrong key starts the window again: the refusal backs off.
    const m = new LoginLimiter(3, 10 * MIN);
    for (let i = 0; i < 3; i++) m.fail("a", "", 0);
    m.fail("a", "", 9 * MIN);
    expect(m.retryAfter("a", "", 10 * MIN)).toBe(9 * 60);
    expect(m.retryAfter("a", "", 19 * MIN)).toBe(0);
    // There is no success to report: nothing clears a count but time.
    expect("succeed" in m).toBe(false);
  });

  it("counts wrong keys per key id across addresses, and keys with no id per address only", () => {
    const l = new LoginLimiter(3, 10 * MIN);
    for (const address of ["a", "b", "c"]) l.fail(address, "key_AAAAAAAAAAAA", 0);
    expect(l.retryAfter("d", "key_AAAAAAAAAAAA", 1)).toBeGreaterThan(0);
    expect(l.retryAfter("d", "key_BBBBBBBBBBBB", 1)).toBe(0);
    expect(l.retryAfter("d", "", 1)).toBe(0);
    for (const address of ["a", "b", "c"]) l.fail(address, "", 0);
    expect(l.retryAfter("d", "", 1)).toBe(0);
  });

  it("forgets the oldest window first when it tracks maxTracked names", () => {
    const l = new LoginLimiter(1, 10 * MIN, 2);
    l.fail("a", "", 0);
    l.fail("b", "", 1);
    l.fail("a", "", 2); // a's window starts again (past the limit): b is now the oldest
    l.fail("c", "", 3);
    expect(l.retryAfter("a", "", 4)).toBeGreaterThan(0);
    expect(l.retryAfter("b", "", 4)).toBe(0);
    expect(l.retryAfter("c", "", 4)).toBeGreaterThan(0);
  });

  it("takes the wrong keys another thread saw (LoginLink)", () => {
    let take: ((address: string, keyId: string, nowMs: number) => void) | null = null;
    const sent: unknown[] = [];
    const l = new LoginLimiter(2, 10 * MIN, undefined, { publish: (...m) => void sent.push(m), subscribe: (t) => void (take = t) });
    l.fail("a", "key_AAAAAAAAAAAA", 0);
    expect(sent).toEqual([["a", "key_AAAAAAAAAAAA", 0]]);
    take!("z", "key_AAAAAAAAAAAA", 1);
    expect(l.retryAfter("y", "key_AAAAAAAAAAAA", 2)).toBeGreaterThan(0);
    expect(sent).toHaveLength(1); // what came from another thread is not sent back
  });

  it("counts an IPv6 client by its /64", () => {
    expect(signInAddress(parseIp("2001:db8:1:2:aaaa::1")!)).toBe("2001:db8:1:2::/64");
    expect(signInAddress(parseIp("2001:db8:1:2:bbbb::9")!)).toBe("2001:db8:1:2::/64");
    expect(signInAddress(parseIp("::ffff:198.51.100.7")!)).toBe("198.51.100.7");
  });
});

describe("cookies and origins", () => {
  it("writes the session cookie HttpOnly and SameSite=Strict, Secure with the __Host- prefix over https", () => {
    expect(sessionCookie("abc", false)).toBe("fs_dash=abc; Path=/; HttpOnly; SameSite=Strict");
    expect(sessionCookie("abc", true)).toBe("__Host-fs_dash=abc; Path=/; HttpOnly; SameSite=Strict; Secure");
    expect(sessionCookie(null, false)).toBe("fs_dash=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    expect(cookieName(true)).toBe("__Host-fs_dash");
    expect(readCookie("a=1; fs_dash=xyz; b=2", "fs_dash")).toBe("xyz");
    expect(readCookie("fs_dash_other=1", "fs_dash")).toBeUndefined();
    expect(readCookie("", "fs_dash")).toBeUndefined();
  });

  it("takes a POST as same-origin by Origin, or by Referer when there is no Origin", () => {
    const own = ["fs.example.com"];
    expect(sameOrigin("http://127.0.0.1:8080", "", ["127.0.0.1:8080"])).toBe(true);
    expect(sameOrigin("https://fs.example.com", "", ["fs.example.com:443"])).toBe(true);
    expect(sameOrigin("https://FS.example.com", "", own)).toBe(true);
    expect(sameOrigin("https://evil.example", "https://fs.example.com/dashboard", own)).toBe(false);
    expect(sameOrigin("null", "", own)).toBe(false);
    expect(sameOrigin("", "https://fs.example.com/dashboard/keys", own)).toBe(true);
    expect(sameOrigin("", "https://fs.example.com.evil.example/", own)).toBe(false);
    expect(sameOrigin("", "", own)).toBe(false);
    expect(sameOrigin("https://fs.example.com", "", ["", ""])).toBe(false);
    expect(sameOrigin("javascript:alert(1)", "", own)).toBe(false);
    // Behind a proxy the Host header may be the upstream's; the public name counts too.
    expect(sameOrigin("https://fs.example.com", "", ["127.0.0.1:8080", "", "fs.example.com"])).toBe(true);
  });
});

describe("bot policy form", () => {
  it("leaves settings at default out of the document and keeps explicit ones", () => {
    const f = new URLSearchParams("kind.search_crawler=&kind.ai_crawler=block&kind.automation=score&bot_id=gptbot&bot_action=allow&bot_id=ccbot&bot_action=remove&new_bot_id=Bytespider&new_bot_action=block&spoofed=&allow_unverified=true");
    const doc = policyFromForm(f);
    expect(doc).toEqual({ kinds: { ai_crawler: "block", automation: "score" }, bots: { gptbot: "allow", bytespider: "block" }, allow_unverified: true });
    expect(putBotPolicyBody.safeParse(doc).success).toBe(true);
    expect(policyFromForm(new URLSearchParams(""))).toEqual({});
    // Values the form never offers reach the API's schema, which refuses them.
    expect(putBotPolicyBody.safeParse(policyFromForm(new URLSearchParams("kind.seo=maybe"))).success).toBe(false);
    expect(putBotPolicyBody.safeParse(policyFromForm(new URLSearchParams("allow_unverified=perhaps"))).success).toBe(false);
  });
  it("keeps the rules ticked for dry run, once each, and drops a removed bot rule's", () => {
    const f = new URLSearchParams("kind.seo=block&dry_run=kinds.seo&dry_run=kinds.seo&bot_id=gptbot&bot_action=block&dry_run=bots.gptbot&bot_id=ccbot&bot_action=remove&dry_run=bots.ccbot&dry_run=spoofed");
    const doc = policyFromForm(f);
    expect(doc).toEqual({ kinds: { seo: "block" }, bots: { gptbot: "block" }, dry_run: ["kinds.seo", "bots.gptbot", "spoofed"] });
    expect(putBotPolicyBody.safeParse(doc).success).toBe(true);
  });
});

describe("credits chart", () => {
  it("has a bar per day of the period and a text alternative", () => {
    const start = Date.UTC(2026, 10, 1);
    const end = Date.UTC(2026, 11, 1);
    expect(daysBetween(start, end - 1)).toHaveLength(30);
    const svg = creditsChart({ start, end }, [{ day: "2026-11-03", credits: 40 }, { day: "2026-11-04", credits: 7 }], Date.UTC(2026, 10, 5));
    expect(svg.match(/<rect /g)).toHaveLength(30);
    expect(svg).toContain("<title>2026-11-03: 40 credits</title>");
    expect(svg).toContain("47 credits used this period (2026-11-01 to 2026-11-30); the busiest day was 2026-11-03 with 40 credits.");
    expect(svg).toMatch(/role="img" aria-labelledby="chart-title chart-desc"/);
    expect(creditsChart({ start, end }, [], start)).toContain("No credits used yet this period");
    expect([niceMax(1), niceMax(3), niceMax(40), niceMax(101), niceMax(5000)]).toEqual([1, 5, 50, 200, 5000]);
  });

  it("explains every reason the scorer gives", () => {
    for (const r of ["automation_detected", "ua_bot", "bot:verified", "bot:search_crawler", "bot:ai_crawler", "bot:id:gptbot", "bot:spoofed:googlebot", "client_token_missing", "ip_datacenter", "ip_vpn", "ip_proxy", "ip_scanner", "tell:uach_mismatch", "tell:header_order", "policy:block:kinds.seo", "policy:allow:bots.gptbot", "policy:block:spoofed", "policy_dry_run:block:kinds.seo"]) {
      expect(explainReason(r), r).not.toBe("No explanation is known for this reason.");
    }
    expect(explainReason("tell:header_order")).toContain("+2.0");
    expect(explainReason("policy:allow:bots.gptbot")).toContain('the rule for the bot "gptbot"');
    expect(explainReason("something_new")).toBe("No explanation is known for this reason.");
  });
});

describe("usage.daily (writer, real LMDB)", () => {
  let dir: string;
  let dbs: LmdbStateDbs;
  let applier: IntentApplier;
  const org: OrgRecord = { id: "org_d", name: "d", plan: "free", subscription_status: "active", trial_end: null, created_at: "2026-01-01T00:00:00Z" };
  const tx = <T>(fn: () => T): T => stateTransaction(dbs, fn);
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "fs-daily-"));
    dbs = openState(dir, false);
    applier = new IntentApplier(dbs);
  });
  afterAll(async () => {
    await dbs.root.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts credits on the day they are applied, within their period, adjustments included", () => {
    tx(() => applier.apply({ op: "org.create", org }));
    const nov = (d: number, h = 12): number => Date.UTC(2026, 10, d, h);
    tx(() => applier.applyCharges([{ seq: 1, orgId: "org_d", credits: 5, period: "202611" }], 1, nov(3)));
    tx(() => applier.applyCharges([{ seq: 2, orgId: "org_d", credits: 2, period: "202611" }, { seq: 3, orgId: "org_d", credits: 1, period: "202611" }], 3, nov(3, 23)));
    tx(() => applier.applyCharges([{ seq: 4, orgId: "org_d", credits: 4, period: "202611" }], 4, nov(10)));
    // An operator's refund lowers the day it is applied, never below zero.
    tx(() => applier.applyCharges([{ seq: 5, orgId: "org_d", credits: -10, period: "202611" }], 5, nov(10)));
    // Replayed after a restart on December 1st: still November's, on its last day.
    tx(() => applier.applyCharges([{ seq: 6, orgId: "org_d", credits: 3, period: "202611" }], undefined, Date.UTC(2026, 11, 1, 0, 5)));
    // A batch already applied changes nothing.
    tx(() => applier.applyCharges([{ seq: 1, orgId: "org_d", credits: 5, period: "202611" }], 1, nov(4)));
    const ack = tx(() => applier.apply({ op: "usage.daily", orgId: "org_d", nowMs: nov(20) }));
    expect(ack).toEqual({
      ok: true,
      period: { label: "202611", start: Date.UTC(2026, 10, 1), end: Date.UTC(2026, 11, 1) },
      days: [{ day: "2026-11-03", credits: 8 }, { day: "2026-11-10", credits: 0 }, { day: "2026-11-30", credits: 3 }],
    });
    expect(tx(() => applier.apply({ op: "usage.daily", orgId: "org_d", nowMs: Date.UTC(2026, 11, 2) }))).toMatchObject({ ok: true, days: [] });
    expect(tx(() => applier.apply({ op: "usage.daily", orgId: "org_nope", nowMs: nov(20) }))).toMatchObject({ ok: false, error: "NOT_FOUND" });
  });
});

describe("dashboard period names", () => {
  it("names a calendar month, and a billing period by its end", () => {
    expect(periodName("202611", "2026-12-01T00:00:00.000Z")).toBe("November 2026");
    expect(periodName("202612", "2027-01-01T00:00:00.000Z")).toBe("December 2026");
    expect(periodName("202611", "2026-12-15T10:30:00.000Z")).toBe("period ending 15 December 2026");
  });
});
