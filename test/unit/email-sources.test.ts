import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  cleanDomainList,
  DISPOSABLE_SOURCES,
  EmailSourceError,
  EXCLUDED_SUFFIX_SOURCE,
  FREE_SOURCE,
  installedVersion,
  MAX_MALFORMED_SHARE,
  parseDottedSuffixes,
  parseFakefilterJson,
  parseJsonStringArray,
  parseLines,
  parseMailcheckerModule,
  parseNeverDisposable,
  readDomainList,
  readRoleLists,
  toAsciiHost,
  type EmailSourceSpec,
} from "../../src/datasets/email-sources.js";

const spec = (over: Partial<EmailSourceSpec> = {}): EmailSourceSpec => ({
  id: "test list",
  package: "freemail",
  version: "1.7.0",
  licence: "ISC",
  file: "data/disposable.txt",
  minEntries: 1,
  parse: parseLines,
  ...over,
});

describe("parsers: the exact shape each package ships", () => {
  it("text lines, skipping blanks and # comments", () => {
    expect(parseLines("a.com\n\n# note\n b.com \r\n")).toEqual(["a.com", "b.com"]);
    expect(() => parseLines("a\0b")).toThrow(/not a text file/);
  });
  it("a JSON array of strings, nothing else", () => {
    expect(parseJsonStringArray('["a.com","b.com"]')).toEqual(["a.com", "b.com"]);
    expect(() => parseJsonStringArray('{"domains":[]}')).toThrow(/array of strings/);
    expect(() => parseJsonStringArray('["a.com", 3]')).toThrow(/array of strings/);
    expect(() => parseJsonStringArray("a.com")).toThrow(/not JSON/);
  });
  it("mailchecker: the array literal of `var blacklist = new Set([...]);`, read as text", () => {
    const mod = 'var blacklist        = new Set(["a.com","b.org"]);\nvar isValidEmail = /x/;';
    expect(parseMailcheckerModule(mod)).toEqual(["a.com", "b.org"]);
    expect(() => parseMailcheckerModule("module.exports = { blacklist: () => new Set() }")).toThrow(/new Set/);
    expect(() => parseMailcheckerModule("var blacklist = new Set([a.com]);")).toThrow(/not JSON/);
  });
  it("fakefilter: format version 1, the keys of `domains`", () => {
    const v1 = { version: 1, t: 1, domains: { "a.com": { provider: "x", firstseen: 1, lastseen: 2 } } };
    expect(parseFakefilterJson(JSON.stringify(v1))).toEqual(["a.com"]);
    // data_version2.json's shape is refused: the reader would have to change.
    expect(() => parseFakefilterJson(JSON.stringify({ version: 2, t: 1, domains: { "a.com": { providers: ["x"], hosts: {} } } }))).toThrow(/version: 1/);
    expect(() => parseFakefilterJson(JSON.stringify({ ...v1, domains: { "a.com": { provider: 3 } } }))).toThrow(/"a.com" is not/);
    expect(() => parseFakefilterJson(JSON.stringify({ ...v1, domains: ["a.com"] }))).toThrow(/version: 1/);
  });
  it("freemail's excluded suffixes: '.suffix' lines", () => {
    expect(parseDottedSuffixes(".ddns.org\n.zzn.com\n")).toEqual(["ddns.org", "zzn.com"]);
    expect(() => parseDottedSuffixes("ddns.org")).toThrow(/\.suffix/);
  });
});

describe("toAsciiHost", () => {
  it("keeps clean host names, trims and lower-cases, converts IDN to A-labels", () => {
    expect(toAsciiHost("mailinator.com")).toBe("mailinator.com");
    expect(toAsciiHost(" Mailinator.COM ")).toBe("mailinator.com");
    expect(toAsciiHost("instágram.com")).toBe("xn--instgram-cza.com");
    expect(toAsciiHost("säkerhetsväst.se")).toBe("xn--skerhetsvst-l8ai.se");
  });
  it("refuses what is not a host name", () => {
    for (const bad of ["404: not found", "asean-mail", "check.com12", "-a.com", "a-.com", "a..com", "a.c", "a.123", "", "a_b.com", `${"a".repeat(64)}.com`]) {
      expect(toAsciiHost(bad), bad).toBeNull();
    }
  });
});

describe("cleanDomainList", () => {
  it("drops and counts malformed entries, counts IDN conversions", () => {
    const raw = [...Array.from({ length: 200 }, (_, i) => `d${i}.com`), "instágram.com", "not a domain"];
    const l = cleanDomainList(spec(), raw);
    expect(l.domains).toHaveLength(201);
    expect(l.domains).toContain("xn--instgram-cza.com");
    expect(l).toMatchObject({ entries: 202, converted: 1, malformed: ["not a domain"] });
  });
  it(`fails on more than ${MAX_MALFORMED_SHARE * 100}% malformed entries`, () => {
    const raw = [...Array.from({ length: 98 }, (_, i) => `d${i}.com`), "bad one", "bad two"];
    expect(() => cleanDomainList(spec(), raw)).toThrow(EmailSourceError);
    expect(() => cleanDomainList(spec(), raw)).toThrow(/2 of 100 entries are not host names/);
  });
  it("fails on a list shorter than expected", () => {
    expect(() => cleanDomainList(spec({ minEntries: 3 }), ["a.com", "b.com"])).toThrow(/2 domains, expected at least 3/);
  });
});

describe("the installed packages", () => {
  it.each([...DISPOSABLE_SOURCES, FREE_SOURCE, EXCLUDED_SUFFIX_SOURCE].map((s) => [s.id, s] as const))("%s reads in the expected shape and size", (_id, s) => {
    expect(installedVersion(s.package)).toBe(s.version);
    const l = readDomainList(s);
    expect(l.domains.length).toBeGreaterThanOrEqual(s.minEntries);
    expect(l.malformed.length / l.entries).toBeLessThanOrEqual(MAX_MALFORMED_SHARE);
    for (const d of l.domains) expect(toAsciiHost(d)).toBe(d);
  });
  it("pins what the readers drop: nothing from the disposable lists, seven non-domains from freemail's free list", () => {
    for (const s of DISPOSABLE_SOURCES) expect(readDomainList(s).malformed, s.id).toEqual([]);
    expect(readDomainList(FREE_SOURCE).malformed).toEqual(["404: not found", "asean-mail", "check.com12", "housefancom", "milmail.com15", "multiplechoices", "music.com19"]);
  });
  it("converts the IDN entries to A-labels (freemail 11, disposable-email-domains 12, disposable-domains 12)", () => {
    const converted = Object.fromEntries(DISPOSABLE_SOURCES.map((s) => [s.id, readDomainList(s).converted]));
    expect(converted).toMatchObject({ freemail: 11, "disposable-email-domains": 12, "disposable-domains": 12, mailchecker: 0, fakefilter: 0 });
  });
  it("matches the pins in package.json", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { dependencies: Record<string, string> };
    for (const s of [...DISPOSABLE_SOURCES, FREE_SOURCE]) expect(pkg.dependencies[s.package], s.package).toBe(s.version);
    expect(pkg.dependencies["tldts-icann"]).toMatch(/^\d+\.\d+\.\d+$/);
  });
  it("refuses a version the reader was not written for", () => {
    expect(() => readDomainList(spec({ version: "0.0.1" }))).toThrow(/installed freemail 1\.7\.0, the reader was written for 0\.0\.1/);
  });
  it("wraps a shape error with the list and file", () => {
    expect(() => readDomainList(spec({ parse: parseJsonStringArray }))).toThrow(/test list: data\/disposable\.txt: not JSON/);
  });
  it("reads the role lists by category", () => {
    const roles = readRoleLists();
    expect(roles.notification).toContain("info");
    expect(roles.marketing).toContain("sales");
    expect(Object.values(roles).reduce((n, l) => n + l.length, 0)).toBeGreaterThan(1_000);
  });
});

describe("parseNeverDisposable", () => {
  const ok = { description: "x", domains: [{ domain: "gmail.com", category: "provider", reason: "Gmail" }], registrySuffixes: [{ suffix: "za.com", reason: "CentralNic" }] };
  it("accepts the curated file and a minimal one", () => {
    const file = parseNeverDisposable(readFileSync(new URL("../../data/email-never-disposable.json", import.meta.url), "utf8"));
    expect(file.domains.length).toBeGreaterThanOrEqual(100);
    expect(file.domains.map((d) => d.domain)).toEqual(expect.arrayContaining(["gmail.com", "21cn.com", "privaterelay.appleid.com", "duck.com", "mozmail.com", "edu", "ac.uk"]));
    expect(parseNeverDisposable(JSON.stringify(ok)).domains).toHaveLength(1);
  });
  it("refuses duplicates, non-ASCII or upper-case names, unknown categories, missing reasons and extra fields", () => {
    const bad = [
      { ...ok, domains: [...ok.domains, ok.domains[0]] },
      { ...ok, registrySuffixes: [{ suffix: "gmail.com", reason: "dup" }] },
      { ...ok, domains: [{ domain: "Gmail.com", category: "provider", reason: "Gmail" }] },
      { ...ok, domains: [{ domain: "bücher.de", category: "provider", reason: "IDN" }] },
      { ...ok, domains: [{ domain: "gmail.com", category: "webmail", reason: "Gmail" }] },
      { ...ok, domains: [{ domain: "gmail.com", category: "provider" }] },
      { ...ok, domains: [{ domain: "gmail.com", category: "provider", reason: "Gmail", note: "x" }] },
    ];
    for (const b of bad) expect(() => parseNeverDisposable(JSON.stringify(b)), JSON.stringify(b)).toThrow(EmailSourceError);
    expect(() => parseNeverDisposable("{")).toThrow(/not JSON/);
  });
});
