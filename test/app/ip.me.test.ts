import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type TestApp } from "../helpers/app.js";
import { api } from "../integration/helpers/server.js";

let direct!: TestApp;
let proxied!: TestApp;
beforeAll(async () => {
  [direct, proxied] = await Promise.all([startApp(), startApp({ FS_TRUSTED_PROXIES: "127.0.0.1,::1" })]);
});
afterAll(async () => {
  for (const app of [direct, proxied]) {
    await app?.stop();
    app?.cleanup();
  }
});

describe("GET /v1/ip/me", () => {
  it("answers the record of the connection's own address (here loopback: a bogon, free)", async () => {
    const r = await api(direct, "GET", "/v1/ip/me", { key: direct.demo.secretKey });
    expect(r.status).toBe(200);
    expect(["127.0.0.1", "::1"]).toContain(r.body.data.ip);
    expect(r.body.data.bogon).toBe(true);
    expect(r.body.metadata.credits).toBe(0);
    // A forwarded address from an untrusted peer is not believed.
    const forged = await api(direct, "GET", "/v1/ip/me", { key: direct.demo.secretKey, headers: { "x-forwarded-for": "8.8.8.8" } });
    expect(forged.body.data.ip).toBe(r.body.data.ip);
  });

  it("behind a trusted proxy, the client's address it forwarded, with include and credits as GET /v1/ip/{ip}", async () => {
    const r = await api(proxied, "GET", "/v1/ip/me?include=company", { key: proxied.demo.secretKey, headers: { "x-forwarded-for": "8.8.8.8" } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ ip: "8.8.8.8", bogon: false, network: { asn: 15169 } });
    expect(r.body.data.company).toBeDefined();
    expect(r.body.metadata.credits).toBe(1);
    const byIp = await api(proxied, "GET", "/v1/ip/8.8.8.8?include=company", { key: proxied.demo.secretKey });
    expect(r.body.data).toEqual(byIp.body.data);
    expect((await api(proxied, "GET", "/v1/ip/me")).status).toBe(401);
  });
});
