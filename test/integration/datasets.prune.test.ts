import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, api, startServer, type TestServer } from "./helpers/server.js";

/**
 * Issue 25, finding 2: old dataset builds were never deleted (about 27 MB each). The service now
 * deletes, at start and after each switch, the builds older than both the one in service and
 * the one before it; copies of the real build under older and newer names stand in for builds.
 */
let server: TestServer;
let root: string;
let first: string;
const old = (n: number) => `ip-20000101T00000${n}Z-oldcopy`;
const newer = "ip-20990101T000000Z-newcopy";
const builds = () => readdirSync(root).filter((n) => /^ip-/.test(n)).sort();

beforeAll(async () => {
  server = await startServer({}, { ownDatasets: true });
  root = join(server.dataDir, "datasets", "ip");
  first = readFileSync(join(root, "current"), "utf8").trim();
});
afterAll(async () => {
  await server.stop();
  server.cleanup();
});

describe("old dataset builds", () => {
  it("are deleted at start, keeping the build in service and the newest one before it", async () => {
    await server.stop();
    for (const n of [1, 2, 3]) cpSync(join(root, first), join(root, old(n)), { recursive: true });
    await server.restart();
    expect(builds()).toEqual([old(3), first].sort());
    expect(server.output()).toMatch(/old dataset builds deleted/);
  });

  it("are deleted after a switch, never the live or the previous build, and a rollback to the previous one works", async () => {
    cpSync(join(root, first), join(root, newer), { recursive: true });
    const fwd = await admin(server, "POST", "/v1/admin/datasets/activate", { version: newer });
    expect(fwd.body.data).toEqual({ loaded: newer, previous: first, changed: true });
    expect(builds()).toEqual([first, newer].sort());
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: server.demo.secretKey })).status).toBe(200);
    const back = await admin(server, "POST", "/v1/admin/datasets/activate", { version: first });
    expect(back.body.data).toEqual({ loaded: first, previous: newer, changed: true });
    expect(builds()).toEqual([first, newer].sort());
    expect((await api(server, "GET", "/v1/ip/8.8.8.8", { key: server.demo.secretKey })).status).toBe(200);
    expect(existsSync(join(root, old(3)))).toBe(false);
    expect(readdirSync(root).filter((n) => n.startsWith(".pruned"))).toEqual([]);
  });
});
