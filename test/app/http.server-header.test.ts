import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api } from "../integration/helpers/server.js";

let server!: TestApp;
// The real uWS on a socket: the header under test is added by uWS itself, which the fake app has not.
useApp((s) => (server = s), {}, { socket: true });

describe("what uWebSockets.js adds to an answer", () => {
  it("no answer carries a uWebSockets version header: an envelope, a page, a 404, the beacon script", async () => {
    const ok = await api(server, "GET", "/v1/ip/8.8.8.8", { key: server.demo.secretKey });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("uwebsockets")).toBeNull();
    for (const path of ["/healthz", "/openapi.json", "/dashboard", "/no-such-route", "/js/fs.js"]) {
      const res = await server.fetch(`${server.url}${path}`);
      await res.arrayBuffer();
      expect(res.status, path).toBeLessThan(500);
      expect(res.headers.get("uwebsockets"), path).toBeNull();
    }
  });

  it("answers still carry a Date header (uWS writes it alongside)", async () => {
    const res = await server.fetch(`${server.url}/healthz`);
    await res.arrayBuffer();
    expect(res.headers.get("date")).toMatch(/GMT$/);
  });
});
