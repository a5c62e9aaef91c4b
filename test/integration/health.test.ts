import { describe, expect, it } from "vitest";
import { api, useServer, type TestServer } from "./helpers/server.js";

let server!: TestServer;
useServer((s) => (server = s));

describe("health", () => {
  it("GET /healthz says the process is up", async () => {
    const r = await api(server, "GET", "/healthz");
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ status: "ok" });
  });

  it("GET /readyz reports the open dataset, a live writer and pool threads", async () => {
    const r = await api(server, "GET", "/readyz");
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe("ready");
    expect(r.body.data.datasets.ip).toMatch(/^ip-/);
    expect(r.body.data.writer).toBe("alive");
    expect(r.body.data.pool.threads).toBe(1);
    expect(r.body.data.pool.ip_dataset).toBe(r.body.data.datasets.ip);
  });
});
