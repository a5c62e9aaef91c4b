import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IntentApplier, overageFor } from "../../src/store/apply.js";
import type { OrgRecord } from "../../src/store/messages.js";
import { openState, type StateDbs } from "../../src/store/state-env.js";

let dir: string;
let dbs: StateDbs;
let applier: IntentApplier;
const org = (id: string, plan: OrgRecord["plan"]): OrgRecord => ({ id, name: id, plan, subscription_status: "active", trial_end: null, created_at: "2026-01-01T00:00:00Z" });
const tx = <T>(fn: () => T): T => dbs.root.transactionSync(fn);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-apply-"));
  dbs = openState(dir, false);
  applier = new IntentApplier(dbs);
});
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("IntentApplier (writer side, real LMDB)", () => {
  it("applies journaled charges once, whatever the replays", () => {
    tx(() => applier.apply({ op: "org.create", org: org("org_free", "free") }));
    const recs = [1, 2, 3].map((seq) => ({ seq, orgId: "org_free", credits: 2, period: "202611" }));
    tx(() => applier.applyCharges(recs));
    tx(() => applier.applyCharges(recs));
    tx(() => applier.applyCharges([...recs, { seq: 4, orgId: "org_free", credits: 1, period: "202611" }]));
    expect(dbs.usage.get("org_free:202611")).toEqual({ used: 7, overage: 0 });
    expect(applier.appliedSeq()).toBe(4);
  });

  it("counts overage only past a paid plan's quota and clamps adjustments at zero", () => {
    tx(() => applier.apply({ op: "org.create", org: org("org_pro", "pro") }));
    tx(() => applier.applyCharges([
      { seq: 10, orgId: "org_pro", credits: 49_999, period: "202611" },
      { seq: 11, orgId: "org_pro", credits: 3, period: "202611" },
    ]));
    expect(dbs.usage.get("org_pro:202611")).toEqual({ used: 50_002, overage: 2 });
    tx(() => applier.applyCharges([{ seq: 12, orgId: "org_pro", credits: -30_000, period: "202611" }]));
    expect(dbs.usage.get("org_pro:202611")).toEqual({ used: 20_002, overage: 0 });
    tx(() => applier.applyCharges([{ seq: 13, orgId: "org_pro", credits: -60_000, period: "202611" }]));
    expect(dbs.usage.get("org_pro:202611")!.used).toBe(0);
  });

  it("refuses duplicates and dangling references", () => {
    expect(tx(() => applier.apply({ op: "org.create", org: org("org_free", "free") }))).toMatchObject({ ok: false, error: "CONFLICT" });
    const key = { id: "key_x", org_id: "org_none", project_id: null, type: "secret" as const, scopes: [], hash: "00", created_at: "", expires_at: null, disabled_at: null };
    expect(tx(() => applier.apply({ op: "key.create", key }))).toMatchObject({ ok: false, error: "NOT_FOUND" });
    expect(tx(() => applier.apply({ op: "key.disable", keyId: "key_none", nowMs: 1 }))).toMatchObject({ ok: false, error: "NOT_FOUND" });
  });

  it("initialises once; a generated token stays, a token from the environment replaces it", () => {
    const init = (hash: string, fromEnv: boolean) =>
      tx(() => applier.apply({ op: "init", adminTokenHash: hash, adminTokenFromEnv: fromEnv, org: org("org_demo", "free"), project: { id: "prj_d", org_id: "org_demo", name: "d", created_at: "" }, keys: [] }));
    expect(init("aa", false)).toMatchObject({ ok: true, created: true, adminTokenHash: "aa" });
    expect(init("bb", false)).toMatchObject({ ok: true, created: false, adminTokenHash: "aa" });
    expect(init("cc", true)).toMatchObject({ ok: true, created: false, adminTokenHash: "cc" });
    expect(init("dd", false)).toMatchObject({ ok: true, created: false, adminTokenHash: "cc" });
  });

  it("overage is what is used beyond a paid plan's quota", () => {
    expect(overageFor(40, 50, false)).toBe(0);
    expect(overageFor(55, 50, false)).toBe(5);
    expect(overageFor(55, 50, true)).toBe(0);
    expect(overageFor(10 ** 9, null, false)).toBe(0);
  });
});
