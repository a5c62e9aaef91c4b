import { randomUUID } from "node:crypto";
import { chmodSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin, ADMIN_TOKEN, api, freshDatabase, startServer, type TestServer } from "./helpers/server.js";

/**
 * Issue 25, finding 4: no secret in plain text at rest or in a replay. A key created with an
 * Idempotency-Key used to be stored whole (plain key included) in the state database and the
 * charge journal and replayed for 24 hours; state files were 0644. Here every file under DATA_DIR
 * (LMDB files included) and, on PostgreSQL, every table is searched for the keys created.
 *
 * The server starts under umask 000, so modes come from the service, not from the umask.
 */

let server!: TestServer;
let databaseUrl: string | null = null;

beforeAll(async () => {
  const pgServer = inject("postgresUrl");
  databaseUrl = pgServer ? await freshDatabase(pgServer) : null;
  const umask = process.umask(0);
  try {
    server = await startServer(databaseUrl ? { FS_STORE: "postgres", DATABASE_URL: databaseUrl, FS_NODE_ID: "node-secrets" } : {});
  } finally {
    process.umask(umask);
  }
});

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
});

/** Every regular file under `dir`, symbolic links (the shared datasets) not followed. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(path));
    else if (e.isFile()) out.push(path);
  }
  return out;
}

function dirsUnder(dir: string): string[] {
  const out = [dir];
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) out.push(...dirsUnder(join(dir, e.name)));
  return out;
}

/** The files (relative to DATA_DIR) holding `secret`. */
function filesHolding(secret: string): string[] {
  return filesUnder(server.dataDir)
    .filter((f) => readFileSync(f).includes(secret))
    .map((f) => f.slice(server.dataDir.length + 1));
}

/** The store's tables (PostgreSQL) holding `secret` in any row. */
async function tablesHolding(secret: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: databaseUrl! });
  await c.connect();
  try {
    const tables = (await c.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'")).rows.map((r) => r.name);
    const hits: string[] = [];
    for (const t of tables) {
      const r = await c.query(`SELECT count(*)::int AS n FROM "${t}" x WHERE strpos(x::text, $1) > 0`, [secret]);
      if (r.rows[0].n > 0) hits.push(t);
    }
    return hits;
  } finally {
    await c.end();
  }
}

/** A browser signed in to the dashboard with `key` (same-origin form posts). */
async function dashboardKey(key: string): Promise<string> {
  let cookie = "";
  const form = async (path: string, fields: Record<string, string>) => {
    const res = await fetch(server.url + path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url, ...(cookie ? { cookie } : {}) },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual",
    });
    const set = res.headers.get("set-cookie");
    if (set) cookie = set.split(";")[0]!;
    return res;
  };
  const page = async (path: string) => (await fetch(server.url + path, { headers: { cookie }, redirect: "manual" })).text();
  expect((await form("/dashboard/login", { key })).status).toBe(303);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page("/dashboard/keys"))?.[1];
  expect(csrf).toBeDefined();
  expect((await form("/dashboard/keys", { type: "secret", csrf: csrf! })).status).toBe(303);
  const secret = /readonly value="(fs_live_[A-Za-z0-9]+)"/.exec(await page("/dashboard/keys"))?.[1];
  expect(secret).toBeDefined();
  return secret!;
}

describe("no secret key in plain text at rest or in a replay", () => {
  it("keys made through the admin API, with and without Idempotency-Key, and the dashboard: in no file and no table; a replay shows only the redacted key", async () => {
    const org = await admin(server, "POST", "/v1/admin/orgs", { name: "secrets" });
    const orgId = org.body.data.id as string;
    const project = await admin(server, "POST", `/v1/admin/orgs/${orgId}/projects`, { name: "site" });
    const keysPath = `/v1/admin/orgs/${orgId}/keys`;
    const plain: string[] = [];

    const bare = await admin(server, "POST", keysPath, { type: "secret", scopes: ["sessions"] });
    expect(bare.status).toBe(201);
    plain.push(bare.body.data.key);

    for (const body of [{ type: "secret", scopes: ["billing"] }, { type: "publishable", project_id: project.body.data.id }]) {
      const idem = randomUUID();
      const first = await api(server, "POST", keysPath, { key: ADMIN_TOKEN, body, headers: { "idempotency-key": idem } });
      expect(first.status).toBe(201);
      const key = first.body.data.key as string;
      plain.push(key);
      const redacted = `${key.startsWith("fs_pub_live_") ? "fs_pub_live_" : "fs_live_"}…${key.slice(-4)}`;
      expect(first.body.data).toMatchObject({ key_redacted: redacted, key_already_shown: false });
      const replay = await api(server, "POST", keysPath, { key: ADMIN_TOKEN, body, headers: { "idempotency-key": idem } });
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body.data).toEqual({ ...first.body.data, key: null, key_redacted: redacted, key_already_shown: true });
      // The key works, and the replay did not make another one.
      const listed = await admin(server, "GET", `${keysPath}?limit=100`);
      expect(listed.body.data.items.filter((k: { id: string }) => k.id === first.body.data.id)).toHaveLength(1);
    }

    plain.push(await dashboardKey(bare.body.data.key));

    // After a clean stop every journal is applied and every environment flushed.
    await server.stop();
    for (const key of plain) {
      const secretPart = key.slice(-32); // the random part, whatever prefix it were stored with
      expect(filesHolding(secretPart), key).toEqual([]);
      if (databaseUrl) expect(await tablesHolding(secretPart), key).toEqual([]);
    }
    await server.restart();
  });
});

describe("state files", () => {
  const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);

  function expectPrivate(): void {
    const state = join(server.dataDir, "state");
    const dirs = dirsUnder(state);
    const files = filesUnder(state);
    // The LMDB environments (not on PostgreSQL) and both journals are there.
    const names = files.map((f) => f.slice(state.length + 1));
    if (!databaseUrl) expect(names).toEqual(expect.arrayContaining(["data.mdb", "lock.mdb", "meters/data.mdb", "meters/lock.mdb"]));
    expect(names.some((n) => /^journal\/charges-\d+\.log$/.test(n))).toBe(true);
    expect(names.some((n) => /^journal\/observations-\d+\.log$/.test(n))).toBe(true);
    for (const d of dirs) expect([d, modeOf(d)]).toEqual([d, "700"]);
    for (const f of files) expect([f, modeOf(f)]).toEqual([f, "600"]);
  }

  it("are created 0600 in directories 0700, whatever the umask; looser modes left by an older version are tightened at start", async () => {
    // A charge and an admin write, so the journal and the environments have content.
    const org = await admin(server, "POST", "/v1/admin/orgs", { name: "modes" });
    await admin(server, "POST", `/v1/admin/orgs/${org.body.data.id}/usage/adjust`, { credits: 1, reason: "test" });
    expectPrivate();

    await server.stop();
    const state = join(server.dataDir, "state");
    for (const d of dirsUnder(state)) chmodSync(d, 0o755);
    for (const f of filesUnder(state)) chmodSync(f, 0o644);
    await server.restart();
    expectPrivate();
  });
});
