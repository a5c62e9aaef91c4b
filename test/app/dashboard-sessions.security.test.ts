import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { createOrgWithKey } from "../integration/helpers/server.js";

/**
 * Issue 25, item 6: dashboard sessions are capped per org (the org's oldest session ends), so one
 * org signing in again and again cannot end another org's sessions; the bound on all sessions
 * together stays. Small caps here so that the test runs fast.
 */

const PER_ORG = 3;
const MAX = 8;
let server!: TestApp;
useApp((s) => (server = s), { FS_DASHBOARD_SESSIONS_PER_ORG: String(PER_ORG), FS_DASHBOARD_MAX_SESSIONS: String(MAX) });

let lastSignIn = 0;

/**
 * Signs in with the key; returns the session cookie. Each sign-in in a millisecond of its own:
 * "oldest" is by creation time, and two sessions of one millisecond are ordered by chance.
 */
async function signIn(key: string): Promise<string> {
  while (Date.now() <= lastSignIn) await new Promise((r) => setImmediate(r));
  lastSignIn = Date.now();
  const res = await server.fetch(`${server.url}/dashboard/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
    body: new URLSearchParams({ key }).toString(),
    redirect: "manual",
  });
  expect(res.status, await res.text()).toBe(303);
  return (res.headers.get("set-cookie") ?? "").split(";")[0]!;
}

/** Whether the session of this cookie is live (the overview answers 200, not a redirect to sign in). */
async function live(cookie: string): Promise<boolean> {
  const res = await server.fetch(`${server.url}/dashboard`, { headers: { cookie }, redirect: "manual" });
  await res.arrayBuffer();
  return res.status === 200;
}

/** Sessions the first test leaves live: the victim's one and the flooding org's last PER_ORG. */
let victimSession = "";
let floodSessions: string[] = [];

describe("dashboard sessions", () => {
  it("sign-ins of one org end only its own oldest sessions, never another org's", async () => {
    const victim = await createOrgWithKey(server, "pro");
    const flood = await createOrgWithKey(server, "pro");
    victimSession = await signIn(victim.key);
    const own: string[] = [];
    for (let i = 0; i < MAX + 4; i++) own.push(await signIn(flood.key));
    expect(await live(victimSession)).toBe(true);
    const states = await Promise.all(own.map(live));
    expect(states).toEqual(own.map((_, i) => i >= own.length - PER_ORG));
    floodSessions = own.slice(-PER_ORG);
  });

  it("when all orgs together hold the bound, an org holding the most gives up its oldest", async () => {
    expect(floodSessions, "left by the previous test").toHaveLength(PER_ORG);
    // PER_ORG + 1 sessions are live; a third org's PER_ORG and a fourth org's first fill up to MAX.
    const big = await createOrgWithKey(server, "pro");
    const bigs: string[] = [];
    for (let i = 0; i < PER_ORG; i++) bigs.push(await signIn(big.key));
    const small = await createOrgWithKey(server, "pro");
    const first = await signIn(small.key);
    const second = await signIn(small.key); // full: the flooding org or `big` gives one up
    expect(await live(victimSession)).toBe(true);
    expect(await live(first)).toBe(true);
    expect(await live(second)).toBe(true);
    const largest = await Promise.all([...floodSessions, ...bigs].map(live));
    expect(largest.filter((l) => !l)).toHaveLength(1);
    // Which one: the oldest of its org.
    expect([largest[0], largest[PER_ORG]]).toContain(false);
  });
});
