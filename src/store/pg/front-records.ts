/**
 * Runs on a cluster node's front threads: the records a call needs before it starts (its key,
 * its org and the org's usage, a publishable key's project), read from PostgreSQL without
 * blocking the event loop. The front's caches (Authenticator, ProjectDirectory, QuotaGate) ask
 * here for what they have not cached (Idempotency-Keys' stored answers too): a record not read
 * yet throws StoreWait, the caller waits for the read and asks again (the router's checks before
 * a call, src/http/router.ts; a route's own lookup through withStore), and the answer is found here
 * then. Nothing here reads synchronously: the front thread has no synchronous connection.
 */
import { fromBufferKey } from "ordered-binary";
import { PG_TABLES } from "../state-env.js";
import { asBuffer, decodeValue, getStatement, hexKey, manyStatement, RangePages } from "./kv.js";
import { StoreWait } from "../store-wait.js";
import type { KeyOf, ReadDb, StoreReader, ValueOf } from "../reader.js";
import type { PgPool } from "./pool.js";

/** How long a record read stays here for the call that waited for it (the caches keep it after). */
const FOUND_MS = 5000;
/** How long "no such record" is kept: briefly, so a record made on another node is seen soon. */
const MISSING_MS = 250;
/** Entries kept at most (older ones are dropped first). */
const MAX_ENTRIES = 10_000;

interface Entry {
  at: number;
  value?: unknown;
  error?: Error;
}

export class RecordLoader {
  private readonly read = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(private readonly pool: PgPool) {}

  /**
   * A database's records as the front's caches read them: `get` answers, or throws StoreWait.
   * `once`: a record read is kept for the one call that waited for it, not for the next (an
   * Idempotency-Key's answer: "none yet" must not outlive the claim that read it).
   */
  table<D extends ReadDb>(db: D, options: { once?: boolean } = {}): { get(key: KeyOf<D>): ValueOf<D> | undefined } {
    return { get: (key) => this.get(db, key, options.once === true) as ValueOf<D> | undefined };
  }

  private get(db: ReadDb, key: unknown, once: boolean): unknown {
    const hex = hexKey(key);
    const id = `${db}\t${hex}`;
    const e = this.read.get(id);
    if (e && Date.now() - e.at < (e.value === undefined ? MISSING_MS : FOUND_MS)) {
      if (e.error) {
        this.read.delete(id); // the next call reads again
        throw e.error;
      }
      if (once) this.read.delete(id);
      return e.value;
    }
    // Inside mayWait (the router's checks before a call, withStore) the call waits and runs again;
    // elsewhere it answers NOT_READY (errors.ts), and the record is here for its retry.
    throw new StoreWait(this.load(db, id, hex));
  }

  private load(db: ReadDb, id: string, hex: string): Promise<void> {
    let p = this.loading.get(id);
    if (p) return p;
    const [table, binary] = PG_TABLES[db];
    // A publishable key's project comes with it: the beacon routes look it up next.
    const st =
      db === "keys"
        ? { sql: `SELECT k.v::text, NULL, p.v::text FROM fs_keys k LEFT JOIN fs_projects p ON p.k = convert_to(k.v->>'project_id', 'UTF8') WHERE k.k = decode($1, 'hex')`, params: [hex] }
        : getStatement(`fs_${table}`, hex);
    p = this.pool.query(st.sql, st.params).then(
      (rows) => {
        const r = rows[0];
        this.put(id, { at: Date.now(), value: r ? decodeValue(binary === true, r[0], r[1]) : undefined });
        if (r?.[2]) {
          const project = JSON.parse(r[2] as string) as { id: string };
          this.put(`projects\t${hexKey(project.id)}`, { at: Date.now(), value: project });
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

/** Rows per page of a range read by a route (a listing reads a page or two of its records). */
const RANGE_PAGE = 128;

/** Reads a route awaits, over the front's pool: one round trip each (a range: one a page), off the event loop. */
export function poolReader(pool: PgPool): StoreReader {
  const tableOf = (db: ReadDb) => ({ table: `fs_${PG_TABLES[db][0]}`, binary: PG_TABLES[db][1] === true });
  return {
    async get(db, key) {
      const { table, binary } = tableOf(db);
      const st = getStatement(table, hexKey(key));
      const r = (await pool.query(st.sql, st.params))[0];
      return r ? decodeValue(binary, r[0], r[1]) : undefined;
    },
    async getMany(db, keys) {
      if (keys.length === 0) return [];
      const { table, binary } = tableOf(db);
      const hex = keys.map(hexKey);
      const st = manyStatement(table, [...new Set(hex)]);
      const found = new Map<string, never>();
      for (const r of await pool.query(st.sql, st.params)) found.set(r[0] as string, decodeValue(binary, r[1], r[2]));
      return hex.map((k) => found.get(k));
    },
    async *range(db, options) {
      const { table, binary } = tableOf(db);
      const pages = new RangePages(table, options, true, RANGE_PAGE);
      for (let page = pages.next(); page !== null; page = pages.next()) {
        const rows = await pool.query(page.sql, page.params);
        pages.took(rows);
        for (const r of rows) yield { key: fromBufferKey(asBuffer(r[0])) as never, value: decodeValue<never>(binary, r[1], r[2]) };
      }
    },
    local: null,
  };
}
