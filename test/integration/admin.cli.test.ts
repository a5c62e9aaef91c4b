import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, api, useServer, type TestServer } from "./helpers/server.js";

const run = promisify(execFile);
const CLI = resolve(import.meta.dirname, "../../dist/scripts/admin.js");
let server!: TestServer;
useServer((s) => (server = s));

/** The CLI with --json (the envelope as the API sent it), as scripts use it. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return cliText(...args, "--json");
}

/** The CLI as a person reads it: tables and "field  value" lines. */
async function cliText(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? "", FS_URL: server.url, FS_ADMIN_TOKEN: ADMIN_TOKEN } });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

describe("npm run admin", () => {
  it("--help lists the commands", async () => {
    const r = await cli("--help");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/orgs create/);
    expect(r.out).toMatch(/keys disable/);
  });

  it("creates an org, a project and a key that works against the API, then disables it", async () => {
    const org = JSON.parse((await cli("orgs", "create", "--name", "CLI org", "--plan", "pro")).out);
    expect(org.data).toMatchObject({ name: "CLI org", plan: "pro" });
    const project = JSON.parse((await cli("projects", "create", org.data.id, "--name", "site")).out);
    expect(project.data.id).toMatch(/^prj_/);
    const key = JSON.parse((await cli("keys", "create", org.data.id, "--type", "secret", "--scopes", "sessions,billing")).out);
    expect(key.data.scopes).toEqual(["sessions", "billing"]);
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: key.data.key })).status).toBe(200);
    const usage = JSON.parse((await cli("usage", "show", org.data.id, "--key", key.data.key)).out);
    expect(usage.data.used).toBe(1);
    expect((await cli("keys", "disable", key.data.id)).code).toBe(0);
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: key.data.key })).status).toBe(403);
  });

  it("prints lists as tables and a record as field lines; errors on stderr; no command is bad usage", async () => {
    const org = JSON.parse((await cli("orgs", "create", "--name", "Tabled", "--plan", "pro")).out).data;
    const created = await cliText("keys", "create", org.id, "--type", "secret", "--mode", "test");
    expect(created.code, created.err).toBe(0);
    expect(created.out).toMatch(/^mode +test$/m);
    expect(created.out).toMatch(/^key +fs_test_[0-9A-Za-z]{44}$/m);
    const listed = await cliText("keys", "list", org.id);
    expect(listed.code).toBe(0);
    const [header, rule, row] = listed.out.trimEnd().split("\n");
    expect(header).toMatch(/^id +type +org_id +project_id +scopes +created_at +expires_at +disabled +mode/);
    expect(rule).toMatch(/^-+ +-+/);
    expect(row).toMatch(/^key_\w+ +secret +org_\w+ +- +- +\S+ +- +false +test/);
    const refused = await cliText("orgs", "create", "--name", "x", "--plan", "gold");
    expect(refused.code).toBe(1);
    expect(refused.out).toBe("");
    expect(refused.err).toMatch(/^error VALIDATION_ERROR: body\.plan/);
    const none = await cliText();
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/no command given/);
    expect(none.err).toMatch(/orgs create/);
  });

  it("names, rolls, disables, enables and deletes a key; deleting asks for --yes; usage with the admin token", async () => {
    const org = JSON.parse((await cli("orgs", "create", "--name", "Lifecycle")).out).data;
    const key = JSON.parse((await cli("keys", "create", org.id, "--type", "secret", "--name", "worker")).out).data;
    expect(key.name).toBe("worker");
    expect(JSON.parse((await cli("keys", "rename", key.id, "--name", "worker (eu)")).out).data.name).toBe("worker (eu)");
    const rolled = await cliText("keys", "roll", key.id, "--grace", "600");
    expect(rolled.code, rolled.err).toBe(0);
    const fresh = /^key +(fs_live_\w+)$/m.exec(rolled.out)?.[1];
    expect(fresh).toBeDefined();
    expect(rolled.out).toMatch(new RegExp(`^rolled_from +${key.id}$`, "m"));
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: key.key })).status).toBe(200);
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: fresh! })).status).toBe(200);
    expect((await cli("keys", "disable", key.id)).code).toBe(0);
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: key.key })).status).toBe(403);
    expect((await cli("keys", "enable", key.id)).code).toBe(0);
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: key.key })).status).toBe(200);
    const unconfirmed = await cliText("keys", "delete", key.id);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.err).toMatch(/--yes/);
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: key.key })).status).toBe(200);
    expect(JSON.parse((await cli("keys", "delete", key.id, "--yes")).out).data).toEqual({ id: key.id, deleted: true });
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: key.key })).body.error.code).toBe("INVALID_KEY");
    const usage = await cliText("usage", "show", org.id);
    expect(usage.code, usage.err).toBe(0);
    expect(usage.out).toMatch(/^used +4$/m); // four calls answered 200; the disabled and deleted ones charged nothing
  });

  it("exits non-zero with the error envelope for a refused call, and 2 for bad usage", async () => {
    const bad = await cli("orgs", "create", "--name", "x", "--plan", "gold");
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out).error.code).toBe("VALIDATION_ERROR");
    const usage = await cli("orgs", "create");
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/--name/);
  });
});

describe("npm run admin: orgs model-reset", () => {
  it("asks for --yes, then forgets the org's own model: its figures start again from 0", async () => {
    const org = JSON.parse((await cli("orgs", "create", "--name", "Labels", "--plan", "pro")).out).data;
    const key = JSON.parse((await cli("keys", "create", org.id, "--type", "secret")).out).data.key as string;
    for (const [i, label] of ["spam", "ham"].entries()) {
      const r = await api(server, "POST", "/v1/feedback", { key, body: { label, form_data: { message: `Bamboo flooring at factory prices for hotels, reply for a sample ${["today", "please"][i]}` } } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const figures = async () => (await api(server, "GET", `/v1/orgs/${org.id}/feedback`, { key })).body.data;
    expect(await figures()).toMatchObject({ model_version: 2, feedback: { spam: 1, ham: 1 } });
    const unconfirmed = await cli("orgs", "model-reset", org.id);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.err).toMatch(/--yes/);
    expect((await figures()).model_version).toBe(2);
    const reset = await cli("orgs", "model-reset", org.id, "--yes");
    expect(reset.code, reset.err).toBe(0);
    expect(JSON.parse(reset.out).data).toMatchObject({ model_version: 0, feedback: { spam: 0, ham: 0, relabelled: 0, repeated: 0 } });
    expect(await figures()).toMatchObject({ model_version: 0, feedback: { spam: 0, ham: 0 }, agreement: [] });
    const unknown = await cli("orgs", "model-reset", "org_doesnotexist", "--yes");
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.out).error.code).toBe("NOT_FOUND");
  });
});

describe("npm run admin: listings and negative numbers", () => {
  it("takes a negative --credits, in both spellings", async () => {
    const org = JSON.parse((await cli("orgs", "create", "--name", "Refunds")).out).data;
    expect((await cli("usage", "adjust", org.id, "--credits", "120", "--reason", "backfill")).code).toBe(0);
    const down = await cli("usage", "adjust", org.id, "--credits", "-100", "--reason", "refund");
    expect(down.code, down.err).toBe(0);
    expect(JSON.parse(down.out).data.used).toBe(20);
    const inline = await cli("usage", "adjust", org.id, "--credits=-15", "--reason", "refund");
    expect(inline.code, inline.err).toBe(0);
    expect(JSON.parse(inline.out).data.used).toBe(5);
  });

  it("lists orgs, an org's projects and keys (never their secrets), page by page", async () => {
    const created: string[] = [];
    for (let i = 0; i < 3; i++) created.push(JSON.parse((await cli("orgs", "create", "--name", `Listed ${i}`)).out).data.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await cli("orgs", "list", "--limit", "2", ...(cursor ? ["--cursor", cursor] : []));
      expect(r.code, r.err).toBe(0);
      const page = JSON.parse(r.out).data as { items: Array<{ id: string }>; next_cursor: string | null };
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((o) => o.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length); // no org twice
    for (const id of [...created, server.demo.orgId]) expect(seen).toContain(id);
    expect(seen).toEqual([...seen].sort());

    const org = created[0]!;
    const project = JSON.parse((await cli("projects", "create", org, "--name", "site")).out).data;
    await cli("keys", "create", org, "--type", "secret");
    await cli("keys", "create", org, "--type", "publishable", "--project", project.id);
    const projects = JSON.parse((await cli("projects", "list", org)).out).data;
    expect(projects).toEqual({ items: [{ id: project.id, org_id: org, name: "site", created_at: expect.any(String), allowed_origins: [] }], next_cursor: null });
    const keys = JSON.parse((await cli("keys", "list", org)).out).data;
    expect(keys.items.map((k: { type: string }) => k.type).sort()).toEqual(["publishable", "secret"]);
    expect(JSON.stringify(keys)).not.toMatch(/fs_(pub_)?live_|hash/);
    // Another org's listing is separate; an unknown org is 404.
    expect(JSON.parse((await cli("keys", "list", created[1]!)).out).data.items).toEqual([]);
    const missing = await cli("keys", "list", "org_nope");
    expect([missing.code, JSON.parse(missing.out).error.code]).toEqual([1, "NOT_FOUND"]);
  });
});
