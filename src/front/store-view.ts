/**
 * The store as one front thread reads it: LMDB's read-only view at once, or on a cluster node
 * (FS_STORE=postgres) a few asynchronous connections of the thread's own, over which the records
 * a call needs before it starts (keys, orgs, projects) are loaded and cached, and what routes
 * await is read. No read here blocks the event loop.
 */
import type { PgSettings } from "../store/pg/cluster.js";
import { poolReader, RecordLoader } from "../store/pg/front-records.js";
import { PgPool } from "../store/pg/pool.js";
import { localReader, type StoreReader } from "../store/reader.js";
import { openState, type StateDbs } from "../store/state-env.js";

export interface FrontStoreView {
  /** A cluster node's connections (records, credit leases and their heartbeat, the refresh of cached records). */
  pgPool: PgPool | null;
  /** LMDB's read-only view (not in a cluster). */
  local: StateDbs | null;
  /** A cluster node's record loader (not with LMDB). */
  records: RecordLoader | null;
  /** What routes read. */
  reads: StoreReader;
}

/** Opens front thread `index`'s view of the store in `stateDir`, or of the cluster's PostgreSQL. */
export function openStoreView(stateDir: string, index: number, cluster: PgSettings | null): FrontStoreView {
  const pgPool = cluster ? new PgPool({ url: cluster.url, timeoutMs: cluster.timeoutMs, name: `fs-front:${cluster.nodeId}:${index}` }, 2) : null;
  const local = cluster ? null : openState(stateDir, true);
  const records = pgPool ? new RecordLoader(pgPool) : null;
  const reads = pgPool ? poolReader(pgPool) : localReader(local!);
  return { pgPool, local, records, reads };
}
