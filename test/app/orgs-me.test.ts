import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

describe("a secret key finds its own org and projects", () => {
  it("GET /v1/orgs/me and /v1/orgs/{its id} answer the key's org; another org's id is 404 as a missing one", async () => {
    const mine = await createOrgWithKey(server, "pro");
    const other = await createOrgWithKey(server);
    const me = await api(server, "GET", "/v1/orgs/me", { key: mine.key });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ id: mine.orgId, plan: "pro" });
    expect(me.body.metadata.credits).toBe(0);
    const byId = await api(server, "GET", `/v1/orgs/${mine.orgId}`, { key: mine.key });
    expect(byId.body.data).toEqual(me.body.data);
    for (const id of [other.orgId, "org_doesnotexist0000"]) {
      const r = await api(server, "GET", `/v1/orgs/${id}`, { key: mine.key });
      expect(r.status, id).toBe(404);
      expect(r.body.error.code).toBe("NOT_FOUND");
    }
    expect((await api(server, "GET", "/v1/orgs/me")).status).toBe(401);
  });

  it("every route under /v1/orgs/{orgId}/ takes me", async () => {
    const mine = await createOrgWithKey(server);
    const usage = await api(server, "GET", "/v1/orgs/me/usage", { key: mine.key });
    expect(usage.status).toBe(200);
    expect(usage.body.data).toEqual((await api(server, "GET", `/v1/orgs/${mine.orgId}/usage`, { key: mine.key })).body.data);
    expect((await api(server, "GET", "/v1/orgs/me/check-history", { key: mine.key })).status).toBe(200);
    expect((await api(server, "GET", "/v1/orgs/me/checks", { key: mine.key })).status).toBe(200);
  });

  it("GET /v1/projects lists the key's org's projects only, page by page", async () => {
    const mine = await createOrgWithKey(server);
    const other = await createOrgWithKey(server);
    const made: string[] = [];
    for (const name of ["web", "app", "shop"]) made.push((await admin(server, "POST", `/v1/admin/orgs/${mine.orgId}/projects`, { name })).body.data.id);
    await admin(server, "POST", `/v1/admin/orgs/${other.orgId}/projects`, { name: "theirs" });
    const seen: Array<{ id: string; org_id: string; allowed_origins: string[] }> = [];
    let cursor: string | null = null;
    do {
      const r: { status: number; body: any } = await api(server, "GET", `/v1/projects?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key: mine.key });
      expect(r.status).toBe(200);
      expect(r.body.data.items.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.data.items);
      cursor = r.body.data.next_cursor;
    } while (cursor);
    expect(seen.map((p) => p.id).sort()).toEqual([...made].sort());
    expect(seen.every((p) => p.org_id === mine.orgId)).toBe(true);
    expect(seen.find((p) => p.id === made[0])!.allowed_origins).toEqual([]);
    expect((await api(server, "GET", "/v1/projects?limit=0", { key: mine.key })).status).toBe(400);
  });
});
