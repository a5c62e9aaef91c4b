/**
 * Entry of a front thread's scan thread (scan-thread.ts starts it): runs the traffic reports and
 * bot-policy replays (scans.ts) over its own read view of the store, LMDB's state environment
 * opened read-only or, on a cluster node, its own PostgreSQL connection, so that neither the
 * reading nor the parsing and tallying happens on the thread that answers other calls. Scans of
 * several orgs take turns (they yield every few thousand records).
 */
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { openIpDatasetDir, type IpDataset } from "../../datasets/ip-dataset.js";
import { poolReader } from "../../store/pg/front-records.js";
import { PgPool } from "../../store/pg/pool.js";
import { localReader, type StoreReader } from "../../store/reader.js";
import { openState } from "../../store/state-env.js";
import { SCAN_PROTOCOL_VERSION, type ScanReply, type ScanRequest, type ScanResult, type ScanTask, type ScanWorkerData } from "./scan-messages.js";
import { networkOf, replayScan, trafficScan } from "./scans.js";

const data = workerData as ScanWorkerData;
if (data.protocolVersion !== SCAN_PROTOCOL_VERSION) throw new Error(`scan worker protocol ${SCAN_PROTOCOL_VERSION} started with ${data.protocolVersion}`);
const port = parentPort!;

/**
 * Reports are background work: this thread yields the cores to the front threads (and the
 * writer) when they have work. On Linux a thread has its own nice value and setpriority(0) sets
 * the calling thread's only; elsewhere it may apply to the process, so it is left alone there.
 */
const SCAN_THREAD_NICE = 19;
if (process.platform === "linux") {
  try {
    setPriority(SCAN_THREAD_NICE);
  } catch {
    // Not permitted (a sandbox): the thread runs at the process's priority.
  }
}

const pg = data.pg ? new PgPool({ url: data.pg.url, timeoutMs: data.pg.timeoutMs, name: data.pg.name }, 1) : null;
const local = pg ? null : openState(data.stateDir, true);
const reads: StoreReader = pg ? poolReader(pg) : localReader(local!);

/** The IP dataset builds open here, with the scans using each: one is closed once a switch left it unused. */
const datasets = new Map<string, { dataset: IpDataset; users: number }>();
let currentDir = "";

function takeDataset(dir: string): IpDataset {
  let d = datasets.get(dir);
  if (!d) {
    d = { dataset: openIpDatasetDir(dir), users: 0 };
    datasets.set(dir, d);
  }
  currentDir = dir;
  d.users++;
  return d.dataset;
}

function giveBack(dir: string): void {
  const d = datasets.get(dir)!;
  if (--d.users === 0 && dir !== currentDir) {
    d.dataset.close();
    datasets.delete(dir);
  }
}

async function run(task: ScanTask): Promise<ScanResult> {
  // The front had the writer commit everything the report must see: read from the latest commit.
  local?.root.resetReadTxn();
  if (task.kind === "replay") return replayScan(reads, task);
  const dataset = takeDataset(task.ipDatasetDir);
  try {
    return await trafficScan(reads, networkOf(dataset), task);
  } finally {
    giveBack(task.ipDatasetDir);
  }
}

port.on("message", (msg: ScanRequest | "close") => {
  if (msg === "close") {
    // The front terminates the thread once its connection is closed (LMDB's view needs no closing).
    void (pg?.close() ?? Promise.resolve()).finally(() => port.postMessage("closed"));
    return;
  }
  run(msg.task).then(
    (result) => port.postMessage({ id: msg.id, ok: true, result } satisfies ScanReply),
    (err: unknown) => port.postMessage({ id: msg.id, ok: false, message: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies ScanReply),
  );
});
