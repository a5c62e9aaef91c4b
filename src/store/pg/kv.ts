import { fromBufferKey, toBufferKey } from "ordered-binary";
import type { KvDatabase, KvRoot, RangeOptions } from "../state-env.js";
import type { Statement } from "./sync-protocol.js";
import { PgError, type SyncPg } from "./sync-client.js";

/** Rows fetched per round trip by getRange/getKeys. */
const PAGE = 256;

type Pending = Map<string, { k: string; v: string | null; b: string | null } | null>;

/**
 * The embedded store's named databases, held in PostgreSQL: one table per database, keyed by
 * the same order-preserving encoding of keys (ordered-binary, as LMDB uses), so a key range
 * is a range of `bytea` in the table's primary key and comes back in the same order.
 * Values are JSON (`v`), or bytes (`b`) for the binary meter logs; an operator reads them with
 * SQL (`SELECT v FROM fs_orgs`).
 *
 * Inside `transactionSync` (the writer's commits) the connection runs one SERIALIZABLE
 * transaction: reads see one snapshot, writes are kept here and sent at the commit in one round
 * trip, and two nodes that touch the same records are ordered as if one ran after the other
 * (PostgreSQL aborts one with a serialization failure; the writer applies its intents again).
 * That is how the single-writer code of src/store/writer keeps its exactness across nodes.
 * Outside a transaction (the front's reads) each read is its own statement.
 */
export class KvStore implements KvRoot {
  private depth = 0;
  private pending = new Map<string, Pending>();
  private deferred: Statement[] = [];
  /** Statements that open the transaction, not sent yet: they travel with its first read or its commit. */
  private opening: Statement[] = [];
  /** Options of the next transaction (transactionSync takes them once). */
  private nextOptions: TransactionOptions | null = null;

  constructor(readonly sql: SyncPg) {}

  db<V, K>(table: string, binary = false): KvDatabase<V, K> {
    return new KvTable<V, K>(this, `fs_${table}`, binary);
  }

  get inTransaction(): boolean {
    return this.depth > 0;
  }

  /**
   * The next transactionSync runs with these options instead of the defaults (SERIALIZABLE,
   * durable commit): `synchronousCommit: false` for records a journal already holds.
   */
  withOptions(options: TransactionOptions): this {
    this.nextOptions = options;
    return this;
  }

  /**
   * One transaction, atomic from the client's side: BEGIN travels with the first read (or with
   * the commit when there was none), the writes and the COMMIT in one call. A failure before the
   * commit's call leaves nothing committed (PostgreSQL's error, or a connection that was ended,
   * which rolls back). A commit whose answer did not come throws PgError with `unknown` set: it
   * may have committed.
   */
  transactionSync<T>(action: () => T): T {
    if (this.depth > 0) {
      this.depth++;
      try {
        return action();
      } finally {
        this.depth--;
      }
    }
    const options = this.nextOptions ?? {};
    this.nextOptions = null;
    this.opening = [{ sql: `BEGIN ISOLATION LEVEL ${options.isolation ?? "SERIALIZABLE"}` }];
    if (options.synchronousCommit === false) this.opening.push({ sql: "SET LOCAL synchronous_commit = off" });
    this.depth = 1;
    try {
      const out = action();
      this.sql.run([...this.takeOpening(), ...this.writes(), ...this.deferred, { sql: "COMMIT" }]);
      return out;
    } catch (err) {
      // Opened, and the connection kept (PostgreSQL refused a statement): roll back. A connection
      // that failed was ended, and PostgreSQL rolled back what it had not committed.
      if (this.opening.length === 0 && !(err instanceof PgError && err.unknown)) {
        try {
          this.sql.query("ROLLBACK");
        } catch {
          // The connection is gone; PostgreSQL rolled back.
        }
      }
      throw err;
    } finally {
      this.depth = 0;
      this.opening = [];
      this.pending.clear();
      this.deferred = [];
    }
  }

  /** The front reads committed state at each statement: nothing to reset. */
  resetReadTxn(): void {}

  /** A statement to run at this transaction's commit, after its writes (leases, notifications). */
  defer(statement: Statement): void {
    if (this.depth === 0) this.sql.run([statement]);
    else this.deferred.push(statement);
  }

  /** @internal One read: with the transaction's opening and the writes kept so far when `flush`. */
  read(statement: Statement, flush = false): unknown[][] {
    if (this.depth === 0) return this.sql.run([statement]);
    const before = [...this.takeOpening(), ...(flush ? this.takeWrites() : [])];
    return this.sql.run(before.length > 0 ? [...before, statement] : [statement]);
  }

  /** @internal */
  pendingOf(table: string): Pending | undefined {
    return this.pending.get(table);
  }

  /** @internal A write: kept until the commit inside a transaction, sent at once outside one. */
  write(table: string, k: string, row: { k: string; v: string | null; b: string | null } | null): void {
    if (this.depth === 0) {
      this.sql.run(row ? [upsert(table, [row])] : [remove(table, [k])]);
      return;
    }
    let p = this.pending.get(table);
    if (!p) this.pending.set(table, (p = new Map()));
    p.set(k, row);
  }

  private takeOpening(): Statement[] {
    const out = this.opening;
    this.opening = [];
    return out;
  }

  private takeWrites(): Statement[] {
    const out = this.writes();
    this.pending.clear();
    return out;
  }

  private writes(): Statement[] {
    const out: Statement[] = [];
    for (const [table, rows] of this.pending) {
      const puts: Array<{ k: string; v: string | null; b: string | null }> = [];
      const dels: string[] = [];
      for (const [k, row] of rows) {
        if (row) puts.push(row);
        else dels.push(k);
      }
      if (dels.length > 0) out.push(remove(table, dels));
      if (puts.length > 0) out.push(upsert(table, puts));
    }
    return out;
  }
}

/** How a KvStore transaction runs (KvStore.withOptions). */
export interface TransactionOptions {
  /** SERIALIZABLE by default: the writer's exactness across nodes. */
  isolation?: "SERIALIZABLE" | "READ COMMITTED";
  /** false: commit without waiting for the WAL flush (records another journal makes durable). */
  synchronousCommit?: boolean;
}

/** One statement that puts `rows` (hex keys; JSON or hex binary values) in `table`, replacing what is there. */
export function upsert(table: string, rows: Array<{ k: string; v: string | null; b: string | null }>): Statement {
  return {
    sql: `INSERT INTO ${table} (k, v, b) SELECT decode(k, 'hex'), v::json, decode(b, 'hex') FROM unnest($1::text[], $2::text[], $3::text[]) AS t(k, v, b)
          ON CONFLICT (k) DO UPDATE SET v = excluded.v, b = excluded.b`,
    params: [rows.map((r) => r.k), rows.map((r) => r.v), rows.map((r) => r.b)],
  };
}

function remove(table: string, keys: string[]): Statement {
  return { sql: `DELETE FROM ${table} WHERE k = ANY (SELECT decode(x, 'hex') FROM unnest($1::text[]) AS x)`, params: [keys] };
}

export function hexKey(key: unknown): string {
  return toBufferKey(key as Parameters<typeof toBufferKey>[0]).toString("hex");
}

export function asBuffer(u: unknown): Buffer {
  const a = u as Uint8Array;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/**
 * A key range of `table` read page by page (`PAGE` rows, or `pageSize`), in key order (descending
 * with `reverse`) as LMDB's getRange reads it: `next` gives the statement of the next page (null
 * when the range is done), `took` the rows it answered. The front's synchronous reads (KvTable)
 * and its asynchronous ones (front-records.ts) page alike.
 */
export class RangePages {
  private lo: string | null;
  private hi: string | null;
  private loInclusive: boolean;
  private hiInclusive: boolean;
  private left: number;
  private asked = 0;
  private readonly reverse: boolean;

  constructor(
    private readonly table: string,
    o: RangeOptions,
    private readonly values: boolean,
    private readonly pageSize = PAGE,
  ) {
    this.reverse = o.reverse === true;
    this.lo = o.start === undefined ? null : hexKey(o.start);
    this.hi = o.end === undefined ? null : hexKey(o.end);
    if (this.reverse) [this.lo, this.hi] = [this.hi, this.lo]; // reverse: start is the high end (inclusive), end the low (exclusive)
    this.left = o.limit ?? Infinity;
    this.loInclusive = !this.reverse;
    this.hiInclusive = this.reverse;
  }

  /** The statement of the next page (rows: k, and v::text, b with values), or null at the end. */
  next(): Statement | null {
    if (this.left <= 0) return null;
    const where: string[] = [];
    const params: unknown[] = [];
    if (this.lo !== null) {
      params.push(this.lo);
      where.push(`k ${this.loInclusive ? ">=" : ">"} decode($${params.length}, 'hex')`);
    }
    if (this.hi !== null) {
      params.push(this.hi);
      where.push(`k ${this.hiInclusive ? "<=" : "<"} decode($${params.length}, 'hex')`);
    }
    this.asked = Math.min(this.pageSize, this.left);
    const cols = this.values ? "k, v::text, b" : "k";
    return { sql: `SELECT ${cols} FROM ${this.table}${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY k ${this.reverse ? "DESC" : "ASC"} LIMIT ${this.asked}`, params };
  }

  /** The rows the last page answered: the next page starts after the last of them. */
  took(rows: unknown[][]): void {
    this.left -= rows.length;
    if (rows.length < this.asked) {
      this.left = 0;
      return;
    }
    const last = asBuffer(rows[rows.length - 1]![0]).toString("hex");
    if (this.reverse) {
      this.hi = last;
      this.hiInclusive = false;
    } else {
      this.lo = last;
      this.loInclusive = false;
    }
  }
}

/** The statement reading one key (hex) of `table`: rows of v::text, b. */
export function getStatement(table: string, hex: string): Statement {
  return { sql: `SELECT v::text, b FROM ${table} WHERE k = decode($1, 'hex')`, params: [hex] };
}

/** The statement reading several keys (hex) of `table`: rows of encode(k, 'hex'), v::text, b. */
export function manyStatement(table: string, hex: string[]): Statement {
  return { sql: `SELECT encode(k, 'hex'), v::text, b FROM ${table} WHERE k = ANY (SELECT decode(x, 'hex') FROM unnest($1::text[]) AS x)`, params: [hex] };
}

/** A row's value: the JSON text `v` (selected as `v::text`), or the bytes `b` of a binary database. */
export function decodeValue<V>(binary: boolean, v: unknown, b: unknown): V {
  if (binary) return (b === null ? null : asBuffer(b)) as V;
  return JSON.parse(v as string) as V;
}

class KvTable<V, K> implements KvDatabase<V, K> {
  constructor(
    private readonly store: KvStore,
    private readonly table: string,
    private readonly binary: boolean,
  ) {}

  get(key: K): V | undefined {
    const k = hexKey(key);
    const p = this.store.pendingOf(this.table);
    if (p?.has(k)) {
      const row = p.get(k);
      return row ? this.decode(row.v, row.b === null ? null : Buffer.from(row.b, "hex")) : undefined;
    }
    const rows = this.store.read(getStatement(this.table, k));
    const r = rows[0];
    return r ? this.decode(r[0], r[1] === null ? null : asBuffer(r[1])) : undefined;
  }

  readMany(keys: K[]): Array<V | undefined> {
    const hex = keys.map(hexKey);
    const p = this.store.pendingOf(this.table);
    const out = new Array<V | undefined>(keys.length);
    const wanted = new Map<string, number[]>();
    hex.forEach((k, i) => {
      if (p?.has(k)) {
        const row = p.get(k);
        out[i] = row ? this.decode(row.v, row.b === null ? null : Buffer.from(row.b, "hex")) : undefined;
        return;
      }
      const at = wanted.get(k);
      if (at) at.push(i);
      else wanted.set(k, [i]);
    });
    if (wanted.size === 0) return out;
    const rows = this.store.read(manyStatement(this.table, [...wanted.keys()]));
    for (const r of rows) {
      const v = this.decode(r[1], r[2] === null ? null : asBuffer(r[2]));
      for (const i of wanted.get(r[0] as string) ?? []) out[i] = v;
    }
    return out;
  }

  putSync(key: K, value: V): boolean {
    const k = hexKey(key);
    if (this.binary) this.store.write(this.table, k, { k, v: null, b: (value as Buffer).toString("hex") });
    else this.store.write(this.table, k, { k, v: JSON.stringify(value), b: null });
    return true;
  }

  removeSync(key: K): boolean {
    const k = hexKey(key);
    this.store.write(this.table, k, null);
    return true;
  }

  *getRange(options: RangeOptions = {}): Generator<{ key: K; value: V }> {
    for (const r of this.scan(options, true)) yield { key: r.key, value: r.value! };
  }

  *getKeys(options: RangeOptions = {}): Generator<K> {
    for (const r of this.scan(options, false)) yield r.key;
  }

  /** Pages through the range in key order (descending with `reverse`), as LMDB's getRange does. */
  private *scan(o: RangeOptions, values: boolean): Generator<{ key: K; value?: V }> {
    // Writes of the open transaction go with the first page, so the range sees them.
    let flush = true;
    const pages = new RangePages(this.table, o, values);
    for (let page = pages.next(); page !== null; page = pages.next()) {
      const rows = this.store.read(page, flush);
      flush = false;
      pages.took(rows);
      for (const r of rows) yield { key: fromBufferKey(asBuffer(r[0])) as K, value: values ? this.decode(r[1], r[2] === null ? null : asBuffer(r[2])) : undefined };
    }
  }

  /** `v` is the JSON text (selected as `v::text`), `b` the bytes of a binary database. */
  private decode(v: unknown, b: Buffer | null): V {
    if (this.binary) return b as V;
    return JSON.parse(v as string) as V;
  }
}

export { PgError };
