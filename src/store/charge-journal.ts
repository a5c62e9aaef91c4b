/**
 * The charge journal: debits, appended by the front thread once per event-loop turn before that
 * turn's charged responses go out (see journal.ts).
 *
 * Why: waiting for the writer thread's LMDB commit put a cross-thread round trip (~1-2 ms on a
 * busy 2-core machine) in front of every metered response and capped GET /v1/ip at ~0.4 of
 * hello-world; one write(2) per turn costs microseconds. See docs/architecture.md, "Durability".
 */
import { join } from "node:path";
import { PERIOD_ID } from "../shared/billing-period.js";
import {
  AppendJournal,
  listJournalSegments,
  pruneJournalSegments,
  readJournalSegment,
  type JournalCodec,
  type Liveness,
} from "./journal.js";
import type { ChargeRecord, CheckHistoryRecord, StoredAnswer } from "./records.js";

export { JournalClosedError, RecordWithdrawnError, truncateTornTail, type Liveness } from "./journal.js";

/**
 * One line per debit: `seq \t orgId \t credits \t period`, then `adj` for an operator's
 * adjustment, then for a request with an Idempotency-Key its stored answer as JSON, then for a
 * check its history record as `h` and JSON (JSON never holds a raw tab or newline), so a debit,
 * its answer and its check's record are durable together.
 */
export const CHARGE_CODEC: JournalCodec<ChargeRecord> = {
  prefix: "charges-",
  name: "charge journal",
  encode: (r) => `${r.seq}\t${r.orgId}\t${r.credits}\t${r.period}${r.adjust ? "\tadj" : ""}${r.idem ? `\t${JSON.stringify(r.idem)}` : ""}${r.history ? `\th${JSON.stringify(r.history)}` : ""}`,
  decode(line) {
    const [seq, orgId, credits, period, ...rest] = line.split("\t");
    const rec: ChargeRecord = { seq: Number(seq), orgId: orgId ?? "", credits: Number(credits), period: period ?? "" };
    if (!Number.isSafeInteger(rec.seq) || !rec.orgId || !Number.isSafeInteger(rec.credits) || !PERIOD_ID.test(rec.period)) return null;
    let i = 0;
    if (rest[i] === "adj") {
      rec.adjust = true;
      i++;
    }
    if (rest[i] !== undefined && rest[i]!.startsWith("{")) {
      const answer = parseStoredAnswer(rest[i]!);
      if (!answer) return null;
      rec.idem = answer;
      i++;
    }
    if (rest[i] !== undefined && rest[i]!.startsWith("h")) {
      const history = parseHistory(rest[i]!.slice(1));
      if (!history) return null;
      rec.history = history;
      i++;
    }
    return i === rest.length ? rec : null;
  },
};

/** A check's history record as journaled (the fields the writer keys it by must be there). */
function parseHistory(text: string): CheckHistoryRecord | null {
  let v: Partial<CheckHistoryRecord>;
  try {
    v = JSON.parse(text) as Partial<CheckHistoryRecord>;
  } catch {
    return null;
  }
  return typeof v === "object" && v !== null && typeof v.org_id === "string" && typeof v.request_id === "string" && Number.isSafeInteger(v.ts) ? (v as CheckHistoryRecord) : null;
}

function parseStoredAnswer(text: string): StoredAnswer | null {
  let v: Partial<StoredAnswer>;
  try {
    v = JSON.parse(text) as Partial<StoredAnswer>;
  } catch {
    return null;
  }
  const ok =
    typeof v === "object" && v !== null &&
    typeof v.scope === "string" && typeof v.key === "string" && typeof v.fingerprint === "string" &&
    Number.isInteger(v.status) && typeof v.body === "string" && typeof v.headers === "object" && v.headers !== null &&
    Number.isSafeInteger(v.created_ms);
  return ok ? (v as StoredAnswer) : null;
}

/** Journal directory under DATA_DIR/state. */
export function journalDirOf(stateDir: string): string {
  return join(stateDir, "journal");
}

/** Front-thread side of the charge journal. */
export class ChargeJournal extends AppendJournal<ChargeRecord> {
  constructor(dir: string, lastSeq: number, onWritten: (records: ChargeRecord[]) => void) {
    super(dir, CHARGE_CODEC, lastSeq, onWritten);
  }

  /**
   * Queues a debit (with the stored answer of an Idempotency-Key, and a check's history record, if any); returns its sequence
   * number. `onWritten` runs once the batch holding it reached the journal file, or with an error
   * when that write failed (nothing of the batch counts then). With `live`, the debit is dropped
   * unwritten if that request has left by then (`onWritten` gets a RecordWithdrawnError).
   * @throws JournalClosedError after close() (the service is stopping): the caller answers 503.
   */
  append(orgId: string, credits: number, period: string, onWritten: (err?: Error) => void, idem?: StoredAnswer, adjust = false, live?: Liveness, history?: CheckHistoryRecord): number {
    const fields: Omit<ChargeRecord, "seq"> = adjust
      ? idem ? { orgId, credits, period, adjust: true as const, idem } : { orgId, credits, period, adjust: true as const }
      : idem ? { orgId, credits, period, idem } : { orgId, credits, period };
    if (history) fields.history = history;
    return this.appendRecord(fields, onWritten, live).seq;
  }
}

/** Charge segments in order, each with the first sequence number its name promises. */
export function listSegments(dir: string): Array<{ path: string; firstSeq: number }> {
  return listJournalSegments(dir, CHARGE_CODEC.prefix);
}

/** Parses a charge segment (a torn final line is ignored; a malformed complete line throws). */
export function readSegment(path: string): ChargeRecord[] {
  return readJournalSegment(path, CHARGE_CODEC);
}

/** Deletes charge segments whose every record is at or below `appliedSeq`; never the newest. */
export function pruneSegments(dir: string, appliedSeq: number): void {
  pruneJournalSegments(dir, CHARGE_CODEC.prefix, appliedSeq);
}
