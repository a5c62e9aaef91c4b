import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import * as rdns from "../../src/datasets/rdns.js";
import { RdnsResolver, reverseName, systemDns, type DnsLookup, type RdnsOptions } from "../../src/datasets/rdns.js";
import { startDnsServer, type TestDnsServer } from "../integration/helpers/dns-server.js";

function dnsError(code: string): Error {
  return Object.assign(new Error(`query failed: ${code}`), { code });
}

/**
 * In-memory DnsLookup. A table value that is a string is thrown as that error code; `hang`
 * names make the call never settle (unless released with `release`). Calls are counted.
 */
class FakeDns implements DnsLookup {
  calls = { reverse: 0, resolve4: 0, resolve6: 0 };
  hang = new Set<string>();
  #waiting: Array<() => void> = [];

  constructor(
    public ptr: Record<string, string[] | string> = {},
    public a: Record<string, string[] | string> = {},
    public aaaa: Record<string, string[] | string> = {},
  ) {}

  reverse(ip: string): Promise<string[]> {
    this.calls.reverse++;
    return this.#answer(this.ptr, ip);
  }
  resolve4(host: string): Promise<string[]> {
    this.calls.resolve4++;
    return this.#answer(this.a, host);
  }
  resolve6(host: string): Promise<string[]> {
    this.calls.resolve6++;
    return this.#answer(this.aaaa, host);
  }
  /** Lets every hanging call settle with its table answer. */
  release(): void {
    for (const go of this.#waiting.splice(0)) go();
  }

  #answer(table: Record<string, string[] | string>, key: string): Promise<string[]> {
    const settle = (): Promise<string[]> => {
      const v = table[key];
      if (v === undefined) return Promise.reject(dnsError("ENOTFOUND"));
      return typeof v === "string" ? Promise.reject(dnsError(v)) : Promise.resolve(v);
    };
    if (!this.hang.has(key)) return settle();
    return new Promise<void>((res) => this.#waiting.push(res)).then(settle);
  }
}

/** A resolver over `dns` with a manual clock starting at 1_000_000. */
function make(dns: DnsLookup, over: Partial<RdnsOptions> = {}): { r: RdnsResolver; clock: { t: number } } {
  const clock = { t: 1_000_000 };
  const r = new RdnsResolver({ dns, timeoutMs: 1500, ttlMs: 60_000, negativeTtlMs: 5_000, maxEntries: 100, now: () => clock.t, ...over });
  return { r, clock };
}

// Documentation and test ranges only (RFC 5737, RFC 3849): never real hosts.
const V4 = "192.0.2.1";
const V6 = "2001:db8::1";

describe("rdns module", () => {
  it("exports RdnsResolver, systemDns, reverseName and hostnameMatchesMask only", () => {
    expect(Object.keys(rdns).sort()).toEqual(["RdnsResolver", "hostnameMatchesMask", "reverseName", "systemDns"]);
  });
});

describe("reverseName", () => {
  it("builds in-addr.arpa names for IPv4", () => {
    expect(reverseName("192.0.2.1")).toBe("1.2.0.192.in-addr.arpa");
    expect(reverseName("::ffff:10.20.30.40")).toBe("40.30.20.10.in-addr.arpa");
  });
  it("builds ip6.arpa names for IPv6 (the RFC 3596 example)", () => {
    expect(reverseName("4321:0:1:2:3:4:567:89ab")).toBe("b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.0.0.0.0.1.2.3.4.ip6.arpa");
  });
  it("throws on text that is not an address", () => {
    expect(() => reverseName("example.com")).toThrow(TypeError);
  });
});

describe("RdnsResolver options", () => {
  const dns = new FakeDns();
  it.each([
    [{ timeoutMs: 0 }, /timeoutMs/],
    [{ timeoutMs: Number.POSITIVE_INFINITY }, /timeoutMs/],
    [{ ttlMs: -1 }, /ttlMs/],
    [{ negativeTtlMs: Number.NaN }, /negativeTtlMs/],
    [{ maxEntries: 1.5 }, /maxEntries/],
    [{ maxEntries: -1 }, /maxEntries/],
  ])("rejects %o", (over, message) => {
    expect(() => make(dns, over as Partial<RdnsOptions>)).toThrow(message);
  });
  it("rejects a dns object missing a method", () => {
    expect(() => make({ reverse: dns.reverse } as unknown as DnsLookup)).toThrow(/options.dns/);
  });
});

describe("RdnsResolver with a fake DnsLookup", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("verifies an IPv4 name whose A records contain the address; lower-cases it and drops the trailing dot", async () => {
    const dns = new FakeDns({ [V4]: ["Host-1.Example.TEST.", "other.example.test."] }, { "host-1.example.test": ["198.51.100.9", V4] });
    const { r } = make(dns);
    expect(await r.lookup(V4)).toMatchObject({ hostname: "host-1.example.test", verified: true, outcome: "miss" });
    expect(dns.calls).toEqual({ reverse: 1, resolve4: 1, resolve6: 0 });
  });

  it("serves the second lookup from cache as a hit, with no queries", async () => {
    const dns = new FakeDns({ [V4]: ["h.test"] }, { "h.test": [V4] });
    const { r } = make(dns);
    await r.lookup(V4);
    expect(await r.lookup(V4)).toMatchObject({ hostname: "h.test", verified: true, outcome: "hit" });
    expect(dns.calls.reverse).toBe(1);
    expect(r.size).toBe(1);
  });

  it("verifies IPv6 with AAAA records, comparing canonical forms", async () => {
    // The caller's text, the PTR key and the AAAA text all differ; the address is the same.
    const dns = new FakeDns({ [V6]: ["v6.test"] }, {}, { "v6.test": ["2001:DB8:0:0:0:0:0:1"] });
    const { r } = make(dns);
    expect(await r.lookup("2001:0db8:0::1")).toMatchObject({ hostname: "v6.test", verified: true, outcome: "miss" });
    expect(dns.calls).toEqual({ reverse: 1, resolve4: 0, resolve6: 1 });
    expect(r.peek(V6)).toMatchObject({ hostname: "v6.test", verified: true, outcome: "hit" });
  });

  it("treats an IPv4-mapped IPv6 address as its IPv4 address (A records, same cache entry)", async () => {
    const dns = new FakeDns({ [V4]: ["h.test"] }, { "h.test": [V4] });
    const { r } = make(dns);
    expect(await r.lookup(`::ffff:${V4}`)).toMatchObject({ hostname: "h.test", verified: true, outcome: "miss" });
    expect(await r.lookup(V4)).toMatchObject({ outcome: "hit" });
    expect(dns.calls.resolve6).toBe(0);
  });

  it("does not verify an IPv6 name from a mapped AAAA of the IPv4 twin", async () => {
    const dns = new FakeDns({ "::1:c000:201": ["h.test"] }, {}, { "h.test": [`::ffff:${V4}`] });
    const { r } = make(dns);
    expect(await r.lookup("::1:c000:201")).toMatchObject({ hostname: "h.test", verified: false });
  });

  it("returns verified false, cached for ttlMs, when the forward records do not contain the address", async () => {
    const dns = new FakeDns({ [V4]: ["spoof.test"] }, { "spoof.test": ["198.51.100.1", "not an address"] });
    const { r, clock } = make(dns);
    expect(await r.lookup(V4)).toMatchObject({ hostname: "spoof.test", verified: false, outcome: "miss" });
    clock.t += 60_000;
    expect(await r.lookup(V4)).toMatchObject({ hostname: "spoof.test", verified: false, outcome: "hit" });
  });

  it.each(["ENOTFOUND", "ENODATA"])("returns verified false, cached, when the forward lookup gives %s", async (code) => {
    const dns = new FakeDns({ [V4]: ["h.test"] }, { "h.test": code });
    const { r } = make(dns);
    expect(await r.lookup(V4)).toMatchObject({ hostname: "h.test", verified: false, outcome: "miss" });
    expect(r.peek(V4)).toMatchObject({ hostname: "h.test", verified: false, outcome: "hit" });
  });

  it("returns verified false but caches nothing when the forward lookup fails transiently", async () => {
    const dns = new FakeDns({ [V4]: ["h.test"] }, { "h.test": "ESERVFAIL" });
    const { r } = make(dns);
    expect(await r.lookup(V4)).toMatchObject({ hostname: "h.test", verified: false, outcome: "miss" });
    expect(r.peek(V4)).toBeUndefined();
    dns.a["h.test"] = [V4];
    expect(await r.lookup(V4)).toMatchObject({ hostname: "h.test", verified: true, outcome: "miss" });
  });

  it.each(["ENOTFOUND", "ENODATA", "NXDOMAIN"])("returns null/null when the PTR lookup gives %s, cached for negativeTtlMs", async (code) => {
    const dns = new FakeDns({ [V4]: code });
    const { r, clock } = make(dns);
    expect(await r.lookup(V4)).toMatchObject({ hostname: null, verified: null, outcome: "miss" });
    expect(dns.calls.resolve4).toBe(0);
    clock.t += 5_000;
    expect(await r.lookup(V4)).toMatchObject({ hostname: null, verified: null, outcome: "hit" });
    clock.t += 1;
    expect(await r.lookup(V4)).toMatchObject({ hostname: null, verified: null, outcome: "miss" });
    expect(dns.calls.reverse).toBe(2);
  });

  it("treats an empty PTR answer or a root name as no PTR", async () => {
    const dns = new FakeDns({ [V4]: [], "192.0.2.2": ["."] });
    const { r } = make(dns);
    expect(await r.lookup(V4)).toMatchObject({ hostname: null, verified: null, outcome: "miss" });
    expect(await r.lookup("192.0.2.2")).toMatchObject({ hostname: null, verified: null, outcome: "miss" });
    expect(r.size).toBe(2);
  });

  it.each(["ESERVFAIL", "EREFUSED", "ETIMEOUT", "ECONNREFUSED"])("returns null/null and caches nothing when the PTR lookup gives %s", async (code) => {
    const dns = new FakeDns({ [V4]: code });
    const { r } = make(dns);
    expect(await r.lookup(V4)).toMatchObject({ hostname: null, verified: null, outcome: "miss" });
    expect(r.size).toBe(0);
    await r.lookup(V4);
    expect(dns.calls.reverse).toBe(2);
  });

  it("expires answers after ttlMs, by the injected clock", async () => {
    const dns = new FakeDns({ [V4]: ["h.test"] }, { "h.test": [V4] });
    const { r, clock } = make(dns);
    await r.lookup(V4);
    clock.t += 60_000;
    expect(r.peek(V4)).toMatchObject({ outcome: "hit" });
    clock.t += 1;
    expect(r.peek(V4)).toBeUndefined();
    expect(r.size).toBe(0);
    expect(await r.lookup(V4)).toMatchObject({ verified: true, outcome: "miss" });
    expect(dns.calls.reverse).toBe(2);
  });

  it("evicts the least recently used address beyond maxEntries; peek does not count as use", async () => {
    const ips = ["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"];
    const dns = new FakeDns(Object.fromEntries(ips.map((ip) => [ip, ["h.test"]])), { "h.test": ips });
    const { r } = make(dns, { maxEntries: 2 });
    await r.lookup(ips[0]!);
    await r.lookup(ips[1]!);
    expect(await r.lookup(ips[0]!)).toMatchObject({ outcome: "hit" }); // 0 is now the most recent
    await r.lookup(ips[2]!); // evicts 1, the least recently used
    expect(r.size).toBe(2);
    expect(r.peek(ips[1]!)).toBeUndefined();
    // 0 is now older than 2; peeking at it must not change that, so 0 is the next to go.
    expect(r.peek(ips[0]!)).toBeDefined();
    await r.lookup(ips[3]!);
    expect(r.size).toBe(2);
    expect(r.peek(ips[0]!)).toBeUndefined();
    expect(r.peek(ips[2]!)).toBeDefined();
    expect(r.peek(ips[3]!)).toBeDefined();
  });

  it("caches nothing with maxEntries 0, or with zero TTLs", async () => {
    const dns = new FakeDns({ [V4]: ["h.test"], "192.0.2.2": "ENOTFOUND" }, { "h.test": [V4] });
    for (const over of [{ maxEntries: 0 }, { ttlMs: 0, negativeTtlMs: 0 }]) {
      const { r } = make(dns, over);
      await r.lookup(V4);
      await r.lookup("192.0.2.2");
      expect(r.size).toBe(0);
      expect(await r.lookup(V4)).toMatchObject({ verified: true, outcome: "miss" });
    }
  });

  it("shares one in-flight lookup: the first caller misses, joiners hit", async () => {
    const dns = new FakeDns({ [V6]: ["h.test"] }, {}, { "h.test": [V6] });
    dns.hang.add(V6);
    const { r } = make(dns);
    const first = r.lookup(V6);
    const joiners = [r.lookup(V6), r.lookup("2001:DB8:0::1")];
    dns.release();
    expect(await first).toMatchObject({ hostname: "h.test", verified: true, outcome: "miss" });
    for (const j of joiners) expect(await j).toMatchObject({ hostname: "h.test", verified: true, outcome: "hit" });
    expect(dns.calls).toEqual({ reverse: 1, resolve4: 0, resolve6: 1 });
  });

  it("bounds the whole lookup by timeoutMs: null/null, not cached, joiners get the same", async () => {
    vi.useFakeTimers();
    const dns = new FakeDns({ [V4]: ["h.test"] }, { "h.test": [V4] });
    dns.hang.add(V4);
    const { r } = make(dns, { timeoutMs: 1500 });
    const first = r.lookup(V4);
    const joiner = r.lookup(V4);
    await vi.advanceTimersByTimeAsync(1499);
    let settled = false;
    void first.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await first).toEqual({ hostname: null, verified: null, outcome: "miss", resolved: false });
    expect(await joiner).toEqual({ hostname: null, verified: null, outcome: "hit", resolved: false });
    expect(r.size).toBe(0);
    // A late answer to the abandoned query is dropped, not cached.
    dns.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(r.peek(V4)).toBeUndefined();
    // The next lookup queries again.
    dns.hang.clear();
    expect(await r.lookup(V4)).toEqual({ hostname: "h.test", verified: true, outcome: "miss", resolved: true });
    expect(await r.lookup(V4)).toEqual({ hostname: "h.test", verified: true, outcome: "hit", resolved: true });
    expect(dns.calls.reverse).toBe(2);
  });

  it("counts the forward query inside the same timeout", async () => {
    vi.useFakeTimers();
    const dns = new FakeDns({ [V4]: ["slow.test"] }, { "slow.test": [V4] });
    dns.hang.add("slow.test");
    const { r } = make(dns, { timeoutMs: 200 });
    const p = r.lookup(V4);
    await vi.advanceTimersByTimeAsync(200);
    expect(await p).toMatchObject({ hostname: null, verified: null, outcome: "miss" });
    expect(dns.calls.resolve4).toBe(1);
    expect(r.size).toBe(0);
  });

  it("clears its timeout as soon as the answer arrives", async () => {
    vi.useFakeTimers();
    const dns = new FakeDns({ [V4]: ["h.test"] }, { "h.test": [V4] });
    const { r } = make(dns);
    await r.lookup(V4);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("leaves no timer keeping the process alive while a lookup waits, nor after it ends", async () => {
    // The timers the resolver starts, watched one by one: a count of the process's timers would
    // also see those of other files sharing this worker.
    const started: NodeJS.Timeout[] = [];
    const realSetTimeout = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, "setTimeout").mockImplementation(((...args: Parameters<typeof setTimeout>) => {
      const t = realSetTimeout(...args);
      started.push(t);
      return t;
    }) as typeof setTimeout);
    try {
      const dns = new FakeDns({ [V4]: ["h.test"] }, { "h.test": [V4] });
      dns.hang.add(V4);
      const { r } = make(dns, { timeoutMs: 20 });
      const p = r.lookup(V4);
      expect(started.length).toBeGreaterThan(0);
      expect(started.filter((t) => t.hasRef())).toEqual([]);
      await p;
      dns.hang.clear();
      await r.lookup("192.0.2.9");
      expect(started.length).toBeGreaterThan(1);
      expect(started.filter((t) => t.hasRef())).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it("rejects text that is not an address (callers validate first)", async () => {
    const { r } = make(new FakeDns());
    await expect(r.lookup("not-an-ip")).rejects.toThrow(TypeError);
    expect(() => r.peek("1.2.3")).toThrow(TypeError);
  });
});

describe("systemDns against a UDP DNS server on 127.0.0.1", () => {
  let server: TestDnsServer;
  let dns: DnsLookup;
  const make2 = (timeoutMs = 1500): RdnsResolver =>
    new RdnsResolver({ dns, timeoutMs, ttlMs: 60_000, negativeTtlMs: 5_000, maxEntries: 100 });

  beforeAll(async () => {
    server = await startDnsServer({
      ptr: {
        "127.0.0.1": "loopback.example.test",
        "192.0.2.10": "Host-10.Example.TEST.",
        "192.0.2.11": "spoof.example.test",
        "192.0.2.12": "noaddr.example.test",
        "192.0.2.50": "never.example.test",
        "192.0.2.51": "slow.example.test",
        "2001:db8::10": "v6.example.test",
        "2001:db8::11": "v6spoof.example.test",
        "2001:db8::12": "v4only.example.test",
      },
      a: {
        "host-10.example.test": ["192.0.2.10"],
        "spoof.example.test": ["198.51.100.1"],
        "slow.example.test": ["192.0.2.51"],
        "v4only.example.test": ["192.0.2.12"],
      },
      aaaa: {
        "v6.example.test": ["2001:DB8:0:0::10", "2001:db8::99"],
        "v6spoof.example.test": ["2001:db8::99"],
      },
      silent: ["192.0.2.50", "slow.example.test"],
    });
    // Short per-query timeouts so abandoned queries to silent names end soon after the test.
    dns = systemDns([`127.0.0.1:${server.port}`], { queryTimeoutMs: 200, tries: 1 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("reports the Node error codes the resolver relies on", async () => {
    await expect(dns.reverse("192.0.2.99")).rejects.toMatchObject({ code: "ENOTFOUND" });
    await expect(dns.resolve6("v4only.example.test")).rejects.toMatchObject({ code: "ENODATA" });
    expect(await dns.reverse("2001:db8::10")).toEqual(["v6.example.test"]);
  });

  it("asks the DNS server for PTR records, never /etc/hosts", async () => {
    // Resolver#reverse would answer 127.0.0.1 from the hosts file ("localhost" and the like).
    expect(await dns.reverse("127.0.0.1")).toEqual(["loopback.example.test"]);
  });

  it("verifies an IPv4 address, then serves it from cache without a query", async () => {
    const r = make2();
    expect(await r.lookup("192.0.2.10")).toMatchObject({ hostname: "host-10.example.test", verified: true, outcome: "miss" });
    const seen = server.queries;
    expect(await r.lookup("192.0.2.10")).toMatchObject({ hostname: "host-10.example.test", verified: true, outcome: "hit" });
    expect(server.queries).toBe(seen);
  });

  it("returns verified false for an IPv4 name pointing elsewhere or to nothing", async () => {
    const r = make2();
    expect(await r.lookup("192.0.2.11")).toMatchObject({ hostname: "spoof.example.test", verified: false, outcome: "miss" });
    expect(await r.lookup("192.0.2.12")).toMatchObject({ hostname: "noaddr.example.test", verified: false, outcome: "miss" });
  });

  it("verifies an IPv6 address from AAAA records", async () => {
    const r = make2();
    expect(await r.lookup("2001:0DB8::0010")).toMatchObject({ hostname: "v6.example.test", verified: true, outcome: "miss" });
  });

  it("returns verified false for IPv6 names with other or no AAAA records", async () => {
    const r = make2();
    expect(await r.lookup("2001:db8::11")).toMatchObject({ hostname: "v6spoof.example.test", verified: false, outcome: "miss" });
    expect(await r.lookup("2001:db8::12")).toMatchObject({ hostname: "v4only.example.test", verified: false, outcome: "miss" });
  });

  it("returns null/null without a PTR record, for IPv4 and IPv6, and caches that", async () => {
    const r = make2();
    expect(await r.lookup("192.0.2.99")).toMatchObject({ hostname: null, verified: null, outcome: "miss" });
    expect(await r.lookup("2001:db8::99")).toMatchObject({ hostname: null, verified: null, outcome: "miss" });
    expect(await r.lookup("2001:db8::99")).toMatchObject({ outcome: "hit" });
  });

  it("times out on a silent PTR and on a silent forward name, caching neither", async () => {
    const r = make2(100);
    const seen = server.queries;
    expect(await r.lookup("192.0.2.50")).toMatchObject({ hostname: null, verified: null, outcome: "miss" });
    expect(await r.lookup("192.0.2.51")).toMatchObject({ hostname: null, verified: null, outcome: "miss" });
    expect(server.queries).toBe(seen + 3); // two PTR queries and one A query reached the server
    expect(r.size).toBe(0);
  });
});

describe("RdnsResolver canary", () => {
  it("keeps 'no PTR' as an answer while the canary address has a name", async () => {
    const dns = new FakeDns({ "192.0.2.53": ["canary.example.test"] });
    const { r } = make(dns, { canary: "192.0.2.53" });
    expect(await r.lookup("192.0.2.9")).toMatchObject({ hostname: null, resolved: true, outcome: "miss" });
    expect(r.peek("192.0.2.9")).toMatchObject({ hostname: null, resolved: true });
  });

  it("calls nothing resolved when the canary has no PTR either: a blind resolver, never charged", async () => {
    const dns = new FakeDns(); // NXDOMAIN for everything, as on an air-gapped host
    const { r } = make(dns, { canary: "8.8.8.8" });
    expect(await r.lookup("192.0.2.9")).toMatchObject({ hostname: null, verified: null, resolved: false, outcome: "miss" });
    // The canary itself, which is known to have a name: no PTR means blind DNS, not a nameless host.
    expect(await r.lookup("8.8.8.8")).toMatchObject({ hostname: null, resolved: false });
    expect(r.peek("192.0.2.9")).toMatchObject({ resolved: false });
    expect(r.peek("8.8.8.8")).toMatchObject({ resolved: false });
    // Names that do resolve are still found.
    dns.ptr["192.0.2.10"] = ["host.example.test"];
    dns.a["host.example.test"] = ["192.0.2.10"];
    expect(await r.lookup("192.0.2.10")).toMatchObject({ hostname: "host.example.test", verified: true, resolved: true });
  });

  it("believes every answer without a canary, and refuses a canary that is not an address", () => {
    expect(() => make(new FakeDns(), { canary: "dns.google" })).toThrow(/not an IP address/);
    const { r } = make(new FakeDns(), { canary: "" });
    return expect(r.lookup("192.0.2.9")).resolves.toMatchObject({ resolved: true });
  });
});
