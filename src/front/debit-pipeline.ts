/**
 * The debit pipeline of one front thread: a metered call's charge is written to the charge
 * journal before the call is answered (durable from then on), forwarded in batches every
 * FS_LEDGER_FLUSH_MS, and shipped in order to the store writer; an Idempotency-Key's answer,
 * journaled with its charge, is kept by this thread until the writer has applied it.
 */
import type { ClaimTable } from "./admission/claims.js";
import { IdempotencyKeys } from "./idempotency.js";
import { SHIP_RETRY_MS, type JournalShipping } from "./journal-shipping.js";
import { ChargeJournal } from "../store/charge-journal.js";
import { LedgerForwarder } from "../store/front/ledger-forwarder.js";
import { OrderedShipper } from "../store/front/shipper.js";
import type { ChargeRecord } from "../store/records.js";

export interface DebitPipeline {
  /** Where the router and the quota write charges (and Idempotency-Keys' answers). */
  journal: ChargeJournal;
  /** Batches journaled charges for the shipper; `flush` hands them over at once. */
  forwarder: LedgerForwarder;
  /** Ships the batches to the writer in journal order, retrying refused ones. */
  shipper: OrderedShipper<ChargeRecord>;
  idempotency: IdempotencyKeys;
  /** Highest charge sequence number the writer has applied (the journal backlog metric). */
  applied(): number;
}

/**
 * Opens the charge journal in `journal.dir` after sequence number `journal.seq` (what the writer
 * has applied) and wires it to the writer.
 * @param idempotencyDbs where stored Idempotency-Key answers are read (LMDB's view, or a cluster's records).
 * @param claims with several front threads, the table of keys running on any of them.
 */
export function createDebitPipeline(
  shipping: JournalShipping,
  journal: { dir: string; seq: number },
  flushMs: number,
  idempotencyDbs: ConstructorParameters<typeof IdempotencyKeys>[0],
  claims: ClaimTable | null,
): DebitPipeline {
  let applied = journal.seq;
  const shipper = new OrderedShipper<ChargeRecord>(
    async (b) => {
      const ack = await shipping.store.send({ op: "charges.apply", records: b.records, upToSeq: b.upToSeq, afterSeq: b.afterSeq, ...shipping.journalField });
      if (!ack.ok) return shipping.failed("charges", b.upToSeq, ack.message);
      applied = Math.max(applied, b.upToSeq);
      idempotency.applied(b.upToSeq);
      return { outcome: "ok" };
    },
    journal.seq,
    SHIP_RETRY_MS,
  );
  shipping.watch(shipper, "charges");
  const forwarder = new LedgerForwarder(
    (records) =>
      shipper.ship(
        records,
        records.reduce((m, r) => Math.max(m, r.seq), 0),
      ),
    flushMs,
  );
  const charges = new ChargeJournal(journal.dir, journal.seq, (records) => forwarder.add(records));
  const idempotency = new IdempotencyKeys(idempotencyDbs, charges, claims);
  charges.onCallbackError = shipping.callbackFailed;
  return { journal: charges, forwarder, shipper, idempotency, applied: () => applied };
}
