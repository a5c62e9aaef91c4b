import { describe, expect, it } from "vitest";
import { buildIpRecord, ipRecordJson } from "../../src/scoring/ip-record.js";

describe("ipRecordJson", () => {
  const bases = [
    Object.freeze({ asn: 15169, org: 'Google "LLC"\\', country: "US" }),
    Object.freeze({ asn: null, org: null, country: null }),
    Object.freeze({ asn: 13335, org: "Cloudflare, Inc.", country: null }),
  ];
  it("equals JSON.stringify of the record, for cached and uncached records", () => {
    for (const base of bases) {
      for (const [ip, v] of [["8.8.8.8", 4], ["2001:db8::1", 6], ['weird"ip', 4]] as const) {
        expect(ipRecordJson(ip, v, base)).toBe(JSON.stringify(buildIpRecord(ip, v, base)));
        expect(JSON.parse(ipRecordJson(ip, v, base))).toEqual(buildIpRecord(ip, v, base));
      }
    }
  });
});
