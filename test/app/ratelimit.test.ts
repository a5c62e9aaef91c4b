import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

/** Seconds from `now` to the first instant of the next UTC month. */
const toMonthEnd = (now: number) => {
  const d = new Date(now);
  return (Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - now) / 1000;
};

describe("RateLimit headers (IETF httpapi draft)", () => {
  it("a metered answer states the quota, the credits left and the seconds to the reset", async () => {
    const org = await createOrgWithKey(server);
    const before = Date.now();
    const a = await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key });
    const b = await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key });
    const d = new Date(before);
    const monthSeconds = (Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)) / 1000;
    expect(a.headers.get("ratelimit-policy")).toBe(`"monthly";q=10000;w=${monthSeconds}`);
    expect(a.headers.get("ratelimit")).toMatch(/^"monthly";r=9999;t=\d+$/);
    expect(b.headers.get("ratelimit")).toMatch(/^"monthly";r=9998;t=\d+$/);
    const t = Number(/t=(\d+)/.exec(b.headers.get("ratelimit")!)![1]);
    expect(Math.abs(t - toMonthEnd(before))).toBeLessThan(5);
  });

  it("a refused call carries Retry-After until the reset; unmetered plans and free calls carry no RateLimit", async () => {
    const org = await createOrgWithKey(server);
    await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/usage/adjust`, { credits: 10_000, reason: "test" });
    const refused = await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key });
    expect(refused.status).toBe(429);
    const retry = Number(refused.headers.get("retry-after"));
    expect(Math.abs(retry - toMonthEnd(Date.now()))).toBeLessThan(5);
    expect(refused.body.metadata.ratelimit).toMatchObject({ limit: 10_000, remaining: 0 });
    // The same RateLimit fields as an admitted call's, saying nothing is left.
    expect(refused.headers.get("ratelimit-policy")).toMatch(/^"monthly";q=10000;w=\d+$/);
    expect(refused.headers.get("ratelimit")).toMatch(new RegExp(`^"monthly";r=0;t=${retry}$`));

    const big = await createOrgWithKey(server, "enterprise");
    const unmetered = await api(server, "GET", "/v1/ip/8.8.8.8", { key: big.key });
    expect(unmetered.status).toBe(200);
    expect(unmetered.headers.get("ratelimit")).toBeNull();
    const free = await api(server, "GET", `/v1/orgs/${org.orgId}/usage`, { key: org.key });
    expect(free.headers.get("ratelimit")).toBeNull();
  });
});
