/**
 * Every task that crosses the front <-> scoring-pool boundary. Plain data in, plain data out;
 * expected failures come back as values (`ok: false`), only bugs throw.
 */
import type { IpBase } from "../datasets/ip-dataset.js";
import type { ContentAnalysis, ContentEvidence } from "../scoring/content/index.js";

export const PROTOCOL_VERSION = 1;

/** Settings handed to each pool thread through workerData. */
export interface ScoringWorkerData {
  protocolVersion: number;
  /** IP dataset build directory to open at start. */
  ipDatasetDir: string;
}

/**
 * Every task names the IP dataset build in service; a thread that has another one open switches
 * before running it, so the pool follows a hot switch without a restart.
 */
interface TaskBase {
  ipDatasetDir: string;
}

export interface PingTask extends TaskBase {
  kind: "ping";
}
export interface PingResult {
  kind: "ping";
  ok: true;
  threadId: number;
  ipDatasetVersion: string;
}

/** Many addresses in one task: a pool hop costs ~18 µs, so work is handed over in batches. */
export interface IpLookupBatchTask extends TaskBase {
  kind: "ip.lookupBatch";
  ips: string[];
}
export interface IpLookupBatchResult {
  kind: "ip.lookupBatch";
  ok: true;
  /** One entry per input address, null where the address does not parse. */
  results: Array<IpBase | null>;
  datasetVersion: string;
}

/**
 * The content model on many texts in one task (POST /v1/check, POST /v1/content): its ~18 µs a
 * text run on a pool thread instead of the front (content-batcher.ts gathers the texts).
 */
export interface ContentBatchTask extends TaskBase {
  kind: "content.analyzeBatch";
  texts: string[];
  /** Per text: also return its evidence for an org model (checks); absent: none. */
  evidence?: boolean[];
}
export interface ContentBatchResult {
  kind: "content.analyzeBatch";
  ok: true;
  /** One analysis per input text, same order. */
  results: ContentAnalysis[];
  /** Per text, its evidence where the task asked for it (null elsewhere); absent when it asked for none. */
  evidence?: Array<ContentEvidence | null>;
  /** The model the thread loaded (data/content-model), e.g. `content-2.0748b140a864`. */
  modelVersion: string;
}

/** Test and benchmark aid: keeps a thread busy for `ms` (used to show queue overload). */
export interface BusyTask extends TaskBase {
  kind: "busy";
  ms: number;
}
export interface BusyResult {
  kind: "busy";
  ok: true;
}

export type ScoringTask = PingTask | IpLookupBatchTask | ContentBatchTask | BusyTask;
export type ScoringResult = PingResult | IpLookupBatchResult | ContentBatchResult | BusyResult;
export type ResultOf<T extends ScoringTask> = Extract<ScoringResult, { kind: T["kind"] }>;
