import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Pseudonymizer } from "../../src/shared/pseudonym.js";

describe("Pseudonymizer", () => {
  it("is stable per secret, separates kinds and secrets, and never returns the input", () => {
    const a = new Pseudonymizer("secret-a");
    const h = a.hash("email", "ann@example.com");
    expect(h).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(a.hash("email", "ann@example.com")).toBe(h); // memoised
    expect(new Pseudonymizer("secret-a").hash("email", "ann@example.com")).toBe(h); // computed again
    expect(a.hash("user", "ann@example.com")).not.toBe(h);
    expect(new Pseudonymizer("secret-b").hash("email", "ann@example.com")).not.toBe(h);
    expect(h).not.toContain("ann");
  });

  it("keeps the stored format (SHA-256 of secret, kind and value) through its memo and after the memo is cleared", () => {
    const expected = (kind: string, value: string) => createHash("sha256").update(`s3cret\u0000${kind}\u0000${value}`).digest("base64url").slice(0, 22);
    const p = new Pseudonymizer("s3cret");
    for (let i = 0; i < 100_050; i++) p.hash(i % 2 ? "ip" : "session", `v${i}`); // past the memo's bound: cleared once
    for (const [kind, value] of [["session", "v0"], ["ip", "v1"], ["session", "v100040"], ["email", "ann@example.com"], ["user", ""]] as const) {
      expect(p.hash(kind, value)).toBe(expected(kind, value));
      expect(p.hash(kind, value)).toBe(expected(kind, value));
    }
  });
});
