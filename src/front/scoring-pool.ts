import { Piscina } from "piscina";
import { ApiError } from "../shared/errors.js";
import { threadEntry } from "../shared/thread-entry.js";
import { PROTOCOL_VERSION, type ScoringResult, type ScoringTask, type ScoringWorkerData } from "../pool/messages.js";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A task as callers write it: the pool adds the dataset directory. */
export type TaskInput = DistributiveOmit<ScoringTask, "ipDatasetDir">;

/** The scoring threads' entry, beside this module (threadEntry). */
const WORKER_ENTRY = threadEntry("../pool/scoring-worker.js", import.meta.url);

export interface PoolOptions {
  /** IP dataset build directory the threads open first; see setIpDatasetDir. */
  ipDatasetDir: string;
  threads: number;
  /** Tasks allowed to wait; beyond it run() rejects with 503 OVERLOADED. */
  maxQueue: number;
  retryAfterSeconds: number;
  /** Tasks handed to a thread before it finished the previous one; default TASKS_PER_THREAD. */
  tasksPerThread?: number;
}

/**
 * Tasks a thread holds at once (piscina's concurrentTasksPerWorker). Tasks are synchronous, so a
 * thread still runs them one after another; what this changes is who waits. With 1, a thread
 * that finished a task idles until the front, busy parsing requests, gets round to handing it
 * the next; with a few in its inbox it goes straight on. POST /v1/check with the content model on
 * the pool, ratio to hello world in A/B bench runs (wrk / autocannon): 0.07 / 0.13 with 1, 0.17 /
 * 0.26 with 4 (bench/README.md).
 */
export const TASKS_PER_THREAD = 4;

/** Percentiles of a pool time, in milliseconds. */
export interface PoolTimes {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/**
 * The scoring pool: a fixed number of piscina threads with a bounded queue.
 * A full queue is an expected condition, answered as 503 OVERLOADED with Retry-After.
 */
export class ScoringPool {
  private readonly piscina: Piscina;
  private ipDatasetDir: string;
  readonly threads: number;

  constructor(private readonly opts: PoolOptions) {
    if (!Number.isInteger(opts.threads) || opts.threads < 1) throw new Error(`pool threads must be a positive integer, got ${opts.threads}`);
    if (!Number.isInteger(opts.maxQueue) || opts.maxQueue < 1) throw new Error(`pool maxQueue must be a positive integer, got ${opts.maxQueue}`);
    const perThread = opts.tasksPerThread ?? TASKS_PER_THREAD;
    if (!Number.isInteger(perThread) || perThread < 1) throw new Error(`pool tasksPerThread must be a positive integer, got ${perThread}`);
    const workerData: ScoringWorkerData = { protocolVersion: PROTOCOL_VERSION, ipDatasetDir: opts.ipDatasetDir };
    this.ipDatasetDir = opts.ipDatasetDir;
    this.threads = opts.threads;
    this.piscina = new Piscina({
      filename: WORKER_ENTRY,
      minThreads: opts.threads,
      maxThreads: opts.threads,
      maxQueue: opts.maxQueue,
      idleTimeout: Infinity,
      concurrentTasksPerWorker: perThread,
      workerData,
    });
  }

  /**
   * Queue and timing figures for GET /metrics: tasks waiting, the share of the threads' time spent
   * running tasks, and piscina's histograms of run and wait time (milliseconds).
   */
  stats(): { queued: number; completed: number; utilization: number; runMs: PoolTimes; waitMs: PoolTimes } {
    const p = this.piscina;
    const times = (h: { p50: number; p90: number; p99: number; max: number; mean: number }): PoolTimes => ({ p50: h.p50, p90: h.p90, p99: h.p99, max: h.max, mean: h.mean });
    return { queued: p.queueSize, completed: p.completed, utilization: p.utilization, runMs: times(p.histogram.runTime), waitMs: times(p.histogram.waitTime) };
  }

  /** Later tasks make each thread switch to this build (hot dataset switch). */
  setIpDatasetDir(dir: string): void {
    this.ipDatasetDir = dir;
  }

  /** Runs one task. Rejects with ApiError OVERLOADED when the queue is full. */
  async run<K extends ScoringTask["kind"]>(task: Extract<TaskInput, { kind: K }>, signal?: AbortSignal): Promise<Extract<ScoringResult, { kind: K }>> {
    try {
      const full = { ...task, ipDatasetDir: this.ipDatasetDir };
      return (await this.piscina.run(full, signal ? { signal } : undefined)) as Extract<ScoringResult, { kind: K }>;
    } catch (err) {
      if (err instanceof Error && err.message === "Task queue is at limit") {
        throw new ApiError("OVERLOADED", "The scoring pool is saturated; retry shortly.", {
          headers: { "retry-after": String(this.opts.retryAfterSeconds) },
        });
      }
      throw err;
    }
  }

  /** A thread's answer to a ping (readiness): its thread id and the IP dataset it has open. */
  ping(): Promise<Extract<ScoringResult, { kind: "ping" }>> {
    return this.run({ kind: "ping" });
  }

  /** Tasks waiting for a thread right now. */
  get queueSize(): number {
    return this.piscina.queueSize;
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}
