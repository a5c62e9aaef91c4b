/**
 * Entry of the single writer thread: the only code that opens LMDB state for writing.
 * Group commit: every intent that arrived since the last commit is applied in one transaction,
 * then all of them are acknowledged in one message. An ack therefore means "committed": with
 * lmdb's overlapping sync the commit survives a killed process at once and reaches the disk
 * right after (see README, Durability).
 */
import { parentPort, workerData } from "node:worker_threads";
import { IntentApplier } from "./apply.js";
import { PROTOCOL_VERSION, type Ack, type AckBatch, type IntentBatch, type WriterData, type WriterReady } from "./messages.js";
import { openState } from "./state-env.js";

const data = workerData as WriterData;
if (data.protocolVersion !== PROTOCOL_VERSION) {
  throw new Error(`store writer protocol ${PROTOCOL_VERSION} started with ${data.protocolVersion}`);
}
const port = parentPort;
if (!port) throw new Error("writer-thread must run as a worker thread");

const dbs = openState(data.stateDir, false);
// Create every named database before any reader opens them (lmdb: opening named databases
// from read-only transactions can race with their creation).
dbs.root.transactionSync(() => {
  for (const db of [dbs.orgs, dbs.projects, dbs.keys, dbs.usage, dbs.meta]) db.get("__init__");
  dbs.meta.putSync("schema_version", 1);
});
const applier = new IntentApplier(dbs);

let queue: IntentBatch["items"] = [];
let scheduled = false;

port.on("message", (msg: IntentBatch) => {
  for (const item of msg.items) queue.push(item);
  if (!scheduled) {
    scheduled = true;
    setImmediate(commitQueued);
  }
});

function commitQueued(): void {
  scheduled = false;
  const items = queue;
  queue = [];
  if (items.length === 0) return;
  const acks: AckBatch["items"] = new Array(items.length);
  try {
    dbs.root.transactionSync(() => {
      for (let i = 0; i < items.length; i++) {
        const item = items[i]!;
        acks[i] = { id: item.id, ack: applier.apply(item.intent) };
      }
    });
  } catch (err) {
    // Nothing of this batch was committed: the cached state may hold its effects, so drop it.
    applier.reset();
    const failed: Ack = { ok: false, error: "STORE_FAILED", message: `store write failed: ${(err as Error).message}` };
    for (let i = 0; i < items.length; i++) acks[i] = { id: items[i]!.id, ack: failed };
  }
  const out: AckBatch = { kind: "acks", items: acks };
  port!.postMessage(out);
}

const ready: WriterReady = { kind: "ready", protocolVersion: PROTOCOL_VERSION };
port.postMessage(ready);
