import { describe, expect, it } from "vitest";
import type { IpFacts } from "../../src/datasets/ip-facts.js";
import { buildIpRecord, flagsOf, ipRecordJson } from "../../src/scoring/ip-record.js";

const none = { datacenter: false, hosting: false, isp: false, mobile: false, cloud: false };
const clean = { proxy: false, vpn: false, tor: false, residential_proxy: false, scanner: false };
function facts(over: Partial<IpFacts>): IpFacts {
  return Object.freeze({
    asn: null, org: null, country: null, type: none, risk: clean, cloud_provider: null, cloud_region: null,
    vpn_provider: null, scanner_org: null, crawler: null, company: null, provenance: {}, ...over,
  });
}

const aws = facts({
  asn: 16509, org: 'Amazon.com, "Inc."\\', country: "FR",
  type: { ...none, cloud: true, datacenter: true, hosting: true }, risk: { ...clean, tor: true },
  cloud_provider: "aws", cloud_region: "eu-west-3", vpn_provider: "Mullvad", crawler: { id: "googlebot", operator: "Google" },
  company: { name: "Amazon.com, Inc.", website: null, country: "US", category: "hosting", confidence: "high" },
  provenance: { cloud: { source: "aws-ip-ranges", data_date: "2026-08-21T00:00:00Z" } },
});
const empty = facts({});

describe("IP record", () => {
  it("fills cloud_* only with region, company only with company, hostname only with rdns", () => {
    const base = buildIpRecord("35.180.1.1", 4, false, aws, { region: false, company: false });
    expect(base.network).toMatchObject({ cloud_provider: null, cloud_region: null, hostname: null, hostname_verified: null });
    expect(base).not.toHaveProperty("company");
    const full = buildIpRecord("35.180.1.1", 4, false, aws, { region: true, company: true, rdns: { hostname: "h.example", verified: true } });
    expect(full.network).toMatchObject({ cloud_provider: "aws", cloud_region: "eu-west-3", hostname: "h.example", hostname_verified: true });
    expect(full.company).toEqual(aws.company);
    expect(Object.keys(full)).toEqual(["ip", "ip_version", "bogon", "network", "company", "location", "type", "risk", "flags", "details"]);
    expect(full.details).toEqual({ vpn_provider: "Mullvad", scanner_org: null, crawler: { id: "googlebot", operator: "Google" } });
    expect(buildIpRecord("x", 4, false, empty, { region: false, company: false }).details).toEqual({ vpn_provider: null, scanner_org: null, crawler: null });
  });

  it("lists the true attributes as flags, type first", () => {
    expect(buildIpRecord("x", 4, false, aws, { region: false, company: false }).flags).toEqual(["datacenter", "hosting", "cloud", "tor"]);
    expect(flagsOf(none, clean)).toEqual([]);
  });

  it("ipRecordJson equals JSON.stringify of the record for every variant, cached or not", () => {
    for (const f of [aws, empty]) {
      for (const region of [false, true]) {
        for (const company of [false, true]) {
          for (const [ip, v] of [["35.180.1.1", 4], ["2001:db8::1", 6], ['weird"ip', 4]] as const) {
            const opts = { region, company };
            expect(ipRecordJson(ip, v, false, f, opts)).toBe(JSON.stringify(buildIpRecord(ip, v, false, f, opts)));
            expect(ipRecordJson(ip, v, false, f, opts)).toBe(JSON.stringify(buildIpRecord(ip, v, false, f, opts)));
          }
        }
      }
    }
    const rdns = { region: true, company: true, rdns: { hostname: "h", verified: false } };
    expect(ipRecordJson("1.2.3.4", 4, false, aws, rdns)).toBe(JSON.stringify(buildIpRecord("1.2.3.4", 4, false, aws, rdns)));
  });
});
