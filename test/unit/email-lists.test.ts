import { describe, expect, it } from "vitest";
import { loadSnapshot, snapshotBytes } from "../../scripts/sources/snapshot.js";
import * as mod from "../../src/datasets/email-lists.js";
import { auditEmailLists, buildEmailLists, emailLists, readPackageEmailLists } from "../../src/datasets/email-lists.js";
import { toAsciiHost } from "../../src/datasets/email-sources.js";

// The e-mail lists of the repository's snapshot (data/snapshot/email/), as taken from the npm packages.
const snapshot = loadSnapshot();
const csv = (file: string): string[][] =>
  snapshotBytes(snapshot, `email/${file}`)
    .toString("utf8")
    .split("\n")
    .slice(1)
    .filter((l) => l.length > 0)
    .map((l) => l.split(","));

describe("email-lists module", () => {
  it("pins its runtime exports", () => {
    expect(Object.keys(mod).sort()).toEqual([
      "NEVER_DISPOSABLE_FILE",
      "auditEmailLists",
      "buildEmailLists",
      "emailLists",
      "isIcannPublicSuffix",
      "readNeverDisposable",
      "readPackageEmailLists",
    ]);
  });
});

describe("buildEmailLists", () => {
  const src = {
    disposable: ["mailinator.com", " Throwaway.TEST ", "", "# comment", "usa.cc", "edu.pl", "co.uk", "za.com", "x.za.com", "ddns.org", "x.ddns.org", "both.example", "trash.school.edu", "relay.example", "yandex.ru", "a.mail.ru"],
    free: ["gmail.com", "both.example", "yahoo.co.uk", "shitaway.usa.cc", "mail.ru"],
    excludedSuffixes: [".ddns.org"],
    roles: { notification: ["info", "noreply"], other: ["info", "admin"] },
    neverDisposable: ["edu", "relay.example", "yandex.ru"],
    registrySuffixes: ["za.com"],
  };
  const lists = buildEmailLists(src);

  it("matches the full host and every parent domain", () => {
    expect(lists.isDisposable("mailinator.com")).toBe(true);
    expect(lists.isDisposable("a.b.mailinator.com")).toBe(true);
    expect(lists.isDisposable("throwaway.test")).toBe(true);
    expect(lists.isDisposable("anything.usa.cc")).toBe(true);
    expect(lists.isDisposable("notmailinator.com")).toBe(false);
  });
  it("never matches a public suffix entry, neither itself nor names under it (ICANN and registry namespaces)", () => {
    for (const d of ["edu.pl", "uw.edu.pl", "co.uk", "bbc.co.uk", "za.com", "acme.za.com"]) expect(lists.isDisposable(d), d).toBe(false);
    // A name registered under a registry namespace is an entry of its own.
    expect(lists.isDisposable("x.za.com")).toBe(true);
    expect(lists.isDisposable("mail.x.za.com")).toBe(true);
  });
  it("never matches an excluded suffix as a parent, but keeps exact entries", () => {
    expect(lists.isDisposable("ddns.org")).toBe(true);
    expect(lists.isDisposable("y.ddns.org")).toBe(false);
    expect(lists.isDisposable("x.ddns.org")).toBe(true);
    expect(lists.isDisposable("a.x.ddns.org")).toBe(true);
    expect(lists.counts.excludedSuffixes).toBe(1);
  });
  it("lets the free list win over the disposable lists, for the host and names under it", () => {
    expect(lists.isDisposable("both.example")).toBe(false);
    expect(lists.isFree("both.example")).toBe(true);
    expect(lists.isDisposable("a.mail.ru")).toBe(false);
    expect(lists.isFree("a.mail.ru")).toBe(true);
    expect(lists.isFree("yahoo.co.uk")).toBe(true);
  });
  it("treats a free host under a listed disposable domain as disposable, not free", () => {
    expect(lists.isDisposable("shitaway.usa.cc")).toBe(true);
    expect(lists.isFree("shitaway.usa.cc")).toBe(false);
  });
  it("never calls a never-disposable domain, or a name under it, disposable (bare TLDs included)", () => {
    expect(lists.isDisposable("relay.example")).toBe(false);
    expect(lists.isDisposable("yandex.ru")).toBe(false);
    expect(lists.isDisposable("trash.school.edu")).toBe(false);
    expect(lists.counts).toMatchObject({ neverDisposable: 3, registrySuffixes: 1 });
  });
  it("gives the first category of a role on several lists", () => {
    expect(lists.roleCategory("info")).toBe("notification");
    expect(lists.roleCategory("admin")).toBe("other");
    expect(lists.roleCategory("jane")).toBeNull();
  });
  it("uses an injected public-suffix test", () => {
    const l = buildEmailLists({ disposable: ["corp.example"], free: [], excludedSuffixes: [], roles: {}, isPublicSuffix: (d) => d === "corp.example" });
    expect(l.isDisposable("corp.example")).toBe(false);
    expect(l.isDisposable("x.corp.example")).toBe(false);
  });
  it("gives the same verdict on repeated lookups (the hit memo)", () => {
    for (let i = 0; i < 3; i++) {
      expect(lists.isDisposable("a.b.mailinator.com")).toBe(true);
      expect(lists.isDisposable("a.mail.ru")).toBe(false);
    }
  });
});

describe("auditEmailLists", () => {
  it("names every removal with its rule and cause, and the free hosts that become disposable", () => {
    const audit = auditEmailLists({
      disposable: ["mailinator.com", "usa.cc", "edu.pl", "za.com", "both.example", "trash.school.edu", "a.mail.ru"],
      free: ["both.example", "shitaway.usa.cc", "mail.ru"],
      excludedSuffixes: [],
      roles: {},
      neverDisposable: ["edu"],
      registrySuffixes: ["za.com"],
    });
    expect(audit).toEqual({
      listed: 7,
      kept: 2,
      removed: [
        { domain: "a.mail.ru", rule: "free_provider", by: "mail.ru" },
        { domain: "both.example", rule: "free_provider", by: "both.example" },
        { domain: "edu.pl", rule: "public_suffix", by: "edu.pl" },
        { domain: "trash.school.edu", rule: "never_disposable", by: "edu" },
        { domain: "za.com", rule: "public_suffix", by: "za.com" },
      ],
      freeDropped: [{ domain: "shitaway.usa.cc", under: "usa.cc" }],
    });
  });
});

describe("emailLists from the npm packages", () => {
  const lists = emailLists();

  it("returns the same object every call", () => {
    expect(emailLists()).toBe(lists);
  });
  it("holds at least the snapshot's entries (freemail 1.7.0) and the five other lists", () => {
    expect(lists.counts.disposable).toBeGreaterThanOrEqual(160_000);
    expect(lists.counts.free).toBeGreaterThan(4_000);
    expect(lists.counts.role).toBe(csv("role_local_parts_mixmax.csv").length);
  });
  it("agrees with the snapshot: every snapshot disposable domain is disposable unless the guard removes it; every free one free unless under a listed disposable domain", () => {
    const audit = auditEmailLists(readPackageEmailLists());
    const removed = new Set(audit.removed.map((r) => r.domain));
    const dropped = new Set(audit.freeDropped.map((f) => f.domain));
    for (const [d] of csv("disposable_email_domains_freemail.csv")) {
      const host = toAsciiHost(d!)!;
      expect(lists.isDisposable(host), d).toBe(!removed.has(host));
    }
    for (const [d] of csv("free_email_providers_freemail.csv")) {
      const host = toAsciiHost(d!);
      if (host === null) continue; // "404: not found" and six other non-domains in freemail's free.txt
      expect(lists.isFree(host), d).toBe(!dropped.has(host));
      expect(lists.isDisposable(host), d).toBe(dropped.has(host));
    }
  });
  it("agrees with the snapshot's role categories", () => {
    for (const [local, cat] of csv("role_local_parts_mixmax.csv")) expect(lists.roleCategory(local!), local).toBe(cat);
  });
  it("classifies the well-known providers", () => {
    for (const d of ["gmail.com", "yahoo.com", "hotmail.com", "outlook.com", "icloud.com", "gmx.de"]) {
      expect(lists.isFree(d), d).toBe(true);
      expect(lists.isDisposable(d), d).toBe(false);
    }
    for (const d of ["mailinator.com", "guerrillamail.com", "10minutemail.com", "yopmail.com"]) expect(lists.isDisposable(d), d).toBe(true);
  });
  it("flags throw-away subdomains through their listed parent", () => {
    expect(lists.isDisposable("inbox.mailinator.com")).toBe(true);
    expect(lists.isDisposable("x7.usa.cc")).toBe(true);
  });
  it("keeps freemail's named hosts under an excluded suffix, and nothing else under it", () => {
    expect(lists.isFree("aaamail.zzn.com")).toBe(true);
    expect(lists.isFree("someone-else.zzn.com")).toBe(false);
  });
  it("never flags a public suffix the lists carry (edu.pl, web.id, za.com), nor names under it", () => {
    for (const d of ["edu.pl", "pw.edu.pl", "web.id", "ui.web.id", "za.com", "acme.za.com"]) expect(lists.isDisposable(d), d).toBe(false);
  });
});
