/**
 * What a node of a cluster shares with the others through PostgreSQL beyond the store's
 * records (docs/cluster.md): its registration, credit leases, and distinct observation numbers.
 */
import { toBufferKey } from "ordered-binary";
import type { Statement } from "./sync-protocol.js";
import type { SyncPg } from "./sync-client.js";

/** How a node reaches the shared store (FS_STORE=postgres). */
export interface PgSettings {
  url: string;
  /** FS_NODE_ID: stable per node; names its journals' progress and its leases. */
  nodeId: string;
  /** Statement and connect timeout of each connection (FS_PG_TIMEOUT_MS). */
  timeoutMs: number;
}

/** Nodes one database can number (observation sequence numbers carry the node's index, see below). */
export const MAX_NODES = 64;

/** Records the node (or sees it again) and returns its index, 0..MAX_NODES-1. */
export function registerNode(sql: SyncPg, nodeId: string): number {
  // A known node keeps its index; a new one takes the lowest free, under a lock so two new nodes
  // starting together cannot take the same.
  try {
    sql.run([
      { sql: "BEGIN" },
      { sql: "SELECT pg_advisory_xact_lock($1)", params: [NODES_LOCK] },
      { sql: "UPDATE fs_nodes SET seen_at = now() WHERE node_id = $1", params: [nodeId] },
      {
        sql: `INSERT INTO fs_nodes (node_id, idx)
              SELECT $1, (SELECT min(i) FROM generate_series(0, ${MAX_NODES - 1}) AS i WHERE i NOT IN (SELECT idx FROM fs_nodes))
              WHERE NOT EXISTS (SELECT 1 FROM fs_nodes WHERE node_id = $1)`,
        params: [nodeId],
      },
      { sql: "COMMIT" },
    ]);
  } catch (err) {
    try {
      sql.query("ROLLBACK");
    } catch {
      // the connection is gone: nothing was written
    }
    if ((err as { code?: string }).code === "23502") {
      throw new Error(`no node index left for ${nodeId}: a database serves at most ${MAX_NODES} node ids (delete the rows of fs_nodes no node uses any more)`);
    }
    throw err;
  }
  return Number(sql.value("SELECT idx FROM fs_nodes WHERE node_id = $1", [nodeId]));
}

/** The advisory lock under which a new node takes its index. */
const NODES_LOCK = 0x66730003;

/** Journals whose observation numbers can be told apart: 64 nodes of up to 16 front threads. */
export const SEQ_STRIDE = 1024;

/**
 * Observation sequence numbers of journal `idx` (0..SEQ_STRIDE-1: node index x 16 + front
 * thread): microseconds since the epoch rounded down to a multiple of SEQ_STRIDE, plus `idx`, and
 * always above the previous one. So the numbers of different journals never collide (their
 * residues differ) and listing them in order interleaves the journals' observations by time (to
 * within a millisecond and the clocks' skew).
 */
export function observationSeqs(idx: number, now: () => number = Date.now): (prev: number) => number {
  return (prev) => {
    const micros = now() * 1000;
    const t = micros - (micros % SEQ_STRIDE) + idx;
    return Math.max(t, prev + SEQ_STRIDE);
  };
}

/**
 * Gives back what the node's leases hold beyond its shipped charges. Only valid when every
 * charge the node admitted is shipped (at start after the journal's replay; at a clean stop).
 */
export function returnLeasesStatement(nodeId: string): Statement {
  return { sql: "UPDATE fs_leases SET granted = used, updated_at = now() WHERE node_id = $1 AND granted > used", params: [nodeId] };
}

/** Key of an org's usage in a period in fs_usage (the embedded store's `usage` key). */
export function usageKey(orgId: string, period: string): Buffer {
  return toBufferKey(`${orgId}:${period}`);
}
