/**
 * The deadline of request bodies that arrive in pieces. uWebSockets.js closes a connection only
 * after about 10 s without a byte, so a client sending one byte every few seconds would keep its
 * body (and its connection) open for ever. Here a body still arriving `timeoutMs` after its
 * request's headers is cut unless it has averaged at least `minBytesPerSecond` since then; the
 * caller answers 408 REQUEST_TIMEOUT and closes the connection.
 *
 * Most bodies arrive whole with their headers and are never tracked. The others are checked by
 * one interval timer per thread, running only while some are tracked, rather than a timer each.
 */

/** A body being read that has not arrived whole yet. */
export interface PartialBody {
  /** performance.now() when the request's headers arrived. */
  readonly startedAt: number;
  /** Bytes received so far. */
  readonly received: number;
  /** Gives up on the body: answers 408 and closes the connection. Called once. */
  cut(): void;
}

export class BodyDeadlines {
  private readonly open = new Set<PartialBody>();
  private timer: NodeJS.Timeout | null = null;
  private readonly sweepMs: number;

  /**
   * @param timeoutMs how long any body may take (ms, positive)
   * @param minBytesPerSecond the average rate a body still arriving after `timeoutMs` must keep (positive)
   * @param now the clock, performance.now() by default (tests pass their own and call sweep())
   */
  constructor(
    readonly timeoutMs: number,
    readonly minBytesPerSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(timeoutMs > 0) || !(minBytesPerSecond > 0)) throw new Error(`BodyDeadlines: bad options ${timeoutMs} ms, ${minBytesPerSecond} B/s`);
    // A body is cut at most a quarter of its time (and never more than a second) late.
    this.sweepMs = Math.max(10, Math.min(1000, Math.floor(timeoutMs / 4)));
  }

  /** Watches `body` until untrack(); starts the sweep if it was idle. */
  track(body: PartialBody): void {
    this.open.add(body);
    if (this.timer === null) {
      this.timer = setInterval(this.sweep, this.sweepMs);
      this.timer.unref();
    }
  }

  /** Stops watching `body` (it arrived whole, was refused, or its client left). */
  untrack(body: PartialBody): void {
    this.open.delete(body);
  }

  /** Bodies watched now. */
  get size(): number {
    return this.open.size;
  }

  /** Whether `body` is overdue at `nowMs`. */
  overdue(body: PartialBody, nowMs: number): boolean {
    const elapsed = nowMs - body.startedAt;
    return elapsed > this.timeoutMs && body.received * 1000 < this.minBytesPerSecond * elapsed;
  }

  /** Cuts every overdue body; returns how many. Stops the timer when nothing is left to watch. */
  sweep = (): number => {
    const nowMs = this.now();
    let cut = 0;
    for (const body of this.open) {
      if (!this.overdue(body, nowMs)) continue;
      this.open.delete(body);
      cut++;
      body.cut();
    }
    if (this.open.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
    return cut;
  };

  /** Stops the timer (a thread that ends). */
  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
