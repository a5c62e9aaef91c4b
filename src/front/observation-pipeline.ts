/**
 * The observation pipeline of one front thread: the beacon's observations are written to the
 * observation journal before the hit is answered, forwarded in batches every FS_LEDGER_FLUSH_MS
 * and shipped in order to the store writer as pages (and session updates).
 */
import { SHIP_RETRY_MS, type JournalShipping } from "./journal-shipping.js";
import { BatchForwarder } from "../store/front/batch-forwarder.js";
import { OrderedShipper } from "../store/front/shipper.js";
import { ObservationJournal } from "../store/observation-journal.js";
import { groupObservations } from "../store/observation-pages.js";
import { observationSeqs } from "../store/pg/cluster.js";
import type { ObservationRecord } from "../store/records.js";

/** An observation and its journal line, as shipped. */
type Journaled = [ObservationRecord, string];

export interface ObservationPipeline {
  /** Where the beacon's hits service writes observations. */
  journal: ObservationJournal;
  /** Batches journaled observations for the shipper; `flush` hands them over at once. */
  forwarder: BatchForwarder<Journaled>;
  shipper: OrderedShipper<Journaled>;
  /** Highest observation sequence number the writer has applied (the journal backlog metric). */
  applied(): number;
}

/**
 * Opens the observation journal in `journal.dir` after sequence number `journal.seq` and wires it
 * to the writer.
 * @param residue null when this journal is the node's only one; else its number among the journals
 *   of every front thread and node, which interleave in time: observations are then numbered by
 *   time with this residue (distinct across journals) and stored one page each.
 */
export function createObservationPipeline(
  shipping: JournalShipping,
  journal: { dir: string; seq: number },
  flushMs: number,
  residue: number | null,
): ObservationPipeline {
  let applied = journal.seq;
  const pagePerObservation = residue !== null;
  const shipper = new OrderedShipper<Journaled>(
    async (b) => {
      const { pages, sessions, budgets } = groupObservations(
        b.records.map((r) => r[0]),
        b.records.map((r) => r[1]),
        pagePerObservation,
      );
      const ack = await shipping.store.send({
        op: "observations.apply",
        pages,
        sessions,
        budgets,
        upToSeq: b.upToSeq,
        afterSeq: b.afterSeq,
        ...shipping.journalField,
      });
      if (!ack.ok) return shipping.failed("observations", b.upToSeq, ack.message);
      applied = Math.max(applied, b.upToSeq);
      return { outcome: "ok" };
    },
    journal.seq,
    SHIP_RETRY_MS,
  );
  shipping.watch(shipper, "observations");
  const forwarder = new BatchForwarder<Journaled>((batch) => shipper.ship(batch, batch[batch.length - 1]![0].seq), flushMs);
  const observations = new ObservationJournal(journal.dir, journal.seq, (records, lines) => forwarder.add(records.map((r, i) => [r, lines[i]!])));
  observations.onCallbackError = shipping.callbackFailed;
  if (residue !== null) observations.seqAfter = observationSeqs(residue);
  return { journal: observations, forwarder, shipper, applied: () => applied };
}
