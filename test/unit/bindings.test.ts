import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BindingIndex } from "../../src/store/writer/bindings.js";
import { openState, stateTransaction, type LmdbStateDbs } from "../../src/store/state-env.js";
import type { MeterRequest, ResolveCounts, ResolveRequest } from "../../src/store/records.js";

// Each test gets its own LMDB environment (prune scans every org, so tests must not share one).
let dir: string;
let dbs: LmdbStateDbs;
let idx: BindingIndex;
const T0 = 1_800_000_000_000;
const ORG = "org_a";
const tx = <T>(fn: () => T): T => stateTransaction(dbs, fn);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-bindings-"));
  dbs = openState(dir, false);
  idx = new BindingIndex(dbs);
});
afterEach(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

type R = Partial<ResolveRequest> & { user: string };
const resolveWith = (index: BindingIndex, r: R): ResolveCounts =>
  tx(() => index.resolve({ orgId: ORG, sharedNetwork: false, nowMs: T0, ...r }));
const resolve = (r: R): ResolveCounts => resolveWith(idx, r);
type M = Partial<MeterRequest>;
const meterWith = (index: BindingIndex, m: M) =>
  tx(() => index.meter({ orgId: ORG, resource: "login", max: 3, windowMs: 60_000, cost: 1, nowMs: T0, ...m }));
const meter = (m: M) => meterWith(idx, m);

/** Recounts `bindings` per [org, kind, value] and compares with `bindingKeys` (counts, and reps that are bound). */
function expectKeysConsistent(): void {
  const counted = new Map<string, number>();
  for (const { key } of dbs.bindings.getRange()) {
    const k = JSON.stringify([key[0], key[1], key[2]]);
    counted.set(k, (counted.get(k) ?? 0) + 1);
  }
  const stored = new Map<string, number>();
  for (const { key, value } of dbs.bindingKeys.getRange()) stored.set(JSON.stringify(key), value.count);
  expect(stored).toEqual(counted);
}

const zero = { accounts_sharing_session: 0, accounts_sharing_fingerprint: 0, accounts_sharing_ip: 0, accounts_sharing_prefix: 0 };

describe("BindingIndex.resolve: counts", () => {
  it("counts distinct other accounts per kind; the same account twice counts once; orgs are isolated", () => {
    const keys = { session: "s1", fingerprint: "f1", ip: "i1", prefix: "p1" };
    expect(resolve({ user: "u1", ...keys })).toEqual({ ...zero, linked_emails: 0, linked_accounts: 0, new_account: true });
    expect(resolve({ user: "u1", ...keys, nowMs: T0 + 1 })).toMatchObject({ ...zero, new_account: false });
    const one = { accounts_sharing_session: 1, accounts_sharing_fingerprint: 1, accounts_sharing_ip: 1, accounts_sharing_prefix: 1 };
    expect(resolve({ user: "u2", ...keys })).toMatchObject({ ...one, new_account: true, linked_accounts: 1 });
    expect(resolve({ user: "u2", ...keys })).toMatchObject({ ...one, new_account: false });
    expect(resolve({ user: "u1", ...keys })).toMatchObject(one);
    // Only some keys in common.
    expect(resolve({ user: "u3", session: "s3", fingerprint: "f1", ip: "i3", prefix: "p1" })).toEqual({
      accounts_sharing_session: 0,
      accounts_sharing_fingerprint: 2,
      accounts_sharing_ip: 0,
      accounts_sharing_prefix: 2,
      linked_emails: 0,
      linked_accounts: 2,
      new_account: true,
    });
    // A key absent from the request counts 0 and binds nothing.
    expect(resolve({ user: "u4", session: "s1" })).toEqual({ ...zero, accounts_sharing_session: 2, linked_emails: 0, linked_accounts: 3, new_account: true });
    expect(dbs.bindingKeys.get([ORG, "session", "s1"])?.count).toBe(3);
    expect(dbs.bindingKeys.get([ORG, "fingerprint", "f1"])?.count).toBe(3);
    // Another org with the very same hashed values (and account ids) sees none of them.
    const other = tx(() => idx.resolve({ orgId: "org_b", user: "u1", ...keys, sharedNetwork: false, nowMs: T0 }));
    expect(other).toEqual({ ...zero, linked_emails: 0, linked_accounts: 0, new_account: true });
    expect(tx(() => idx.resolve({ orgId: "org_b", user: "u9", ...keys, sharedNetwork: false, nowMs: T0 }))).toMatchObject({ ...one, linked_accounts: 1 });
    // ...and org_a is untouched by org_b.
    expect(resolve({ user: "u5", session: "s1" }).accounts_sharing_session).toBe(3);
    expectKeysConsistent();
  });

  it("linked_emails: other emails seen on the session (all of them when the request has no email)", () => {
    expect(resolve({ user: "u1", session: "s1", email: "e1" }).linked_emails).toBe(0);
    expect(resolve({ user: "u1", session: "s1", email: "e2" }).linked_emails).toBe(1);
    expect(resolve({ user: "u1", session: "s1", email: "e1" }).linked_emails).toBe(1); // e1 again: not counted twice
    expect(resolve({ user: "u2", session: "s1", email: "e3" }).linked_emails).toBe(2);
    expect(resolve({ user: "u1", session: "s1" }).linked_emails).toBe(3);
    // Per session: e1 on another session is alone there.
    expect(resolve({ user: "u1", session: "s2", email: "e1" }).linked_emails).toBe(0);
    expect(resolve({ user: "u3", session: "s_none" }).linked_emails).toBe(0);
    // No session: nothing to count.
    expect(resolve({ user: "u1", email: "e9" }).linked_emails).toBe(0);
    expectKeysConsistent();
  });

  it("shared-network IPs and prefixes are counted but link no accounts", () => {
    expect(resolve({ user: "a", ip: "cgnat", prefix: "p", sharedNetwork: true })).toMatchObject({ accounts_sharing_ip: 0, linked_accounts: 0 });
    expect(resolve({ user: "b", ip: "cgnat", prefix: "p", sharedNetwork: true })).toMatchObject({ accounts_sharing_ip: 1, accounts_sharing_prefix: 1, linked_accounts: 0 });
    expect(resolve({ user: "c", ip: "cgnat", prefix: "p", sharedNetwork: true })).toMatchObject({ accounts_sharing_ip: 2, accounts_sharing_prefix: 2, linked_accounts: 0 });
    // Separate budgets.
    expect(meter({ user: "a", max: 1 }).allowed).toBe(true);
    expect(meter({ user: "b", max: 1 })).toMatchObject({ allowed: true, linked_identities: 0 });
    // A home IP (not shared) links.
    expect(resolve({ user: "d", ip: "home", sharedNetwork: false }).linked_accounts).toBe(0);
    expect(resolve({ user: "e", ip: "home", sharedNetwork: false })).toMatchObject({ accounts_sharing_ip: 1, linked_accounts: 1 });
  });
});

describe("BindingIndex.resolve: linking (union-find)", () => {
  it("links accounts sharing a session, fingerprint or email, transitively through different keys", () => {
    expect(resolve({ user: "a", session: "s1" }).linked_accounts).toBe(0);
    expect(resolve({ user: "b", session: "s1", fingerprint: "f1" }).linked_accounts).toBe(1);
    expect(resolve({ user: "c", fingerprint: "f1" }).linked_accounts).toBe(2); // c-b by fingerprint, b-a by session
    expect(resolve({ user: "d", email: "e1" }).linked_accounts).toBe(0);
    expect(resolve({ user: "e", email: "e1" }).linked_accounts).toBe(1);
    // f joins both clusters: {a,b,c} and {d,e}.
    expect(resolve({ user: "f", session: "s1", email: "e1" }).linked_accounts).toBe(5);
    for (const u of ["a", "b", "c", "d", "e", "f"]) expect(resolve({ user: u }).linked_accounts).toBe(5);
    expect(resolve({ user: "g", session: "s_other" }).linked_accounts).toBe(0);
    // One root for all six.
    const roots = new Set(["a", "b", "c", "d", "e", "f"].map((u) => meter({ user: u, resource: `probe`, max: 100 }).linked_identities));
    expect(roots).toEqual(new Set([5]));
  });

  it("a long chain (each account shares a session with the next) ends in one cluster of the right size", () => {
    const n = 40;
    for (let i = 0; i < n; i++) {
      const r = resolve({ user: `u${i}`, session: `s${i}`, fingerprint: i > 0 ? `f${i - 1}` : undefined });
      resolve({ user: `u${i}`, fingerprint: `f${i}` });
      expect(r.linked_accounts).toBe(i);
    }
    expect(resolve({ user: "u0" }).linked_accounts).toBe(n - 1);
    expect(resolve({ user: `u${n - 1}` }).linked_accounts).toBe(n - 1);
    // Two big clusters merge: sizes add up.
    // (9 accounts on one session: with the bridge it has 10, still within the linking cap.)
    for (let i = 0; i < 9; i++) resolve({ user: `v${i}`, session: "sv" });
    expect(resolve({ user: "v0" }).linked_accounts).toBe(8);
    expect(resolve({ user: "bridge", session: "sv", fingerprint: "f7" }).linked_accounts).toBe(n + 9);
    expect(meter({ user: "u20" }).linked_identities).toBe(n + 9);
  });
});

describe("BindingIndex.meter: sliding window", () => {
  it("allows up to max, throttles beyond, frees units as entries leave the window", () => {
    const W = 1000;
    const m = (dt: number, extra: M = {}) => meter({ user: "u", windowMs: W, nowMs: T0 + dt, ...extra });
    expect(m(0)).toEqual({ allowed: true, count: 1, linked_identities: 0, budget: "account", retry_at: null });
    expect(m(100)).toMatchObject({ allowed: true, count: 2 });
    expect(m(200)).toMatchObject({ allowed: true, count: 3 });
    const denied = m(300);
    expect(denied).toMatchObject({ allowed: false, count: 3 });
    // The first entry (at T0) frees a unit once T0 is out of (now - W, now], i.e. from T0 + W.
    expect(denied.retry_at === T0 + W || denied.retry_at === T0 + W + 1).toBe(true);
    expect(m(W - 1)).toMatchObject({ allowed: false, count: 3 }); // T0 still inside
    expect(m(denied.retry_at! - T0)).toMatchObject({ allowed: true, count: 3 }); // at retry_at it fits
    // Throttled requests take no units: long after, the window is empty again.
    expect(m(10 * W)).toMatchObject({ allowed: true, count: 1 });
    // Resources are separate budgets.
    expect(m(10 * W, { resource: "signup" })).toMatchObject({ allowed: true, count: 1 });
  });

  it("counts cost units, and retry_at waits for enough of them to leave", () => {
    const W = 1000;
    const m = (dt: number, cost: number) => meter({ user: "u", max: 10, windowMs: W, cost, nowMs: T0 + dt });
    expect(m(0, 4)).toMatchObject({ allowed: true, count: 4 });
    expect(m(10, 4)).toMatchObject({ allowed: true, count: 8 });
    const a = m(20, 4); // 8 + 4 > 10; the entry at T0 (4 units) is enough
    expect(a).toMatchObject({ allowed: false, count: 8 });
    expect(a.retry_at! - (T0 + W)).toBeGreaterThanOrEqual(0);
    expect(a.retry_at! - (T0 + W)).toBeLessThanOrEqual(1);
    expect(m(30, 2)).toMatchObject({ allowed: true, count: 10 }); // exactly max fits
    const b = m(40, 7); // full: needs 7 free, the entries at T0 and T0+10 give 8
    expect(b).toMatchObject({ allowed: false, count: 10 });
    expect(b.retry_at! - (T0 + 10 + W)).toBeGreaterThanOrEqual(0);
    expect(b.retry_at! - (T0 + 10 + W)).toBeLessThanOrEqual(1);
    expect(m(b.retry_at! - T0 - 2, 7).allowed).toBe(false); // T0+10 still inside
    expect(m(b.retry_at! - T0, 7)).toMatchObject({ allowed: true, count: 9 }); // left: the 2 at T0+30, plus 7
    // A cost above max never fits: refused with no retry time.
    expect(m(5 * W, 11)).toMatchObject({ allowed: false, count: 0, retry_at: null });
  });

  it("keeps the budget under the account, the session's account, the session or the IP", () => {
    resolve({ user: "known", session: "s_known" });
    expect(meter({ user: "known" }).budget).toBe("account");
    expect(meter({ session: "s_known" })).toMatchObject({ budget: "account", count: 2 }); // the session's account: same budget
    expect(meter({ user: "stranger" })).toMatchObject({ budget: "account", count: 1 }); // not resolved: its own budget
    expect(meter({ user: "stranger", ip: "i" })).toMatchObject({ budget: "account", count: 2 });
    expect(meter({ session: "s_unknown", ip: "i" })).toMatchObject({ budget: "session", count: 1 });
    expect(meter({ session: "s_unknown" })).toMatchObject({ budget: "session", count: 2 });
    expect(meter({ ip: "i" })).toMatchObject({ budget: "ip", count: 1 });
    expect(meter({ ip: "i" })).toMatchObject({ budget: "ip", count: 2 });
    expect(meter({ ip: "j" })).toMatchObject({ budget: "ip", count: 1 });
    expect(meter({})).toMatchObject({ budget: "ip", count: 1 });
  });

  it("linked accounts share one budget; unlinked ones do not", () => {
    resolve({ user: "a", session: "s1" });
    resolve({ user: "b", fingerprint: "f1" });
    resolve({ user: "c", session: "s1", fingerprint: "f1" }); // links a-c-b
    resolve({ user: "z", session: "s9" });
    expect(meter({ user: "a" })).toMatchObject({ allowed: true, count: 1, linked_identities: 2 });
    expect(meter({ user: "b" })).toMatchObject({ allowed: true, count: 2, linked_identities: 2 });
    expect(meter({ session: "s1" })).toMatchObject({ allowed: true, count: 3, budget: "account" });
    expect(meter({ user: "c" })).toMatchObject({ allowed: false, count: 3 });
    expect(meter({ user: "z" })).toMatchObject({ allowed: true, count: 1, linked_identities: 0 });
    // A later link merges the budget too (the new root's budget is the one used).
    resolve({ user: "z", fingerprint: "f1" });
    expect(meter({ user: "z" }).linked_identities).toBe(3);
  });
});

describe("BindingIndex.repairBudgets", () => {
  it("folds a merged account's window left behind (a kill between the two commits) into its cluster's", () => {
    resolve({ user: "a", session: "s1" });
    resolve({ user: "b", session: "s1" }); // a and b linked: one of them is the root
    expect(meter({ user: "a", max: 10 })).toMatchObject({ allowed: true, linked_identities: 1 });
    expect(tx(() => idx.repairBudgets())).toBe(0); // nothing stray yet
    // What a kill between the commits leaves: the merge stored, the non-root's window not moved.
    const stray = ["a", "b"].find((u) => dbs.meters.get([ORG, `a:${u}`, "login"]) === undefined)!;
    const log = Buffer.from(new Float64Array([T0 - 2, 1, T0 - 1, 1]).buffer);
    tx(() => dbs.meters.putSync([ORG, `a:${stray}`, "login"], log));
    const fresh = new BindingIndex(dbs); // a restarted writer: empty caches
    expect(tx(() => fresh.repairBudgets())).toBe(1);
    expect(dbs.meters.get([ORG, `a:${stray}`, "login"])).toBeUndefined();
    // The cluster's budget now holds all three units: 1 + the 2 that were left behind.
    expect(meterWith(fresh, { user: stray, max: 10 })).toMatchObject({ allowed: true, count: 4 });
    expect(tx(() => fresh.repairBudgets())).toBe(0);
  });
});

describe("BindingIndex.prune", () => {
  it("removes bindings older than the retention; their counts go down and the keys go when empty", () => {
    const D = 86_400_000;
    const R = 10 * D;
    const p = new BindingIndex(dbs, R);
    const keys = { session: "s1", fingerprint: "f1", ip: "i1", prefix: "p1" };
    resolveWith(p, { user: "old", ...keys, email: "e_old", nowMs: T0 });
    resolveWith(p, { user: "mid", ...keys, email: "e_mid", nowMs: T0 + 5 * D });
    resolveWith(p, { user: "only", session: "s_only", nowMs: T0 });
    expect(resolveWith(p, { user: "probe0", ...keys, nowMs: T0 + 5 * D })).toMatchObject({ accounts_sharing_session: 2, linked_emails: 2 });
    // Nothing is older than the retention yet.
    expect(tx(() => p.prune(T0 + R))).toBe(0);
    // "old" expires (last seen T0 < cutoff T0 + 1): its 6 bindings (session, fp, ip, prefix, email, session_email) and s_only's.
    expect(tx(() => p.prune(T0 + R + 1))).toBe(7);
    expectKeysConsistent();
    expect(dbs.bindingKeys.get([ORG, "session", "s_only"])).toBeUndefined();
    expect(dbs.bindingKeys.get([ORG, "email", "e_old"])).toBeUndefined();
    expect(dbs.bindingKeys.get([ORG, "session", "s1"])?.count).toBe(2); // mid, probe0
    expect(resolveWith(p, { user: "probe1", ...keys, nowMs: T0 + R + 2 })).toMatchObject({
      accounts_sharing_session: 2,
      accounts_sharing_fingerprint: 2,
      accounts_sharing_ip: 2,
      accounts_sharing_prefix: 2,
      linked_emails: 1, // e_mid only
    });
    // Seeing an account again (over a day later) refreshes its bindings: "mid" stays, probe0 goes.
    resolveWith(p, { user: "mid", ...keys, nowMs: T0 + R + 3 });
    expect(tx(() => p.prune(T0 + 5 * D + R + 1))).toBe(4 + 1 + 1); // probe0's 4, and mid's email + session_email (not seen again)
    expectKeysConsistent();
    expect(resolveWith(p, { user: "probe2", ...keys, nowMs: T0 + R + 4 })).toMatchObject({ accounts_sharing_session: 2, linked_emails: 0 });
    // Re-binding after expiry counts afresh.
    expect(resolveWith(p, { user: "old", session: "s_only", nowMs: T0 + R + 5 })).toMatchObject({ accounts_sharing_session: 0, new_account: false });
    expectKeysConsistent();
    // Clusters are kept: "old" still shares the budget of the accounts it was linked to.
    expect(meterWith(p, { user: "old", max: 100, nowMs: T0 + R + 5 }).linked_identities).toBeGreaterThanOrEqual(3);
  });

  it("rewrites a binding's last-seen at most once a day", () => {
    const D = 86_400_000;
    resolve({ user: "u", session: "s", nowMs: T0 });
    resolve({ user: "u", session: "s", nowMs: T0 + D / 2 });
    expect(dbs.bindings.get([ORG, "session", "s", "u"])).toBe(T0);
    resolve({ user: "u", session: "s", nowMs: T0 + D + 1 });
    expect(dbs.bindings.get([ORG, "session", "s", "u"])).toBe(T0 + D + 1);
  });

  it("works in chunks of `limit` across calls (and transactions) and finishes", () => {
    const R = 1_000;
    const p = new BindingIndex(dbs, R);
    const n = 97;
    for (let i = 0; i < n; i++) resolveWith(p, { user: `old${i}`, session: `s${i % 13}`, fingerprint: `f${i % 7}`, ip: `i${i}`, email: `e${i}`, nowMs: T0 });
    // 97 accounts x (session, fingerprint, ip, email, session_email) = 485 bindings to go.
    for (let i = 0; i < 20; i++) resolveWith(p, { user: `new${i}`, session: `s${i % 13}`, fingerprint: `f${i % 7}`, ip: `i${i}`, nowMs: T0 + 2 * R });
    const kept = 20 * 3;
    const total = [...dbs.bindings.getKeys()].length;
    expect(total).toBe(n * 5 + kept);
    const limit = 50;
    const calls: number[] = [];
    for (let guard = 0; guard < 100; guard++) {
      const removed = tx(() => p.prune(T0 + R + 1, limit));
      calls.push(removed);
      expect(removed).toBeLessThanOrEqual(limit);
      expectKeysConsistent();
      if (removed < limit) break;
      // Writes between chunks (as the writer does) do not upset the cursor.
      resolveWith(p, { user: `between${guard}`, session: "s_between", nowMs: T0 + 2 * R });
    }
    expect(calls.reduce((a, b) => a + b, 0)).toBe(n * 5);
    expect(calls.length).toBe(Math.floor((n * 5) / limit) + 1);
    const left = [...dbs.bindings.getRange()];
    expect(left.every(({ value }) => value >= T0 + 1)).toBe(true);
    // A further pass (cursor back at the start) finds nothing more.
    expect(tx(() => p.prune(T0 + R + 1, limit))).toBe(0);
    expect(resolveWith(p, { user: "probe", session: "s0", nowMs: T0 + 2 * R }).accounts_sharing_session).toBe(2); // new0 and new13 (i % 13 === 0)
  });
});

describe("BindingIndex: budgets follow links", () => {
  it("a budget used before two accounts are linked still counts after the link", () => {
    resolve({ user: "a-link", session: "s-link" });
    resolve({ user: "b-link", session: "s-link" });
    resolve({ user: "z-link", session: "sz-link" });
    for (let i = 0; i < 3; i++) expect(meter({ user: "z-link", resource: "bonus" }).allowed).toBe(true);
    expect(meter({ user: "z-link", resource: "bonus" }).allowed).toBe(false);
    resolve({ user: "z-link", session: "s-link" }); // z joins the bigger cluster
    expect(meter({ user: "z-link", resource: "bonus" })).toMatchObject({ allowed: false, count: 3, linked_identities: 2 });
    expect(meter({ user: "a-link", resource: "bonus" })).toMatchObject({ allowed: false, count: 3 });
  });

  it("retry_at is when the oldest needed entry leaves the window", () => {
    meter({ user: "retry", max: 1, windowMs: 1000, nowMs: T0 });
    expect(meter({ user: "retry", max: 1, windowMs: 1000, nowMs: T0 + 1 }).retry_at).toBe(T0 + 1000);
    expect(meter({ user: "retry", max: 1, windowMs: 1000, nowMs: T0 + 1000 }).allowed).toBe(true);
  });
});

describe("BindingIndex: widely shared identifiers do not link", () => {
  it("a fingerprint shared by many accounts is counted but links only the first few", () => {
    let last: ResolveCounts | undefined;
    for (let i = 0; i < 15; i++) last = resolve({ user: `common-${i}`, fingerprint: "iphone-15-en-GB" });
    expect(last!.accounts_sharing_fingerprint).toBe(14);
    expect(last!.linked_accounts).toBe(0); // the 15th joined after the cap
    const early = resolve({ user: "common-3", fingerprint: "iphone-15-en-GB" });
    expect(early.linked_accounts).toBeLessThanOrEqual(9);
  });
});


describe("BindingIndex.pruneMeters", () => {
  it("drops budgets unused for longer than the longest window, keeps the others", () => {
    meter({ user: "idle", nowMs: T0 });
    meter({ user: "busy", nowMs: T0 + 40 * 86_400_000 });
    expect(tx(() => idx.pruneMeters(T0 + 40 * 86_400_000))).toBe(1);
    expect(idx.pruningMeters).toBe(false);
    expect(meter({ user: "busy", nowMs: T0 + 40 * 86_400_000 + 1, windowMs: 86_400_000 })).toMatchObject({ count: 2 });
    expect(meter({ user: "idle", nowMs: T0 + 40 * 86_400_000 + 1 })).toMatchObject({ count: 1 });
  });
});
