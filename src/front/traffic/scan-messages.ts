/**
 * Every message that crosses the front <-> scan-thread boundary (scan-thread.ts starts the
 * thread, scan-worker.ts is its entry). Plain data in, plain data out; a scan that fails comes
 * back as `ok: false` with its message (a bug: the route answers 500).
 */
import type { BotPolicy } from "../../scoring/bot-policy.js";
import type { DecisionThresholds } from "../../scoring/check.js";
import type { Bucket, TrafficFigures } from "./tally.js";

export const SCAN_PROTOCOL_VERSION = 1;

/** Settings handed to the thread through workerData: where it reads the stored records. */
export interface ScanWorkerData {
  protocolVersion: number;
  /** LMDB's state environment, opened read-only (a single install). */
  stateDir: string;
  /** A cluster node (FS_STORE=postgres): the thread's own connection instead. */
  pg: { url: string; timeoutMs: number; name: string } | null;
}

/** GET /v1/projects/{projectId}/traffic: the project's hits and the org's checks of [from, to) into a tally. */
export interface TrafficScanTask {
  kind: "traffic";
  projectId: string;
  orgId: string;
  from: number;
  to: number;
  bucket: Bucket;
  /** FS_TRAFFIC_SCAN_LIMIT: most observations, and apart most checks, read. */
  limit: number;
  /** The IP dataset build in service, which names the networks (the thread follows a switch). */
  ipDatasetDir: string;
}
export interface TrafficScanResult {
  kind: "traffic";
  figures: TrafficFigures;
  hits: { scanned: number; partial: boolean };
  checks: { partial: boolean };
}

/** POST /v1/projects/{projectId}/bot-policy/replay: stored hits and checks since `since` re-decided. */
export interface ReplayScanTask {
  kind: "replay";
  projectId: string;
  orgId: string;
  since: number;
  examples: number;
  /** FS_REPLAY_SCAN_LIMIT: most hits, and apart most checks, re-decided. */
  limit: number;
  /** The proposed policy document (resolved over the defaults in the thread), or null: hits not replayed. */
  policy: Partial<BotPolicy> | null;
  /** Proposed check thresholds, or null: checks not replayed. */
  thresholds: DecisionThresholds | null;
}

/** A group of a replay's changes, named after its dimension (`{ kind: "ai_crawler", count, examples }`). */
export type NamedGroup<E> = Record<string, unknown> & { count: number; examples: E[] };

export interface ReplayHitExample {
  id: string;
  created_at: string;
  page: string | null;
  bot_id: string | null;
  bot_kind: string | null;
  score: number;
  from: string;
  to: string;
  rule: string | null;
}
export interface ReplayCheckExample {
  request_id: string;
  created_at: string;
  form_id: string;
  score: number;
  from: string;
  to: string;
}
interface ReplayFigures {
  scanned: number;
  changed: number;
  partial: boolean;
  transitions: Array<{ from: string; to: string; count: number }>;
}
export interface ReplayScanResult {
  kind: "replay";
  hits: (ReplayFigures & { by_kind: Array<NamedGroup<ReplayHitExample>>; by_reason: Array<NamedGroup<ReplayHitExample>> }) | null;
  checks: (ReplayFigures & { by_form: Array<NamedGroup<ReplayCheckExample>> }) | null;
}

export type ScanTask = TrafficScanTask | ReplayScanTask;
export type ScanResult = TrafficScanResult | ReplayScanResult;
export type ScanResultOf<T extends ScanTask> = Extract<ScanResult, { kind: T["kind"] }>;

/** front -> thread */
export interface ScanRequest {
  id: number;
  task: ScanTask;
}
/** thread -> front */
export type ScanReply = { id: number; ok: true; result: ScanResult } | { id: number; ok: false; message: string };
