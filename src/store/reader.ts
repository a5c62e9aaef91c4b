/**
 * Reads of stored records that a route awaits (the beacon session of a resolve, a check, the
 * pages of a listing, an org of the dashboard): on a single install at once from LMDB's read
 * view; on a cluster node over the front's asynchronous pool (pg/front-records.ts), so the event
 * loop serves other calls meanwhile.
 */
import type { DbName, KvDatabase, RangeOptions, StateDbs } from "./state-env.js";

/** The databases read this way. */
export type ReadDb = DbName;

export type ValueOf<D extends ReadDb> = StateDbs[D] extends KvDatabase<infer V, infer _K> ? V : never;
export type KeyOf<D extends ReadDb> = StateDbs[D] extends KvDatabase<infer _V, infer K> ? K : never;

export interface StoreReader {
  get<D extends ReadDb>(db: D, key: KeyOf<D>): Promise<ValueOf<D> | undefined>;
  /** Several keys in one read (one round trip on a cluster node), in the order given. */
  getMany<D extends ReadDb>(db: D, keys: ReadonlyArray<KeyOf<D>>): Promise<Array<ValueOf<D> | undefined>>;
  /** A key range in key order (RangeOptions), read a page at a time as it is iterated: stop to stop reading. */
  range<D extends ReadDb>(db: D, options: RangeOptions): AsyncIterable<{ key: KeyOf<D>; value: ValueOf<D> }>;
  /**
   * The synchronous view where a read costs no round trip (LMDB), else null: a hot path reads
   * there at once rather than gain a promise per request.
   */
  readonly local: StateDbs | null;
}

/** Reads from a synchronous view (LMDB's read-only environment). */
export function localReader(dbs: StateDbs): StoreReader {
  return {
    get: (db, key) => Promise.resolve(dbs[db].get(key as never) as never),
    getMany: (db, keys) => Promise.resolve(keys.map((k) => dbs[db].get(k as never) as never)),
    async *range(db, options) {
      yield* dbs[db].getRange(options) as Iterable<never>;
    },
    local: dbs,
  };
}
