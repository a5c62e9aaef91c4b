import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

describe("GET /v1/ip/{ip} errors", () => {
  for (const bad of ["256.1.1.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "abc", "2001:db8::1::1", "fe80::1%25eth0", "%ZZ", "1.2.3.4%20"]) {
    it(`answers 400 VALIDATION_ERROR naming path.ip for '${bad}'`, async () => {
      const r = await api(server, "GET", `/v1/ip/${bad}`, { key: server.demo.secretKey });
      expect(r.status).toBe(400);
      expect(r.body.data).toBeNull();
      expect(r.body.error.code).toBe("VALIDATION_ERROR");
      expect(r.body.error.message).toMatch(/^path\.ip/);
    });
  }

  it("answers 400 for an unknown include dataset, naming it", async () => {
    const r = await api(server, "GET", "/v1/ip/8.8.8.8?include=region,weather", { key: server.demo.secretKey });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("VALIDATION_ERROR");
    expect(r.body.error.message).toContain("weather");
  });

  it("accepts include=all", async () => {
    const r = await api(server, "GET", "/v1/ip/8.8.8.8?include=all", { key: server.demo.secretKey });
    expect(r.status).toBe(200);
    expect(r.body.metadata.enrichment.requested).toEqual(["region", "company", "rdns"]);
  });

  it("answers 405 with Allow for another method", async () => {
    const r = await api(server, "DELETE", "/v1/ip/8.8.8.8", { key: server.demo.secretKey });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, HEAD");
    expect(r.body.error.code).toBe("METHOD_NOT_ALLOWED");
  });
});
