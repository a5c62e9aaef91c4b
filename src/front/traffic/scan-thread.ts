/**
 * The traffic reports and bot-policy replays of one front thread (GET /v1/projects/{id}/traffic,
 * POST /v1/projects/{id}/bot-policy/replay, and the dashboard pages that call them): one at a time
 * per org (a second one meanwhile is refused 429 RATE_LIMITED before anything is read), and their
 * scans run on a thread of their own (scan-worker.ts), started by the first report, so that reading
 * and tallying up to FS_TRAFFIC_SCAN_LIMIT records never holds the thread that answers other orgs.
 */
import { Worker } from "node:worker_threads";
import { ApiError } from "../../shared/errors.js";
import { threadEntry } from "../../shared/thread-entry.js";
import {
  SCAN_PROTOCOL_VERSION,
  type ScanReply,
  type ScanRequest,
  type ScanResult,
  type ScanResultOf,
  type ScanTask,
  type ScanWorkerData,
} from "./scan-messages.js";

/** The scan thread's entry, beside this module (threadEntry). */
const WORKER_ENTRY = threadEntry("./scan-worker.js", import.meta.url);

/** Retry-After of a report refused because the org has one running: most take well under a second. */
export const REPORT_RETRY_SECONDS = 1;

/**
 * What the reports and replays in flight get when the scan thread is lost (it crashed or exited):
 * 503 NOT_READY with Retry-After, never a 500; the next report starts another thread.
 */
function threadLost(cause: Error): ApiError {
  return new ApiError(
    "NOT_READY",
    `The report's scan thread stopped before it answered (${cause.message}); it is started again: retry after ${REPORT_RETRY_SECONDS} s.`,
    {
      headers: { "retry-after": String(REPORT_RETRY_SECONDS) },
    },
  );
}

interface Pending {
  resolve(result: ScanResult): void;
  reject(err: Error): void;
}

export class ReportScans {
  /** Orgs with a report or replay running on this thread. */
  private readonly running = new Set<string>();
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  /** Reports refused since start because the org had one running. */
  refused = 0;
  /** Scan threads lost since start (crashed or exited while in service); each was started again at the next report. */
  lost = 0;

  /**
   * @param data where the scan thread reads the store (LMDB's state directory, or a cluster node's PostgreSQL).
   * @param onLost told when the scan thread is lost (the front logs it)
   */
  constructor(
    private readonly data: Omit<ScanWorkerData, "protocolVersion">,
    private readonly onLost: (err: Error, inFlight: number) => void = () => {},
  ) {}

  /** The running scan thread's handle, or null before the first report and once it is lost (diagnostics and tests). */
  get thread(): Worker | null {
    return this.worker;
  }

  /**
   * Admits the org's report: returns the function that ends it (call it in a `finally`).
   * @throws ApiError RATE_LIMITED, with Retry-After and the RateLimit fields, while the org has one running here
   */
  enter(orgId: string): () => void {
    if (this.running.has(orgId)) {
      this.refused++;
      const wait = REPORT_RETRY_SECONDS;
      throw new ApiError("RATE_LIMITED", `This org already has a traffic report or policy replay running: one at a time per org. Retry after ${wait} s.`, {
        headers: { "retry-after": String(wait), "ratelimit-policy": `"reports";q=1;w=${wait}`, ratelimit: `"reports";r=0;t=${wait}` },
      });
    }
    this.running.add(orgId);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.running.delete(orgId);
    };
  }

  /** Runs one scan on the scan thread (started now if it is not running). */
  run<T extends ScanTask>(task: T): Promise<ScanResultOf<T>> {
    if (this.closed) return Promise.reject(new ApiError("NOT_READY", "The service is stopping."));
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise<ScanResultOf<T>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (r: ScanResult) => void, reject });
      worker.postMessage({ id, task } satisfies ScanRequest);
    });
  }

  /** Scans waiting for the thread's answer (GET /metrics could show it). */
  get inFlight(): number {
    return this.pending.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    if (!w) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000);
      w.on("message", (m: unknown) => {
        if (m === "closed") {
          clearTimeout(timer);
          resolve();
        }
      });
      w.postMessage("close");
    });
    await w.terminate();
    this.fail(new ApiError("NOT_READY", "The service is stopping."));
  }

  private start(): Worker {
    const w = new Worker(WORKER_ENTRY, { workerData: { protocolVersion: SCAN_PROTOCOL_VERSION, ...this.data } satisfies ScanWorkerData });
    // The front's server keeps the process alive; a scan thread left alone must not.
    w.unref();
    w.on("message", (m: ScanReply | "closed") => {
      if (m === "closed") return;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(`scan thread: ${m.message}`));
    });
    const lost = (err: Error) => {
      if (this.worker !== w) return;
      this.worker = null; // the next report starts another
      this.lost++;
      this.onLost(err, this.pending.size);
      this.fail(threadLost(err));
    };
    w.on("error", lost);
    w.on("exit", (code) => lost(new Error(`the scan thread exited (code ${code})`)));
    this.worker = w;
    return w;
  }

  private fail(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}
