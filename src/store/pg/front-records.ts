/**
 * Runs on a cluster node's front threads: the records a call needs before it starts (its key,
 * its org and the org's usage, a publishable key's project), read from PostgreSQL without
 * blocking the event loop. The front's caches (Authenticator, ProjectDirectory, QuotaGate) ask
 * here for what they have not cached; where the call can wait (mayWait: the router's checks
 * before a call starts), a record not read yet throws StoreWait, the router waits for the read
 * and asks again (src/http/router.ts), and the answer is found here then. Elsewhere (a route's
 * own lookup) the record is read at once through `fallback`, the front's synchronous connection.
 */
import { toBufferKey } from "ordered-binary";
import { canWait, StoreWait } from "../store-wait.js";
import type { ReadDb, StoreReader } from "../reader.js";
import type { PgPool } from "./pool.js";

/** How long a record read stays here for the call that waited for it (the caches keep it after). */
const FOUND_MS = 5000;
/** How long "no such record" is kept: briefly, so a record made on another node is seen soon. */
const MISSING_MS = 250;
/** Entries kept at most (older ones are dropped first). */
const MAX_ENTRIES = 10_000;

type Table = "keys" | "projects" | "orgs" | "usage";

interface Entry {
  at: number;
  value?: unknown;
  error?: Error;
}

export class RecordLoader {
  private readonly read = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(
    private readonly pool: PgPool,
    private readonly fallback: Record<Table, { get(key: string): unknown }>,
  ) {}

  /** A table's records as the front's caches read them: `get` answers, or throws StoreWait. */
  table<V>(table: Table): { get(key: string): V | undefined } {
    return { get: (key) => this.get(table, key) as V | undefined };
  }

  private get(table: Table, key: string): unknown {
    const id = `${table}\t${key}`;
    const e = this.read.get(id);
    if (e && Date.now() - e.at < (e.value === undefined ? MISSING_MS : FOUND_MS)) {
      if (e.error) {
        this.read.delete(id); // the next call reads again
        throw e.error;
      }
      return e.value;
    }
    if (!canWait()) return this.fallback[table].get(key);
    throw new StoreWait(this.load(table, key));
  }

  private load(table: Table, key: string): Promise<void> {
    const id = `${table}\t${key}`;
    let p = this.loading.get(id);
    if (p) return p;
    const hex = toBufferKey(key).toString("hex");
    // A publishable key's project comes with it: the beacon routes look it up next.
    const sql =
      table === "keys"
        ? `SELECT k.v::text, p.v::text FROM fs_keys k LEFT JOIN fs_projects p ON p.k = convert_to(k.v->>'project_id', 'UTF8') WHERE k.k = decode($1, 'hex')`
        : `SELECT v::text FROM fs_${table} WHERE k = decode($1, 'hex')`;
    p = this.pool.query(sql, [hex]).then(
      (rows) => {
        const r = rows[0];
        this.put(id, { at: Date.now(), value: r ? JSON.parse(r[0] as string) : undefined });
        if (r?.[1]) {
          const project = JSON.parse(r[1] as string) as { id: string };
          this.put(`projects\t${project.id}`, { at: Date.now(), value: project });
        }
      },
      (err: Error) => this.put(id, { at: Date.now(), error: err }),
    );
    p = p.finally(() => this.loading.delete(id));
    this.loading.set(id, p);
    return p;
  }

  private put(id: string, e: Entry): void {
    if (this.read.size >= MAX_ENTRIES) {
      const now = Date.now();
      for (const [k, v] of this.read) if (now - v.at >= FOUND_MS) this.read.delete(k);
      if (this.read.size >= MAX_ENTRIES) this.read.clear();
    }
    this.read.set(id, e);
  }
}

/** The tables of the databases routes read asynchronously (reader.ts). */
const READ_TABLES: Record<ReadDb, string> = { sessionProjects: "fs_session_projects", sessions: "fs_sessions" };

/** Reads a route awaits, over the front's pool: one round trip each, off the event loop. */
export function poolReader(pool: PgPool): StoreReader {
  return {
    async get(db, key) {
      const rows = await pool.query(`SELECT v::text FROM ${READ_TABLES[db]} WHERE k = decode($1, 'hex')`, [toBufferKey(key as Parameters<typeof toBufferKey>[0]).toString("hex")]);
      return rows[0] ? (JSON.parse(rows[0][0] as string) as never) : undefined;
    },
  };
}
