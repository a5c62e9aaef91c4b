import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

/** A 400 VALIDATION_ERROR naming `param`, with that problem first in `problems`. */
function expectInvalid(r: { status: number; body: any }, param: string): void {
  expect(r.status, JSON.stringify(r.body.error)).toBe(400);
  expect(r.body.error).toMatchObject({ code: "VALIDATION_ERROR", param });
  expect(r.body.error.message.startsWith(`${param}: `)).toBe(true);
  expect(r.body.error.problems[0]).toEqual({ param, message: expect.any(String) });
}

describe("path parameters are read by the route's schema", () => {
  it("an over-long org id is 400 path.orgId, not a lookup", async () => {
    const mine = await createOrgWithKey(server);
    const long = `org_${"x".repeat(80)}`;
    expectInvalid(await api(server, "GET", `/v1/orgs/${long}/usage`, { key: mine.key }), "path.orgId");
    expectInvalid(await api(server, "GET", `/v1/orgs/${long}/checks`, { key: mine.key }), "path.orgId");
    expectInvalid(await admin(server, "GET", `/v1/admin/orgs/${long}/projects`), "path.orgId");
    // A well-formed id that names nothing stays a 404.
    expect((await api(server, "GET", "/v1/orgs/org_doesnotexist0000/usage", { key: mine.key })).status).toBe(404);
  });

  it("an over-long key id is 400 path.keyId, and nothing is disabled", async () => {
    expectInvalid(await admin(server, "POST", `/v1/admin/keys/key_${"z".repeat(80)}/disable`), "path.keyId");
  });

  it("a percent-encoded segment is decoded before it is read (me, an IPv6 address)", async () => {
    const mine = await createOrgWithKey(server);
    const usage = await api(server, "GET", "/v1/orgs/%6De/usage", { key: mine.key });
    expect(usage.status).toBe(200);
    expect((await api(server, "GET", `/v1/orgs/${encodeURIComponent(mine.orgId).replace("_", "%5F")}`, { key: mine.key })).body.data.id).toBe(mine.orgId);
    const ip = await api(server, "GET", "/v1/ip/2001%3A4860%3A4860%3A%3A8888", { key: server.demo.secretKey });
    expect(ip.status).toBe(200);
    expect(ip.body.data.ip).toBe("2001:4860:4860::8888");
    expectInvalid(await api(server, "GET", "/v1/orgs/%E0%A4%A/usage", { key: mine.key }), "path.orgId");
  });

  it("a path parameter is checked after the key: no key is 401 whatever the path", async () => {
    expect((await api(server, "GET", `/v1/orgs/${"x".repeat(80)}/usage`)).status).toBe(401);
  });
});

describe("query parameters are read by the route's schema", () => {
  it("limit outside 1-100 or not an integer is 400 query.limit on every listing", async () => {
    const mine = await createOrgWithKey(server);
    const project = (await admin(server, "POST", `/v1/admin/orgs/${mine.orgId}/projects`, { name: "web" })).body.data.id as string;
    for (const limit of ["0", "abc", "10000", "1.5", ""]) {
      expectInvalid(await api(server, "GET", `/v1/projects?limit=${limit}`, { key: mine.key }), "query.limit");
      expectInvalid(await admin(server, "GET", `/v1/admin/orgs?limit=${limit}`), "query.limit");
      expectInvalid(await admin(server, "GET", `/v1/admin/orgs/${mine.orgId}/keys?limit=${limit}`), "query.limit");
      expectInvalid(await api(server, "GET", `/v1/orgs/me/checks?limit=${limit}`, { key: mine.key }), "query.limit");
      expectInvalid(await api(server, "GET", `/v1/projects/${project}/observations?limit=${limit}`, { key: mine.key }), "query.limit");
    }
    const ok = await api(server, "GET", "/v1/projects?limit=1", { key: mine.key });
    expect(ok.status).toBe(200);
    expect(ok.body.data.items).toHaveLength(1);
  });

  it("a cursor no page returned is 400 query.cursor", async () => {
    const mine = await createOrgWithKey(server);
    expectInvalid(await api(server, "GET", "/v1/projects?cursor=no%20such", { key: mine.key }), "query.cursor");
    expectInvalid(await api(server, "GET", "/v1/orgs/me/checks?cursor=zzzzzzzzzzz.req_1", { key: mine.key }), "query.cursor");
    expectInvalid(await api(server, "GET", "/v1/orgs/me/checks?label=maybe", { key: mine.key }), "query.label");
  });

  it("a parameter given twice is refused; one the route does not know is ignored", async () => {
    const mine = await createOrgWithKey(server);
    expectInvalid(await api(server, "GET", "/v1/projects?limit=1&limit=2", { key: mine.key }), "query.limit");
    expectInvalid(await api(server, "GET", "/v1/ip/8.8.8.8?include=region&include=company", { key: server.demo.secretKey }), "query.include");
    const unknown = await api(server, "GET", "/v1/projects?limit=5&utm_source=x&bad=%ZZ", { key: mine.key });
    expect(unknown.status).toBe(200);
  });
});
