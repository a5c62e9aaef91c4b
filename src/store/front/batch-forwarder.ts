/**
 * Hands journaled records to the writer thread in few messages: at most one every `intervalMs`.
 * The journal already made each record durable; this only bounds how far LMDB trails it, and
 * saves the writer a commit per event-loop turn (see LedgerForwarder for the measurement).
 */
export class BatchForwarder<T> {
  private buffer: T[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly send: (records: T[]) => void,
    private readonly intervalMs: number,
  ) {}

  /** Takes a batch just written to the journal. */
  add(records: T[]): void {
    for (const r of records) this.buffer.push(r);
    if (!this.timer) this.timer = setTimeout(this.flush, this.intervalMs);
  }

  /** Sends what is buffered now (before a read that must see it, and at shutdown). */
  flush = (): void => {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.buffer.length === 0) return;
    const out = this.buffer;
    this.buffer = [];
    this.send(out);
  };
}
