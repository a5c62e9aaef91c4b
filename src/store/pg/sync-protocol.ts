/** Messages between SyncPg (the caller's thread) and its connection thread (sync-worker.ts). */
import type { MessagePort } from "node:worker_threads";

export interface Statement {
  sql: string;
  params?: unknown[];
}

export type BridgeRequest =
  | { id: number; kind: "run"; statements: Statement[] }
  /** The caller gave up on request `target`: end its connection now (the request fails as unknown). */
  | { id: number; kind: "abort"; target: number }
  | { id: number; kind: "close" };

export type BridgeResponse =
  | { id: number; ok: true; rows: unknown[][] }
  | { id: number; ok: false; code: string; message: string; unknown: boolean };

export interface BridgeData {
  url: string;
  /** statement_timeout and connect timeout of the connection (ms). */
  timeoutMs: number;
  /** application_name, so `pg_stat_activity` tells the nodes' connections apart. */
  name: string;
  port: MessagePort;
  flag: SharedArrayBuffer;
}
