import { describe, expect, it } from "vitest";
import { loadSnapshot, snapshotBytes } from "../../scripts/sources/snapshot.js";
import * as mod from "../../src/datasets/email-lists.js";
import { buildEmailLists, emailLists } from "../../src/datasets/email-lists.js";

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
  it("exports buildEmailLists, emailLists and readPackageEmailLists only", () => {
    expect(Object.keys(mod).sort()).toEqual(["buildEmailLists", "emailLists", "readPackageEmailLists"]);
  });
});

describe("buildEmailLists", () => {
  const lists = buildEmailLists({
    disposable: ["mailinator.com", " Throwaway.TEST ", "", "usa.cc", "edu.pl", "co.uk", "ddns.org", "x.ddns.org"],
    free: ["gmail.com", "mailinator.com", "yahoo.co.uk"],
    excludedSuffixes: [".ddns.org"],
    roles: { notification: ["info", "noreply"], other: ["info", "admin"] },
  });

  it("matches the full host and every parent domain", () => {
    expect(lists.isDisposable("mailinator.com")).toBe(true);
    expect(lists.isDisposable("a.b.mailinator.com")).toBe(true);
    expect(lists.isDisposable("throwaway.test")).toBe(true);
    expect(lists.isDisposable("anything.usa.cc")).toBe(true);
    expect(lists.isDisposable("notmailinator.com")).toBe(false);
  });
  it("lets a public-suffix entry match itself only, never its subdomains", () => {
    expect(lists.isDisposable("edu.pl")).toBe(true);
    expect(lists.isDisposable("uw.edu.pl")).toBe(false);
    expect(lists.isDisposable("bbc.co.uk")).toBe(false);
  });
  it("never matches an excluded suffix as a parent, but keeps exact entries", () => {
    expect(lists.isDisposable("ddns.org")).toBe(true);
    expect(lists.isDisposable("y.ddns.org")).toBe(false);
    expect(lists.isDisposable("x.ddns.org")).toBe(true);
    expect(lists.isDisposable("a.x.ddns.org")).toBe(true);
    expect(lists.counts.excludedSuffixes).toBe(1);
  });
  it("counts a domain on both lists as disposable only", () => {
    expect(lists.isFree("mailinator.com")).toBe(false);
    expect(lists.isFree("gmail.com")).toBe(true);
    expect(lists.isFree("yahoo.co.uk")).toBe(true);
  });
  it("gives the first category of a role on several lists", () => {
    expect(lists.roleCategory("info")).toBe("notification");
    expect(lists.roleCategory("admin")).toBe("other");
    expect(lists.roleCategory("jane")).toBeNull();
  });
});

describe("emailLists from the npm packages", () => {
  const lists = emailLists();

  it("returns the same object every call", () => {
    expect(emailLists()).toBe(lists);
  });
  it("holds at least the snapshot's entries (freemail 1.7.0 plus ivolo)", () => {
    expect(lists.counts.disposable).toBeGreaterThanOrEqual(88_000);
    expect(lists.counts.free).toBeGreaterThan(4_000);
    expect(lists.counts.role).toBe(csv("role_local_parts_mixmax.csv").length);
  });
  it("agrees with the snapshot: every snapshot disposable domain is disposable, every free one free or disposable", () => {
    for (const [d] of csv("disposable_email_domains_freemail.csv")) expect(lists.isDisposable(d!), d).toBe(true);
    for (const [d] of csv("free_email_providers_freemail.csv")) expect(lists.isFree(d!) || lists.isDisposable(d!), d).toBe(true);
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
  it("never flags a subdomain of a public suffix the list carries (edu.pl, web.id)", () => {
    expect(lists.isDisposable("edu.pl")).toBe(true);
    expect(lists.isDisposable("pw.edu.pl")).toBe(false);
    expect(lists.isDisposable("ui.web.id")).toBe(false);
  });
});
