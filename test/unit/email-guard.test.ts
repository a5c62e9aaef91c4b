import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { auditEmailLists, emailLists, readNeverDisposable, readPackageEmailLists } from "../../src/datasets/email-lists.js";
import { DISPOSABLE_SOURCES, FREE_SOURCE, readDomainList } from "../../src/datasets/email-sources.js";

// The guard of datasets/email-lists.ts over the installed lists, in both directions: no free
// provider or curated domain is called disposable, and the disposable lists still are.
const lists = emailLists();
const src = readPackageEmailLists();
const audit = auditEmailLists(src);
const never = readNeverDisposable();
const fixture = JSON.parse(readFileSync(new URL("../fixtures/email-guard-removals.json", import.meta.url), "utf8")) as { removed: string[]; freeDropped: string[] };
const removed = new Set(audit.removed.map((r) => r.domain));
const dropped = new Set(audit.freeDropped.map((f) => f.domain));

describe("the guard never calls a provider or an organisation's domain disposable", () => {
  it("no entry of freemail's free list is disposable, except the hosts under a listed disposable domain", () => {
    let free = 0;
    for (const d of new Set(readDomainList(FREE_SOURCE).domains)) {
      if (dropped.has(d)) continue;
      expect(lists.isDisposable(d), d).toBe(false);
      expect(lists.isFree(d), d).toBe(true);
      free++;
    }
    expect(free).toBeGreaterThan(4_300);
  });
  it("no curated never-disposable domain is disposable, nor a name under it", () => {
    expect(never.domains.length).toBeGreaterThanOrEqual(100);
    for (const { domain } of never.domains) {
      for (const d of domain.includes(".") ? [domain, `mail.${domain}`, `a.b.${domain}`] : [`school.${domain}`, `cs.school.${domain}`]) {
        expect(lists.isDisposable(d), d).toBe(false);
      }
    }
  });
  it.each([
    ["21cn.com", "China Telecom webmail, on four disposable lists"],
    ["gmail.com", "major provider"],
    ["mail.ru", "major provider"],
    ["qq.com", "major provider"],
    ["privaterelay.appleid.com", "Apple Hide My Email"],
    ["duck.com", "DuckDuckGo Email Protection, on mailchecker"],
    ["mozmail.com", "Firefox Relay, on mailchecker"],
    ["passmail.net", "Proton Pass, on mailchecker"],
    ["simplelogin.com", "SimpleLogin, on mailchecker"],
    ["harvard.edu", "institution-only namespace"],
    ["nus.edu.sg", "listed by a disposable list, institution-only namespace"],
    ["cs.ox.ac.uk", "institution-only namespace"],
    ["berkshirehealthcare.nhs.uk", "listed by a disposable list, institution-only namespace"],
    ["edu.pl", "ICANN public suffix, listed"],
    ["uw.edu.pl", "under an ICANN public suffix that is listed"],
    ["web.id", "ICANN public suffix, listed"],
    ["za.com", "registry namespace, listed"],
    ["acme.za.com", "under a listed registry namespace"],
    ["eu.org", "registry namespace, listed"],
    ["msk.ru", "registry namespace, listed"],
    ["pp.ua", "registry namespace, listed"],
  ])("%s is not disposable (%s)", (domain) => {
    expect(lists.isDisposable(domain)).toBe(false);
  });
});

describe("the disposable lists still work", () => {
  it.each([
    "mailinator.com",
    "inbox.mailinator.com",
    "guerrillamail.com",
    "sharklasers.com",
    "10minutemail.com",
    "yopmail.com",
    "temp-mail.org",
    "trashmail.com",
    "maildrop.cc",
    "getnada.com",
    "dispostable.com",
    "mohmal.com",
    "emailondeck.com",
    "tempmail.plus",
    "mail.tm",
    "1secmail.com",
    "x7.usa.cc",
    "00.msk.ru", // a name registered under a registry namespace (mailchecker)
  ])("%s is disposable", (domain) => {
    expect(lists.isDisposable(domain)).toBe(true);
    expect(lists.isFree(domain)).toBe(false);
  });
  it("every listed domain the guard keeps is disposable, and every one it removes is not (lazy guard = audit)", () => {
    for (const d of new Set(src.disposable)) expect(lists.isDisposable(d), d).toBe(!removed.has(d));
    expect(audit.kept).toBe(audit.listed - audit.removed.length);
  });
  it("free hosts under a listed disposable domain are disposable and not free (shitaway.usa.cc, mailinatorzz.mooo.com)", () => {
    expect(dropped.has("shitaway.usa.cc")).toBe(true);
    expect(dropped.has("mailinatorzz.mooo.com")).toBe(true);
    for (const d of dropped) {
      expect(lists.isDisposable(d), d).toBe(true);
      expect(lists.isFree(d), d).toBe(false);
    }
  });
  it("each added list contributes domains the others miss, and the guard keeps almost all of it", () => {
    const bySource = new Map(DISPOSABLE_SOURCES.map((s) => [s.id, new Set(readDomainList(s).domains)] as const));
    for (const id of ["mailchecker", "disposable-email-domains-js", "disposable-domains", "fakefilter"]) {
      const own = [...bySource.get(id)!].filter((d) => [...bySource].every(([other, set]) => other === id || !set.has(d)));
      expect(own.length, id).toBeGreaterThan(50);
      const kept = own.filter((d) => lists.isDisposable(d)).length;
      expect(kept / own.length, id).toBeGreaterThan(0.95);
    }
  });
});

describe("every removal is pinned", () => {
  it("the guard's removals match test/fixtures/email-guard-removals.json exactly (a new list version cannot add one silently)", () => {
    // After reviewing a change: node dist/scripts/email-guard-report.js --fixture > test/fixtures/email-guard-removals.json
    expect(audit.removed.map((r) => `${r.domain} ${r.rule} ${r.by}`)).toEqual(fixture.removed);
    expect(audit.freeDropped.map((f) => `${f.domain} under ${f.under}`)).toEqual(fixture.freeDropped);
  });
  it("removes through every rule, and public suffixes only for themselves", () => {
    const rules = new Set(audit.removed.map((r) => r.rule));
    expect([...rules].sort()).toEqual(["free_provider", "never_disposable", "public_suffix"]);
    for (const r of audit.removed) if (r.rule === "public_suffix") expect(r.by).toBe(r.domain);
  });
});

describe("docs/data.md", () => {
  const doc = readFileSync(new URL("../../docs/data.md", import.meta.url), "utf8");
  const n = (x: number): string => x.toLocaleString("en-US");

  it("names every list with its version, licence and distinct-domain count", () => {
    for (const spec of [...DISPOSABLE_SOURCES, FREE_SOURCE]) {
      const row = `| ${spec.package} ${spec.version} | \`${spec.file}\` | ${spec.licence} | ${n(new Set(readDomainList(spec).domains).size)} |`;
      expect(doc, spec.id).toContain(row);
    }
  });
  it("gives the merged counts and the guard's removals by rule as the code computes them", () => {
    const category = new Map(never.domains.map((d) => [d.domain, d.category] as const));
    const count = (pred: (r: (typeof audit.removed)[number]) => boolean): string => n(audit.removed.filter(pred).length);
    expect(doc).toContain(`${n(audit.listed)} distinct domains listed, ${n(audit.kept)} after the guard`);
    expect(doc).toContain(`| public suffix (ICANN or registry namespace) | ${count((r) => r.rule === "public_suffix")} |`);
    expect(doc).toContain(`| on freemail's free list, or under an entry of it | ${count((r) => r.rule === "free_provider")} |`);
    for (const cat of ["provider", "forwarding", "institution"] as const) {
      expect(doc, cat).toContain(`| never-disposable: ${cat} | ${count((r) => r.rule === "never_disposable" && category.get(r.by) === cat)} |`);
    }
    expect(doc).toContain(`| free-list hosts under a listed disposable domain (made disposable, not free) | ${n(audit.freeDropped.length)} |`);
    expect(doc).toContain(`${n(never.domains.length)} domains and ${n(never.registrySuffixes.length)} registry namespaces`);
  });
});
