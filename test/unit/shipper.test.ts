import { describe, expect, it } from "vitest";
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

describe("OrderedShipper", () => {
  it("keeps batches while the store is away and ships them all, in order and once, when it is back", async () => {
    const store = fakeStore();
    const shipper = new OrderedShipper<number>(store.send, 0, 20);
    let seq = 0;
    const ship = (credits: number) => shipper.ship([credits], ++seq);
    ship(1);
    await shipper.drain();
    store.state.away = true;
    for (let i = 0; i < 10; i++) ship(1);
    await new Promise((r) => setTimeout(r, 30));
    for (let i = 0; i < 5; i++) ship(2);
    expect(shipper.waiting).toBeGreaterThan(0);
    store.state.away = false;
    await shipper.whenShipped(seq, 2000);
    expect(store.state).toMatchObject({ applied: 16, total: 21 });
    expect(shipper.waiting).toBe(0);
  });

  it("whenShipped gives up after its bound", async () => {
    const store = fakeStore();
    store.state.away = true;
    const shipper = new OrderedShipper<number>(store.send, 0, 1000);
    shipper.ship([1], 1);
    const t = Date.now();
    await shipper.whenShipped(1, 50);
    expect(Date.now() - t).toBeLessThan(900);
    expect(store.state.applied).toBe(0);
  });
});
