import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as mod from "../../src/datasets/mx.js";
import { MxResolver, systemMxDns, type MxDns, type MxOptions, type MxRecord } from "../../src/datasets/mx.js";
import { startDnsServer, type TestDnsServer } from "../integration/helpers/dns-server.js";

function dnsError(code: string): Error {
  return Object.assign(new Error(`query failed: ${code}`), { code });
}

/** In-memory MxDns: a string value is thrown as that error code; missing names are ENOTFOUND. */
class FakeDns implements MxDns {
  calls = 0;
  constructor(
    public mx: Record<string, MxRecord[] | string> = {},
    public a: Record<string, string[] | string> = {},
    public aaaa: Record<string, string[] | string> = {},
  ) {}
  resolveMx(d: string): Promise<MxRecord[]> {
    this.calls++;
    return answer(this.mx, d);
  }
  resolve4(h: string): Promise<string[]> {
    return answer(this.a, h, "ENODATA");
  }
  resolve6(h: string): Promise<string[]> {
    return answer(this.aaaa, h, "ENODATA");
  }
}
function answer<T>(table: Record<string, T[] | string>, key: string, missing = "ENOTFOUND"): Promise<T[]> {
  const v = table[key];
  if (v === undefined) return Promise.reject(dnsError(missing));
  return typeof v === "string" ? Promise.reject(dnsError(v)) : Promise.resolve(v);
}

function make(dns: MxDns, over: Partial<MxOptions> = {}): { r: MxResolver; clock: { t: number } } {
  const clock = { t: 1_000_000 };
  return { r: new MxResolver({ dns, timeoutMs: 1500, ttlMs: 60_000, negativeTtlMs: 5_000, maxEntries: 100, now: () => clock.t, ...over }), clock };
}

describe("mx module", () => {
  it("exports MAX_MX_HOSTS, MxResolver and systemMxDns only", () => {
    expect(Object.keys(mod).sort()).toEqual(["MAX_MX_HOSTS", "MxResolver", "systemMxDns"]);
  });
});

describe("MxResolver options", () => {
  it("rejects bad options with precise messages", () => {
    const dns = new FakeDns();
    expect(() => make({} as MxDns)).toThrow(/resolveMx/);
    expect(() => make(dns, { timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => make(dns, { ttlMs: -1 })).toThrow(/ttlMs/);
    expect(() => make(dns, { negativeTtlMs: Number.NaN })).toThrow(/negativeTtlMs/);
    expect(() => make(dns, { maxEntries: 1.5 })).toThrow(/maxEntries/);
  });
  it("refuses a non-domain as a rejection", async () => {
    await expect(make(new FakeDns()).r.lookup("")).rejects.toThrow(TypeError);
  });
});

describe("MxResolver outcomes", () => {
  const dns = new FakeDns(
    {
      "example.com": [
        { exchange: "MX2.Example.com.", priority: 20 },
        { exchange: "mx1.example.com", priority: 10 },
        { exchange: "mx1.example.com", priority: 30 },
      ],
      "nullmx.example": [{ exchange: "", priority: 0 }],
      "a-only.example": "ENODATA",
      "v6-only.example": "ENODATA",
      "nothing.example": "ENODATA",
      "broken.example": "ESERVFAIL",
      "half.example": "ENODATA",
    },
    { "a-only.example": ["192.0.2.1"], "half.example": "ETIMEOUT" },
    { "v6-only.example": ["2001:db8::1"] },
  );
  const { r } = make(dns);

  it("found: exchangers by preference, lower-case, deduplicated", async () => {
    expect(await r.lookup("Example.COM.")).toEqual({ outcome: "found", hosts: ["mx1.example.com", "mx2.example.com"], implicit: false, nullMx: false, cache: "miss" });
  });
  it("found through an implicit MX (RFC 5321 5.1) when only A or AAAA exists", async () => {
    expect(await r.lookup("a-only.example")).toMatchObject({ outcome: "found", hosts: ["a-only.example"], implicit: true });
    expect(await r.lookup("v6-only.example")).toMatchObject({ outcome: "found", hosts: ["v6-only.example"], implicit: true });
  });
  it("none: NXDOMAIN, no MX and no address, or a null MX (RFC 7505)", async () => {
    expect(await r.lookup("nx.example")).toMatchObject({ outcome: "none", hosts: [], nullMx: false });
    expect(await r.lookup("nothing.example")).toMatchObject({ outcome: "none", hosts: [] });
    expect(await r.lookup("nullmx.example")).toMatchObject({ outcome: "none", hosts: [], nullMx: true });
  });
  it("unresolved: a failed MX query, or a failed address query with no address found", async () => {
    expect(await r.lookup("broken.example")).toMatchObject({ outcome: "unresolved", hosts: [] });
    expect(await r.lookup("half.example")).toMatchObject({ outcome: "unresolved" });
  });
  it("caps the exchanger list", async () => {
    const many = Array.from({ length: 15 }, (_, i) => ({ exchange: `mx${i}.big.example`, priority: i }));
    const { r: r2 } = make(new FakeDns({ "big.example": many }));
    expect((await r2.lookup("big.example")).hosts).toHaveLength(mod.MAX_MX_HOSTS);
  });
});

describe("MxResolver canary", () => {
  const GMAIL = { "gmail.com": [{ exchange: "gmail-smtp-in.l.google.com", priority: 5 }] };
  it("keeps none while the canary domain has mail", async () => {
    const { r } = make(new FakeDns({ ...GMAIL }), { canary: "gmail.com" });
    expect(await r.lookup("nx.example")).toMatchObject({ outcome: "none" });
    expect(r.peek("nx.example")).toMatchObject({ outcome: "none" });
    expect(await r.lookup("gmail.com")).toMatchObject({ outcome: "found" });
  });
  it("reports none as unresolved when the canary looks mailless too (a resolver that cannot see the public DNS)", async () => {
    const dns = new FakeDns(); // NXDOMAIN for every name, as on an air-gapped host
    const { r } = make(dns, { canary: "gmail.com" });
    expect(await r.lookup("nx.example")).toMatchObject({ outcome: "unresolved", hosts: [], cache: "miss" });
    // The canary itself is known to have mail: mailless means the DNS is blind, not the domain.
    expect(await r.lookup("gmail.com")).toMatchObject({ outcome: "unresolved" });
    expect(await r.lookup("GMAIL.com.")).toMatchObject({ outcome: "unresolved", cache: "hit" });
    expect(r.peek("gmail.com")).toMatchObject({ outcome: "unresolved" });
    expect(r.peek("nx.example")).toMatchObject({ outcome: "unresolved" });
    // Found answers are not doubted, and the canary is cached like any domain.
    dns.mx["shop.example"] = [{ exchange: "mx.shop.example", priority: 10 }];
    expect(await r.lookup("shop.example")).toMatchObject({ outcome: "found" });
    const calls = dns.calls;
    await r.lookup("other.example");
    expect(dns.calls).toBe(calls + 1);
  });
  it("trusts every answer without a canary", async () => {
    const { r } = make(new FakeDns(), { canary: "" });
    expect(await r.lookup("nx.example")).toMatchObject({ outcome: "none" });
  });
});

describe("MxResolver cache", () => {
  it("serves found for ttlMs and none for negativeTtlMs, then asks again", async () => {
    const dns = new FakeDns({ "example.com": [{ exchange: "mx.example.com", priority: 10 }] });
    const { r, clock } = make(dns);
    expect((await r.lookup("example.com")).cache).toBe("miss");
    expect((await r.lookup("EXAMPLE.com")).cache).toBe("hit");
    expect((await r.lookup("nx.example")).cache).toBe("miss");
    expect(await r.lookup("nx.example")).toMatchObject({ outcome: "none", cache: "hit" });
    expect(dns.calls).toBe(2);
    clock.t += 5_001;
    expect((await r.lookup("nx.example")).cache).toBe("miss");
    expect((await r.lookup("example.com")).cache).toBe("hit");
    clock.t += 55_000;
    expect((await r.lookup("example.com")).cache).toBe("miss");
    expect(dns.calls).toBe(4);
  });
  it("never caches unresolved", async () => {
    const dns = new FakeDns({ "broken.example": "ESERVFAIL" });
    const { r } = make(dns);
    await r.lookup("broken.example");
    expect((await r.lookup("broken.example")).cache).toBe("miss");
    expect(r.size).toBe(0);
  });
  it("joins a lookup in flight instead of querying twice", async () => {
    const dns = new FakeDns({ "example.com": [{ exchange: "mx.example.com", priority: 10 }] });
    const { r } = make(dns);
    const [a, b] = await Promise.all([r.lookup("example.com"), r.lookup("example.com")]);
    expect([a.cache, b.cache]).toEqual(["miss", "hit"]);
    expect(dns.calls).toBe(1);
  });
  it("evicts the least recently used entry beyond maxEntries", async () => {
    const dns = new FakeDns();
    const { r } = make(dns, { maxEntries: 2 });
    await r.lookup("a.example");
    await r.lookup("b.example");
    await r.lookup("a.example"); // a is now the most recent
    await r.lookup("c.example");
    expect(r.size).toBe(2);
    expect(r.peek("a.example")).toBeDefined();
    expect(r.peek("b.example")).toBeUndefined();
  });
  it("gives callers a copy of the hosts", async () => {
    const { r } = make(new FakeDns({ "example.com": [{ exchange: "mx.example.com", priority: 10 }] }));
    (await r.lookup("example.com")).hosts.push("evil.example");
    expect((await r.lookup("example.com")).hosts).toEqual(["mx.example.com"]);
  });
});

describe("systemMxDns against a UDP DNS server on 127.0.0.1", () => {
  let server: TestDnsServer;
  let dns: MxDns;
  const make2 = (timeoutMs = 1500): MxResolver => new MxResolver({ dns, timeoutMs, ttlMs: 60_000, negativeTtlMs: 5_000, maxEntries: 100 });

  beforeAll(async () => {
    server = await startDnsServer({
      mx: {
        "mail.example.test": [
          { exchange: "mx2.mail.example.test", priority: 20 },
          { exchange: "MX1.mail.example.test.", priority: 10 },
        ],
        "nullmx.example.test": [{ exchange: ".", priority: 0 }],
      },
      a: { "web-only.example.test": ["192.0.2.7"] },
      silent: ["slow.example.test"],
      servfail: ["broken.example.test"],
    });
    dns = systemMxDns([`127.0.0.1:${server.port}`], { queryTimeoutMs: 200, tries: 1 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("reports the Node error codes the resolver relies on", async () => {
    await expect(dns.resolveMx("nx.example.test")).rejects.toMatchObject({ code: "ENOTFOUND" });
    await expect(dns.resolveMx("web-only.example.test")).rejects.toMatchObject({ code: "ENODATA" });
    await expect(dns.resolveMx("broken.example.test")).rejects.toMatchObject({ code: "ESERVFAIL" });
  });
  it("finds MX records, then answers from the cache", async () => {
    const r = make2();
    expect(await r.lookup("mail.example.test")).toEqual({
      outcome: "found",
      hosts: ["mx1.mail.example.test", "mx2.mail.example.test"],
      implicit: false,
      nullMx: false,
      cache: "miss",
    });
    const before = server.queries;
    expect((await r.lookup("mail.example.test")).cache).toBe("hit");
    expect(server.queries).toBe(before);
  });
  it("falls back to the A record (implicit MX)", async () => {
    expect(await make2().lookup("web-only.example.test")).toMatchObject({ outcome: "found", hosts: ["web-only.example.test"], implicit: true });
  });
  it("caches NXDOMAIN as none (negative cache)", async () => {
    const r = make2();
    expect(await r.lookup("nx.example.test")).toMatchObject({ outcome: "none", cache: "miss" });
    const before = server.queries;
    expect(await r.lookup("nx.example.test")).toMatchObject({ outcome: "none", cache: "hit" });
    expect(server.queries).toBe(before);
  });
  it("reads a null MX as none", async () => {
    expect(await make2().lookup("nullmx.example.test")).toMatchObject({ outcome: "none", nullMx: true });
  });
  it("gives unresolved on SERVFAIL and on timeout, without caching either", async () => {
    const r = make2(100);
    expect(await r.lookup("broken.example.test")).toMatchObject({ outcome: "unresolved" });
    // The resolver's own 100 ms timeout ends the lookup, long before the DNS client's 20 s one
    // would: the bound below is only there to tell the two apart, on a machine however busy.
    const patient = new MxResolver({ dns: systemMxDns([`127.0.0.1:${server.port}`], { queryTimeoutMs: 20_000, tries: 1 }), timeoutMs: 100, ttlMs: 60_000, negativeTtlMs: 5_000, maxEntries: 100 });
    const t0 = Date.now();
    expect(await patient.lookup("slow.example.test")).toMatchObject({ outcome: "unresolved", cache: "miss" });
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(patient.size).toBe(0);
    expect(r.size).toBe(0);
  });
});
