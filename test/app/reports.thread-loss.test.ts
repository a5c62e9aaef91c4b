import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api, createBeaconProject } from "../integration/helpers/server.js";

/**
 * Finding 4 of issue 38: traffic reports and policy replays are scanned on a scan thread of the
 * front thread (src/front/traffic/scan-thread.ts). A lost thread (terminated here through its
 * handle, as a crash or an exit ends it) answers the reports in flight 503 NOT_READY with
 * Retry-After, never 500, and the next report starts another thread. (Before the fix the report
 * in flight answered 500 INTERNAL_ERROR.)
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

describe("a lost scan thread", () => {
  it("answers the report in flight 503 NOT_READY with Retry-After, and the next report starts another thread", async () => {
    const a = await createBeaconProject(server);
    expect((await traffic(a)).status).toBe(200);
    const first = server.scans().thread!;
    expect(first).not.toBeNull();

    // Lost while idle: the next report starts another thread and is answered.
    await first.terminate();
    expect(server.scans().thread).toBeNull();
    expect((await replay(a)).status).toBe(200);
    expect(server.scans().thread).not.toBe(first);

    // Lost with a report in flight. The thread is ended as soon as the report was sent to it; a
    // thread that answered first gives 200 (then try again, on a thread just started): never 500.
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 10 && !statuses.includes(503); attempt++) {
      const answer = traffic(a);
      await expect.poll(() => server.scans().inFlight, { interval: 1, timeout: 30_000 }).toBe(1);
      await server.scans().thread!.terminate();
      const r = await answer;
      statuses.push(r.status);
      expect([200, 503], JSON.stringify(r.body)).toContain(r.status);
      if (r.status === 503) {
        expect(r.body.error.code).toBe("NOT_READY");
        expect(r.body.error.message).toContain("scan thread");
        expect(r.headers.get("retry-after")).toBe("1");
      }
    }
    expect(statuses).toContain(503);
    expect(server.scans().lost).toBeGreaterThanOrEqual(2);
    expect(server.output()).toContain("scan thread lost");

    // The org's turn ended with the lost scan: its next report and replay run on a new thread.
    expect((await traffic(a)).status).toBe(200);
    expect((await replay(a)).status).toBe(200);
  });
});
