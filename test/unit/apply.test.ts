import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IntentApplier, overageFor } from "../../src/store/writer/apply.js";
import type { ObservationRecord, OrgRecord } from "../../src/store/records.js";
import { groupObservations, lineSeq, pageLinesNewestFirst } from "../../src/store/observation-pages.js";
import { openState, stateTransaction, type LmdbStateDbs } from "../../src/store/state-env.js";

let dir: string;
let dbs: LmdbStateDbs;
let applier: IntentApplier;
const org = (id: string, plan: OrgRecord["plan"]): OrgRecord => ({ id, name: id, plan, subscription_status: "active", trial_end: null, created_at: "2026-01-01T00:00:00Z" });
const tx = <T>(fn: () => T): T => stateTransaction(dbs, fn);

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
      tx(() => applier.apply({ op: "init", adminTokenHash: hash, adminTokenFromEnv: fromEnv, org: org("org_demo", "free"), project: { id: "prj_d", org_id: "org_demo", name: "d", created_at: "" }, keys: [], demo: { org_id: "org_demo", project_id: "prj_d", publishable_key: "fs_pub_live_x" } }));
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

  it("stores observation pages once under [project, first seq], merges sessions, and updates projects of their org only", () => {
    const obs = (seq: number, session: string, ts: number, score = 0.1): ObservationRecord => ({
      seq, id: `obs_${seq}`, org_id: "org_free", project_id: "prj_1", session_id: session, kind: "page.view", action: "pageview", ts,
      score, decision: "allow", reasons: [], ua: { browser: null, os: null, device: null, bot_kind: null, bot_name: null },
      bot_id: null, bot_operator: null, bot_verified: null, policy: null, ip: null, country: null, page: null, fingerprint: null, token_valid: true, tells: [],
    });
    const line = (o: ObservationRecord) => `${JSON.stringify(o)}\n`;
    const first = [obs(1, "s_a", 100), obs(2, "s_a", 200, 0.9), obs(3, "s_b", 150)];
    const g = groupObservations(first, first.map(line));
    tx(() => applier.apply({ op: "observations.apply", pages: g.pages, sessions: g.sessions, upToSeq: 3 }));
    tx(() => applier.apply({ op: "observations.apply", pages: g.pages, sessions: g.sessions, upToSeq: 3 })); // a resend stores nothing twice
    // A replay of the journal (records 1-4, of which 1-3 are stored) stores only 4.
    const replay = [...first, obs(4, "s_a", 300)];
    tx(() => applier.applyObservations(replay, replay.map(line)));
    expect(applier.appliedObservationSeq()).toBe(4);
    const stored = [...dbs.observations.getRange({ start: ["prj_1", 0], end: ["prj_1", Number.MAX_SAFE_INTEGER] })];
    expect(stored.map((e) => e.key)).toEqual([["prj_1", 1], ["prj_1", 4]]);
    expect(stored.flatMap((e) => pageLinesNewestFirst(e.value).map(lineSeq))).toEqual([3, 2, 1, 4]);
    expect(dbs.sessions.get(["prj_1", "s_a"])).toMatchObject({ first_seen: 100, last_seen: 300, observation_count: 3, last: { id: "obs_4" } });
    expect(dbs.sessions.get(["prj_1", "s_b"])).toMatchObject({ observation_count: 1, last: { id: "obs_3" } });

    tx(() => applier.apply({ op: "project.create", project: { id: "prj_1", org_id: "org_free", name: "p", created_at: "" } }));
    const other = tx(() => applier.apply({ op: "project.update", orgId: "org_pro", projectId: "prj_1", patch: { allowed_origins: ["*"] } }));
    expect(other).toMatchObject({ ok: false, error: "NOT_FOUND" });
    const mine = tx(() => applier.apply({ op: "project.update", orgId: "org_free", projectId: "prj_1", patch: { allowed_origins: ["https://a.test"] } }));
    expect(mine).toMatchObject({ ok: true, project: { allowed_origins: ["https://a.test"], name: "p" } });
  });

  it("secret.ensure keeps the first value; demo.get answers what the first start's init stored", () => {
    expect(tx(() => applier.apply({ op: "secret.ensure", name: "beacon_secret", value: "one" }))).toEqual({ ok: true, value: "one" });
    expect(tx(() => applier.apply({ op: "secret.ensure", name: "beacon_secret", value: "two" }))).toEqual({ ok: true, value: "one" });
    expect(tx(() => applier.apply({ op: "secret.ensure", name: "identifier_secret", value: "three" }))).toEqual({ ok: true, value: "three" });
    expect(tx(() => applier.apply({ op: "demo.get" }))).toMatchObject({ ok: true, demo: { org_id: expect.any(String), project_id: expect.any(String) } });
  });

  it("prunes observation pages and sessions past the retention, keeps recent ones", () => {
    const obs = (seq: number, project: string, session: string, ts: number): ObservationRecord => ({
      seq, id: `obs_p${seq}`, org_id: "org_free", project_id: project, session_id: session, kind: "page.view", action: "pageview", ts,
      score: 0.1, decision: "allow", reasons: [], ua: { browser: null, os: null, device: null, bot_kind: null, bot_name: null },
      bot_id: null, bot_operator: null, bot_verified: null, policy: null, ip: null, country: null, page: null, fingerprint: null, token_valid: true, tells: [],
    });
    const DAY = 86_400_000;
    const now = 1_900_000_000_000;
    const line = (o: ObservationRecord) => `${JSON.stringify(o)}\n`;
    const old = [obs(101, "prj_r", "s_old", now - 40 * DAY)];
    const fresh = [obs(102, "prj_r", "s_new", now - DAY)];
    for (const batch of [old, fresh]) {
      const g = groupObservations(batch, batch.map(line));
      tx(() => applier.apply({ op: "observations.apply", pages: g.pages, sessions: g.sessions, upToSeq: batch[0]!.seq }));
    }
    let out = { removed: 0, more: true };
    let total = 0;
    while (out.more || out.removed > 0) {
      out = tx(() => applier.pruneObservations(now, 30 * DAY, 1));
      total += out.removed;
      if (!out.more && out.removed === 0) break;
    }
    expect(total).toBeGreaterThanOrEqual(2); // at least this test's old page and session (the store is shared with earlier tests)
    expect([...dbs.observations.getRange({ start: ["prj_r", 0], end: ["prj_r", Number.MAX_SAFE_INTEGER] })].map((e) => e.key[1])).toEqual([102]);
    expect(dbs.sessions.get(["prj_r", "s_old"])).toBeUndefined();
    expect(dbs.sessions.get(["prj_r", "s_new"])).toBeDefined();
    expect(dbs.sessionProjects.get("s_old")).toBeUndefined();
  });

  it("announces a blocked account of a test key with livemode false, apart from a live block of the same account id", () => {
    tx(() => applier.apply({ op: "org.create", org: org("org_hooks", "free") }));
    const endpoint = { id: "we_mode", org_id: "org_hooks", url: "https://hooks.example.com/x", events: ["account.blocked" as const], enabled: true, secret: "whsec_x", previous_secrets: [], created_at: "2026-11-01T00:00:00Z", pending: 0 };
    tx(() => applier.apply({ op: "webhook.create", endpoint }));
    const block = (livemode: boolean) =>
      tx(() => applier.apply({ op: "webhook.blocked", orgId: "org_hooks", projectId: "prj_m", type: "account.blocked", subject: "user_42", reasons: ["r"], livemode, nowMs: Date.UTC(2026, 10, 5) }));
    expect(block(false)).toEqual({ ok: true, written: 1 });
    expect(block(false)).toEqual({ ok: true, written: 0 });
    expect(block(true)).toEqual({ ok: true, written: 1 });
    const payloads = [...dbs.webhookOutbox.getRange({ start: ["we_mode"], end: ["we_mode", Number.MAX_SAFE_INTEGER] })].map((e) => JSON.parse(e.value.payload));
    expect(payloads.map((p) => [p.data.account_id, p.data.livemode])).toEqual([
      ["user_42", false],
      ["user_42", true],
    ]);
  });
});
