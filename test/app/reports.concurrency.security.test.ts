import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject } from "../integration/helpers/server.js";

/**
 * Finding 4 of issue 38: the traffic report and the bot-policy replay are free and scan up to
 * FS_TRAFFIC_SCAN_LIMIT / FS_REPLAY_SCAN_LIMIT stored records, so one org ran as many at once as
 * it liked. Now one report or replay runs at a time per org: another one from the same org
 * meanwhile is refused 429 RATE_LIMITED with Retry-After and the RateLimit fields, before it
 * reads anything; another org's is not; the org's next one, once the first is answered, runs.
 * (Before the fix every call of the batches below answered 200.)
 */

let server!: TestApp;
useApp((s) => (server = s));

type Project = Awaited<ReturnType<typeof createBeaconProject>>;

const traffic = (p: Project) => api(server, "GET", `/v1/projects/${p.projectId}/traffic`, { key: p.secretKey });
const replay = (p: Project) =>
  api(server, "POST", `/v1/projects/${p.projectId}/bot-policy/replay`, {
    key: p.secretKey,
    body: { policy: { kinds: { ai_crawler: "block" } }, thresholds: { review: 0.5, block: 0.8 } },
  });

function expectRefused(r: Awaited<ReturnType<typeof traffic>>): void {
  expect(r.status, JSON.stringify(r.body)).toBe(429);
  expect(r.body.error.code).toBe("RATE_LIMITED");
  expect(r.headers.get("retry-after")).toBe("1");
  expect(r.headers.get("ratelimit-policy")).toBe('"reports";q=1;w=1');
  expect(r.headers.get("ratelimit")).toBe('"reports";r=0;t=1');
}

describe("traffic reports and policy replays: one at a time per org", () => {
  it("refuses an org's second report or replay while its first runs, not another org's, and runs the next one after", async () => {
    const a = await createBeaconProject(server);
    const b = await createBeaconProject(server);
    const [otherOrg, ...own] = await Promise.all([traffic(b), traffic(a), traffic(a), replay(a)]);
    expect(otherOrg!.status, JSON.stringify(otherOrg!.body)).toBe(200);
    expect(own.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of own.filter((r) => r.status !== 200)) expectRefused(r);
    // The first one ended (answered): the org's next report and replay run, one after the other.
    expect((await replay(a)).status).toBe(200);
    expect((await traffic(a)).status).toBe(200);
  });

  it("a replay holds the org's turn as a report does; a refused call does not end the one running", async () => {
    const a = await createBeaconProject(server);
    const [running, refused] = await Promise.all([replay(a), replay(a)]);
    expect([running.status, refused.status].sort()).toEqual([200, 429]);
    expectRefused(running.status === 429 ? running : refused);
    const again = await Promise.all([replay(a), replay(a), replay(a)]);
    expect(again.map((r) => r.status).sort()).toEqual([200, 429, 429]);
  });

  it("an answer that fails (another org's project: 404) ends the org's turn too", async () => {
    const a = await createBeaconProject(server);
    const b = await createBeaconProject(server);
    const wrong = await api(server, "GET", `/v1/projects/${b.projectId}/traffic`, { key: a.secretKey });
    expect(wrong.status).toBe(404);
    expect((await traffic(a)).status).toBe(200);
  });
});
