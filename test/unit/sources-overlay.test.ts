import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { combineFacts, type AsnFacts } from "../../scripts/sources/facts.js";
import type { RangeKind } from "../../scripts/sources/manifest.js";
import { overlayClaims, type Claim, type ClaimRange, type RangeFacts } from "../../scripts/sources/overlay.js";
import { classifyAsn } from "../../src/datasets/asn-class.js";

/** Runs the overlay and returns pieces as [start, end, facts] with numbers, for readable expectations. */
function overlay(claims: Claim[], ranges: Array<[number, number, number]>): Array<[number, number, RangeFacts]> {
  const facts: RangeFacts[] = [];
  const keys = new Map<string, number>();
  const intern = (f: RangeFacts) => {
    const key = JSON.stringify(f);
    let i = keys.get(key);
    if (i === undefined) keys.set(key, (i = facts.push(f) - 1));
    return i;
  };
  const input: ClaimRange[] = ranges.map(([start, end, claim], row) => ({ start: BigInt(start), end: BigInt(end), claim, row }));
  return overlayClaims(input, claims, intern).map((r) => [Number(r.start), Number(r.end), facts[r.value]!]);
}

let order = 0;
function claim(kind: RangeKind, source: string, extra: Partial<Claim> = {}): Claim {
  return { kind, source, order: order++, name: null, region: null, crawler: null, ...extra };
}

const none: RangeFacts = { flags: {}, cloud_provider: null, cloud_region: null, vpn_provider: null, scanner_org: null, crawler: null };

describe("overlayClaims", () => {
  it("splits a cloud range around a crawler range inside it (most specific crawler, cloud kept)", () => {
    const azure = claim("cloud", "azure-eastus", { name: "azure", region: "eastus" });
    const gptbot = claim("crawler", "openai-gptbot", { crawler: { id: "gptbot", operator: "OpenAI" } });
    const pieces = overlay([azure, gptbot], [[0, 255, 0], [16, 31, 1]]);
    const cloud = { ...none, flags: { cloud: "azure-eastus", datacenter: "azure-eastus" }, cloud_provider: "azure", cloud_region: "eastus" };
    expect(pieces).toEqual([
      [0, 15, cloud],
      [16, 31, { ...cloud, crawler: { id: "gptbot", operator: "OpenAI", source: "openai-gptbot" } }],
      [32, 255, cloud],
    ]);
  });

  it("sets the union of flags and credits each flag to its most specific source", () => {
    const dc = claim("datacenter", "x4bnet-datacenter-v4");
    const vpn = claim("vpn", "x4bnet-vpn-v4");
    const mullvad = claim("vpn", "x4bnet-mullvadvpn", { name: "Mullvad" });
    const tor = claim("tor", "tor-exits");
    const pieces = overlay([dc, vpn, mullvad, tor], [[0, 1023, 0], [256, 511, 1], [300, 300, 2], [300, 300, 3]]);
    expect(pieces.find(([s]) => s === 300)![2]).toEqual({
      ...none,
      flags: { datacenter: "x4bnet-datacenter-v4", vpn: "x4bnet-mullvadvpn", tor: "tor-exits" },
      vpn_provider: "Mullvad",
    });
    // Outside the named range, the unnamed list still says vpn, with no provider.
    expect(pieces.find(([s]) => s === 256)![2]).toEqual({ ...none, flags: { datacenter: "x4bnet-datacenter-v4", vpn: "x4bnet-vpn-v4" } });
  });

  it("takes a named value from the most specific range that has one", () => {
    const named = claim("vpn", "az0-nordvpn", { name: "NordVPN" });
    const unnamed = claim("vpn", "x4bnet-vpn-v4");
    const [piece] = overlay([named, unnamed], [[0, 255, 0], [0, 15, 1]]);
    // The /28 without a name is more specific for the flag, the /24 still names the provider.
    expect(piece![2]).toEqual({ ...none, flags: { vpn: "x4bnet-vpn-v4" }, vpn_provider: "NordVPN" });
  });

  it("breaks ties between equal ranges by manifest order, whatever the input order", () => {
    const first = claim("crawler", "google-googlebot", { crawler: { id: "googlebot", operator: "Google" } });
    const second = claim("crawler", "sefinek-googlebot", { crawler: { id: "googlebot-copy", operator: "Google" } });
    const a = overlay([first, second], [[10, 20, 0], [10, 20, 1]]);
    const b = overlay([first, second], [[10, 20, 1], [10, 20, 0]]);
    expect(a).toEqual(b);
    expect(a[0]![2].crawler).toEqual({ id: "googlebot", operator: "Google", source: "google-googlebot" });
  });

  it("keeps adjacent ranges with different facts apart and joins equal neighbours", () => {
    const aws1 = claim("cloud", "aws", { name: "aws", region: "us-east-1" });
    const aws2 = claim("cloud", "aws", { name: "aws", region: "us-west-2" });
    expect(overlay([aws1, aws2], [[0, 9, 0], [10, 19, 1], [20, 29, 1]]).map(([s, e, f]) => [s, e, f.cloud_region])).toEqual([
      [0, 9, "us-east-1"],
      [10, 29, "us-west-2"],
    ]);
  });

  it("takes the region only from ranges of the chosen provider", () => {
    const gcp = claim("cloud", "gcp", { name: "gcp", region: "europe-west4" });
    const fastly = claim("cloud", "fastly", { name: "fastly" });
    const [, inner] = overlay([gcp, fastly], [[0, 255, 0], [64, 127, 1]]);
    expect(inner![2].cloud_provider).toBe("fastly");
    expect(inner![2].cloud_region).toBeNull();
  });

  it("handles partial overlaps, gaps and single addresses", () => {
    const a = claim("scanner", "s1", { name: "censys" });
    const b = claim("proxy", "p1");
    const pieces = overlay([a, b], [[0, 10, 0], [5, 15, 1], [20, 20, 1]]);
    expect(pieces.map(([s, e, f]) => [s, e, Object.keys(f.flags).sort().join("+")])).toEqual([
      [0, 4, "scanner"],
      [5, 10, "proxy+scanner"],
      [11, 15, "proxy"],
      [20, 20, "proxy"],
    ]);
  });

  it("agrees with a per-address reference on random ranges", () => {
    const kinds: RangeKind[] = ["cloud", "datacenter", "vpn", "scanner", "crawler", "tor"];
    const round = (g: fc.GeneratorValue): void => {
      const rand = (n: number): number => g(fc.nat, { max: n - 1 });
      const claims = Array.from({ length: 6 }, (_, i) =>
        claim(kinds[i]!, `src${i}`, { name: `n${rand(3)}`, region: kinds[i] === "cloud" ? `r${rand(2)}` : null, crawler: kinds[i] === "crawler" ? { id: `c${i}`, operator: "o" } : null }),
      );
      const ranges: Array<[number, number, number]> = Array.from({ length: 12 }, () => {
        const s = rand(200);
        return [s, s + rand(60), rand(6)];
      });
      const pieces = overlay(claims, ranges);
      for (let addr = 0; addr < 270; addr++) {
        const covering = ranges
          .map(([s, e, c], row) => ({ s, e, c, row }))
          .filter((r) => r.s <= addr && addr <= r.e);
        const got = pieces.find(([s, e]) => s <= addr && addr <= e)?.[2];
        if (covering.length === 0) {
          expect(got, `addr ${addr}`).toBeUndefined();
          continue;
        }
        // Reference: the most specific covering range of each kind.
        const best = (kind: RangeKind) =>
          covering
            .filter((r) => claims[r.c]!.kind === kind)
            .sort((x, y) => x.e - x.s - (y.e - y.s) || claims[x.c]!.order - claims[y.c]!.order || x.row - y.row)[0];
        const scanner = best("scanner");
        const crawler = best("crawler");
        expect(got!.flags.scanner, `addr ${addr}`).toBe(scanner && claims[scanner.c]!.source);
        expect(got!.scanner_org).toBe(scanner ? claims[scanner.c]!.name : null);
        expect(got!.crawler?.id ?? null).toBe(crawler ? claims[crawler.c]!.crawler!.id : null);
        const dcWinner = covering
          .filter((r) => ["cloud", "datacenter"].includes(claims[r.c]!.kind))
          .sort((x, y) => x.e - x.s - (y.e - y.s) || claims[x.c]!.order - claims[y.c]!.order || x.row - y.row)[0];
        expect(got!.flags.datacenter).toBe(dcWinner && claims[dcWinner.c]!.source);
      }
    };
    fc.assert(fc.property(fc.gen(), round), { numRuns: 20 });
  });
});

describe("combineFacts", () => {
  const asnFacts = (name: string, listed: Partial<{ hosting: string; vpn: string; vpnProvider: string }> = {}): AsnFacts => ({
    cls: classifyAsn({ name, hostingListed: Boolean(listed.hosting), vpnListed: Boolean(listed.vpn) }),
    hostingSource: listed.hosting ?? listed.vpn ?? null,
    vpnSource: listed.vpn ?? null,
    vpnProvider: listed.vpnProvider ?? null,
  });

  it("gives isp and mobile from the ASN name when nothing says hosting", () => {
    expect(combineFacts(null, asnFacts("T-Mobile USA, Inc."), "asn-ipv4").provenance).toEqual({ isp: "asn-ipv4", mobile: "asn-ipv4" });
    expect(combineFacts(null, asnFacts("Comcast Cable Communications, LLC"), "asn-ipv4").provenance).toEqual({ isp: "asn-ipv4" });
    expect(combineFacts(null, asnFacts("Ford Motor Company"), "asn-ipv4").provenance).toEqual({});
  });

  it("never sets isp or mobile together with hosting evidence", () => {
    const cloud: RangeFacts = { ...none, flags: { cloud: "aws", datacenter: "aws" }, cloud_provider: "aws" };
    expect(combineFacts(cloud, asnFacts("Verizon Wireless"), "asn-ipv4").provenance).toEqual({ cloud: "aws", datacenter: "aws", hosting: "aws" });
    expect(combineFacts(null, asnFacts("Some Telecom", { hosting: "bad-asn-list" }), "asn-ipv4").provenance).toEqual({ datacenter: "bad-asn-list", hosting: "bad-asn-list" });
  });

  it("keeps an isp range's evidence even inside hosting evidence", () => {
    const starlink: RangeFacts = { ...none, flags: { isp: "disposable-starlink", datacenter: "x4bnet-datacenter-v4" } };
    expect(combineFacts(starlink, null, "asn-ipv4").provenance).toEqual({ isp: "disposable-starlink", datacenter: "x4bnet-datacenter-v4", hosting: "x4bnet-datacenter-v4" });
  });

  it("credits a name-based hosting classification to the ASN input", () => {
    expect(combineFacts(null, asnFacts("Example Hosting Ltd"), "asn-ipv6").provenance).toEqual({ datacenter: "asn-ipv6", hosting: "asn-ipv6" });
  });

  it("takes vpn from a VPN ASN list when no range says so, with the list's provider", () => {
    const f = combineFacts(null, asnFacts("Tefincom S.A.", { vpn: "x4bnet-vpn-asn", vpnProvider: "NordVPN" }), "asn-ipv4");
    expect(f.provenance).toEqual({ vpn: "x4bnet-vpn-asn", datacenter: "x4bnet-vpn-asn", hosting: "x4bnet-vpn-asn" });
    expect(f.vpn_provider).toBe("NordVPN");
    const unnamedRange: RangeFacts = { ...none, flags: { vpn: "x4bnet-vpn-v4" } };
    const g = combineFacts(unnamedRange, asnFacts("Tefincom S.A.", { vpn: "x4bnet-vpn-asn", vpnProvider: "NordVPN" }), "asn-ipv4");
    expect([g.provenance.vpn, g.vpn_provider]).toEqual(["x4bnet-vpn-v4", "NordVPN"]);
  });

  it("never sets residential_proxy and leaves names null without their flag", () => {
    const f = combineFacts({ ...none, flags: { proxy: "monosans-http" } }, null, "asn-ipv4");
    expect(f).toEqual({ provenance: { proxy: "monosans-http" }, cloud_provider: null, cloud_region: null, vpn_provider: null, scanner_org: null, crawler: null });
  });
});
