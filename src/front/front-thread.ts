/**
 * Entry of a front thread after the first (FS_FRONT_THREADS > 1): builds the same services as
 * the main thread's front over its own port to the store writer, listens on the same port, and
 * follows main's orders (stop, close). See front.ts.
 */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { ClaimTable } from "./admission/claims.js";
import { SharedQuotaCells } from "./admission/cells.js";
import { frontLogger, startFront, type FrontSetup } from "./front.js";
import { StoreClient } from "../store/front/client.js";

/** What main hands the thread (workerData). */
export interface FrontThreadData {
  setup: Omit<FrontSetup, "cells" | "claims">;
  cells: SharedArrayBuffer;
  claims: SharedArrayBuffer;
  writer: MessagePort;
}

/** main -> thread, and thread -> main. */
export type FrontOrder = { kind: "stop" } | { kind: "close" };
export type FrontReport = { kind: "listening"; port: number } | { kind: "stopped"; chargesWaiting: number } | { kind: "closed" };

const data = workerData as FrontThreadData;
const port = parentPort!;
const log = frontLogger(data.setup.config, data.setup.index);
const store = StoreClient.overPort(data.writer);
const front = await startFront({ ...data.setup, cells: new SharedQuotaCells(data.cells), claims: new ClaimTable(data.claims) }, store, log);
port.postMessage({ kind: "listening", port: front.port } satisfies FrontReport);
port.on("message", (order: FrontOrder) => {
  if (order.kind === "stop") {
    void front.stop().then((r) => port.postMessage({ kind: "stopped", chargesWaiting: r.chargesWaiting } satisfies FrontReport));
  } else {
    void front
      .close()
      .then(() => store.close())
      .then(() => port.postMessage({ kind: "closed" } satisfies FrontReport));
  }
});
