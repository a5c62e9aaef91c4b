/**
 * The deadline of request bodies that arrive in pieces. uWebSockets.js closes a connection only
 * after about 10 s without a byte, so a client sending one byte every few seconds would keep its
 * body (and its connection) open for ever. Here a body still arriving is judged at the end of
 * each window of `windowMs` since its request's headers, by what it received over that window
 * (not by its average since the headers, which a fast start would keep high long after a stall):
 * below `minBytesPerSecond`, it is cut once it holds more than `unprovenBytes` or is older than
 * `timeoutMs`. So a large body must keep proving its rate, and one that stalls is cut within two
 * windows; a small one has `timeoutMs` (a slow network's), then must keep the rate too. The
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
  /** Kept by BodyDeadlines: performance.now() when the current window began (startedAt at first). */
  windowAt: number;
  /** Kept by BodyDeadlines: `received` when the current window began (0 at first). */
  windowBytes: number;
  /** Gives up on the body: answers 408 and closes the connection. Called once. */
  cut(): void;
}

export class BodyDeadlines {
  private readonly open = new Set<PartialBody>();
  private timer: NodeJS.Timeout | null = null;
  private readonly sweepMs: number;

  /**
   * @param timeoutMs how long a body holding at most `unprovenBytes` may arrive below the rate (ms, positive)
   * @param minBytesPerSecond the rate a body must keep over each window (positive)
   * @param windowMs the window over which the rate is measured (ms, positive)
   * @param unprovenBytes what a body may hold without keeping the rate, until `timeoutMs` (positive)
   * @param now the clock, performance.now() by default (tests pass their own and call sweep())
   */
  constructor(
    readonly timeoutMs: number,
    readonly minBytesPerSecond: number,
    readonly windowMs: number,
    readonly unprovenBytes: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(timeoutMs > 0) || !(minBytesPerSecond > 0) || !(windowMs > 0) || !(unprovenBytes > 0)) {
      throw new Error(`BodyDeadlines: bad options ${timeoutMs} ms, ${minBytesPerSecond} B/s, window ${windowMs} ms, ${unprovenBytes} B`);
    }
    // A body is judged at most a quarter of a window (or of the timeout, and never more than a second) late.
    this.sweepMs = Math.max(10, Math.min(1000, Math.floor(Math.min(timeoutMs, windowMs) / 4)));
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

  /**
   * Whether `body` is overdue at `nowMs`: at the end of a window (at least `windowMs` since the
   * last), it received less than the rate over it and holds more than `unprovenBytes` or is older
   * than `timeoutMs`. Judging a window starts the next one.
   */
  overdue(body: PartialBody, nowMs: number): boolean {
    const span = nowMs - body.windowAt;
    if (span < this.windowMs) return false;
    const slow = (body.received - body.windowBytes) * 1000 < this.minBytesPerSecond * span;
    body.windowAt = nowMs;
    body.windowBytes = body.received;
    return slow && (body.received > this.unprovenBytes || nowMs - body.startedAt > this.timeoutMs);
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
