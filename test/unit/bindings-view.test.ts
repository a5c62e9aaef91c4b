import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { peekCounts, type PeekKeys } from "../../src/store/front/bindings-view.js";
import { localReader, type StoreReader } from "../../src/store/reader.js";
import { BindingIndex } from "../../src/store/writer/bindings.js";
import { openState, stateTransaction, type LmdbStateDbs } from "../../src/store/state-env.js";
import type { ResolveRequest } from "../../src/store/records.js";

/**
 * peekCounts (what POST /v1/auth/check reads) against BindingIndex.resolve (what
 * POST /v1/sessions/resolve writes): for the same keys, the peek answers the counts the resolve
 * then answers, and writes nothing.
 */
let dir: string;
let dbs: LmdbStateDbs;
let idx: BindingIndex;
const ORG = "org_a";
const T0 = 1_800_000_000_000;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-bindings-view-"));
  dbs = openState(dir, false);
  idx = new BindingIndex(dbs);
});
afterEach(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

const resolve = (r: Partial<ResolveRequest> & { user: string }) => stateTransaction(dbs, () => idx.resolve({ orgId: ORG, sharedNetwork: false, nowMs: T0, ...r }));
const entries = (): number => [...dbs.bindings.getKeys()].length + [...dbs.bindingKeys.getKeys()].length + [...dbs.clusters.getKeys()].length;

/** The same view read as a cluster node reads (a promise per read): the answers must not differ. */
const pooled = (): StoreReader => ({ ...localReader(dbs), local: null });

describe("peekCounts", () => {
  it("answers what the resolve of the same keys answers next, and writes nothing", async () => {
    resolve({ user: "bob", session: "s1", fingerprint: "f1", ip: "i1", prefix: "p1", email: "bob@x" });
    resolve({ user: "carol", session: "s1", ip: "i1", prefix: "p1", email: "carol@x" });
    const keys: PeekKeys = { user: "alice", session: "s1", fingerprint: "f1", ip: "i1", prefix: "p1", email: "alice@x" };
    const before = entries();
    const peeked = peekCounts(localReader(dbs), ORG, keys);
    expect(await peekCounts(pooled(), ORG, keys)).toEqual(peeked);
    expect(peekCounts(localReader(dbs), ORG, keys)).toEqual(peeked);
    expect(entries()).toBe(before);
    expect(peeked).toEqual({ accounts_sharing_session: 2, accounts_sharing_fingerprint: 1, accounts_sharing_ip: 2, accounts_sharing_prefix: 2, linked_emails: 2, known_account: false });
    const resolved = resolve({ ...keys, user: "alice" });
    expect(resolved).toMatchObject({ accounts_sharing_session: 2, accounts_sharing_fingerprint: 1, accounts_sharing_ip: 2, accounts_sharing_prefix: 2, linked_emails: 2, new_account: true });
    // Once bound, the account is known and is not counted among the others.
    expect(peekCounts(localReader(dbs), ORG, keys)).toEqual({ ...peeked, known_account: true });
    expect(resolve({ ...keys, user: "alice" })).toMatchObject({ accounts_sharing_session: 2, linked_emails: 2, new_account: false });
  });

  it("without an account counts every account bound; without identifiers counts nothing; other orgs see nothing", () => {
    resolve({ user: "bob", session: "s1", email: "bob@x" });
    resolve({ user: "carol", session: "s1", email: "carol@x" });
    expect(peekCounts(localReader(dbs), ORG, { session: "s1" })).toMatchObject({ accounts_sharing_session: 2, linked_emails: 2, known_account: null });
    expect(peekCounts(localReader(dbs), ORG, {})).toEqual({ accounts_sharing_session: 0, accounts_sharing_fingerprint: 0, accounts_sharing_ip: 0, accounts_sharing_prefix: 0, linked_emails: 0, known_account: null });
    expect(peekCounts(localReader(dbs), "org_b", { user: "bob", session: "s1" })).toMatchObject({ accounts_sharing_session: 0, known_account: false });
  });
});
