import { afterEach, describe, expect, it, vi } from "vitest";
import { BodyDeadlines, type PartialBody } from "../../src/front/body-deadline.js";

function body(startedAt: number, received = 0): PartialBody & { received: number; cuts: number } {
  return {
    startedAt,
    received,
    windowAt: startedAt,
    windowBytes: 0,
    cuts: 0,
    cut() {
      this.cuts++;
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("BodyDeadlines", () => {
  it("cuts a small body still arriving after the timeout unless it kept the rate over its last window", () => {
    let now = 0;
    const d = new BodyDeadlines(10_000, 1000, 2000, 65_536, () => now);
    const trickle = body(0, 5); // one byte now and then
    const steady = body(0, 0); // 1,000 bytes a second
    const done = body(0, 0);
    for (const b of [trickle, steady, done]) d.track(b);
    for (now = 2000; now <= 10_000; now += 2000) {
      steady.received = now;
      expect(d.sweep()).toBe(0); // not past the timeout yet
    }
    d.untrack(done);
    now = 12_000;
    steady.received = 12_000;
    expect(d.sweep()).toBe(1);
    expect([trickle.cuts, steady.cuts, done.cuts]).toEqual([1, 0, 0]);
    expect(d.size).toBe(1);
    now = 14_000;
    steady.received = 13_000; // its average is still 928 bytes a second, its last window 500
    expect(d.sweep()).toBe(1);
    expect(steady.cuts).toBe(1);
    expect(d.size).toBe(0);
    d.close();
  });

  it("cuts a large body that stalls within two windows, though its average since the headers is high", () => {
    let now = 0;
    const d = new BodyDeadlines(10_000, 16_384, 2000, 65_536, () => now);
    const fast = body(0);
    const small = body(0, 1000); // stalls too, but holds little: it has the timeout
    d.track(fast);
    d.track(small);
    // 200 KiB/s for 5 s, then nothing.
    const at = (ms: number): number => Math.min(ms, 5000) * 200 * 1.024;
    for (now = 250; now <= 5000; now += 250) {
      fast.received = at(now);
      expect(d.sweep()).toBe(0);
    }
    let cutAt = 0;
    for (; now <= 10_000 && cutAt === 0; now += 250) if (d.sweep() > 0) cutAt = now;
    expect(fast.cuts).toBe(1);
    expect(cutAt).toBeGreaterThan(5000);
    expect(cutAt).toBeLessThanOrEqual(5000 + 2 * 2000);
    expect(small.cuts).toBe(0);
    d.close();
  });

  it("keeps a large body that keeps the rate over every window, however long it takes", () => {
    let now = 0;
    const d = new BodyDeadlines(10_000, 16_384, 2000, 65_536, () => now);
    const b = body(0);
    d.track(b);
    for (now = 500; now <= 60_000; now += 500) {
      b.received = now * 17;
      expect(d.sweep()).toBe(0);
    }
    d.close();
  });

  it("runs one timer while bodies are watched, and none when there are none", () => {
    vi.useFakeTimers();
    const d = new BodyDeadlines(1000, 1000, 1000, 65_536);
    const b = body(performance.now());
    d.track(b);
    d.track(body(performance.now(), 0));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(2250);
    expect(b.cuts).toBe(1);
    expect(d.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    d.close();
  });

  it("rejects a timeout, a rate, a window or an allowance that is not positive", () => {
    expect(() => new BodyDeadlines(0, 1, 1, 1)).toThrow();
    expect(() => new BodyDeadlines(1000, 0, 1, 1)).toThrow();
    expect(() => new BodyDeadlines(1000, 1, 0, 1)).toThrow();
    expect(() => new BodyDeadlines(1000, 1, 1, 0)).toThrow();
  });
});
