import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { api, createOrgWithKey, firstStartRecord, startServer } from "./helpers/server.js";

const MAIN = resolve(import.meta.dirname, "../../dist/src/main.js");

describe("boot", () => {
  it("reports every configuration problem at once and exits 2", () => {
    const r = spawnSync(process.execPath, [MAIN], {
      env: { PATH: process.env.PATH ?? "", PORT: "70000", FS_POOL_THREADS: "zero", FS_LOG_LEVEL: "chatty" },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/3 problem/);
    expect(r.stderr).toMatch(/PORT/);
    expect(r.stderr).toMatch(/FS_POOL_THREADS/);
    expect(r.stderr).toMatch(/FS_LOG_LEVEL/);
  });

  it("generates and prints an admin token once when FS_ADMIN_TOKEN is unset, and keeps accepting it", async () => {
    const server = await startServer({ FS_ADMIN_TOKEN: "" });
    try {
      const token = firstStartRecord(server.output())?.admin_token;
      expect(token).toMatch(/^fs_admin_\S+$/);
      // Everything the service printed, the demo org's record included, is one JSON object per line.
      const lines = server.output().split("\n").filter((l) => l !== "");
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      expect(lines.map((l) => JSON.parse(l).msg)).toEqual(expect.arrayContaining(["config", "listening", "first start: demo org created (shown once)"]));
      const org = await api(server, "POST", "/v1/admin/orgs", { key: token, body: { name: "x" } });
      expect(org.status).toBe(201);
      await server.stop();
      await server.restart();
      expect(server.output()).not.toMatch(/first start/);
      expect(server.output()).not.toContain(token!);
      const again = await api(server, "POST", "/v1/admin/orgs", { key: token, body: { name: "y" } });
      expect(again.status).toBe(201);
    } finally {
      await server.stop();
      server.cleanup();
    }
  });

  it("a graceful stop (SIGTERM) keeps every charge, and the demo keys survive restarts", async () => {
    const server = await startServer();
    try {
      const { orgId, key } = await createOrgWithKey(server, "pro");
      await Promise.all(Array.from({ length: 50 }, () => api(server, "GET", "/v1/ip/8.8.8.8", { key })));
      await server.stop();
      await server.restart();
      const usage = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
      expect(usage.body.data.used).toBe(50);
      expect((await api(server, "GET", "/v1/ip/1.1.1.1", { key: server.demo.secretKey })).status).toBe(200);
      expect(server.output()).not.toMatch(/replayed charge journal/);
    } finally {
      await server.stop();
      server.cleanup();
    }
  });
});
