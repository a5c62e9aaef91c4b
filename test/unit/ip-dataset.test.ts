import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { Reader, type CountryResponse } from "mmdb-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SPECIAL_PURPOSE_RANGES, buildIpDataset, cidrRanges, readIpSources, splitCsvLine } from "../../scripts/data-build.js";
import { currentIpDatasetDir, openIpDataset, openIpDatasetDir, type IpDataset } from "../../src/datasets/ip-dataset.js";
import { formatIpv4, formatIpv6, ipv6WordsFromBigInt, parseIp, type ParsedIp } from "../../src/shared/ip.js";
import { smallNpmInputs } from "../helpers/npm-inputs.js";
import { scaled } from "../helpers/time.js";

// Builds the real dataset from node_modules once (a few seconds), then checks it against the
// upstream files read independently: mmdb-lib for countries, the CSV for AS numbers.

const pkgDir = (name: string) => dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
const countryDir = pkgDir("@ip-location-db/geo-whois-asn-country-mmdb");
const asnDir = pkgDir("@ip-location-db/asn");

let dataDir: string;
let ds: IpDataset;
const lines: string[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "ip-dataset-test-"));
  await buildIpDataset({ dataDir, snapshot: false, log: (line) => lines.push(line) });
  ds = openIpDataset(dataDir);
}, scaled(120_000));

afterAll(() => {
  ds?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const lookup = (s: string) => ds.lookup(parseIp(s)!);
const baseOf = (f: { asn: number | null; org: string | null; country: string | null }) => ({ asn: f.asn, org: f.org, country: f.country });

// The builder removes special-purpose space, which upstream sometimes gives a country.
const special4 = cidrRanges(SPECIAL_PURPOSE_RANGES[4], 4);
const isPublicIpv4 = (n: number) => !special4.some((r) => r.start <= BigInt(n) && BigInt(n) <= r.end);

describe("buildIpDataset", () => {
  it("writes a version directory, a manifest and the current pointer", () => {
    const dir = currentIpDatasetDir(dataDir)!;
    expect(dir).toBe(join(dataDir, "datasets", "ip", ds.meta.version));
    expect(readFileSync(join(dataDir, "datasets", "ip", "current"), "utf8").trim()).toBe(ds.meta.version);
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    expect(manifest.version).toBe(ds.meta.version);
    const npm = manifest.sources.filter((s: { kind: string }) => s.kind === "asn" || s.kind === "country");
    expect(npm.map((s: { id: string }) => s.id)).toEqual(["asn-ipv4", "asn-ipv6", "country-ipv4", "country-ipv6"]);
    for (const s of npm) {
      expect(s).toMatchObject({ status: "ok", reason: null, bad_rows: 0, built_at: ds.meta.built_at, data_date: "2026-06-17T19:00:00.000Z" });
      expect(s.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(s.rows).toBeGreaterThan(10_000);
      expect(s.licence).toMatch(/CC-BY-4.0/);
    }
    // Without the snapshot, --sources or --fetch every listed file source is reported, not silently dropped.
    const others = manifest.sources.filter((s: { kind: string }) => s.kind !== "asn" && s.kind !== "country");
    expect(others.length).toBeGreaterThan(100);
    for (const s of others) expect(s).toMatchObject({ status: "missing", reason: "not requested (no snapshot, --sources or --fetch)", rows: 0, sha256: null });
    expect(lines.some((l) => l.startsWith("verified "))).toBe(true);
  });

  it("ships the bot registry of the build: crawler-user-agents from npm even without the snapshot", () => {
    const manifest = JSON.parse(readFileSync(join(ds.dir, "manifest.json"), "utf8"));
    const status = Object.fromEntries(manifest.bots.sources.map((s: { id: string; status: string }) => [s.id, s.status]));
    expect(status).toEqual({ "arcjet-well-known-bots": "missing", "ai-robots-txt": "missing", "matomo-bots": "missing", "crawler-user-agents": "ok" });
    expect(manifest.bots.stats.merged).toBe(ds.bots.stats.bots);
    expect(ds.bots.stats.bots).toBeGreaterThan(500);
    expect(ds.bots.classify("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")).not.toBeNull();
    // No published ranges in an npm-only build: nothing to verify a bot against.
    expect(JSON.parse(readFileSync(join(ds.dir, "bots.json"), "utf8")).stats.with_ranges).toBe(0);
  });

  it("refuses a build without bots.json or with a malformed one (bot detection must not be silently off)", () => {
    const copy = mkdtempSync(join(tmpdir(), "ip-dataset-nobots-"));
    try {
      for (const f of ["data.mdb", "manifest.json"]) writeFileSync(join(copy, f), readFileSync(join(ds.dir, f)));
      expect(() => openIpDatasetDir(copy)).toThrow(/bots\.json is missing; rebuild/);
      writeFileSync(join(copy, "bots.json"), JSON.stringify({ format: 1, stats: {}, bots: [] }));
      expect(() => openIpDatasetDir(copy)).toThrow(/bots\.json: stats/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it("describes its provenance in meta", () => {
    expect(ds.meta.version).toMatch(/^ip-\d{8}T\d{6}Z-[0-9a-f]{8}$/);
    expect(ds.meta.source).toMatch(/^ip-location-db:asn\+geo-whois-asn-country@\d/);
    expect(new Date(ds.meta.built_at).toISOString()).toBe(ds.meta.built_at);
    expect(ds.meta.source).not.toMatch(/listed sources/);
    expect(ds.meta.sources.find((s) => s.id === "asn-ipv4")?.upstream).toMatch(/^@ip-location-db\/asn@/);
  });
});

describe("IpDataset.lookup: known answers", () => {
  it("knows Google and Cloudflare resolvers", () => {
    const google = lookup("8.8.8.8");
    expect(google.asn).toBe(15169);
    expect(google.org).toMatch(/Google/);
    expect(google.country).toBe("US");
    expect(lookup("1.1.1.1").asn).toBe(13335);
    expect(lookup("2001:4860:4860::8888").asn).toBe(15169);
  });

  it("answers IPv4-mapped IPv6 like the IPv4 address", () => {
    expect(lookup("::ffff:8.8.8.8")).toEqual(lookup("8.8.8.8"));
    expect(lookup("::ffff:808:808")).toEqual(lookup("8.8.8.8"));
  });

  it("returns nulls for private and reserved addresses", () => {
    for (const s of ["10.0.0.1", "192.168.1.1", "127.0.0.1", "0.0.0.0", "255.255.255.255", "::1", "::", "fe80::1"]) {
      expect(baseOf(lookup(s)), s).toEqual({ asn: null, org: null, country: null });
      expect(lookup(s).company, s).toBeNull();
    }
  });

  it("returns nulls across special-purpose blocks even where upstream names a country", () => {
    for (const family of [4, 6] as const) {
      for (const r of cidrRanges(SPECIAL_PURPOSE_RANGES[family], family)) {
        for (const addr of [r.start, (r.start + r.end) / 2n, r.end]) {
          const ip: ParsedIp = family === 4 ? { version: 4, v4: Number(addr), mapped: false } : { version: 6, words: ipv6WordsFromBigInt(addr) };
          expect(baseOf(ds.lookup(ip)), `${addr}`).toEqual({ asn: null, org: null, country: null });
        }
      }
    }
    // Upstream says AU and JP for these.
    expect(lookup("192.168.1.1").country).toBeNull();
    expect(lookup("2001:db8::1").country).toBeNull();
  });

  it("returns shared, frozen records", () => {
    const a = lookup("8.8.8.8");
    expect(Object.isFrozen(a)).toBe(true);
    expect(lookup("8.8.4.4")).toBe(a);
  });

  it("classifies from the ASN alone when no range source was read", () => {
    const comcast = lookup("73.32.1.1");
    expect(comcast.type).toEqual({ datacenter: false, hosting: false, isp: true, mobile: false, cloud: false });
    expect(comcast.provenance).toEqual({ isp: { source: "asn-ipv4", data_date: "2026-06-17T19:00:00.000Z" } });
    expect(comcast.company).toMatchObject({ name: "Comcast Cable Communications, LLC", category: "isp", confidence: "medium" });
    const google = lookup("8.8.8.8");
    expect(google.type.cloud).toBe(false);
    expect(google.risk).toEqual({ proxy: false, vpn: false, tor: false, residential_proxy: false, scanner: false });
  });
});

describe("IpDataset.lookup agrees with the upstream files", () => {
  it("matches mmdb-lib's country for 2000 random public IPv4 addresses", () => {
    const reader = new Reader<CountryResponse>(readFileSync(join(countryDir, "geo-whois-asn-country-ipv4.mmdb")));
    let withCountry = 0;
    // Unbiased: addresses anywhere in the space, not fast-check's small and extreme values. Fixed seed: a failure replays.
    const publicIpv4 = fc.noBias(fc.integer({ min: 0, max: 0xffffffff })).filter(isPublicIpv4);
    fc.assert(
      fc.property(publicIpv4, (n) => {
        const text = formatIpv4(n);
        const want = (reader.get(text) as { country_code?: string } | null)?.country_code ?? null;
        expect(ds.lookup({ version: 4, v4: n, mapped: false }).country, text).toBe(want);
        if (want) withCountry++;
      }),
      { seed: 1, numRuns: 2000 },
    );
    expect(withCountry).toBeGreaterThan(1000);
  });

  it("matches mmdb-lib's country for 500 IPv6 addresses", () => {
    const reader = new Reader<CountryResponse>(readFileSync(join(countryDir, "geo-whois-asn-country-ipv6.mmdb")));
    // Mostly addresses inside announced ranges (random rows of the ASN CSV), some anywhere in 2000::/3.
    const rows = readFileSync(join(asnDir, "asn-ipv6-num.csv"), "utf8").trim().split("\n");
    const inRow = fc.noBias(fc.tuple(fc.nat(rows.length - 1), fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }))).map(([i, r]) => {
      const [start, end] = rows[i]!.split(",", 2).map((f) => BigInt(f));
      return start! + (r % (end! - start! + 1n));
    });
    const anywhere = fc.noBias(fc.bigInt({ min: 0n, max: (1n << 125n) - 1n })).map((r) => (1n << 125n) | r);
    let withCountry = 0;
    fc.assert(
      fc.property(fc.oneof({ arbitrary: inRow, weight: 4 }, { arbitrary: anywhere, weight: 1 }), (addr) => {
        const words = ipv6WordsFromBigInt(addr);
        const text = formatIpv6(words);
        const parsed = parseIp(text);
        expect(parsed).toEqual({ version: 6, words });
        const want = (reader.get(text) as { country_code?: string } | null)?.country_code ?? null;
        expect(ds.lookup(parsed!).country, text).toBe(want);
        if (want) withCountry++;
      }),
      { seed: 2, numRuns: 500 },
    );
    expect(withCountry).toBeGreaterThan(300);
  });

  it("matches the CSV's AS number inside random rows (IPv4 and IPv6)", () => {
    for (const [file, family] of [
      ["asn-ipv4-num.csv", 4],
      ["asn-ipv6-num.csv", 6],
    ] as const) {
      const rows = readFileSync(join(asnDir, file), "utf8").trim().split("\n");
      // The one row that overlaps its predecessor upstream loses the shared part; skip it.
      const row = fc
        .noBias(fc.nat(rows.length - 1))
        .map((i) => rows[i]!)
        .filter((r) => !r.startsWith("3607101440,"));
      fc.assert(
        fc.property(row, fc.noBias(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n })), (r, offset) => {
          const [start, end, asn] = r.split(",");
          const lo = BigInt(start!);
          const addr = lo + (offset % (BigInt(end!) - lo + 1n));
          const ip: ParsedIp = family === 4 ? { version: 4, v4: Number(addr), mapped: false } : { version: 6, words: ipv6WordsFromBigInt(addr) };
          expect(ds.lookup(ip).asn, r).toBe(Number(asn));
        }),
        { seed: 3, numRuns: 500 },
      );
    }
  });
});

describe("openIpDataset", () => {
  it("throws a clear error when nothing has been built", () => {
    const empty = mkdtempSync(join(tmpdir(), "ip-dataset-empty-"));
    try {
      expect(currentIpDatasetDir(empty)).toBeNull();
      expect(() => openIpDataset(empty)).toThrow(/no IP dataset has been built.*data-build/);
      mkdirSync(join(empty, "datasets", "ip"), { recursive: true });
      writeFileSync(join(empty, "datasets", "ip", "current"), "ip-20260101T000000Z-deadbeef\n");
      expect(currentIpDatasetDir(empty)).toBeNull();
      expect(() => openIpDataset(empty)).toThrow(/data\.mdb is missing/);
      writeFileSync(join(empty, "datasets", "ip", "current"), "../../etc\n");
      expect(() => openIpDataset(empty)).toThrow(/does not hold a version name/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("refuses lookups after close", () => {
    const second = openIpDataset(dataDir);
    expect(second.lookup(parseIp("8.8.8.8")!).asn).toBe(15169);
    second.close();
    second.close();
    expect(() => second.lookup(parseIp("8.8.8.8")!)).toThrow(/after close/);
  });
});

describe("data-build input checks", () => {
  it("splits CSV lines with RFC 4180 quoting", () => {
    expect(splitCsvLine("1,2,3,Plain Org")).toEqual(["1", "2", "3", "Plain Org"]);
    expect(splitCsvLine('1,2,3,"Cloudflare, Inc."')).toEqual(["1", "2", "3", "Cloudflare, Inc."]);
    expect(splitCsvLine('1,2,3,"LLC ""SPUTNIK"""')).toEqual(["1", "2", "3", 'LLC "SPUTNIK"']);
    expect(splitCsvLine("1,2,3,")).toEqual(["1", "2", "3", ""]);
    expect(splitCsvLine('1,2,3,"unterminated')).toBeNull();
    expect(splitCsvLine('1,2,3,"quoted"trailing')).toBeNull();
    expect(splitCsvLine('1,2,3,bare"quote')).toBeNull();
  });

  it("fails with a clear message when the ASN CSV changes format", () => {
    // The same package's dotted-address CSV (its first 20,000 rows) stands in for an upstream format change.
    const dir = mkdtempSync(join(tmpdir(), "ip-drift-"));
    try {
      const dotted = join(dir, "asn-ipv4.csv");
      writeFileSync(dotted, readFileSync(join(asnDir, "asn-ipv4.csv"), "utf8").split("\n").slice(0, 20_000).join("\n"));
      expect(() => readIpSources({ files: { "asn-ipv4": dotted } })).toThrow(/asn-ipv4: .* does not look like the expected format: 0 good rows/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails when an input is truncated, even if every row parses", () => {
    const dir = mkdtempSync(join(tmpdir(), "ip-drift-"));
    try {
      const file = join(dir, "short.csv");
      writeFileSync(file, '16777216,16777471,13335,"Cloudflare, Inc."\n16778240,16779263,38803,Gtelecom Pty Ltd\n');
      expect(() => readIpSources({ files: { "asn-ipv4": file } })).toThrow(/2 good rows \(need 100000\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails when a country database is not the expected kind", () => {
    const v6 = join(countryDir, "geo-whois-asn-country-ipv6.mmdb");
    // The ASN lists, read first, cut down: they are not what is checked.
    const dir = mkdtempSync(join(tmpdir(), "ip-kind-"));
    try {
      const small = smallNpmInputs(dir);
      expect(() => readIpSources({ ...small, files: { ...small.files, "country-ipv4": v6 } })).toThrow(/expected a country database for IPv4, found "country ipv6"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
