import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SPECIAL_PURPOSE_RANGES, buildIpDataset, cidrRanges } from "../../scripts/data-build.js";
import { isNpmSource, loadManifest, type FileSource, type RangeKind } from "../../scripts/sources/manifest.js";
import { parseSourceFile, type FactRow } from "../../scripts/sources/parsers.js";
import { loadSnapshot, snapshotBytes } from "../../scripts/sources/snapshot.js";
import { openIpDataset, type IpDataset, type IpFacts } from "../../src/datasets/ip-dataset.js";
import { RISK_FLAGS, TYPE_FLAGS } from "../../src/datasets/ip-facts.js";
import { ipv6WordsFromBigInt, parseIp, type ParsedIp } from "../../src/shared/ip.js";
import { smallNpmInputs } from "../helpers/npm-inputs.js";
import { scaled } from "../helpers/time.js";

// Reads the full dataset built from the repository's snapshot plus npm, as `npm start` builds it
// on a fresh clone (the run's shared build), and checks every listed range of every shipped source
// against it, re-reading the files with the builder's parsers. Withheld sources are built from constructed files below.

const snapshot = loadSnapshot();
const manifest = loadManifest();
const fileSources = manifest.sources.filter((s): s is FileSource => !isNpmSource(s));
const shipped = fileSources.filter((s) => snapshot.files.has(s.path));
const withheld = fileSources.filter((s) => !snapshot.files.has(s.path));
const bytesOf = (s: FileSource): Buffer => snapshotBytes(snapshot, s.path);

let ds: IpDataset;

const asIp = (family: 4 | 6, addr: bigint): ParsedIp =>
  family === 4 ? { version: 4, v4: Number(addr), mapped: false } : { version: 6, words: ipv6WordsFromBigInt(addr) };
const lookup = (text: string) => ds.lookup(parseIp(text)!);
const flagsOf = (f: IpFacts) => [...TYPE_FLAGS.filter((k) => f.type[k]), ...RISK_FLAGS.filter((k) => f.risk[k])];

// Special-purpose space and the IPv6 transition blocks are masked out of every source.
const masked = { 4: cidrRanges(SPECIAL_PURPOSE_RANGES[4], 4), 6: cidrRanges([...SPECIAL_PURPOSE_RANGES[6], "2001::/32", "2002::/16"], 6) };
const isMasked = (family: 4 | 6, addr: bigint) => masked[family].some((r) => r.start <= addr && addr <= r.end);

/** What a source of each kind must make true at every address it lists. */
const EXPECT: Record<RangeKind, (f: IpFacts) => boolean> = {
  cloud: (f) => f.type.cloud && f.type.datacenter && f.type.hosting && f.cloud_provider !== null && f.provenance.cloud !== undefined,
  datacenter: (f) => f.type.datacenter && f.type.hosting,
  isp: (f) => f.type.isp,
  crawler: (f) => f.crawler !== null && f.provenance.crawler !== undefined,
  tor: (f) => f.risk.tor,
  vpn: (f) => f.risk.vpn,
  proxy: (f) => f.risk.proxy,
  scanner: (f) => f.risk.scanner,
};

const rangesOf = (s: FileSource): FactRow[] => parseSourceFile(bytesOf(s), s, snapshot.files.get(s.path)!.format).ranges;

describe("IP facts built from the snapshot", () => {
  // The run's shared build (test/integration/global-setup.ts): the same call, made once.
  beforeAll(() => {
    ds = openIpDataset(inject("datasetDataDir"));
  });

  afterAll(() => {
    ds?.close();
  });

  it("uses every shipped source, reports each withheld one as such, ", () => {
    const notOk = ds.meta.sources.filter((s) => s.status !== "ok");
    expect(notOk.map((s) => s.id).sort()).toEqual(withheld.map((s) => s.id).sort());
    for (const s of notOk) expect(s).toMatchObject({ status: "missing", reason: expect.stringMatching(/^withheld from the snapshot \(licence: /) });
    expect(ds.meta.source).toMatch(new RegExp(`^ip-location-db:asn\\+geo-whois-asn-country@\\S+ \\+ ${shipped.length}/${fileSources.length} listed sources$`));
    expect(ds.meta.sources.find((s) => s.id === "aws")!.taken).toBe(snapshot.files.get("cloud/jonhadfield-cloud-ips/aws.json")!.taken);
  });

  it("records each source's status, rows, checksum and own date", () => {
    const aws = ds.meta.sources.find((s) => s.id === "aws")!;
    expect(aws).toMatchObject({ kind: "cloud", status: "ok", reason: null, rows: 16817, bad_rows: 0, data_date: "2026-08-21T07:37:05.000Z", upstream: "https://ip-ranges.amazonaws.com/ip-ranges.json" });
    expect(aws.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(ds.meta.sources.find((s) => s.id === "gcp")!.data_date).toBe("2026-08-21T01:05:42.583Z");
    expect(ds.meta.sources.find((s) => s.id === "oracle")!.data_date).toBe("2026-07-27T06:55:33.696Z");
    expect(ds.meta.sources.find((s) => s.id === "tor-exits")!.data_date).toBeNull();
    expect(ds.meta.sources.find((s) => s.id === "asn-ipv4")!.data_date).toBe("2026-06-17T19:00:00.000Z");
    const manifestJson = JSON.parse(readFileSync(join(ds.dir, "manifest.json"), "utf8"));
    const m = manifestJson.sources.find((s: { id: string }) => s.id === "maltrail-mass-scanner");
    expect(m).toMatchObject({ status: "ok", bad_rows: 5, built_at: ds.meta.built_at, path: "scanner/stamparm-maltrail/trails/static/mass_scanner.txt", licence: expect.stringMatching(/MIT/) });
    expect(m.bad_examples.length).toBeGreaterThan(0);
  });

  // The heart of it: every range of every source, at its first, middle and last address.
  it.each(shipped.filter((s) => !s.kind.endsWith("-asn")).map((s) => [s.id, s] as const))(
    "%s: every listed range classifies as its kind",
    (_id, s) => {
      const check = EXPECT[s.kind as RangeKind];
      let checked = 0;
      for (const r of rangesOf(s)) {
        for (const addr of [r.start, r.start + (r.end - r.start) / 2n, r.end]) {
          if (isMasked(r.family, addr)) continue;
          const f = ds.lookup(asIp(r.family, addr));
          if (!check(f)) expect.fail(`${s.id}: ${addr} (IPv${r.family}) is not ${s.kind}: ${JSON.stringify(f)}`);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(0);
    },
  );

  it("classifies addresses of listed ASNs from the ASN lists", () => {
    const asnDir = dirname(createRequire(import.meta.url).resolve("@ip-location-db/asn/package.json"));
    const firstRange = new Map<number, bigint>();
    for (const line of readFileSync(join(asnDir, "asn-ipv4-num.csv"), "utf8").split("\n")) {
      const [start, , asn] = line.split(",");
      if (asn && !firstRange.has(Number(asn))) firstRange.set(Number(asn), BigInt(start!));
    }
    let checked = 0;
    for (const s of fileSources.filter((x) => x.kind.endsWith("-asn"))) {
      for (const { asn } of parseSourceFile(bytesOf(s), s).asns) {
        const start = firstRange.get(asn);
        if (start === undefined || isMasked(4, start)) continue; // not announced in this snapshot
        const f = ds.lookup(asIp(4, start));
        if (f.asn !== asn) continue; // upstream's one overlapping row
        expect(f.type.datacenter && f.type.hosting, `AS${asn} (${s.id})`).toBe(true);
        expect(f.company).toMatchObject({ category: "hosting", confidence: "high" });
        if (s.kind === "vpn-asn") expect(f.risk.vpn, `AS${asn}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(800);
  });

  it("reports a Googlebot range inside Google Cloud with the crawler's own source and the cloud's region", () => {
    const gcp = rangesOf(fileSources.find((s) => s.id === "gcp")!);
    const googlebot = rangesOf(fileSources.find((s) => s.id === "google-googlebot")!);
    const inside = googlebot.filter((b) => gcp.some((c) => c.family === b.family && c.start <= b.start && b.end <= c.end && c.end - c.start > b.end - b.start));
    expect(inside.length).toBeGreaterThan(5);
    for (const b of inside) {
      const f = ds.lookup(asIp(b.family, b.start));
      expect(f.crawler).toEqual({ id: "googlebot", operator: "Google" });
      expect(f.provenance.crawler).toEqual({ source: "google-googlebot", data_date: "2026-08-20T14:46:45.000Z" });
      expect(f.type.cloud).toBe(true);
      expect(f.cloud_provider).toBe("gcp");
    }
  });

  it("reports a GPTBot range inside Microsoft's network with the crawler's source (Azure's service tags are withheld)", () => {
    const f = lookup("20.171.207.1");
    expect(f.crawler).toEqual({ id: "gptbot", operator: "OpenAI" });
    expect(f.provenance.crawler!.source).toBe("openai-gptbot");
    expect(f.provenance.crawler!.data_date).toBe("2025-10-30T11:00:00.000Z");
    expect([f.type.datacenter, f.cloud_provider, f.cloud_region]).toEqual([true, null, null]);
    expect(f.provenance.datacenter!.source).toMatch(/^lord-alfred-(microsoft|github)-v4$/); // Microsoft's lists, GitHub's first
    expect(f.asn).toBe(8075);
  });

  it("answers IPv6 ranges: cloud regions, crawlers, VPN relays", () => {
    const googlebot6 = lookup("2001:4860:4801:10::1");
    expect(googlebot6.crawler?.id).toBe("googlebot");
    const linode = lookup("2600:3c00::1");
    expect([linode.cloud_provider, linode.cloud_region, linode.type.cloud]).toEqual(["linode", "US-TX", true]);
    const aws = rangesOf(fileSources.find((s) => s.id === "aws")!).find((r) => r.family === 6 && r.region === "eu-central-1")!;
    const f = ds.lookup(asIp(6, aws.start));
    expect([f.cloud_provider, f.cloud_region]).toEqual(["aws", "eu-central-1"]);
    const relay = lookup("2a02:26f7:b00a:4000::1");
    expect([relay.risk.vpn, relay.vpn_provider]).toEqual([true, "iCloud Private Relay"]);
  });

  it("names providers, organisations and regions from the operators' feeds", () => {
    expect(lookup("3.5.140.1")).toMatchObject({ cloud_provider: "aws", cloud_region: "ap-northeast-2" });
    expect(lookup("34.35.0.1")).toMatchObject({ cloud_provider: "gcp", cloud_region: "africa-south1" });
    expect(lookup("40.233.0.1")).toMatchObject({ cloud_provider: "oracle", cloud_region: "mx-monterrey-1" });
    expect(lookup("5.101.96.1")).toMatchObject({ cloud_provider: "digitalocean", cloud_region: null }); // the geofeed is withheld
    expect(lookup("52.95.110.1")).toMatchObject({ cloud_provider: "aws", cloud_region: "GLOBAL" });
    expect(lookup("94.130.0.1")).toMatchObject({ cloud_provider: "hetzner", cloud_region: null });
    expect(lookup("162.142.125.10")).toMatchObject({ scanner_org: "censys", risk: expect.objectContaining({ scanner: true }) });
    expect(lookup("23.144.160.67")).toMatchObject({ vpn_provider: "Mullvad", risk: expect.objectContaining({ vpn: true }) });
  });

  it("sets tor for an exit relay, proxy for an open proxy, and never residential_proxy", () => {
    const exit = lookup("204.8.96.141");
    expect(exit.risk.tor).toBe(true);
    expect(exit.provenance.tor!.source).toBe("tor-exits");
    expect(lookup("85.8.47.198").risk.proxy).toBe(true);
    for (const f of [exit, lookup("85.8.47.198"), lookup("104.28.28.5")]) expect(f.risk.residential_proxy).toBe(false);
  });

  it("classifies ISPs and mobile carriers by name", () => {
    const comcast = lookup("73.32.1.1");
    expect(flagsOf(comcast)).toEqual(["isp"]);
    expect(comcast.provenance.isp).toEqual({ source: "asn-ipv4", data_date: "2026-06-17T19:00:00.000Z" });
    expect(comcast.company).toEqual({ name: "Comcast Cable Communications, LLC", website: null, country: "US", category: "isp", confidence: "medium" });
    expect(flagsOf(lookup("172.56.1.1"))).toEqual(["isp", "mobile"]);
    // IPv6 addresses credit the IPv6 ASN input.
    const tmobile6 = lookup("2607:fb90::1");
    expect(flagsOf(tmobile6)).toEqual(["isp", "mobile"]);
    // T-Mobile USA (AS21928) is on data/mobile-carrier-asns.json, which outranks the name match.
    expect([tmobile6.provenance.isp!.source, tmobile6.provenance.mobile!.source]).toEqual(["mobile-carrier-asns", "mobile-carrier-asns"]);
  });

  it("returns all flags false for an address no source lists", () => {
    const ford = lookup("19.0.0.1");
    expect([ford.asn, ford.org]).toEqual([521, "Ford Motor Company"]);
    expect(flagsOf(ford)).toEqual([]);
    expect(ford.provenance).toEqual({});
    expect([ford.cloud_provider, ford.cloud_region, ford.vpn_provider, ford.scanner_org, ford.crawler]).toEqual([null, null, null, null, null]);
    expect(ford.company).toMatchObject({ category: "business", confidence: "low", website: null });
    const none = lookup("10.1.2.3");
    expect(none).toMatchObject({ asn: null, org: null, country: null, company: null, crawler: null, provenance: {} });
    expect(flagsOf(none)).toEqual([]);
  });

  it("gives provenance for exactly the true flags, with the source's date", () => {
    const dates = new Map(ds.meta.sources.map((s) => [s.id, s.data_date]));
    for (const text of ["3.5.140.1", "20.171.207.1", "185.220.101.1", "73.32.1.1", "172.56.1.1", "2001:4860:4801:10::1", "19.0.0.1", "162.142.125.10"]) {
      const f = lookup(text);
      const keys = Object.keys(f.provenance).sort();
      expect(keys, text).toEqual([...flagsOf(f), ...(f.crawler ? ["crawler"] : [])].sort());
      for (const p of Object.values(f.provenance)) expect(p.data_date, text).toBe(dates.get(p.source));
    }
  });

  it("returns one frozen object per table entry", () => {
    const a = lookup("3.5.140.1");
    expect(lookup("3.5.140.2")).toBe(a);
    expect(lookup("::ffff:3.5.140.1")).toBe(a);
    for (const o of [a, a.type, a.risk, a.company, a.provenance, a.provenance.cloud]) expect(Object.isFrozen(o)).toBe(true);
  });

  it("derives the company from the ASN: list-backed category and the country of most ranges", () => {
    expect(lookup("3.5.140.1").company).toEqual({ name: "Amazon.com, Inc.", website: null, country: "US", category: "hosting", confidence: "high" });
    expect(lookup("20.171.207.1").company?.country).toBe("US");
  });
});

describe("building from a sources directory with problems", () => {
  it("reports missing and drifted sources, counts bad rows, and still builds", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ip-facts-drift-"));
    try {
      const sources = join(dir, "sources");
      const put = (path: string, body: string | Buffer) => {
        mkdirSync(dirname(join(sources, path)), { recursive: true });
        writeFileSync(join(sources, path), body);
      };
      const byId = (id: string) => fileSources.find((s) => s.id === id)!;
      put(byId("aws").path, JSON.stringify({ syncToken: "1", create_date: "2026-08-21", prefixes: [] })); // drifted layout
      put(byId("openai-gptbot").path, bytesOf(byId("openai-gptbot")));
      const mullvad = bytesOf(byId("x4bnet-mullvadvpn")).toString("utf8");
      put(byId("x4bnet-mullvadvpn").path, `${mullvad}not-an-address\n`);
      const lines: string[] = [];
      // About the listed sources: the npm packages' ASN lists cut down will do.
      const built = await buildIpDataset({ dataDir: join(dir, "data"), sourcesDir: sources, snapshot: false, log: (l) => lines.push(l), ...smallNpmInputs(dir) });
      const status = (id: string) => built.sources.find((s) => s.id === id)!;
      expect(status("aws")).toMatchObject({ status: "failed", reason: expect.stringMatching(/^aws: not the aws-ip-ranges layout: createDate/), rows: 0 });
      expect(status("openai-gptbot")).toMatchObject({ status: "ok", rows: 21, bad_rows: 0 });
      expect(status("x4bnet-mullvadvpn")).toMatchObject({ status: "ok", bad_rows: 1 });
      expect(status("gcp")).toMatchObject({ status: "missing", reason: expect.stringMatching(/^not in /), sha256: null, taken: null });
      expect(lines.some((l) => /FAILED {2}aws: /.test(l))).toBe(true);
      const built2 = openIpDataset(join(dir, "data"));
      try {
        expect(built2.lookup(parseIp("20.171.207.1")!).crawler?.id).toBe("gptbot");
        expect(built2.lookup(parseIp("3.5.140.1")!).type.cloud).toBe(false); // AWS failed, nothing else lists it
        expect(built2.meta.source).toMatch(/ \+ 2\/\d+ listed sources$/);
      } finally {
        built2.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, scaled(120_000));
});


describe("building the withheld sources from a --sources folder over the snapshot", () => {
  it("takes each source from the folder when it has it, from the snapshot otherwise, and says which", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ip-facts-withheld-"));
    try {
      const fixtures = join(import.meta.dirname, "../fixtures/sources-withheld");
      // About the listed sources: the npm packages' ASN lists cut down will do.
      const built = await buildIpDataset({ dataDir: join(dir, "data"), sourcesDir: fixtures, ...smallNpmInputs(dir) });
      const status = (id: string) => built.sources.find((s) => s.id === id)!;
      for (const id of ["azure-westus3", "digitalocean", "disposable-starlink", "goodbots-commoncrawlbot"]) {
        expect(status(id), id).toMatchObject({ status: "ok", taken: null, note: null });
      }
      // A path the folder lacks comes from the snapshot, and the record says what was tried first.
      expect(status("aws")).toMatchObject({ status: "ok", note: expect.stringMatching(/^not in .*; used the snapshot taken \d{4}-\d{2}-\d{2}$/) });
      expect(status("azure-eastus")).toMatchObject({ status: "missing", reason: expect.stringMatching(/^not in .*; withheld from the snapshot/) });
      const ds2 = openIpDataset(join(dir, "data"));
      try {
        const gptbot = ds2.lookup(parseIp("20.171.207.1")!);
        expect([gptbot.crawler?.id, gptbot.cloud_provider, gptbot.cloud_region]).toEqual(["gptbot", "azure", "westus3"]);
        expect(gptbot.provenance.cloud!.source).toBe("azure-westus3");
        expect(ds2.lookup(parseIp("5.101.96.1")!)).toMatchObject({ cloud_provider: "digitalocean", cloud_region: "NL-NH" });
        const starlink = ds2.lookup(parseIp("98.97.0.1")!);
        expect([starlink.type.isp, starlink.provenance.isp?.source]).toEqual([true, "disposable-starlink"]);
        expect(ds2.lookup(parseIp("18.97.9.170")!).crawler).toEqual({ id: "ccbot", operator: "Common Crawl" });
      } finally {
        ds2.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, scaled(120_000));
});
