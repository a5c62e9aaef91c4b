import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { ADMIN_TOKEN, admin, api, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * The test-mode budget (docs/api.md, "Test mode"): a test key charges nothing and touches no quota,
 * so its org's calls of the metered routes are bounded a second and a UTC day instead. Small
 * bounds here (the defaults are 25 a second and 10,000 a day), on the test clock (X-FS-Test-Now).
 */
const PER_SECOND = 5;
const PER_DAY = 12;

let server!: TestApp;
useApp((s) => (server = s), { FS_TEST_MODE_PER_SECOND: String(PER_SECOND), FS_TEST_MODE_PER_DAY: String(PER_DAY) });

/** 23:00 UTC on a fixed day: an hour (3,600 s) before the UTC day changes. */
const T0 = Date.UTC(2030, 0, 15, 23, 0, 0);

/** A free org already at its quota, with a live key and a test key. */
async function orgAtQuota() {
  const org = await createOrgWithKey(server, "free");
  const created = await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/keys`, { type: "secret", mode: "test" });
  expect(created.status).toBe(201);
  await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 10_000, reason: "test" });
  expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key })).body.error.code).toBe("QUOTA_EXCEEDED");
  return { ...org, testKey: created.body.data.key as string };
}

/** A series' value in GET /metrics, 0 when absent. */
async function metric(series: string): Promise<number> {
  const res = await server.fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const line = (await res.text()).split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

const at = (ms: number) => ({ "x-fs-test-now": String(ms) });
const lookup = (key: string, ms: number) => api(server, "GET", "/v1/ip/8.8.8.8", { key, headers: at(ms) });

describe("test-mode keys' budget per org", () => {
  it("refuses a test key's metered calls past the second's burst and past the day's count, 429 RATE_LIMITED with RateLimit fields; the live quota is untouched", async () => {
    const org = await orgAtQuota();
    const usage = async () => (await api(server, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key })).body.data.used as number;
    const usedBefore = await usage();
    const refusedBefore = { second: await metric('fs_test_mode_refused_total{bound="second"}'), day: await metric('fs_test_mode_refused_total{bound="day"}') };

    // The second's burst, then refused until the next second.
    const statuses: number[] = [];
    for (let i = 0; i < PER_SECOND + 3; i++) statuses.push((await lookup(org.testKey, T0)).status);
    expect(statuses).toEqual([...Array(PER_SECOND).fill(200), 429, 429, 429]);
    const second = await lookup(org.testKey, T0);
    expect(second.status).toBe(429);
    expect(second.body.error.code).toBe("RATE_LIMITED");
    expect(second.body.metadata.credits).toBe(0);
    expect(second.headers.get("retry-after")).toBe("1");
    expect(second.headers.get("ratelimit-policy")).toBe(`"test";q=${PER_SECOND};w=1`);
    expect(second.headers.get("ratelimit")).toBe(`"test";r=0;t=1`);
    // Every metered route counts, not only the IP lookup.
    const check = await api(server, "POST", "/v1/check", { key: org.testKey, headers: at(T0), body: { form_id: "f", metadata: { ip: "8.8.8.8" } } });
    expect(check.body.error?.code).toBe("RATE_LIMITED");

    // A second later the bucket is full again; the day's count goes on to PER_DAY calls.
    let answered = PER_SECOND;
    let t = T0;
    while (answered < PER_DAY) {
      t += 1000;
      for (let i = 0; i < PER_SECOND && answered < PER_DAY; i++, answered++) expect((await lookup(org.testKey, t)).status).toBe(200);
    }
    t += 1000;
    const daily = await lookup(org.testKey, t);
    expect(daily.status).toBe(429);
    expect(daily.body.error.code).toBe("RATE_LIMITED");
    const toMidnight = Math.ceil((Date.UTC(2030, 0, 16) - t) / 1000);
    expect(daily.headers.get("retry-after")).toBe(String(toMidnight));
    expect(daily.headers.get("ratelimit-policy")).toBe(`"test-daily";q=${PER_DAY};w=86400`);
    expect(daily.headers.get("ratelimit")).toBe(`"test-daily";r=0;t=${toMidnight}`);
    // Still refused seconds later (the second's bucket is full, the day is not over), with a POST too.
    const email = await api(server, "POST", "/v1/email", { key: org.testKey, headers: at(t + 5000), body: { email: "jane@example.com" } });
    expect(email.status).toBe(429);
    expect(email.headers.get("ratelimit-policy")).toBe(`"test-daily";q=${PER_DAY};w=86400`);

    // Counted for the operator: 5 refusals for the second (4 lookups, a check), 2 for the day.
    expect(await metric('fs_test_mode_refused_total{bound="second"}')).toBe(refusedBefore.second + 5);
    expect(await metric('fs_test_mode_refused_total{bound="day"}')).toBe(refusedBefore.day + 2);

    // Another org's test key has its own budget.
    const other = await orgAtQuota();
    expect((await lookup(other.testKey, t)).status).toBe(200);

    // The next UTC day starts a new count.
    expect((await lookup(org.testKey, Date.UTC(2030, 0, 16, 0, 0, 1))).status).toBe(200);

    // The org's live quota did not move (its live key was refused for it before the test calls:
    // orgAtQuota). Not asked again with the live key: the test clock's jumps to 2030 and back move
    // the org's quota period in this process, which no real clock does.
    expect(await usage()).toBe(usedBefore);
  });

  it("leaves live keys alone: a live key of a paid org is never refused by the test-mode budget", async () => {
    const org = await createOrgWithKey(server, "pro");
    for (let i = 0; i < PER_SECOND * 2 + 2; i++) {
      const r = await lookup(org.key, T0);
      expect(r.status).toBe(200);
      expect(r.headers.get("ratelimit-policy")).toMatch(/^"monthly";/);
    }
  });
});
