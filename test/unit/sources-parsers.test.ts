import { describe, expect, it } from "vitest";
import { parseCidr } from "../../scripts/sources/cidr.js";
import { isNpmSource, loadManifest, type FileSource } from "../../scripts/sources/manifest.js";
import { scannerOrgFromComment, vpnProviderFromComment } from "../../scripts/sources/names.js";
import { FormatDriftError, isoTimestamp, parseSourceFile, splitLooseCsv } from "../../scripts/sources/parsers.js";
import { loadSnapshot, snapshotBytes } from "../../scripts/sources/snapshot.js";

/** A minimal manifest entry for feeding a parser. */
function source(format: string, extra: Partial<FileSource> = {}): FileSource {
  return { id: "test-src", kind: "cloud", format, path: "x/y.txt", upstream: "https://example.test/y", licence: "test", provider: "test", ...extra };
}

const parse = (format: string, text: string, extra: Partial<FileSource> = {}) => parseSourceFile(Buffer.from(text), source(format, extra));
const cidrs = (r: { ranges: Array<{ start: bigint; end: bigint }> }) => r.ranges.map((x) => `${x.start}-${x.end}`);

describe("parseCidr", () => {
  it("reads IPv4 and IPv6 CIDRs and single addresses", () => {
    expect(parseCidr("1.2.3.0/24")).toEqual({ family: 4, start: 0x01020300n, end: 0x010203ffn, prefix: 24 });
    expect(parseCidr("1.2.3.4")).toEqual({ family: 4, start: 0x01020304n, end: 0x01020304n, prefix: 32 });
    expect(parseCidr("2001:db8::/32")).toMatchObject({ family: 6, start: 0x20010db8n << 96n, end: (0x20010db9n << 96n) - 1n });
    expect(parseCidr("0.0.0.0/0")).toMatchObject({ start: 0n, end: 0xffffffffn });
  });

  it("explains what is wrong with a bad row", () => {
    expect(parseCidr("1.2.3.4/24")).toMatch(/host bits set/);
    expect(parseCidr("1.2.3.0/33")).toMatch(/bad prefix length/);
    expect(parseCidr("1.2.3.0/")).toMatch(/bad prefix length/);
    expect(parseCidr("::ffff:1.2.3.4")).toMatch(/IPv4-mapped/);
    expect(parseCidr("example.com")).toMatch(/not an address/);
    expect(parseCidr("01.2.3.4")).toMatch(/not an address/);
  });
});

describe("isoTimestamp", () => {
  it.each([
    ["2026-08-21-07-37-05", "2026-08-21T07:37:05.000Z"], // AWS createDate
    ["2026-08-21T01:05:42.583377", "2026-08-21T01:05:42.583Z"], // Google, no zone: UTC
    ["2026-08-21T10:00:05Z", "2026-08-21T10:00:05.000Z"],
    ["2026-07-27T14:00:04.173594+00:00", "2026-07-27T14:00:04.173Z"],
    ["2026-07-27T16:00:04+0200", "2026-07-27T14:00:04.000Z"],
  ])("%s -> %s", (input, want) => expect(isoTimestamp(input)).toBe(want));

  it("returns null for anything else", () => {
    for (const s of ["", "yesterday", "2026-13-45T00:00:00", "1787297825"]) expect(isoTimestamp(s), s).toBeNull();
  });
});

describe("splitLooseCsv", () => {
  it("reads RFC 4180 fields and tolerates spaces around them (bad-asn-list rows)", () => {
    expect(splitLooseCsv('198375,"INULOGIC SARL, FR"')).toEqual(["198375", "INULOGIC SARL, FR"]);
    expect(splitLooseCsv('51447, "RootLayer Web Services Ltd, NL"')).toEqual(["51447", "RootLayer Web Services Ltd, NL"]);
    expect(splitLooseCsv('"35974","Carpathia ""Hosting"""')).toEqual(["35974", 'Carpathia "Hosting"']);
    expect(splitLooseCsv("a, b ,c")).toEqual(["a", "b", "c"]);
    expect(splitLooseCsv('a,"open')).toBeNull();
    expect(splitLooseCsv('a,"x"y')).toBeNull();
  });
});

describe("text formats", () => {
  it("cidr-list keeps comments as row names and skips comment lines", () => {
    const r = parse("cidr-list", "# header\n\n1.2.3.0/24\n5.6.7.8 # census1.shodan.io\n2001:db8::/32\r\n");
    expect(r.rows).toBe(3);
    expect(r.badRows).toBe(0);
    expect(r.ranges.map((x) => x.name)).toEqual([null, "census1.shodan.io", null]);
    expect(r.ranges.map((x) => x.family)).toEqual([4, 4, 6]);
  });

  it("counts a few bad rows and keeps the rest", () => {
    const good = Array.from({ length: 100 }, (_, i) => `10.0.${i}.0/24`).join("\n");
    const r = parse("cidr-list", `${good}\n/w00tw00t.at.ISC.SANS\n1.2.3.4/24\n`);
    expect(r.rows).toBe(102);
    expect(r.badRows).toBe(2);
    expect(r.badExamples).toEqual([expect.stringMatching(/not an address/), expect.stringMatching(/host bits set/)]);
    expect(r.ranges).toHaveLength(100);
  });

  it("fails as drifted when most rows do not parse (an HTML error page instead of a list)", () => {
    expect(() => parse("cidr-list", "<html>\n<body>Rate limited</body>\n</html>\n")).toThrow(FormatDriftError);
    expect(() => parse("cidr-list", "<html>\n<body>Rate limited</body>\n</html>\n")).toThrow(/3 of 3 rows do not parse as cidr-list.*drifted/);
  });

  it("fails as drifted past 5% bad rows", () => {
    const good = Array.from({ length: 50 }, (_, i) => `10.0.${i}.0/24`);
    expect(() => parse("cidr-list", [...good, "x", "y", "z", "w"].join("\n"))).toThrow(/4 of 54 rows/);
    expect(parse("cidr-list", [...good, "x", "y"].join("\n")).badRows).toBe(2);
  });

  it("host-port-list reads proxy listen addresses", () => {
    const r = parse("host-port-list", "85.8.47.198:7080\n[2001:db8::1]:1080\n1.2.3.4:99999\n1.2.3.5:80\n");
    expect(r.rows).toBe(4);
    expect(r.badRows).toBe(1);
    expect(cidrs(r)).toEqual([`${0x55082fc6}-${0x55082fc6}`, `${0x20010db8n << 96n | 1n}-${0x20010db8n << 96n | 1n}`, `${0x01020305}-${0x01020305}`]);
  });

  it("csv formats check their header", () => {
    expect(parse("sefinek-csv", "IP,Name,Sources\n4.227.36.0/25,GPTBot,https://openai.com/gptbot.json\n").ranges[0]!.name).toBe("GPTBot");
    expect(() => parse("sefinek-csv", "ip,label\n1.2.3.4,x\n")).toThrow(/header is "ip,label", expected "ip,name,sources"/);
    expect(() => parse("type-address-csv", "")).toThrow(/empty file/);
    const t = parse("type-address-csv", "Type,Address\nIPv4,1.2.3.0/24\nIPv6,1.2.4.0/24\nIPv6,2001:db8::/32\n");
    expect(t.badRows).toBe(1);
    expect(t.badExamples[0]).toMatch(/type IPv6 does not match 1.2.4.0\/24/);
  });

  it("tor-onionoo-csv reads OR addresses of exit relays", () => {
    const r = parse("tor-onionoo-csv", "fingerprint, ipaddr, port\n0008D9640FE4947F73E355F67E20C2D290BBC72C, 204.8.96.141, 444\n0008D9640FE4947F73E355F67E20C2D290BBC72C, 2620:7:6003::141, 81\n");
    expect(r.ranges.map((x) => x.family)).toEqual([4, 6]);
    expect(r.badRows).toBe(0);
  });

  it("geofeed-csv keeps the region", () => {
    const r = parse("geofeed-csv", "# comment\n5.101.96.0/21,NL,NL-NH,Amsterdam,1098 XH\n2600:3c00::/32,US,,,\n");
    expect(r.ranges.map((x) => x.region)).toEqual(["NL-NH", null]);
  });

  it("ASN lists read names and reject non-numbers", () => {
    const a = parse("asn-comment-list", "AS9009 # M247, GB (NordVPN)\nAS60729 # Tor Servers\nASX # broken\n", { kind: "vpn-asn", provider: undefined });
    expect(a.asns).toEqual([{ asn: 9009, name: "M247, GB (NordVPN)" }, { asn: 60729, name: "Tor Servers" }]);
    expect(a.badRows).toBe(1);
    const b = parse("asn-entity-csv", 'ASN,Entity\n198375,"INULOGIC SARL, FR"\n"35974","Carpathia Hosting, Inc."\n', { kind: "hosting-asn", provider: undefined });
    expect(b.asns.map((x) => x.asn)).toEqual([198375, 35974]);
  });
});

describe("JSON formats", () => {
  it("aws-ip-ranges reads regions, keeps AWS's GLOBAL label, filters services and dates the file", () => {
    const doc = {
      syncToken: "1",
      createDate: "2026-08-21-07-37-05",
      prefixes: [
        { ip_prefix: "3.5.140.0/22", region: "ap-northeast-2", service: "AMAZON", network_border_group: "ap-northeast-2" },
        { ip_prefix: "52.95.110.0/24", region: "GLOBAL", service: "ROUTE53_HEALTHCHECKS", network_border_group: "GLOBAL" },
        { prefix: "1.2.3.0/24" },
      ],
      ipv6_prefixes: [{ ipv6_prefix: "2600:1f00::/24", region: "us-east-1", service: "EC2", network_border_group: "us-east-1" }],
    };
    const all = parse("aws-ip-ranges", JSON.stringify(doc));
    expect(all.dataDate).toBe("2026-08-21T07:37:05.000Z");
    expect(all.ranges.map((r) => r.region)).toEqual(["ap-northeast-2", "GLOBAL", "us-east-1"]);
    expect(all.badRows).toBe(1);
    const r53 = parse("aws-ip-ranges", JSON.stringify(doc), { options: { services: ["ROUTE53_HEALTHCHECKS"] } });
    expect(r53.ranges).toHaveLength(1);
  });

  it("fails as drifted when the envelope changes", () => {
    expect(() => parse("aws-ip-ranges", JSON.stringify({ syncToken: "1", prefixes: [], ipv6_prefixes: [] }))).toThrow(/not the aws-ip-ranges layout: createDate/);
    expect(() => parse("aws-ip-ranges", JSON.stringify({ syncToken: "1", createDate: "soon", prefixes: [], ipv6_prefixes: [] }))).toThrow(/createDate "soon" is not a timestamp/);
    expect(() => parse("google-ranges-json", "<html>")).toThrow(/not JSON/);
    expect(() => parse("prefix-lists-json", JSON.stringify({ IPv4Prefixes: "1.2.3.0/24", IPv6Prefixes: null }))).toThrow(FormatDriftError);
    expect(() => parse("datadog-json", JSON.stringify({ version: 1, modified: "2026-01-01T00:00:00", synthetics: [] }), { options: { keys: ["synthetics"] } })).toThrow(
      /"synthetics" is not a \{prefixes_ipv4, prefixes_ipv6\} object/,
    );
  });

  it("google-ranges-json takes GCP's scope as the region", () => {
    const r = parse("google-ranges-json", JSON.stringify({ creationTime: "2026-08-21T01:05:42.583377", prefixes: [{ ipv4Prefix: "34.35.0.0/16", scope: "africa-south1" }, { ipv6Prefix: "2600:1900::/28" }] }));
    expect(r.ranges.map((x) => x.region)).toEqual(["africa-south1", null]);
    expect(r.dataDate).toBe("2026-08-21T01:05:42.583Z");
  });

  it("azure-service-tag-json takes the tag's region", () => {
    const tag = { name: "AzureCloud.eastus", id: "AzureCloud.eastus", properties: { changeNumber: 1, region: "eastus", regionId: 32, platform: "Azure", systemService: "", addressPrefixes: ["4.156.0.0/15"] } };
    expect(parse("azure-service-tag-json", JSON.stringify(tag)).ranges[0]!.region).toBe("eastus");
  });

  it("refuses an unknown format", () => {
    expect(() => parse("no-such-format", "")).toThrow(/no parser for format "no-such-format"/);
  });
});

describe("names from comments", () => {
  it.each([
    ["census1.shodan.io", "shodan"],
    ["do-prod-us-west-scanner-0402-5.do.binaryedge.ninja", "binaryedge"],
    ["scanners.labs.rapid7.com", "rapid7"],
    ["umich.edu", "umich"],
    ["research.example.co.uk", "example"],
    ["ninja.", "ninja"],
    ["ANSSI", "anssi"],
    ["openportstats.com\t", "openportstats"],
    ["13.249.87.125", null],
    ["", null],
  ])("scanner %j -> %j", (comment, want) => expect(scannerOrgFromComment(comment)).toBe(want));

  it.each([
    ["M247, GB (NordVPN)", "NordVPN"],
    ["Packethub (NordVPN)", "NordVPN"],
    ["Surfshark", "Surfshark"],
    ["VPNtranet, LLC.", "VPNtranet"],
    ["Datacamp VPN?", "Datacamp VPN"],
    ["ProtonVPN (https://github.com/X4BNet/lists_vpn/issues/248)", "ProtonVPN"],
    ["Tor Servers (Tor exit nodes)", "Tor Servers"],
    ["https://github.com/X4BNet/lists_vpn/issues/235", null],
    [null, null],
  ])("vpn %j -> %j", (comment, want) => expect(vpnProviderFromComment(comment)).toBe(want));
});

describe("every manifest source against the repository's snapshot", () => {
  const snapshot = loadSnapshot();
  const sources = loadManifest().sources.filter((s): s is FileSource => !isNpmSource(s));
  const shipped = sources.filter((s) => snapshot.files.has(s.path));
  const withheld = sources.filter((s) => !snapshot.files.has(s.path));

  it("ships most sources and lists every other one as withheld, with its reason", () => {
    expect(shipped.length).toBeGreaterThan(150);
    for (const s of withheld) expect(snapshot.withheld.get(s.path)?.reason, s.id).toMatch(/licence/);
  });

  it.each(shipped.map((s) => [s.id, s] as const))("%s parses with its format and few bad rows", (_id, s) => {
    const r = parseSourceFile(snapshotBytes(snapshot, s.path), s, snapshot.files.get(s.path)!.format);
    expect(r.rows).toBeGreaterThan(0);
    expect(r.badRows).toBeLessThanOrEqual(Math.max(2, r.rows * 0.05));
    expect(r.ranges.length + r.asns.length).toBe(r.rows - r.badRows);
  });

  it("reports a drifted file as such: AWS's feed read as Google's layout", () => {
    const aws = sources.find((s) => s.id === "aws")!;
    expect(() => parseSourceFile(snapshotBytes(snapshot, aws.path), aws, "google-ranges-json")).toThrow(/not the google-ranges-json layout: creationTime/);
  });
});
