import { describe, expect, it } from "vitest";
import { generateKey, hashKey, hashesEqual, parseKey, redactKey } from "../../src/shared/api-keys.js";

describe("api keys", () => {
  it("generates prefixed keys whose id is embedded and whose hash verifies", () => {
    const s = generateKey("secret");
    expect(s.plain).toMatch(/^fs_live_[0-9A-Za-z]{44}$/);
    expect(parseKey(s.plain)).toEqual({ type: "secret", mode: "live", id: s.id });
    expect(hashesEqual(hashKey(s.plain), s.hash)).toBe(true);
    const p = generateKey("publishable");
    expect(p.plain).toMatch(/^fs_pub_live_[0-9A-Za-z]{44}$/);
    expect(parseKey(p.plain)).toEqual({ type: "publishable", mode: "live", id: p.id });
  });

  it("generates test-mode keys with their own prefixes, parsed as test keys", () => {
    const s = generateKey("secret", "test");
    expect(s.plain).toMatch(/^fs_test_[0-9A-Za-z]{44}$/);
    expect(parseKey(s.plain)).toEqual({ type: "secret", mode: "test", id: s.id });
    const p = generateKey("publishable", "test");
    expect(p.plain).toMatch(/^fs_pub_test_[0-9A-Za-z]{44}$/);
    expect(parseKey(p.plain)).toEqual({ type: "publishable", mode: "test", id: p.id });
    expect(redactKey(p.plain)).toBe(`fs_pub_test_…${p.plain.slice(-4)}`);
  });

  it("never repeats a key", () => {
    const seen = new Set(Array.from({ length: 1000 }, () => generateKey("secret").plain));
    expect(seen.size).toBe(1000);
  });

  it("rejects keys of the wrong shape", () => {
    for (const bad of ["", "fs_live_", "fs_live_short", "sk_live_" + "a".repeat(44), "fs_live_" + "a".repeat(43) + "!", "fs_live_" + "a".repeat(45)]) {
      expect(parseKey(bad), bad).toBeNull();
    }
  });

  it("compares digests of different lengths as unequal without throwing", () => {
    expect(hashesEqual("abcd", "abcdef")).toBe(false);
    expect(hashesEqual(hashKey("a"), hashKey("b"))).toBe(false);
  });
});
