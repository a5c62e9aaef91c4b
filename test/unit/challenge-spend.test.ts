import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IntentApplier } from "../../src/store/writer/apply.js";
import { openState, type LmdbStateDbs } from "../../src/store/state-env.js";

let dir: string;
let dbs: LmdbStateDbs;
let applier: IntentApplier;
const tx = <T>(fn: () => T): T => dbs.root.transactionSync(fn);
const later = Date.now() + 600_000;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-challenge-"));
  dbs = openState(dir, false);
  applier = new IntentApplier(dbs);
});
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("challenge.spend (writer side, real LMDB)", () => {
  it("acks created: true for the first spend and false for every replay", () => {
    expect(tx(() => applier.apply({ op: "challenge.spend", id: "n1", expiresAt: later }))).toEqual({ ok: true, created: true });
    expect(tx(() => applier.apply({ op: "challenge.spend", id: "n1", expiresAt: later }))).toEqual({ ok: true, created: false });
  });

  it("lets exactly the first of several spends in one transaction win", () => {
    const acks = tx(() => [1, 2, 3].map(() => applier.apply({ op: "challenge.spend", id: "n2", expiresAt: later })));
    expect(acks.map((a) => a.ok && a.created)).toEqual([true, false, false]);
  });

  it("keeps a spend after the environment is closed and opened again", async () => {
    tx(() => applier.apply({ op: "challenge.spend", id: "n3", expiresAt: later }));
    await dbs.root.close();
    dbs = openState(dir, false);
    applier = new IntentApplier(dbs);
    expect(tx(() => applier.apply({ op: "challenge.spend", id: "n3", expiresAt: later }))).toEqual({ ok: true, created: false });
  });

  it("prunes records expired more than the grace ago, and only those", () => {
    const now = Date.now();
    tx(() => {
      applier.spendChallenge("old", now - 10 * 60_000, now);
      applier.spendChallenge("recent", now - 60_000, now);
      applier.spendChallenge("fresh", now + 60_000, now);
    });
    expect(tx(() => applier.pruneChallenges(now))).toBe(1);
    expect(dbs.challenges.get([now - 10 * 60_000, "old"])).toBeUndefined();
    expect(dbs.challenges.get([now - 60_000, "recent"])).toBe(1);
    expect(dbs.challenges.get([now + 60_000, "fresh"])).toBe(1);
  });
});
