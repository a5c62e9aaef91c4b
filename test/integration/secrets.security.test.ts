import { chmodSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin, freshDatabase, startServer, type TestServer } from "./helpers/server.js";

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
