import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { api } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

describe("announced endpoints", () => {
  it.each([
    ["/v1/commerce/verify", /commerce verification/],
    ["/v1/signup/protect", /signup protection/],
  ])("POST %s answers 501 NOT_IMPLEMENTED in the envelope, naming it, reading and charging nothing", async (path, what) => {
    const usage = async () => (await api(server, "GET", `/v1/orgs/${server.demo.orgId}/usage`, { key: server.demo.secretKey })).body.data.used;
    const before = await usage();
    for (const opts of [{}, { key: server.demo.secretKey, body: { email: "a@b.c" } }]) {
      const r = await api(server, "POST", path, opts);
      expect([r.status, r.body.error.code, r.body.data]).toEqual([501, "NOT_IMPLEMENTED", null]);
      expect(r.body.error.message).toMatch(new RegExp(`^POST ${path.replace(/\//g, "\\/")} is announced and not live yet: `));
      expect(r.body.error.message).toMatch(what);
    }
    expect(await usage()).toBe(before);
    // Other methods on the path are 405, as for every route.
    expect((await api(server, "GET", path)).status).toBe(405);
  });
});
