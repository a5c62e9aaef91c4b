import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../../src/shared/errors.js";
import { QuotaGate, type LeaseSource } from "../../src/front/quota.js";
import { usagePeriod } from "../../src/shared/billing-period.js";
import { SUBSCRIPTION_STATUSES } from "../../src/shared/plans.js";
import { ChargeJournal } from "../../src/store/charge-journal.js";
import { openState, type LmdbStateDbs } from "../../src/store/state-env.js";
import { StoreWait } from "../../src/store/store-wait.js";

/** QuotaGate with a real charge journal and a real (temporary) LMDB ledger holding one free org. */
let dir: string;
let dbs: LmdbStateDbs;
let journal: ChargeJournal;
let gate: QuotaGate;
const NOW = Date.UTC(2026, 10, 20);
const ORG = "org_q";

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-quota-"));
  dbs = openState(join(dir, "state"), false);
  dbs.root.transactionSync(() => {
    dbs.orgs.putSync(ORG, { id: ORG, name: "q", plan: "free", subscription_status: SUBSCRIPTION_STATUSES[0], trial_end: null, created_at: "" });
    dbs.usage.putSync(`${ORG}:${usagePeriod({}, NOW).id}`, { used: 9_990, overage: 0 });
  });
  journal = new ChargeJournal(join(dir, "journal"), 0, () => {});
  gate = new QuotaGate(dbs, journal);
});
afterEach(async () => {
  journal.close();
  await dbs.metersRoot.close();
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

const charged = (credits: number, hold: ReturnType<QuotaGate["hold"]>) =>
  new Promise<void>((resolve, reject) => gate.charge(ORG, credits, NOW, false, (err) => (err ? reject(err) : resolve()), hold));
const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return (err as ApiError).code;
  }
  return undefined;
};

describe("QuotaGate holds (10 credits left on a free plan)", () => {
  it("counts held credits for later admissions; charging a hold adds nothing twice; a release gives it back", async () => {
    const holds = Array.from({ length: 5 }, () => gate.hold(ORG, 2, NOW));
    expect(code(() => gate.hold(ORG, 2, NOW))).toBe("QUOTA_EXCEEDED");
    gate.release(holds[4]!);
    gate.release(holds[4]!); // a second release changes nothing
    const again = gate.hold(ORG, 2, NOW);
    expect(code(() => gate.hold(ORG, 1, NOW))).toBe("QUOTA_EXCEEDED");
    for (const h of [...holds.slice(0, 4), again]) await charged(2, h);
    expect(code(() => gate.hold(ORG, 1, NOW))).toBe("QUOTA_EXCEEDED"); // 10,000 charged
  });

  it("a refusal caused only by other calls' holds says retry in a second; a spent quota says when it resets", () => {
    gate.hold(ORG, 10, NOW);
    try {
      gate.hold(ORG, 1, NOW);
      expect.unreachable();
    } catch (err) {
      expect((err as ApiError).headers).toMatchObject({ "retry-after": "1", ratelimit: expect.stringMatching(/^"monthly";r=0;t=\d+$/) });
      expect((err as ApiError).metadata).toMatchObject({ ratelimit: { remaining: 0 } });
    }
  });

  it("checks only the credits charged beyond the hold", async () => {
    const h = gate.hold(ORG, 9, NOW);
    await expect(charged(11, h)).rejects.toMatchObject({ code: "QUOTA_EXCEEDED" }); // 9 held + 2 more > 10 left
    expect(code(() => gate.hold(ORG, 10, NOW))).toBeUndefined(); // the refused charge gave its hold back
  });

  it("an operator's adjustment does not clamp held credits away", async () => {
    const h = gate.hold(ORG, 4, NOW);
    await gate.adjust(ORG, -20_000, NOW); // usage to 0 (clamped), the hold still stands
    await charged(4, h);
    expect((await gate.adjust(ORG, 0, NOW)).used).toBe(4);
  });

  it("refuses with 503 NOT_READY once the journal is closed (stopping), before any work", () => {
    journal.close();
    expect(code(() => gate.hold(ORG, 1, NOW))).toBe("NOT_READY");
  });
});

describe("QuotaGate with a cluster's credit leases (granted asynchronously)", () => {
  /** A lease source whose grants the test answers by hand. */
  function leasesOf(): { source: LeaseSource; asks: Array<{ need: number; answer: (n: number | Error) => void }>; chain: { id: number } } {
    const asks: Array<{ need: number; answer: (n: number | Error) => void }> = [];
    const chain = { id: 7 };
    const source: LeaseSource = {
      chain: () => chain.id,
      lowWater: 3,
      grant: (_o, _p, _q, need) => new Promise((resolve, reject) => asks.push({ need, answer: (n) => (n instanceof Error ? reject(n) : resolve(n)) })),
    };
    return { source, asks, chain };
  }
  const waitOf = (fn: () => unknown): StoreWait => {
    try {
      fn();
    } catch (err) {
      if (err instanceof StoreWait) return err;
      throw err;
    }
    throw new Error("did not wait");
  };

  it("a call without lease waits for the grant, never blocking; below the low-water mark the lease is topped up ahead", async () => {
    const { source, asks } = leasesOf();
    gate = new QuotaGate(dbs, journal, source);
    const wait = waitOf(() => gate.hold(ORG, 1, NOW));
    expect(asks).toHaveLength(1);
    // A second call meanwhile waits for the same grant.
    expect(waitOf(() => gate.hold(ORG, 1, NOW)).ready).toBe(wait.ready);
    asks[0]!.answer(5);
    await wait.ready;
    const held = [gate.hold(ORG, 1, NOW), gate.hold(ORG, 1, NOW)];
    expect(asks).toHaveLength(1);
    // The third leaves 2, under the low-water mark (3): a grant is asked for without anyone waiting.
    held.push(gate.hold(ORG, 1, NOW));
    expect(asks).toHaveLength(2);
    for (const h of held) await charged(1, h);
    asks[1]!.answer(0); // the quota is full
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 2; i++) await charged(1, gate.hold(ORG, 1, NOW));
    // Spent, and the last grant found no room: refused at once, no new grant for a while.
    expect(code(() => gate.hold(ORG, 1, NOW))).toBe("QUOTA_EXCEEDED");
    expect(asks).toHaveLength(2);
  });

  it("a failed grant answers NOT_READY for a second; a lapsed chain (not renewed in time) voids the lease", async () => {
    const { source, asks } = leasesOf();
    gate = new QuotaGate(dbs, journal, source);
    const wait = waitOf(() => gate.hold(ORG, 1, NOW));
    asks[0]!.answer(new Error("PostgreSQL away"));
    await wait.ready;
    expect(code(() => gate.hold(ORG, 1, NOW))).toBe("NOT_READY");
    expect(asks).toHaveLength(1);
    // Granted in chain 7; the chain lapses: nothing is admitted against it.
    const other = leasesOf();
    gate = new QuotaGate(dbs, journal, other.source);
    const w2 = waitOf(() => gate.hold(ORG, 1, NOW));
    other.asks[0]!.answer(8);
    await w2.ready;
    gate.hold(ORG, 1, NOW);
    other.chain.id = -1;
    expect(code(() => gate.hold(ORG, 1, NOW))).toBe("NOT_READY");
    // A new chain: the old lease counts for nothing, a grant is asked for.
    other.chain.id = 9;
    waitOf(() => gate.hold(ORG, 1, NOW));
    expect(other.asks.at(-1)!.need).toBe(1);
  });

  it("a charge past its hold that must wait for a grant keeps its hold", async () => {
    const { source, asks } = leasesOf();
    gate = new QuotaGate(dbs, journal, source);
    const w = waitOf(() => gate.hold(ORG, 1, NOW));
    asks[0]!.answer(1);
    await w.ready;
    const hold = gate.hold(ORG, 1, NOW)!;
    const more = waitOf(() => gate.charge(ORG, 3, NOW, false, () => {}, hold));
    expect(hold.standing).not.toBeNull();
    asks.at(-1)!.answer(5);
    await more.ready;
    await charged(3, hold);
    expect(hold.standing).toBeNull();
  });
});
