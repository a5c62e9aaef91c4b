import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHARGE_CODEC } from "../../src/store/charge-journal.js";
import { IDEMPOTENCY_TTL_MS, type OrgRecord, type StoredAnswer } from "../../src/store/records.js";
import { openState, stateTransaction, type LmdbStateDbs } from "../../src/store/state-env.js";
import { IntentApplier } from "../../src/store/writer/apply.js";

/**
 * Issue 25, finding 4: an admin POST's effect and the answer to its Idempotency-Key are written
 * in one transaction of the writer (they used to go apart: the effect through the writer, the
 * answer through the charge journal, so a crash between them let a retry create a second org).
 */

let dir: string;
let dbs: LmdbStateDbs;
let applier: IntentApplier;
const NOW = Date.UTC(2026, 10, 20);
const org = (id: string): OrgRecord => ({ id, name: id, plan: "free", subscription_status: "active", trial_end: null, created_at: "2026-11-20T00:00:00Z" });
const answer = (key: string, body = `{"data":"${key}"}`, created_ms = NOW): StoredAnswer => ({ scope: "admin", key, fingerprint: "fp", status: 201, body, headers: {}, created_ms });
const stored = (key: string) => dbs.idempotency.get(["admin", key]);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-idem-intents-"));
  dbs = openState(dir, false);
  applier = new IntentApplier(dbs);
});
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("an intent's Idempotency-Key answer (writer, real LMDB)", () => {
  it("commits in the same transaction as the effect: both or neither", () => {
    const ack = stateTransaction(dbs, () => applier.apply({ op: "org.create", org: org("org_a"), answer: answer("k1") }));
    expect(ack).toMatchObject({ ok: true });
    expect(dbs.orgs.get("org_a")).toBeDefined();
    expect(stored("k1")).toEqual(answer("k1"));

    // A transaction that aborts after the intent was applied (the process dies, the commit fails) keeps neither.
    expect(() =>
      stateTransaction(dbs, () => {
        applier.apply({ op: "org.create", org: org("org_b"), answer: answer("k2") });
        throw new Error("commit fails");
      }),
    ).toThrow("commit fails");
    applier.reset();
    expect(dbs.orgs.get("org_b")).toBeUndefined();
    expect(stored("k2")).toBeUndefined();
  });

  it("is not stored for a refused operation, and an answered key refuses the operation (ANSWERED) without applying it", () => {
    const key = { id: "key_x", org_id: "org_none", project_id: null, type: "secret" as const, scopes: [], hash: "00", created_at: "", expires_at: null, disabled_at: null };
    expect(stateTransaction(dbs, () => applier.apply({ op: "key.create", key, answer: answer("k3") }))).toMatchObject({ ok: false, error: "NOT_FOUND" });
    expect(stored("k3")).toBeUndefined();

    // Another thread or node answered k1 first: the second create is refused, no second org.
    const again = stateTransaction(dbs, () => applier.apply({ op: "org.create", org: org("org_c"), answer: answer("k1", "other") }));
    expect(again).toMatchObject({ ok: false, error: "ANSWERED" });
    expect(dbs.orgs.get("org_c")).toBeUndefined();
    expect(stored("k1")!.body).toBe(answer("k1").body);
    // An expired answer is no obstacle: the key may be used again.
    const later = answer("k1", "later", NOW + IDEMPOTENCY_TTL_MS + 1);
    expect(stateTransaction(dbs, () => applier.apply({ op: "org.create", org: org("org_d"), answer: later }))).toMatchObject({ ok: true });
    expect(stored("k1")).toEqual(later);
  });

  it("an operator's adjustment carries its answer in its own journal line, and the writer stores both", () => {
    const rec = { seq: 7, orgId: "org_a", credits: -5, period: "202611", adjust: true as const, idem: answer("k4") };
    const line = CHARGE_CODEC.encode(rec);
    expect(line.split("\n")).toHaveLength(1);
    expect(CHARGE_CODEC.decode(line)).toEqual(rec);
    // The older forms still read.
    expect(CHARGE_CODEC.decode("8\torg_a\t-5\t202611\tadj")).toEqual({ seq: 8, orgId: "org_a", credits: -5, period: "202611", adjust: true });
    expect(CHARGE_CODEC.decode(`9\torg_a\t0\t202611\t${JSON.stringify(answer("k5"))}`)).toEqual({ seq: 9, orgId: "org_a", credits: 0, period: "202611", idem: answer("k5") });
    stateTransaction(dbs, () => applier.applyCharges([CHARGE_CODEC.decode(line)!]));
    expect(stored("k4")).toEqual(answer("k4"));
  });
});
