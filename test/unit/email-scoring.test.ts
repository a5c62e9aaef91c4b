import { describe, expect, it } from "vitest";
import { buildEmailLists, emailLists } from "../../src/datasets/email-lists.js";
import type { MxResult } from "../../src/datasets/mx.js";
import * as mod from "../../src/scoring/email.js";
import {
  analyzeEmail,
  analyzeEmailWithMx,
  EMAIL_THRESHOLDS,
  EMAIL_WEIGHTS,
  editDistance,
  emailCheckSignals,
  suggestDomain,
  toCheckEmailSignals,
} from "../../src/scoring/email.js";

const FOUND: MxResult = { outcome: "found", hosts: ["mx1.example.com", "mx2.example.com"], implicit: false, nullMx: false, cache: "miss" };
const IMPLICIT: MxResult = { outcome: "found", hosts: ["example.com"], implicit: true, nullMx: false, cache: "miss" };
const NONE: MxResult = { outcome: "none", hosts: [], implicit: false, nullMx: false, cache: "miss" };
const NULL_MX: MxResult = { outcome: "none", hosts: [], implicit: false, nullMx: true, cache: "hit" };
const UNRESOLVED: MxResult = { outcome: "unresolved", hosts: [], implicit: false, nullMx: false, cache: "miss" };
const sigmoid = (x: number): number => Math.round((1 / (1 + Math.exp(-x))) * 10_000) / 10_000;
const lists = emailLists();

describe("scoring/email module", () => {
  it("pins its runtime exports", () => {
    expect(Object.keys(mod).sort()).toEqual([
      "EMAIL_THRESHOLDS",
      "EMAIL_WEIGHTS",
      "LISTED_TYPO_DOMAINS",
      "TYPO_TARGETS",
      "analyzeEmail",
      "analyzeEmailWithMx",
      "editDistance",
      "emailCheckSignals",
      "parseEmail",
      "suggestDomain",
      "toCheckEmailSignals",
    ]);
  });
});

describe("editDistance (optimal string alignment)", () => {
  it("counts insertions, deletions, substitutions and adjacent swaps as one edit", () => {
    expect(editDistance("gmail", "gmail")).toBe(0);
    expect(editDistance("gmial", "gmail")).toBe(1);
    expect(editDistance("gmai", "gmail")).toBe(1);
    expect(editDistance("gmaail", "gmail")).toBe(1);
    expect(editDistance("gmeil", "gmail")).toBe(1);
    expect(editDistance("hotmart", "hotmail")).toBe(2);
    expect(editDistance("ca", "abc")).toBe(3);
  });
  it("stops at max + 1", () => {
    expect(editDistance("abcdef", "uvwxyz", 1)).toBe(2);
    expect(editDistance("a", "abcd", 2)).toBe(3);
  });
});

describe("suggestDomain: typos of major providers", () => {
  it.each([
    ["gmial.com", "gmail.com"],
    ["gmaill.com", "gmail.com"],
    ["gmail.co", "gmail.com"],
    ["gmail.con", "gmail.com"],
    ["gmail.cm", "gmail.com"],
    ["hotmial.com", "hotmail.com"],
    ["hotmal.com", "hotmail.com"],
    ["yaho.com", "yahoo.com"],
    ["yahooo.com", "yahoo.com"],
    ["outlok.com", "outlook.com"],
    ["iclod.com", "icloud.com"],
    ["aol.cm", "aol.com"],
    ["protonmial.com", "protonmail.com"],
    ["protonmaill.co", "protonmail.com"],
    ["hotmial.fr", "hotmail.fr"],
    ["comast.net", "comcast.net"],
  ])("%s -> %s", (typo, fix) => {
    expect(suggestDomain(typo, lists)).toBe(fix);
  });
  it.each([
    "gmail.com",
    "googlemail.com",
    "email.com", // a real provider one edit from gmail.com
    "mail.com",
    "ymail.com",
    "hotmail.de",
    "yahoo.co",
    "outlook.cz",
    "cloud.com", // first letter differs: typos rarely change it
    "hotmart.com", // two edits from a 7-letter name
    "love.com", // live.com is too short for name edits
    "msm.com",
    "example.com",
    "gmial.con", // two edits from a 5-letter name
  ])("no suggestion for %s", (domain) => {
    expect(suggestDomain(domain, lists)).toBeNull();
  });
  it("suggests for a disposable-listed typo-catcher (gmai.com), which stays disposable", () => {
    expect(suggestDomain("gmai.com", lists)).toBe("gmail.com");
    const a = analyzeEmail("jane@gmai.com", FOUND);
    expect(a.reasons).toEqual(["disposable_domain", "possible_typo"]);
    expect(a.signals.typo_suggestion).toBe("jane@gmail.com");
  });
  it("never suggests for a domain the free list knows, unless it is a listed typo-squat", () => {
    const small = buildEmailLists({ disposable: [], free: ["gmial.com"], excludedSuffixes: [], roles: {} });
    expect(suggestDomain("gmial.com", small)).toBeNull();
  });
});

describe("analyzeEmail", () => {
  it("allows a clean company address with an MX record", () => {
    const a = analyzeEmail("Jane.Doe@Example.com", FOUND);
    expect(a).toEqual({
      email: "Jane.Doe@Example.com",
      normalized: "jane.doe@example.com",
      domain: "example.com",
      score: sigmoid(EMAIL_WEIGHTS.base),
      decision: "allow",
      reasons: [],
      signals: {
        valid_syntax: true,
        syntax_error: null,
        disposable: false,
        free_provider: false,
        role_account: false,
        role_category: null,
        plus_address: false,
        typo_suggestion: null,
        mx: { found: true, outcome: "found", hosts: ["mx1.example.com", "mx2.example.com"], implicit: false, null_mx: false },
      },
    });
  });
  it("answers invalid syntax with block and no other signal", () => {
    const a = analyzeEmail("not an address", FOUND);
    expect(a).toMatchObject({ normalized: null, domain: null, decision: "block", reasons: ["invalid_syntax"] });
    expect(a.score).toBe(sigmoid(EMAIL_WEIGHTS.base + EMAIL_WEIGHTS.invalid_syntax));
    expect(a.signals).toMatchObject({ valid_syntax: false, syntax_error: "missing_at", mx: { found: null, outcome: "skipped" } });
  });
  it("blocks a disposable domain, also through a subdomain", () => {
    for (const address of ["x@mailinator.com", "x@inbox.mailinator.com", "x@abc.usa.cc"]) {
      const a = analyzeEmail(address, FOUND);
      expect(a.decision, address).toBe("block");
      expect(a.reasons).toEqual(["disposable_domain"]);
      expect(a.signals.disposable).toBe(true);
      expect(a.signals.free_provider).toBe(false);
    }
  });
  it("blocks a domain that cannot receive mail (no MX, NXDOMAIN, null MX)", () => {
    for (const mx of [NONE, NULL_MX]) {
      const a = analyzeEmail("jane@example.com", mx);
      expect(a.reasons).toEqual(["no_mx"]);
      expect(a.decision).toBe("block");
      expect(a.signals.mx).toEqual({ found: false, outcome: "none", hosts: [], implicit: false, null_mx: mx.nullMx });
    }
  });
  it("fails open when DNS did not answer, saying so in the reasons", () => {
    const a = analyzeEmail("jane@example.com", UNRESOLVED);
    expect(a.reasons).toEqual(["mx_unresolved"]);
    expect(a.decision).toBe("allow");
    expect(a.signals.mx).toMatchObject({ found: null, outcome: "unresolved" });
  });
  it("weighs an implicit MX lightly", () => {
    const a = analyzeEmail("jane@example.com", IMPLICIT);
    expect(a.reasons).toEqual(["implicit_mx"]);
    expect(a.signals.mx).toEqual({ found: true, outcome: "found", hosts: ["example.com"], implicit: true, null_mx: false });
    expect(a.decision).toBe("allow");
  });
  it("scores without DNS when no MX answer is given", () => {
    const a = analyzeEmail("jane@example.com");
    expect(a.reasons).toEqual([]);
    expect(a.signals.mx).toEqual({ found: null, outcome: "skipped", hosts: [], implicit: false, null_mx: false });
  });
  it("sends a likely typo to review with the corrected address", () => {
    const a = analyzeEmail("Jane@gmsil.com", FOUND);
    expect(a.reasons).toEqual(["possible_typo"]);
    expect(a.decision).toBe("review");
    expect(a.signals.typo_suggestion).toBe("Jane@gmail.com");
  });
  it("blocks a typo domain that a disposable list names (gmial.com, mailchecker), still with the suggestion", () => {
    const a = analyzeEmail("Jane@gmial.com", FOUND);
    expect(a.reasons).toEqual(["disposable_domain", "possible_typo"]);
    expect(a.decision).toBe("block");
    expect(a.signals.typo_suggestion).toBe("Jane@gmail.com");
  });
  it("never blocks a provider a disposable list names by mistake (21cn.com) or a forwarding service (duck.com)", () => {
    for (const address of ["jane@21cn.com", "jane@duck.com", "jane@privaterelay.appleid.com"]) {
      const a = analyzeEmail(address, FOUND);
      expect(a.signals.disposable, address).toBe(false);
      expect(a.decision, address).toBe("allow");
    }
  });
  it("finds role accounts on the whole local part after the +tag, case-folded, with the category", () => {
    const a = analyzeEmail("Info+Newsletter@example.com", FOUND);
    expect(a.signals).toMatchObject({ role_account: true, role_category: "notification", plus_address: true });
    expect(a.reasons).toEqual(["role_account", "plus_address"]);
    expect(analyzeEmail("sales@example.com").signals.role_category).toBe("marketing");
    expect(analyzeEmail("informatics@example.com").signals.role_account).toBe(false);
    expect(analyzeEmail("jane.info@example.com").signals.role_account).toBe(false);
  });
  it("normalises gmail addresses and marks the free provider", () => {
    const a = analyzeEmail("J.Ane+shop@GoogleMail.com", FOUND);
    expect(a.normalized).toBe("jane@gmail.com");
    expect(a.domain).toBe("googlemail.com");
    expect(a.reasons).toEqual(["plus_address", "free_provider"]);
    expect(a.decision).toBe("allow");
  });
  it("adds the weights of every signal present", () => {
    const a = analyzeEmail("noreply+x@gmail.com", FOUND);
    expect(a.reasons).toEqual(["role_account", "plus_address", "free_provider"]);
    expect(a.score).toBe(sigmoid(EMAIL_WEIGHTS.base + EMAIL_WEIGHTS.role_account + EMAIL_WEIGHTS.plus_address + EMAIL_WEIGHTS.free_provider));
  });
  it("reports the A-label domain of an IDN address", () => {
    const a = analyzeEmail("jörg@bücher.de", FOUND);
    expect(a).toMatchObject({ domain: "xn--bcher-kva.de", normalized: "jörg@xn--bcher-kva.de", decision: "allow" });
  });
  it("maps scores to decisions with the documented thresholds", () => {
    expect(EMAIL_THRESHOLDS).toEqual({ review: 0.45, block: 0.8 });
    for (const address of ["a@example.com", "a@gmsil.com", "a@mailinator.com"]) {
      const { score, decision } = analyzeEmail(address, FOUND);
      expect(decision).toBe(score >= 0.8 ? "block" : score >= 0.45 ? "review" : "allow");
    }
  });
});

describe("the weights", () => {
  it("make each strong signal decide alone, and weak ones stay allow alone", () => {
    const alone = (w: number): number => sigmoid(EMAIL_WEIGHTS.base + w);
    expect(alone(EMAIL_WEIGHTS.invalid_syntax)).toBeGreaterThanOrEqual(0.8);
    expect(alone(EMAIL_WEIGHTS.disposable_domain)).toBeGreaterThanOrEqual(0.8);
    expect(alone(EMAIL_WEIGHTS.no_mx)).toBeGreaterThanOrEqual(0.8);
    expect(alone(EMAIL_WEIGHTS.possible_typo)).toBeGreaterThanOrEqual(0.45);
    expect(alone(EMAIL_WEIGHTS.possible_typo)).toBeLessThan(0.8);
    for (const w of [EMAIL_WEIGHTS.role_account, EMAIL_WEIGHTS.plus_address, EMAIL_WEIGHTS.free_provider, EMAIL_WEIGHTS.implicit_mx, 0]) {
      expect(alone(w)).toBeLessThan(0.45);
    }
  });
});

describe("the /v1/check adapter", () => {
  it("maps an analysis to the check result's signals.email", () => {
    expect(toCheckEmailSignals(analyzeEmail("x@mailinator.com", FOUND))).toEqual({
      risk: sigmoid(EMAIL_WEIGHTS.base + EMAIL_WEIGHTS.disposable_domain),
      disposable: true,
      domain: "mailinator.com",
      reasons: ["disposable_domain"],
    });
    expect(toCheckEmailSignals(analyzeEmail("nope"))).toMatchObject({ disposable: false, domain: "" });
  });
  it("looks the MX up through the injected resolver, only for valid addresses", async () => {
    const asked: string[] = [];
    const services = { mx: { lookup: async (d: string) => (asked.push(d), FOUND) } } as unknown as Parameters<typeof emailCheckSignals>[0];
    expect(await emailCheckSignals(services, "Jane@Bücher.DE")).toEqual({ risk: sigmoid(EMAIL_WEIGHTS.base), disposable: false, domain: "xn--bcher-kva.de", reasons: [] });
    expect(await analyzeEmailWithMx(services, "not an address")).toMatchObject({ mxCache: "skipped", analysis: { reasons: ["invalid_syntax"] } });
    expect(asked).toEqual(["xn--bcher-kva.de"]);
  });
});
