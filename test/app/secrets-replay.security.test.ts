import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openState, stateDirOf, type LmdbStateDbs } from "../../src/store/state-env.js";
import { useApp, type TestApp } from "../helpers/app.js";
import { ADMIN_TOKEN, api, createOrgWithKey } from "../integration/helpers/server.js";

/**
 * Issue 39, finding 5: a secret is shown once. The answers of the calls that make one (an API key
 * created or rolled, a webhook endpoint created or its secret rolled, with the admin token or the
 * org's secret key) are stored for their Idempotency-Key; the webhook ones used to be stored
 * whole, secret included, in the charge journal and the store's idempotency records, and a replay
 * showed the secret again for 24 hours. Here every secret is made with an Idempotency-Key and
 * replayed (the replay must not carry it), then, after a clean stop, every file under DATA_DIR and
 * every row of every PostgreSQL table is searched for it.
 *
 * The one legitimate place of a webhook signing secret is its endpoint record (the store's
 * `webhookEndpoints` database, table fs_webhook_endpoints): deliveries are signed with it, so it
 * cannot be hashed. On LMDB that database lives in state/data.mdb with every other one, so that
 * file is searched record by record (every database opened and read) instead of byte by byte, and
 * the secret may be in the endpoint records only; every other file must not hold it in any byte.
 * On PostgreSQL, fs_webhook_endpoints must hold it (which shows the search finds a secret where
 * one is) and no other table may. API keys are kept hashed: they may be nowhere.
 */

let app!: TestApp;
useApp((a) => (app = a));

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

/** The files (relative to DATA_DIR) holding `secret` in their bytes. */
function filesHolding(secret: string): string[] {
  return filesUnder(app.dataDir)
    .filter((f) => readFileSync(f).includes(secret))
    .map((f) => f.slice(app.dataDir.length + 1));
}

/** The LMDB databases (StateDbs names) with a record whose key or value holds `secret`. */
function databasesHolding(dbs: LmdbStateDbs, secret: string): string[] {
  const hits: string[] = [];
  for (const [name, db] of Object.entries(dbs)) {
    if (name === "root" || name === "metersRoot") continue;
    for (const { key, value } of (db as LmdbStateDbs["orgs"]).getRange()) {
      const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString("latin1") : JSON.stringify(v));
      if (text(key).includes(secret) || text(value).includes(secret)) {
        hits.push(name);
        break;
      }
    }
  }
  return hits;
}

/** The tables of the store's schema (PostgreSQL) with a row holding `secret`: as text, or in a bytea column's bytes. */
async function tablesHolding(c: pg.Client, secret: string): Promise<string[]> {
  const columns = (
    await c.query<{ t: string; col: string; type: string }>(
      "SELECT table_name AS t, column_name AS col, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema()",
    )
  ).rows;
  const tables = [...new Set(columns.map((r) => r.t))];
  expect(tables).toContain("fs_idempotency");
  const hits: string[] = [];
  for (const t of tables) {
    const bytes = columns.filter((r) => r.t === t && r.type === "bytea").map((r) => `position(convert_to($1, 'UTF8') in x."${r.col}") > 0`);
    const r = await c.query(`SELECT count(*)::int AS n FROM "${t}" x WHERE strpos(x::text, $1) > 0${bytes.map((b) => ` OR ${b}`).join("")}`, [secret]);
    if (r.rows[0].n > 0) hits.push(t);
  }
  return hits;
}

/** A POST with an Idempotency-Key, and the same again: both answers. */
async function twice(path: string, key: string, body: unknown) {
  const headers = { "idempotency-key": randomUUID() };
  const first = await api(app, "POST", path, { key, body, headers });
  expect(first.status, JSON.stringify(first.body)).toBe(201);
  const replay = await api(app, "POST", path, { key, body, headers });
  expect(replay.status).toBe(201);
  expect(replay.headers.get("idempotent-replayed")).toBe("true");
  return { first: first.body, replay: replay.body };
}

describe("secrets in the answers stored for an Idempotency-Key", () => {
  it("a replay of each call that made a secret says it was shown once; no secret is in any file or table but a webhook's own endpoint record", async () => {
    const { orgId, key: orgKey } = await createOrgWithKey(app, "free", ["sessions", "billing"]);
    const apiKeys: string[] = [];
    const webhookSecrets: string[] = [];
    const hook = { url: "https://example.com/hook", events: ["plan.changed"] };

    // API keys, created and rolled with the admin token: the replay has `key: null`.
    const made = await twice(`/v1/admin/orgs/${orgId}/keys`, ADMIN_TOKEN, { type: "secret", scopes: ["sessions"] });
    apiKeys.push(made.first.data.key);
    expect(made.replay.data).toEqual({ ...made.first.data, key: null, key_already_shown: true });
    const rolled = await twice(`/v1/admin/keys/${made.first.data.id}/roll`, ADMIN_TOKEN, { grace_seconds: 60 });
    apiKeys.push(rolled.first.data.key);
    expect(rolled.replay.data).toEqual({ ...rolled.first.data, key: null, key_already_shown: true });

    // Webhook endpoints and their rolled secrets, under /v1/admin/orgs/... and /v1/orgs/...: the
    // replay is the same endpoint with `secret: null` and `secret_already_shown: true`.
    for (const [base, key] of [
      [`/v1/admin/orgs/${orgId}/webhooks`, ADMIN_TOKEN],
      [`/v1/orgs/${orgId}/webhooks`, orgKey],
    ] as const) {
      const created = await twice(base, key, hook);
      expect(created.first.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(created.first.data.secret_already_shown).toBe(false);
      expect(created.replay.data).toEqual({ ...created.first.data, secret: null, secret_already_shown: true });
      expect(created.replay.metadata).toEqual(created.first.metadata);
      webhookSecrets.push(created.first.data.secret);
      const again = await twice(`${base}/${created.first.data.id}/roll-secret`, key, { grace_seconds: 60 });
      expect(again.first.data.secret).toMatch(/^whsec_/);
      expect(again.replay.data).toEqual({ ...again.first.data, secret: null, secret_already_shown: true });
      expect(again.replay.metadata).toEqual(again.first.metadata);
      webhookSecrets.push(again.first.data.secret);
    }
    expect(new Set(webhookSecrets).size).toBe(4);

    // After a clean stop every journal is applied and every environment flushed.
    await app.stop();
    const random = (secret: string) => secret.slice(-32); // whatever prefix it were stored with
    const lmdb = app.config.FS_STORE !== "postgres";
    for (const k of apiKeys) expect(filesHolding(random(k)), k).toEqual([]);
    for (const s of webhookSecrets) expect(filesHolding(random(s)), s).toEqual(lmdb ? ["state/data.mdb"] : []);
    if (lmdb) {
      const dbs = openState(stateDirOf(app.dataDir), true);
      try {
        for (const k of apiKeys) expect(databasesHolding(dbs, random(k)), k).toEqual([]);
        for (const s of webhookSecrets) expect(databasesHolding(dbs, random(s)), s).toEqual(["webhookEndpoints"]);
      } finally {
        await dbs.metersRoot.close();
        await dbs.root.close();
      }
    } else {
      const c = new pg.Client({ connectionString: app.config.DATABASE_URL! });
      await c.connect();
      try {
        for (const k of apiKeys) expect(await tablesHolding(c, random(k)), k).toEqual([]);
        for (const s of webhookSecrets) expect(await tablesHolding(c, random(s)), s).toEqual(["fs_webhook_endpoints"]);
      } finally {
        await c.end();
      }
    }
    await app.restart();
  });
});
