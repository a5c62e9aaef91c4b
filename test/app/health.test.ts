import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { ADMIN_TOKEN, api } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

describe("health", () => {
  it("GET /healthz says the process is up", async () => {
    const r = await api(server, "GET", "/healthz");
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ status: "ok" });
  });

  it("GET /readyz without the admin token says only that it is ready", async () => {
    for (const key of [undefined, server.demo.secretKey, server.demo.publishableKey, "not-the-admin-token-0123456789"]) {
      const r = await api(server, "GET", "/readyz", { key });
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual({ status: "ready" });
    }
  });

  it("GET /readyz with the admin token reports the open dataset, a live writer and pool threads", async () => {
    const r = await api(server, "GET", "/readyz", { key: ADMIN_TOKEN });
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe("ready");
    expect(r.body.data.datasets.ip).toMatch(/^ip-/);
    expect(r.body.data.writer).toBe("alive");
    expect(r.body.data.pool.threads).toBe(1);
    expect(r.body.data.pool.ip_dataset).toBe(r.body.data.datasets.ip);
  });
});
