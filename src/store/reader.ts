/**
 * Reads of stored records that a route awaits (the beacon session of a resolve, a check): on a
 * single install at once from LMDB's read view; on a cluster node over the front's asynchronous
 * pool (pg/front-records.ts), so the event loop serves other calls meanwhile.
 */
import type { StateDbs } from "./state-env.js";

/** The databases read this way. */
export type ReadDb = "sessionProjects" | "sessions";

type ValueOf<D extends ReadDb> = StateDbs[D] extends { get(k: never): infer V } ? V : never;
type KeyOf<D extends ReadDb> = Parameters<StateDbs[D]["get"]>[0];

export interface StoreReader {
  get<D extends ReadDb>(db: D, key: KeyOf<D>): Promise<ValueOf<D> | undefined>;
}

/** Reads from a synchronous view (LMDB's read-only environment). */
export function localReader(dbs: Pick<StateDbs, ReadDb>): StoreReader {
  return { get: (db, key) => Promise.resolve(dbs[db].get(key as never) as never) };
}
