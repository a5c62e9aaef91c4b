import { describe, expect, it } from "vitest";
import { mayChangeLive, mayCreateKey, mayManageKey, refuse } from "../../src/front/capabilities.js";
import { ApiError } from "../../src/shared/errors.js";
import type { KeyRecord } from "../../src/store/records.js";

/** The rule of front/capabilities.ts over every kind of caller and key (issue 38, finding 2). */

const key = (id: string, over: Partial<KeyRecord> = {}): KeyRecord => ({
  id,
  org_id: "org_a",
  project_id: null,
  type: "secret",
  scopes: [],
  hash: "",
  created_at: "2026-01-01T00:00:00.000Z",
  expires_at: null,
  disabled_at: null,
  ...over,
});

const full = key("key_full", { scopes: ["sessions", "billing"] });
const sessions = key("key_sess", { scopes: ["sessions"] });
const bare = key("key_bare");
const testFull = key("key_tfull", { scopes: ["sessions", "billing"], mode: "test" });
const testBare = key("key_tbare", { mode: "test" });
const pubLive = key("key_pub", { type: "publishable", project_id: "prj_1" });
const pubTest = key("key_ptest", { type: "publishable", project_id: "prj_1", mode: "test" });
const foreign = key("key_other", { org_id: "org_b" });

describe("mayManageKey", () => {
  // [caller, target, allowed]
  const table: Array<[KeyRecord, KeyRecord, boolean]> = [
    [full, full, true],
    [full, sessions, true],
    [full, bare, true],
    [full, testFull, true],
    [full, pubLive, true],
    [full, pubTest, true],
    [sessions, full, false],
    [sessions, sessions, true],
    [sessions, bare, true],
    [bare, full, false],
    [bare, sessions, false],
    [bare, bare, true],
    [bare, testBare, true],
    [bare, testFull, false],
    [bare, pubLive, true],
    [bare, pubTest, true],
    [testFull, full, false],
    [testFull, bare, false],
    [testFull, pubLive, false],
    [testFull, testFull, true],
    [testFull, testBare, true],
    [testFull, pubTest, true],
    [testBare, testFull, false],
    [testBare, testBare, true],
    [testBare, pubTest, true],
    [pubLive, pubLive, false],
    [full, foreign, false],
  ];
  it.each(table.map(([c, t, ok]) => [c.id, t.id, ok, c, t] as const))("%s manages %s: %s", (_c, _t, ok, caller, target) => {
    expect(mayManageKey(caller, target) === null).toBe(ok);
  });

  it("names what is missing", () => {
    expect(mayManageKey(bare, full)).toMatch(/^Key key_full carries the 'sessions', 'billing' scopes, which the key you signed in with lacks/);
    expect(mayManageKey(sessions, full)).toMatch(/^Key key_full carries the 'billing' scope,/);
    expect(mayManageKey(testFull, bare)).toMatch(/^Key key_bare is a live key, and you signed in with a test key/);
  });
});

describe("mayCreateKey", () => {
  const table: Array<[KeyRecord, { mode: "live" | "test"; type: "secret" | "publishable"; scopes: string[] }, boolean]> = [
    [bare, { mode: "live", type: "secret", scopes: [] }, true],
    [bare, { mode: "test", type: "secret", scopes: [] }, true],
    [bare, { mode: "live", type: "secret", scopes: ["sessions"] }, false],
    // The same for a test key as for a live one (finding 1's rule).
    [bare, { mode: "test", type: "secret", scopes: ["sessions"] }, false],
    [bare, { mode: "live", type: "publishable", scopes: [] }, true],
    [sessions, { mode: "test", type: "secret", scopes: ["sessions"] }, true],
    [sessions, { mode: "live", type: "secret", scopes: ["sessions", "billing"] }, false],
    [testFull, { mode: "live", type: "secret", scopes: [] }, false],
    [testFull, { mode: "live", type: "publishable", scopes: [] }, false],
    [testFull, { mode: "test", type: "secret", scopes: ["billing"] }, true],
    [testBare, { mode: "test", type: "secret", scopes: ["billing"] }, false],
    [pubLive, { mode: "live", type: "publishable", scopes: [] }, false],
  ];
  it.each(table.map(([c, r, ok], i) => [i, c.id, ok, c, r] as const))("#%i %s: %s", (_i, _c, ok, caller, requested) => {
    expect(mayCreateKey(caller, requested) === null).toBe(ok);
  });
});

describe("mayChangeLive and refuse", () => {
  it("refuses a test key's change of a live setting as 403 INSUFFICIENT_SCOPE; a live key's passes", () => {
    expect(mayChangeLive(bare, "a project's bot policy")).toBeNull();
    const reason = mayChangeLive(testFull, "a project's bot policy");
    expect(reason).toMatch(/cannot change a project's bot policy/);
    expect(() => refuse(null)).not.toThrow();
    try {
      refuse(reason);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect([(err as ApiError).code, (err as ApiError).status, (err as ApiError).message]).toEqual(["INSUFFICIENT_SCOPE", 403, reason]);
    }
  });
});
