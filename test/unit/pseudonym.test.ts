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
});
