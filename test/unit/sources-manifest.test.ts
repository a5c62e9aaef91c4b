import { describe, expect, it } from "vitest";
import { ASN_LIST_KINDS, RANGE_KINDS, isNpmSource, loadManifest, parseManifest, withheldTreeOf } from "../../scripts/sources/manifest.js";
import { NPM_FORMATS, PARSERS } from "../../scripts/sources/parsers.js";
import { loadSnapshot } from "../../scripts/sources/snapshot.js";

const manifest = loadManifest();

describe("data/sources.json", () => {
  it("names a parser for every source and every upstream format", () => {
    for (const s of manifest.sources) {
      if (isNpmSource(s)) {
        expect(NPM_FORMATS, s.id).toContain(s.format);
        continue;
      }
      expect(PARSERS[s.format], `${s.id}: ${s.format}`).toBeTypeOf("function");
      if (s.upstream_format) expect(PARSERS[s.upstream_format], `${s.id}: ${s.upstream_format}`).toBeTypeOf("function");
    }
  });

  it("has the four npm inputs and every other kind", () => {
    const npm = manifest.sources.filter(isNpmSource).map((s) => `${s.kind}-ipv${s.family}`);
    expect(npm.sort()).toEqual(["asn-ipv4", "asn-ipv6", "country-ipv4", "country-ipv6"]);
    const kinds = new Set(manifest.sources.map((s) => s.kind));
    for (const kind of [...RANGE_KINDS, ...ASN_LIST_KINDS]) expect(kinds, kind).toContain(kind);
  });

  it("names the operators' own files as upstream where the brief asks for them", () => {
    const upstream = (id: string) => manifest.sources.find((s) => s.id === id)?.upstream;
    expect(upstream("aws")).toBe("https://ip-ranges.amazonaws.com/ip-ranges.json");
    expect(upstream("gcp")).toBe("https://www.gstatic.com/ipranges/cloud.json");
    expect(upstream("google-googlebot")).toBe("https://developers.google.com/static/search/apis/ipranges/googlebot.json");
    expect(upstream("openai-gptbot")).toBe("https://openai.com/gptbot.json");
    expect(upstream("lord-alfred-bing-v4")).toBe("https://www.bing.com/toolbox/bingbot.json");
    expect(upstream("tor-exits")).toBe("https://check.torproject.org/torbulkexitlist");
    expect(upstream("linode")).toBe("https://geoip.linode.com/");
    expect(upstream("oracle")).toBe("https://docs.oracle.com/en-us/iaas/tools/public_ip_ranges.json");
  });

  it("rejects entries that break the rules", () => {
    const base = manifest.sources.filter(isNpmSource);
    const file = { id: "x", kind: "cloud", format: "cidr-list", path: "a/b.txt", upstream: "https://example.test/b", licence: "MIT", provider: "x" };
    expect(() => parseManifest({ sources: [...base, file], excluded: [] })).not.toThrow();
    expect(() => parseManifest({ sources: [...base, { ...file, provider: undefined }], excluded: [] })).toThrow(/cloud sources name their provider/);
    expect(() => parseManifest({ sources: [...base, { ...file, path: "../etc/passwd" }], excluded: [] })).toThrow(/sources\.4\.path/);
    expect(() => parseManifest({ sources: [...base, file, file], excluded: [] })).toThrow(/duplicate id x/);
    expect(() => parseManifest({ sources: [...base, { ...file, kind: "crawler", provider: undefined }], excluded: [] })).toThrow(/crawler sources name their crawler/);
    expect(() => parseManifest({ sources: [...base, { ...file, surprise: 1 }], excluded: [] })).toThrow(/sources\.4/);
  });
});

describe("data/sources.json bots", () => {
  it("lists the four bot registries once each, three as snapshot files and crawler-user-agents from npm", () => {
    expect(manifest.bots.map((b) => b.source).sort()).toEqual(["ai-robots-txt", "arcjet", "crawler-user-agents", "matomo"]);
    const npm = manifest.bots.filter((b) => "package" in b);
    expect(npm.map((b) => b.id)).toEqual(["crawler-user-agents"]);
    const upstream = (id: string) => manifest.bots.find((b) => b.id === id)?.upstream;
    expect(upstream("arcjet-well-known-bots")).toBe("https://raw.githubusercontent.com/arcjet/well-known-bots/main/well-known-bots.json");
    expect(upstream("matomo-bots")).toBe("https://raw.githubusercontent.com/matomo-org/device-detector/master/regexes/bots.yml");
    expect(manifest.bots.find((b) => b.id === "matomo-bots")?.licence).toMatch(/^LGPL-3\.0-or-later/);
  });

  it("rejects a registry listed twice or with another registry's format", () => {
    const base = manifest.sources.filter(isNpmSource);
    const bot = { id: "b", source: "arcjet", format: "arcjet-well-known-bots-json", path: "bots/a.json", upstream: "https://example.test/a", licence: "MIT" };
    expect(() => parseManifest({ sources: base, bots: [bot], excluded: [] })).not.toThrow();
    expect(() => parseManifest({ sources: base, bots: [bot, { ...bot, id: "c" }], excluded: [] })).toThrow(/arcjet is listed twice/);
    expect(() => parseManifest({ sources: base, bots: [{ ...bot, format: "matomo-bots-yml" }], excluded: [] })).toThrow(/not the arcjet format/);
    expect(() => parseManifest({ sources: base, bots: [{ ...bot, id: "asn-ipv4" }], excluded: [] })).toThrow(/duplicate id asn-ipv4/);
  });
});

describe("data/sources.json against the repository's snapshot", () => {
  const snapshot = loadSnapshot();

  it("finds every listed path in the snapshot or among its withheld files, and nothing else there", () => {
    const listed = new Set([
      ...manifest.sources.flatMap((s) => (isNpmSource(s) ? [] : [s.path])),
      ...manifest.bots.flatMap((b) => ("path" in b ? [b.path] : [])),
      ...manifest.evaluation.map((e) => e.path),
    ]);
    for (const path of listed) expect(snapshot.files.has(path) || snapshot.withheld.has(path), path).toBe(true);
    for (const path of [...snapshot.files.keys(), ...snapshot.withheld.keys()]) expect(listed.has(path), path).toBe(true);
  });

  it("withholds exactly the trees data/sources.json withholds", () => {
    for (const path of snapshot.files.keys()) expect(withheldTreeOf(manifest, path), path).toBeUndefined();
    for (const path of snapshot.withheld.keys()) expect(withheldTreeOf(manifest, path), path).toBeDefined();
    expect(manifest.withheld.length).toBeGreaterThan(0);
  });
});
