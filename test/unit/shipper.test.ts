import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OrderedShipper, type ShipBatch } from "../../src/store/front/shipper.js";

/** A store that applies batches like the writer: skips what it has, refuses a gap, may be away. */
function fakeStore() {
  const state = { applied: 0, total: 0, away: false };
  const send = async (b: ShipBatch<number>) => {
    await new Promise((r) => setTimeout(r, 1));
    if (state.away) return { outcome: "retry" as const, reason: "away" };
    if (b.afterSeq > state.applied) return { outcome: "retry" as const, reason: "gap" };
    if (b.upToSeq <= state.applied) return { outcome: "ok" as const };
    state.total += b.records.reduce((n, x) => n + x, 0);
    state.applied = b.upToSeq;
    return { outcome: "ok" as const };
  };
  return { state, send };
}

/** Settles once `p` did, or rejects: it must have settled while the fake clock was moved. */
async function settled(p: Promise<void>): Promise<void> {
  let done = false;
  void p.then(() => (done = true));
  await vi.advanceTimersByTimeAsync(0);
  expect(done).toBe(true);
}

// The shipper's retry timer and the store's delay run on a fake clock: each step below happens
// at a known time, whatever the machine's load (a real 30 ms sleep raced the 20 ms retry).
describe("OrderedShipper", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("keeps batches while the store is away and ships them all, in order and once, when it is back", async () => {
    const store = fakeStore();
    const retryMs = 20;
    const shipper = new OrderedShipper<number>(store.send, 0, retryMs);
    let seq = 0;
    const ship = (credits: number) => shipper.ship([credits], ++seq);
    ship(1);
    await vi.advanceTimersByTimeAsync(1);
    await settled(shipper.drain());
    store.state.away = true;
    for (let i = 0; i < 10; i++) ship(1);
    await vi.advanceTimersByTimeAsync(1); // the ten sends are refused: stashed, a retry timer set
    expect(shipper.waiting).toBe(10);
    for (let i = 0; i < 5; i++) ship(2); // behind the stash, not sent
    expect(shipper.waiting).toBe(15);
    await vi.advanceTimersByTimeAsync(retryMs + 1); // one retry of all fifteen, refused again
    expect(shipper.waiting).toBe(15);
    expect(store.state.applied).toBe(1);
    store.state.away = false;
    const shipped = shipper.whenShipped(seq, 2000);
    await vi.advanceTimersByTimeAsync(retryMs + 1);
    await settled(shipped);
    expect(store.state).toMatchObject({ applied: 16, total: 21 });
    expect(shipper.waiting).toBe(0);
  });

  it("whenShipped gives up after its bound", async () => {
    const store = fakeStore();
    store.state.away = true;
    const shipper = new OrderedShipper<number>(store.send, 0, 1000);
    shipper.ship([1], 1);
    const shipped = shipper.whenShipped(1, 50);
    await vi.advanceTimersByTimeAsync(49);
    let done = false;
    void shipped.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await settled(shipped);
    expect(store.state.applied).toBe(0);
  });
});
