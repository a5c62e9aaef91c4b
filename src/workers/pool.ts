import { join } from "node:path";
import { Piscina } from "piscina";
import { REPO_ROOT } from "../config/index.js";
import { ApiError } from "../http/errors.js";
import { PROTOCOL_VERSION, type ResultOf, type ScoringTask, type ScoringWorkerData } from "./messages.js";

/** Compiled worker entry (threads need JavaScript, also when tests import this from src/). */
const WORKER_ENTRY = join(REPO_ROOT, "dist/src/workers/scoring-worker.js");

export interface PoolOptions {
  dataDir: string;
  threads: number;
  /** Tasks allowed to wait; beyond it run() rejects with 503 OVERLOADED. */
  maxQueue: number;
  retryAfterSeconds: number;
}

/**
 * The scoring pool: a fixed number of piscina threads with a bounded queue.
 * A full queue is an expected condition, answered as 503 OVERLOADED with Retry-After.
 */
export class ScoringPool {
  private readonly piscina: Piscina;
  readonly threads: number;

  constructor(private readonly opts: PoolOptions) {
    if (!Number.isInteger(opts.threads) || opts.threads < 1) throw new Error(`pool threads must be a positive integer, got ${opts.threads}`);
    if (!Number.isInteger(opts.maxQueue) || opts.maxQueue < 1) throw new Error(`pool maxQueue must be a positive integer, got ${opts.maxQueue}`);
    const workerData: ScoringWorkerData = { protocolVersion: PROTOCOL_VERSION, dataDir: opts.dataDir };
    this.threads = opts.threads;
    this.piscina = new Piscina({
      filename: WORKER_ENTRY,
      minThreads: opts.threads,
      maxThreads: opts.threads,
      maxQueue: opts.maxQueue,
      idleTimeout: Infinity,
      workerData,
    });
  }

  /** Runs one task. Rejects with ApiError OVERLOADED when the queue is full. */
  async run<T extends ScoringTask>(task: T, signal?: AbortSignal): Promise<ResultOf<T>> {
    try {
      return (await this.piscina.run(task, signal ? { signal } : undefined)) as ResultOf<T>;
    } catch (err) {
      if (err instanceof Error && err.message === "Task queue is at limit") {
        throw new ApiError("OVERLOADED", "The scoring pool is saturated; retry shortly.", {
          headers: { "retry-after": String(this.opts.retryAfterSeconds) },
        });
      }
      throw err;
    }
  }

  /** True when a thread answers a ping (readiness). */
  async ping(): Promise<boolean> {
    const r = await this.run({ kind: "ping" });
    return r.ok;
  }

  /** Tasks waiting for a thread right now. */
  get queueSize(): number {
    return this.piscina.queueSize;
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}
