import { afterEach, describe, expect, it, vi } from "vitest";
import { BodyDeadlines, type PartialBody } from "../../src/front/body-deadline.js";

function body(startedAt: number, received = 0): PartialBody & { received: number; cuts: number } {
  return {
    startedAt,
    received,
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
  it("cuts a body still arriving after the timeout unless it kept the minimum average rate", () => {
    let now = 0;
    const d = new BodyDeadlines(10_000, 1000, () => now);
    const trickle = body(0, 5); // one byte now and then
    const steady = body(0, 0); // 1,000 bytes a second
    const done = body(0, 0);
    for (const b of [trickle, steady, done]) d.track(b);
    now = 10_000;
    steady.received = 10_000;
    expect(d.sweep()).toBe(0); // not past the timeout yet
    d.untrack(done);
    now = 10_001;
    steady.received = 10_001;
    expect(d.sweep()).toBe(1);
    expect([trickle.cuts, steady.cuts, done.cuts]).toEqual([1, 0, 0]);
    expect(d.size).toBe(1);
    now = 20_000;
    steady.received = 19_000; // fell below 1,000 bytes a second on average
    expect(d.sweep()).toBe(1);
    expect(steady.cuts).toBe(1);
    expect(d.size).toBe(0);
    d.close();
  });

  it("runs one timer while bodies are watched, and none when there are none", () => {
    vi.useFakeTimers();
    const d = new BodyDeadlines(1000, 1000);
    const b = body(performance.now());
    d.track(b);
    d.track(body(performance.now(), 0));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1250);
    expect(b.cuts).toBe(1);
    expect(d.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    d.close();
  });

  it("rejects a timeout or a rate that is not positive", () => {
    expect(() => new BodyDeadlines(0, 1)).toThrow();
    expect(() => new BodyDeadlines(1000, 0)).toThrow();
  });
});
