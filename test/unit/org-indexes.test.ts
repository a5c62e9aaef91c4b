import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IntentApplier } from "../../src/store/writer/apply.js";
import type { KeyRecord, OrgRecord, ProjectRecord } from "../../src/store/records.js";
import { openState, stateTransaction, type LmdbStateDbs } from "../../src/store/state-env.js";

/**
 * Issue 38, finding 5: the writer's indexes by org (state-env.ts orgProjects, orgKeys), filled
 * once from a store written before them, and the caps it counts in them.
 */
let dir: string;
let dbs: LmdbStateDbs;
const tx = <T>(fn: () => T): T => stateTransaction(dbs, fn);
const org = (id: string): OrgRecord => ({ id, name: id, plan: "free", subscription_status: "active", trial_end: null, created_at: "2026-01-01T00:00:00Z" });
const project = (id: string, orgId: string): ProjectRecord => ({ id, org_id: orgId, name: id, created_at: "2026-01-01T00:00:00Z" });
const key = (id: string, orgId: string, extra: Partial<KeyRecord> = {}): KeyRecord => ({
  id,
  org_id: orgId,
  project_id: null,
  type: "secret",
  scopes: [],
  hash: id,
  created_at: "2026-01-01T00:00:00Z",
  expires_at: null,
  disabled_at: null,
  ...extra,
});
const entries = (index: "orgProjects" | "orgKeys", orgId: string) => [...dbs[index].getKeys({ start: [orgId], end: [orgId, "\uffff"] })].map((k) => k[1]);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-org-indexes-"));
  dbs = openState(dir, false);
});
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("org indexes", () => {
  it("are filled once from the projects and keys of a store written before them (deleted keys left out)", () => {
    // As a store of the previous version holds them: records only, no index, no marker.
    tx(() => {
      for (const id of ["org_a", "org_ab", "org_b"]) dbs.orgs.putSync(id, org(id));
      dbs.projects.putSync("prj_1", project("prj_1", "org_a"));
      dbs.projects.putSync("prj_2", project("prj_2", "org_ab"));
      dbs.projects.putSync("prj_3", project("prj_3", "org_a"));
      dbs.keys.putSync("key_1", key("key_1", "org_a"));
      dbs.keys.putSync("key_2", key("key_2", "org_a", { deleted_at: 1 }));
      dbs.keys.putSync("key_3", key("key_3", "org_b", { disabled_at: 1, expires_at: 2 }));
    });
    const applier = new IntentApplier(dbs);
    expect(tx(() => applier.backfillOrgIndexes())).toBe(5);
    expect(entries("orgProjects", "org_a")).toEqual(["prj_1", "prj_3"]);
    expect(entries("orgProjects", "org_ab")).toEqual(["prj_2"]);
    expect(entries("orgKeys", "org_a")).toEqual(["key_1"]);
    expect(entries("orgKeys", "org_b")).toEqual(["key_3"]);
    // Once: a later start finds the marker and writes nothing.
    expect(tx(() => new IntentApplier(dbs).backfillOrgIndexes())).toBe(0);
  });

  it("counts the caps in the index: creates past them are refused as LIMIT, a deleted key frees its place", () => {
    const applier = new IntentApplier(dbs, undefined, null, undefined, { projects: 3, keys: 2 });
    expect(tx(() => applier.apply({ op: "project.create", project: project("prj_4", "org_a") })).ok).toBe(true);
    expect(tx(() => applier.apply({ op: "project.create", project: project("prj_5", "org_a") }))).toMatchObject({
      ok: false,
      error: "LIMIT",
      message: expect.stringContaining("FS_MAX_PROJECTS_PER_ORG"),
    });
    // org_ab's range is its own, though its id starts with org_a's.
    expect(tx(() => applier.apply({ op: "project.create", project: project("prj_6", "org_ab") })).ok).toBe(true);
    expect(tx(() => applier.apply({ op: "key.create", key: key("key_4", "org_a") })).ok).toBe(true);
    expect(tx(() => applier.apply({ op: "key.create", key: key("key_5", "org_a") }))).toMatchObject({
      ok: false,
      error: "LIMIT",
      message: expect.stringContaining("FS_MAX_KEYS_PER_ORG"),
    });
    expect(tx(() => applier.apply({ op: "key.delete", keyId: "key_1", nowMs: 5 })).ok).toBe(true);
    expect(entries("orgKeys", "org_a")).toEqual(["key_4"]);
    expect(tx(() => applier.apply({ op: "key.create", key: key("key_5", "org_a") })).ok).toBe(true);
  });
});
