import { describe, expect, it } from "vitest";
import { Authenticator, KEY_USED_EVERY_MS, keyUseRecorder } from "../../src/front/auth.js";
import { ApiError } from "../../src/shared/errors.js";
import { authorize } from "../../src/http/pipeline.js";
import { generateKey, hashKey } from "../../src/shared/api-keys.js";
import type { KeyRecord } from "../../src/store/records.js";

const NOW = Date.UTC(2026, 10, 20);

function setup() {
  const keys = new Map<string, KeyRecord>();
  const add = (type: "secret" | "publishable", extra: Partial<KeyRecord> = {}) => {
    const k = generateKey(type, extra.mode ?? "live");
    keys.set(k.id, { id: k.id, org_id: "org_a", project_id: type === "publishable" ? "prj_a" : null, type, scopes: [], hash: k.hash, created_at: "", expires_at: null, disabled_at: null, ...extra });
    return k.plain;
  };
  const auth = new Authenticator({ keys: { get: (id: string) => keys.get(id) } } as never, hashKey("admin-token-0123456789"));
  return { auth, add, keys };
}

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof ApiError ? e.code : `not an ApiError: ${String(e)}`;
  }
}

describe("Authenticator", () => {
  it("accepts a valid secret key and names its org", () => {
    const { auth, add } = setup();
    const key = add("secret");
    expect(auth.verifyKey(`Bearer ${key}`, { kind: "secret" }, NOW).orgId).toBe("org_a");
  });

  it("refuses in order: missing, invalid, expired, disabled", () => {
    const { auth, add } = setup();
    const secret = { kind: "secret" } as const;
    expect(codeOf(() => auth.verifyKey("", secret, NOW))).toBe("MISSING_KEY");
    expect(codeOf(() => auth.verifyKey("Bearer fs_live_x", secret, NOW))).toBe("INVALID_KEY");
    const expired = add("secret", { expires_at: NOW - 1, disabled_at: NOW - 5 });
    expect(codeOf(() => auth.verifyKey(`Bearer ${expired}`, secret, NOW))).toBe("EXPIRED_KEY");
    const disabled = add("secret", { disabled_at: NOW - 5 });
    expect(codeOf(() => auth.verifyKey(`Bearer ${disabled}`, secret, NOW))).toBe("KEY_DISABLED");
  });

  it("checks key type; the pipeline's authorize checks scope and mode", () => {
    const { auth, add } = setup();
    const plain = add("secret", { scopes: ["billing"] });
    const sessions = { kind: "secret", scope: "sessions" } as const;
    expect(codeOf(() => authorize(sessions, auth.verifyKey(`Bearer ${plain}`, sessions, NOW)))).toBe("INSUFFICIENT_SCOPE");
    const billing = { kind: "secret", scope: "billing" } as const;
    expect(codeOf(() => authorize(billing, auth.verifyKey(`Bearer ${plain}`, billing, NOW)))).toBeNull();
    const live = { kind: "secret", live: true } as const;
    expect(codeOf(() => authorize(live, auth.verifyKey(`Bearer ${plain}`, live, NOW)))).toBeNull();
    const test = add("secret", { scopes: ["billing"], mode: "test" });
    expect(codeOf(() => authorize(live, auth.verifyKey(`Bearer ${test}`, live, NOW)))).toBe("INSUFFICIENT_SCOPE");
    expect(codeOf(() => auth.verifyKey(`Bearer ${plain}`, { kind: "publishable" }, NOW))).toBe("KEY_TYPE_NOT_ALLOWED");
    const pub = add("publishable");
    expect(codeOf(() => auth.verifyKey(`Bearer ${pub}`, { kind: "secret" }, NOW))).toBe("KEY_TYPE_NOT_ALLOWED");
    expect(codeOf(() => auth.verifyKey(`Bearer ${pub}`, { kind: "publishable" }, NOW))).toBeNull();
  });

  it("refuses a key whose secret part differs from the stored hash", () => {
    const { auth, add } = setup();
    const plain = add("secret");
    const forged = plain.slice(0, -4) + "AAAA";
    expect(codeOf(() => auth.verifyKey(`Bearer ${forged}`, { kind: "secret" }, NOW))).toBe("INVALID_KEY");
  });

  it("sees a disabled key after forgetKey drops the cached record", () => {
    const { auth, add, keys } = setup();
    const plain = add("secret");
    auth.verifyKey(`Bearer ${plain}`, { kind: "secret" }, NOW);
    const [id, rec] = [...keys.entries()][0]!;
    keys.set(id, { ...rec, disabled_at: NOW });
    auth.forgetKey(id);
    expect(codeOf(() => auth.verifyKey(`Bearer ${plain}`, { kind: "secret" }, NOW))).toBe("KEY_DISABLED");
  });

  it("checks the admin token", () => {
    const { auth } = setup();
    expect(codeOf(() => auth.verifyAdmin("Bearer admin-token-0123456789"))).toBeNull();
    expect(codeOf(() => auth.verifyAdmin("Bearer admin-token-0123456780"))).toBe("INVALID_KEY");
    expect(codeOf(() => auth.verifyAdmin(""))).toBe("MISSING_KEY");
  });
});

describe("Authenticator verified-key cache", () => {
  it("still refuses a cached key once it is disabled or expired", () => {
    const { auth, add, keys } = setup();
    const plain = add("secret", { expires_at: NOW + 1000 });
    expect(codeOf(() => auth.verifyKey(`Bearer ${plain}`, { kind: "secret" }, NOW))).toBeNull();
    expect(codeOf(() => auth.verifyKey(`Bearer ${plain}`, { kind: "secret" }, NOW + 1000))).toBe("EXPIRED_KEY");
    const [id, rec] = [...keys.entries()][0]!;
    keys.set(id, { ...rec, expires_at: null, disabled_at: NOW });
    auth.forgetKey(id);
    expect(codeOf(() => auth.verifyKey(`Bearer ${plain}`, { kind: "secret" }, NOW))).toBe("KEY_DISABLED");
  });
});

describe("deleted keys and key use", () => {
  it("answers a deleted key exactly as an unknown one", () => {
    const { auth, add } = setup();
    const gone = add("secret", { deleted_at: NOW - 1 });
    const unknown = generateKey("secret").plain;
    expect(codeOf(() => auth.verifyKey(`Bearer ${gone}`, { kind: "secret" }, NOW))).toBe("INVALID_KEY");
    expect(codeOf(() => auth.verifyKey(`Bearer ${unknown}`, { kind: "secret" }, NOW))).toBe("INVALID_KEY");
  });

  it("records a key's use on its first call, then at most once a minute, and only for keys that passed", () => {
    const sent: Array<[string, number]> = [];
    const record = keyUseRecorder(async (keyId, atMs) => void sent.push([keyId, atMs]));
    const keys = new Map<string, KeyRecord>();
    const k = generateKey("secret");
    keys.set(k.id, { id: k.id, org_id: "org_a", project_id: null, type: "secret", scopes: [], hash: k.hash, created_at: "", expires_at: null, disabled_at: null });
    const auth = new Authenticator({ keys: { get: (id: string) => keys.get(id) } } as never, hashKey("admin-token-0123456789"), undefined, record);
    for (const t of [0, 1_000, KEY_USED_EVERY_MS - 1, KEY_USED_EVERY_MS, KEY_USED_EVERY_MS + 5]) auth.verifyKey(`Bearer ${k.plain}`, { kind: "secret" }, NOW + t);
    expect(sent).toEqual([
      [k.id, NOW],
      [k.id, NOW + KEY_USED_EVERY_MS],
    ]);
    // A refused call records nothing.
    auth.rememberKey({ ...keys.get(k.id)!, disabled_at: NOW });
    expect(codeOf(() => auth.verifyKey(`Bearer ${k.plain}`, { kind: "secret" }, NOW + 10 * KEY_USED_EVERY_MS))).toBe("KEY_DISABLED");
    expect(sent).toHaveLength(2);
  });

  it("never lets a failed send reach the call", async () => {
    const record = keyUseRecorder(() => Promise.reject(new Error("store away")));
    expect(() => record("key_a", NOW)).not.toThrow();
    await new Promise((r) => setImmediate(r));
  });
});
