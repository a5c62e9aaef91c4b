/**
 * Ships journaled records to the store in journal order, and keeps them when the store cannot
 * take them (FS_STORE=postgres with the database away): they are sent again, with everything
 * journaled meanwhile, until a send succeeds. The journal already made them durable; a kill
 * meanwhile replays them at the next start.
 *
 * Each send says which sequence number it continues (`afterSeq`). The writer refuses a send
 * that does not continue what it applied (a gap: an earlier send failed), so a later batch can
 * never be applied before an earlier one that failed and then be skipped as "already applied".
 */
export type ShipOutcome = "ok" | "retry";

/** Records handed to the store this long ago and not acknowledged make OrderedShipper.behind() say so. */
const BEHIND_AFTER_MS = 1000;

export interface ShipBatch<R> {
  records: R[];
  afterSeq: number;
  upToSeq: number;
}

export class OrderedShipper<R> {
  private sentUpTo: number;
  private inFlight = 0;
  /** Batches refused since the last success, oldest first; with `held`, journaled since. */
  private stash: ShipBatch<R>[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** Called with how many sends failed in a row, for the log. */
  onRetry: ((failures: number, err: string) => void) | undefined;
  private failures = 0;
  /** Batches handed over and not acknowledged yet, oldest first: up to which seq, and when (epoch ms). */
  private unacked: Array<{ upTo: number; at: number }> = [];
  /** Highest sequence number the store acknowledged, and who waits for one. */
  private acked: number;
  private waiters: Array<{ seq: number; done: () => void }> = [];

  constructor(
    private readonly send: (batch: ShipBatch<R>) => Promise<{ outcome: ShipOutcome; reason?: string }>,
    startSeq: number,
    private readonly retryMs: number,
  ) {
    this.sentUpTo = startSeq;
    this.acked = startSeq;
  }

  /** Resolves once the store acknowledged every record up to `seq`, or after `timeoutMs`. */
  whenShipped(seq: number, timeoutMs: number): Promise<void> {
    if (this.acked >= seq) return Promise.resolve();
    return new Promise((resolve) => {
      const w = { seq, done: resolve };
      this.waiters.push(w);
      setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        resolve();
      }, timeoutMs).unref();
    });
  }

  /** Records newly journaled, up to `upToSeq`. */
  ship(records: R[], upToSeq: number): void {
    const batch: ShipBatch<R> = { records, afterSeq: this.sentUpTo, upToSeq };
    this.sentUpTo = upToSeq;
    this.unacked.push({ upTo: upToSeq, at: Date.now() });
    if (this.stash.length > 0) {
      // Shipping is stopped until the stash goes through: keep this one behind it.
      this.stash.push(batch);
      return;
    }
    this.dispatch(batch);
  }

  /** Records waiting for the store to come back. */
  get waiting(): number {
    return this.stash.reduce((n, b) => n + b.records.length, 0);
  }

  /**
   * How far the store is behind this journal, once records handed over BEHIND_AFTER_MS ago or
   * more are still not acknowledged: sequence numbers not acknowledged (records, for a journal
   * numbered one by one) and the age of the oldest (seconds). Null while the store keeps up.
   */
  behind(nowMs = Date.now()): { records: number; seconds: number } | null {
    const oldest = this.unacked[0];
    if (!oldest || nowMs - oldest.at < BEHIND_AFTER_MS) return null;
    return { records: this.sentUpTo - this.acked, seconds: Math.round((nowMs - oldest.at) / 100) / 10 };
  }

  /** Resolves once nothing is in flight (at a clean stop, before the writer's `shutdown`). */
  async drain(timeoutMs = 5000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  }

  private dispatch(batch: ShipBatch<R>): void {
    this.inFlight++;
    void this.send(batch).then(
      (r) => this.settle(batch, r.outcome, r.reason),
      (err: unknown) => this.settle(batch, "retry", String(err)),
    );
  }

  private settle(batch: ShipBatch<R>, outcome: ShipOutcome, reason?: string): void {
    this.inFlight--;
    if (outcome === "ok") {
      this.failures = 0;
      if (batch.upToSeq > this.acked) this.acked = batch.upToSeq;
      while (this.unacked.length > 0 && this.unacked[0]!.upTo <= this.acked) this.unacked.shift();
      if (this.waiters.length > 0) {
        const ready = this.waiters.filter((w) => w.seq <= this.acked);
        this.waiters = this.waiters.filter((w) => w.seq > this.acked);
        for (const w of ready) w.done();
      }
      return;
    }
    this.failures++;
    this.onRetry?.(this.failures, reason ?? "refused");
    this.stash.push(batch);
    this.stash.sort((a, b) => a.afterSeq - b.afterSeq);
    if (!this.timer) this.timer = setTimeout(this.resend, this.retryMs);
  }

  /** Once every send in flight settled: the whole stash as one batch, in order. */
  private resend = (): void => {
    this.timer = null;
    if (this.inFlight > 0) {
      this.timer = setTimeout(this.resend, this.retryMs);
      return;
    }
    const all = this.stash;
    this.stash = [];
    if (all.length === 0) return;
    this.dispatch({ records: all.flatMap((b) => b.records), afterSeq: all[0]!.afterSeq, upToSeq: all[all.length - 1]!.upToSeq });
  };
}
