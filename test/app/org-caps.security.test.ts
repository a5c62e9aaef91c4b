import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";
import { admin, api, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * Issue 38, finding 5: an org's projects, keys and webhook endpoints are capped (FS_MAX_PROJECTS_PER_ORG,
 * FS_MAX_KEYS_PER_ORG, FS_WEBHOOK_ENDPOINTS_MAX), counted by the writer in the transaction that
 * creates them, and an org's listings read its own range of an index by org. Before, one org made
 * 12,000 projects and another org's first page (GET /v1/projects, the dashboard's projects page)
 * showed 8 of its 10: a page examined at most 10,000 projects of all orgs. Here other orgs hold
 * more than 10,000 projects (each at a small cap), and the org with 10 lists all 10 on its first page.
 */

const PROJECTS_CAP = 50;
const KEYS_CAP = 12;
const WEBHOOKS_CAP = 4;
/** More than the 10,000 projects of all orgs one page examined before the index. */
const OTHER_PROJECTS = 10_200;

let server!: TestApp;
useApp((s) => (server = s), {
  FS_MAX_PROJECTS_PER_ORG: String(PROJECTS_CAP),
  FS_MAX_KEYS_PER_ORG: String(KEYS_CAP),
  FS_WEBHOOK_ENDPOINTS_MAX: String(WEBHOOKS_CAP),
});

/** Runs `task(0..n-1)` with at most `width` in flight; the answers in order. */
async function inFlight<T>(n: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

const createProject = (orgId: string, name: string) => admin(server, "POST", `/v1/admin/orgs/${orgId}/projects`, { name });

function statuses(answers: Array<{ status: number }>): Record<number, number> {
  const count: Record<number, number> = {};
  for (const a of answers) count[a.status] = (count[a.status] ?? 0) + 1;
  return count;
}

/** A browser signed in to the dashboard with `key`: GET a page, POST a form (with the page's CSRF token) and follow the redirect. */
async function browser(key: string) {
  const login = await server.fetch(`${server.url}/dashboard/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
    body: new URLSearchParams({ key }).toString(),
    redirect: "manual",
  });
  await login.arrayBuffer();
  expect(login.status).toBe(303);
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
  const get = async (path: string) => {
    const res = await server.fetch(`${server.url}${path}`, { headers: { cookie } });
    return { status: res.status, text: await res.text() };
  };
  const post = async (path: string, from: string, fields: Record<string, string>) => {
    const form = new URLSearchParams(fields);
    form.set("csrf", /name="csrf" value="([^"]+)"/.exec((await get(from)).text)![1]!);
    const res = await server.fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { cookie, origin: server.url, "content-type": "application/x-www-form-urlencoded" },
      body: form.toString(),
      redirect: "manual",
    });
    await res.arrayBuffer();
    expect(res.status).toBe(303);
    return get(res.headers.get("location")!);
  };
  return { get, post };
}

const PROJECT_ID = /prj_[0-9A-Za-z]{16}/g;

describe("per-org caps and listings by org", () => {
  it("another org lists all 10 of its projects on its first page while other orgs hold more than 10,000", async () => {
    // The other orgs, each filled to its cap, fast (the finding's flood took 23 s of form posts).
    const orgs = await inFlight(
      Math.ceil(OTHER_PROJECTS / PROJECTS_CAP),
      8,
      async (i) => (await admin(server, "POST", "/v1/admin/orgs", { name: `flood ${i}` })).body.data.id as string,
    );
    const made = await inFlight(orgs.length * PROJECTS_CAP, 32, (i) => createProject(orgs[i % orgs.length]!, `p${i}`));
    expect(statuses(made)).toEqual({ 201: orgs.length * PROJECTS_CAP });

    const own = await createOrgWithKey(server);
    const mine = new Set<string>();
    for (let i = 0; i < 10; i++) mine.add((await createProject(own.orgId, `mine ${i}`)).body.data.id);

    const first = await api(server, "GET", "/v1/projects", { key: own.key });
    expect(first.status).toBe(200);
    expect(new Set(first.body.data.items.map((p: { id: string }) => p.id))).toEqual(mine);
    expect(first.body.data.next_cursor).toBeNull();
    const listed = await admin(server, "GET", `/v1/admin/orgs/${own.orgId}/projects`);
    expect(listed.body.data.items).toHaveLength(10);

    const page = await (await browser(own.key)).get("/dashboard/projects");
    expect(page.status).toBe(200);
    expect(new Set(page.text.match(PROJECT_ID))).toEqual(mine);
  }, 240_000);

  it("pages an org's projects with the cursor, in id order, to the end", async () => {
    const own = await createOrgWithKey(server);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await createProject(own.orgId, `p${i}`)).body.data.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor === null ? "" : `&cursor=${cursor}`;
      const page = await api(server, "GET", `/v1/projects?limit=3${q}`, { key: own.key });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.items.map((p: { id: string }) => p.id));
      cursor = page.body.data.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(4);
    expect(seen).toEqual([...ids].sort());
    // A cursor that is another org's id (or no id at all) only says where to go on from.
    const other = await createOrgWithKey(server);
    const otherPage = await api(server, "GET", `/v1/projects?cursor=${ids[0]}`, { key: other.key });
    expect(otherPage.body.data).toEqual({ items: [], next_cursor: null });
  });

  it("refuses an org's project past FS_MAX_PROJECTS_PER_ORG with 409 LIMIT_EXCEEDED, from the API and from the dashboard", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    const made = await inFlight(PROJECTS_CAP, 16, (i) => createProject(orgId, `p${i}`));
    expect(statuses(made)).toEqual({ 201: PROJECTS_CAP });
    const refused = await createProject(orgId, "one too many");
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "LIMIT_EXCEEDED", message: expect.stringContaining("FS_MAX_PROJECTS_PER_ORG") });
    expect(refused.body.error.message).toContain(String(PROJECTS_CAP));
    const page = await (await browser(key)).post("/dashboard/projects", "/dashboard/projects", { name: "from the form" });
    expect(page.text).toContain("FS_MAX_PROJECTS_PER_ORG");
    expect(page.text).not.toContain("from the form");
    const all = await admin(server, "GET", `/v1/admin/orgs/${orgId}/projects?limit=100`);
    expect(all.body.data.items).toHaveLength(PROJECTS_CAP);
  });

  it("concurrent creates give exactly the cap: two at the cap less one make one project", async () => {
    const { orgId } = await createOrgWithKey(server);
    await inFlight(PROJECTS_CAP - 1, 16, (i) => createProject(orgId, `p${i}`));
    const two = await Promise.all([createProject(orgId, "a"), createProject(orgId, "b")]);
    expect(statuses(two)).toEqual({ 201: 1, 409: 1 });

    const other = await createOrgWithKey(server);
    const burst = await Promise.all(Array.from({ length: PROJECTS_CAP + 15 }, (_, i) => createProject(other.orgId, `b${i}`)));
    expect(statuses(burst)).toEqual({ 201: PROJECTS_CAP, 409: 15 });
    const all = await admin(server, "GET", `/v1/admin/orgs/${other.orgId}/projects?limit=100`);
    expect(all.body.data.items).toHaveLength(PROJECTS_CAP);
  });

  it("caps an org's keys (FS_MAX_KEYS_PER_ORG): concurrent creates give exactly the cap, a deleted key frees its place, a roll replaces", async () => {
    const { orgId, key } = await createOrgWithKey(server); // one key already
    const createKey = () => admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret" });
    const burst = await Promise.all(Array.from({ length: KEYS_CAP + 5 }, createKey));
    expect(statuses(burst)).toEqual({ 201: KEYS_CAP - 1, 409: 6 });
    const refused = burst.find((r) => r.status === 409)!;
    expect(refused.body.error).toMatchObject({ code: "LIMIT_EXCEEDED", message: expect.stringContaining("FS_MAX_KEYS_PER_ORG") });
    const listed = await admin(server, "GET", `/v1/admin/orgs/${orgId}/keys?limit=100`);
    expect(listed.body.data.items).toHaveLength(KEYS_CAP);

    // The dashboard's create runs the same handler, and is refused the same way.
    const page = await (await browser(key)).post("/dashboard/keys", "/dashboard/keys", { type: "secret", name: "from the form" });
    expect(page.text).toContain("FS_MAX_KEYS_PER_ORG");

    // A disabled key still holds its place; a deleted one does not.
    const made = burst.filter((r) => r.status === 201).map((r) => r.body.data.id as string);
    expect((await admin(server, "POST", `/v1/admin/keys/${made[0]}/disable`)).status).toBe(200);
    expect((await createKey()).status).toBe(409);
    expect((await admin(server, "DELETE", `/v1/admin/keys/${made[0]}`)).status).toBe(200);
    expect((await createKey()).status).toBe(201);
    expect((await createKey()).status).toBe(409);

    // At the cap a roll passes (the new key replaces the old, which stays until deleted), once.
    const rolled = await admin(server, "POST", `/v1/admin/keys/${made[1]}/roll`, { grace_seconds: 0 });
    expect(rolled.status).toBe(201);
    const again = await admin(server, "POST", `/v1/admin/keys/${rolled.body.data.id}/roll`, { grace_seconds: 0 });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("LIMIT_EXCEEDED");
    expect((await admin(server, "DELETE", `/v1/admin/keys/${made[1]}`)).status).toBe(200);
    expect((await admin(server, "POST", `/v1/admin/keys/${rolled.body.data.id}/roll`, { grace_seconds: 0 })).status).toBe(201);

    // Another org is not touched by this one's cap.
    const other = await createOrgWithKey(server);
    expect((await admin(server, "POST", `/v1/admin/orgs/${other.orgId}/keys`, { type: "secret" })).status).toBe(201);
  });

  it("pages an org's keys with the cursor and lists no deleted key", async () => {
    const { orgId, keyId } = await createOrgWithKey(server);
    const ids = [keyId];
    for (let i = 0; i < 6; i++) ids.push((await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "secret", name: `k${i}` })).body.data.id);
    expect((await admin(server, "DELETE", `/v1/admin/keys/${ids[3]}`)).status).toBe(200);
    const live = ids.filter((_, i) => i !== 3).sort();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor === null ? "" : `&cursor=${cursor}`;
      const page = await admin(server, "GET", `/v1/admin/orgs/${orgId}/keys?limit=2${q}`);
      seen.push(...page.body.data.items.map((k: { id: string }) => k.id));
      cursor = page.body.data.next_cursor;
    } while (cursor !== null && seen.length <= ids.length);
    expect(seen).toEqual(live);
  });

  it("refuses an org's webhook endpoint past FS_WEBHOOK_ENDPOINTS_MAX with 409 LIMIT_EXCEEDED: concurrent registrations give exactly the cap", async () => {
    const { orgId, key } = await createOrgWithKey(server);
    const register = (i: number) =>
      admin(server, "POST", `/v1/admin/orgs/${orgId}/webhooks`, { url: `https://example.com/hook/${i}`, events: ["key.created"] });
    const burst = await Promise.all(Array.from({ length: WEBHOOKS_CAP + 3 }, (_, i) => register(i)));
    expect(statuses(burst)).toEqual({ 201: WEBHOOKS_CAP, 409: 3 });
    expect(burst.find((r) => r.status === 409)!.body.error).toMatchObject({
      code: "LIMIT_EXCEEDED",
      message: expect.stringContaining("FS_WEBHOOK_ENDPOINTS_MAX"),
    });
    const own = await api(server, "POST", "/v1/orgs/me/webhooks", { key, body: { url: "https://example.com/mine", events: ["key.created"] } });
    expect(own.status).toBe(409);
    expect(own.body.error.code).toBe("LIMIT_EXCEEDED");
    expect((await admin(server, "GET", `/v1/admin/orgs/${orgId}/webhooks`)).body.data.items).toHaveLength(WEBHOOKS_CAP);
  });
});
