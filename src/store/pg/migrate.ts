import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../config/index.js";
import type { SyncPg } from "./sync-client.js";

/** The versioned schema: `NNN_name.sql`, applied in order, each once. */
export const MIGRATIONS_DIR = join(REPO_ROOT, "src/store/pg/migrations");

/** The advisory lock every node takes to migrate, so nodes starting together apply each file once. */
const MIGRATION_LOCK = 0x66730001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f, sql: readFileSync(join(dir, f), "utf8") }));
}

/**
 * Brings the database to the repository's schema: under a session advisory lock, applies each
 * migration not yet in `fs_schema_migrations`, each in its own transaction with its row.
 * Returns the versions applied now. A database newer than this code is refused.
 */
export function migrate(sql: SyncPg, migrations = listMigrations()): number[] {
  sql.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
  try {
    sql.query("CREATE TABLE IF NOT EXISTS fs_schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    const done = new Set(sql.query("SELECT version FROM fs_schema_migrations").map((r) => Number(r[0])));
    const newest = migrations.reduce((m, x) => Math.max(m, x.version), 0);
    for (const v of done) if (v > newest) throw new Error(`the database's schema (migration ${v}) is newer than this version of the service (${newest})`);
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      sql.run([
        { sql: "BEGIN" },
        { sql: m.sql },
        { sql: "INSERT INTO fs_schema_migrations (version, name) VALUES ($1, $2)", params: [m.version, m.name] },
        { sql: "COMMIT" },
      ]);
      applied.push(m.version);
    }
    return applied;
  } catch (err) {
    try {
      sql.query("ROLLBACK");
    } catch {
      // nothing open
    }
    throw err;
  } finally {
    sql.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
  }
}
