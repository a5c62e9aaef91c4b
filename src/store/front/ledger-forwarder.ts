import type { ChargeRecord } from "../records.js";

/**
 * Hands journaled debits to the writer thread in few, small messages.
 *
 * The journal already made each debit durable, so the ledger in LMDB may trail it a little. Each
 * writer commit costs ~0.4 ms of CPU, and on a 2-core machine that CPU is taken from the load
 * generator or the front: forwarding every event-loop turn cost a third of a core under load.
 * Debits are therefore summed per org and period and sent at most every `intervalMs`.
 * Negative records (operator adjustments) are kept apart so clamping at zero applies to them alone.
 */
export class LedgerForwarder {
  private buffer: ChargeRecord[] = [];
  private index = new Map<string, ChargeRecord>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly send: (records: ChargeRecord[]) => void,
    private readonly intervalMs: number,
  ) {}

  /** Takes a batch just written to the journal. */
  add(records: ChargeRecord[]): void {
    for (const r of records) {
      if (r.idem || r.adjust || r.history) {
        // Sent as it is: the writer stores its answer or its check's history record with its
        // debit; an adjustment stays one (a cluster does not count it against the node's credit lease).
        this.buffer.push({ ...r });
        continue;
      }
      const k = `${r.orgId}:${r.period}`;
      const agg = this.index.get(k);
      if (r.credits >= 0 && agg && agg.credits >= 0) {
        agg.credits += r.credits;
        agg.seq = r.seq; // the aggregate stands for every record up to this one
        continue;
      }
      const copy = { ...r };
      this.buffer.push(copy);
      if (r.credits >= 0) this.index.set(k, copy);
      else this.index.delete(k);
    }
    if (!this.timer) this.timer = setTimeout(this.flush, this.intervalMs);
  }

  /** Sends what is buffered now (also at shutdown). */
  flush = (): void => {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.buffer.length === 0) return;
    const out = this.buffer;
    this.buffer = [];
    this.index.clear();
    this.send(out);
  };
}
