import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { readBootId } from "../../src/store/writer/meters-env.js";
import { scaled } from "../helpers/time.js";
import { admin, api, createBeaconProject, createOrgWithKey, startServer, type TestServer } from "./helpers/server.js";

/** Keeps `clients` connections calling a metered endpoint until `stop()`; counts what came back. */
function load(server: TestServer, key: string, clients: number) {
  const url = server.url;
  let stopped = false;
  const counts = { ok: 0, attempted: 0, other: 0 };
  const worker = async (): Promise<void> => {
    while (!stopped) {
      counts.attempted++;
      try {
        const res = await fetch(`${url}/v1/ip/8.8.8.8`, { headers: { authorization: `Bearer ${key}` } });
        if (res.status === 200) counts.ok++;
        else counts.other++;
        await res.arrayBuffer();
      } catch {
        return; // connection refused or reset: the server is gone
      }
    }
  };
  const workers = Array.from({ length: clients }, worker);
  return {
    counts,
    async stop() {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

describe("durability", () => {
  it("kill -9 under load: the ledger holds every answered credit, replayed from the journal", async () => {
    // A long ledger flush interval keeps most charges only in the journal when the kill comes.
    const server = await startServer({ FS_LEDGER_FLUSH_MS: "1000" });
    try {
      const { orgId, key } = await createOrgWithKey(server, "pro");
      const l = load(server, key, 32);
      await expect.poll(() => l.counts.ok, { timeout: scaled(60_000), interval: 20 }).toBeGreaterThan(200);
      await server.kill9();
      await l.stop();
      expect(l.counts.ok).toBeGreaterThan(100);

      await server.restart();
      expect(server.output()).toMatch(/replayed charge journal after an unclean stop/);
      const usage = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
      expect(usage.status).toBe(200);
      expect(usage.body.data.used).toBeGreaterThanOrEqual(l.counts.ok);
      expect(usage.body.data.used).toBeLessThanOrEqual(l.counts.attempted);
      // The restarted service keeps charging on top of the recovered total.
      await api(server, "GET", "/v1/ip/8.8.8.8", { key });
      const after = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
      expect(after.body.data.used).toBe(usage.body.data.used + 1);
    } finally {
      await server.stop();
      server.cleanup();
    }
  });

  it("SIGTERM under keep-alive load: exits 0, every answered credit kept, later calls refused uncharged", async () => {
    const server = await startServer();
    try {
      const { orgId, key } = await createOrgWithKey(server, "pro");
      const l = load(server, key, 32);
      await expect.poll(() => l.counts.ok, { timeout: scaled(60_000), interval: 20 }).toBeGreaterThan(200);
      await server.stop();
      await l.stop();
      expect(server.exitCode()).toBe(0);
      expect(server.output()).not.toMatch(/EBADF|fatal/);
      expect(l.counts.ok).toBeGreaterThan(100);

      await server.restart();
      expect(server.output()).not.toMatch(/replayed charge journal/);
      const usage = await api(server, "GET", `/v1/orgs/${orgId}/usage`, { key });
      expect(usage.body.data.used).toBeGreaterThanOrEqual(l.counts.ok);
      expect(usage.body.data.used).toBeLessThanOrEqual(l.counts.ok + l.counts.other);
    } finally {
      await server.stop();
      server.cleanup();
    }
  });

  it("meter windows (committed without a disk flush) survive kill -9; a clean stop marks them clean", async () => {
    const server = await startServer({ FS_ENABLE_METER: "true" });
    try {
      const { key } = await createOrgWithKey(server, "pro");
      const meter = () => api(server, "POST", "/v1/meter", { key, body: { resource: "login", identity: { user_id: "u1" }, limit: { max: 10, window: "1h" } } });
      for (let i = 0; i < 6; i++) expect((await meter()).body.data.action).toBe("allow");
      // Unflushed commits (and their boot id and clean marks) only where the boot id is readable,
      // and only in the embedded store: on PostgreSQL the windows commit with everything else.
      const unflushed = readBootId() !== null && !inject("postgresUrl");
      expect(existsSync(join(server.dataDir, "state/meters/boot_id"))).toBe(unflushed);
      await server.kill9();
      await server.restart();
      expect(server.output()).not.toMatch(/meter windows discarded/);
      // Same boot of the machine: the 6 answered decisions are there, so 4 more fit, then throttle.
      const after = [];
      for (let i = 0; i < 6; i++) after.push((await meter()).body.data);
      expect(after.map((d) => d.action)).toEqual(["allow", "allow", "allow", "allow", "throttle", "throttle"]);
      expect(after[3].usage).toMatchObject({ count: 10, remaining: 0 });
      await server.stop();
      expect(server.exitCode()).toBe(0);
      expect(existsSync(join(server.dataDir, "state/meters/clean"))).toBe(unflushed);
      await server.restart();
      expect(existsSync(join(server.dataDir, "state/meters/clean"))).toBe(false); // running again: not clean
      expect((await meter()).body.data).toMatchObject({ action: "throttle", usage: { count: 10 } });
    } finally {
      await server.stop();
      server.cleanup();
    }
  });

  it("a key disabled while it and other keys are in use is refused from then on", async () => {
    const server = await startServer();
    try {
      // Well-formed unknown keys make the front read LMDB on every request, keeping read snapshots
      // open; the key itself is in use too, so its record is re-read right after the disable.
      const unknown = "fs_live_" + "A".repeat(44);
      for (let i = 0; i < 6; i++) {
        const org = await createOrgWithKey(server);
        let stopped = false;
        let calls = 0;
        const traffic = Array.from({ length: 24 }, async (_, n) => {
          while (!stopped) {
            await api(server, "GET", "/v1/ip/1.1.1.1", { key: n % 2 === 0 ? unknown : org.key });
            calls++;
          }
        });
        // Every client has made calls before the disable, and again after it.
        const callsPast = (n: number) => expect.poll(() => calls, { timeout: scaled(30_000), interval: 5 }).toBeGreaterThanOrEqual(n);
        await callsPast(48);
        expect((await admin(server, "POST", `/v1/admin/keys/${org.keyId}/disable`)).status).toBe(200);
        await callsPast(calls + 48);
        stopped = true;
        await Promise.all(traffic);
        const r = await api(server, "GET", "/v1/ip/8.8.8.8", { key: org.key });
        expect(r.status).toBe(403);
        expect(r.body.error.code).toBe("KEY_DISABLED");
      }
    } finally {
      await server.stop();
      server.cleanup();
    }
  });
});

describe("observation durability", () => {
  it("kill -9 after answering: every answered observation is stored after the restart", async () => {
    const server = await startServer({ FS_LEDGER_FLUSH_MS: "1000" });
    try {
      const p = await createBeaconProject(server);
      const answered: string[] = [];
      const send = async (): Promise<void> => {
        for (let i = 0; i < 40; i++) {
          const r = await api(server, "POST", "/v1/collect", { key: p.publishableKey, body: { action: `hit${i}` } });
          if (r.status === 200) answered.push(r.body.data.observation_id);
        }
      };
      await Promise.all([send(), send(), send()]);
      await server.kill9();
      await server.restart();
      expect(server.output()).toMatch(/replayed observation journal after an unclean stop/);
      const seen = new Set<string>();
      let cursor: string | null = "";
      while (cursor !== null) {
        const page: { body: { data: { items: Array<{ id: string }>; next_cursor: string | null } } } = await api(server, "GET", `/v1/projects/${p.projectId}/observations?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { key: p.secretKey });
        for (const o of page.body.data.items) seen.add(o.id);
        cursor = page.body.data.next_cursor;
      }
      expect(answered).toHaveLength(120);
      for (const id of answered) expect(seen.has(id)).toBe(true);
      expect(seen.size).toBe(120);
    } finally {
      await server.stop();
      server.cleanup();
    }
  });
});
