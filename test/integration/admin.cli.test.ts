import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, api, useServer, type TestServer } from "./helpers/server.js";

const run = promisify(execFile);
const CLI = resolve(import.meta.dirname, "../../dist/scripts/admin.js");
let server!: TestServer;
useServer((s) => (server = s));

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
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

  it("exits non-zero with the error envelope for a refused call, and 2 for bad usage", async () => {
    const bad = await cli("orgs", "create", "--name", "x", "--plan", "gold");
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out).error.code).toBe("VALIDATION_ERROR");
    const usage = await cli("orgs", "create");
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/--name/);
  });
});
