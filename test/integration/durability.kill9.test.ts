import { describe, expect, it } from "vitest";
import { api, createOrgWithKey, useServer, type TestServer } from "./helpers/server.js";

let server!: TestServer;
useServer((s) => (server = s));

/**
 * Runs concurrent metered calls, kill -9s the server in the middle of the load, restarts it on
 * the same DATA_DIR and checks the ledger: at least one credit per 200 the client received, and
 * no more than the calls attempted.
 */
describe("durability under kill -9", () => {
  it("keeps every credit that was answered", async () => {
    const { orgId, key } = await createOrgWithKey(server, "pro");
    const url = server.url;
    let ok = 0;
    let attempted = 0;
    let stop = false;
    const worker = async (): Promise<void> => {
      while (!stop) {
        attempted++;
        try {
          const res = await fetch(`${url}/v1/ip/8.8.8.8`, { headers: { authorization: `Bearer ${key}` } });
          if (res.status === 200) ok++;
          await res.arrayBuffer();
        } catch {
          return; // connection refused or reset: the server is gone
        }
      }
    };
    const workers = Array.from({ length: 32 }, worker);
    await new Promise((r) => setTimeout(r, 1500));
    await server.kill9();
    stop = true;
    await Promise.all(workers);
    expect(ok).toBeGreaterThan(100);

    await server.restart();
    const usage = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
    expect(usage.status).toBe(200);
    expect(usage.body.data.used).toBeGreaterThanOrEqual(ok);
    expect(usage.body.data.used).toBeLessThanOrEqual(attempted);
    // The replay is logged, and the restarted service keeps charging on top of the recovered total.
    await api(server, "GET", "/v1/ip/8.8.8.8", { key });
    const after = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
    expect(after.body.data.used).toBe(usage.body.data.used + 1);
  });
});
