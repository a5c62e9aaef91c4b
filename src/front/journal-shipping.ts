/**
 * What a front thread's journals share to ship their records to the store writer: the store, the
 * journal's id at the writer, and what a refused shipment does. Used by the debit and the
 * observation pipelines (debit-pipeline.ts, observation-pipeline.ts).
 */
import type { Logger } from "../shared/log.js";
import type { StoreClient } from "../store/front/client.js";
import type { OrderedShipper, ShipOutcome } from "../store/front/shipper.js";

/** How long journaled records wait before a failed shipment to the store is tried again. */
export const SHIP_RETRY_MS = 1000;

export interface JournalShipping {
  store: StoreClient;
  /** `{}` for the first thread's journals, `{ journal: "f<n>" }` for the others' (their id at the writer). */
  journalField: { journal?: string };
  /**
   * What a shipment the writer refused does: while stopping, nothing (the records are replayed
   * from the journal at the next start); alone (LMDB) the store is broken, so the process stops;
   * in a cluster, retry until PostgreSQL is back.
   */
  failed(what: string, upToSeq: number, message: string): { outcome: ShipOutcome; reason: string };
  /** Logs a shipper's run of failures: the first, then every 30th. */
  watch(shipper: Pick<OrderedShipper<unknown>, "onRetry">, what: string): void;
  /** Logs a journal callback (the answer after a write) that threw. */
  callbackFailed(err: unknown): void;
}

/**
 * The shipping of front thread `frontIndex`'s journals.
 * @param stopping true once the thread is stopping (its journals are closed and drained).
 */
export function journalShipping(
  store: StoreClient,
  log: Logger,
  opts: { journalId: string; frontIndex: number; clustered: boolean; stopping: () => boolean },
): JournalShipping {
  return {
    store,
    journalField: opts.journalId === "" ? {} : { journal: opts.journalId },
    failed(what, upToSeq, message) {
      // The records are safe in the journal and are replayed at the next start.
      if (opts.stopping()) {
        log.warn(`${what} left for replay at next start`, { up_to_seq: upToSeq, front: opts.frontIndex });
        return { outcome: "ok", reason: message };
      }
      if (!opts.clustered) {
        log.error(`writer could not apply ${what}; stopping`, { message });
        process.exit(1);
      }
      return { outcome: "retry", reason: message };
    },
    watch(shipper, what) {
      shipper.onRetry = (n, reason) => {
        if (n === 1 || n % 30 === 0) log.warn(`${what} wait in the journal for the store`, { failures: n, reason });
      };
    },
    callbackFailed: (err) => log.error("response after charge failed", { err: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  };
}
