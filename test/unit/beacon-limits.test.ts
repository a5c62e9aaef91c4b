import { describe, expect, it } from "vitest";
import { LocalQuotaCells, SharedQuotaCells } from "../../src/front/admission/cells.js";
import { RateTable } from "../../src/front/admission/rate-table.js";
import { BeaconBudget, ObservationBudget, prefixKey } from "../../src/front/beacon/budget.js";
import { BeaconRateLimits, addressKey } from "../../src/front/beacon/limits.js";
import { ApiError } from "../../src/shared/errors.js";
import { parseIp } from "../../src/shared/ip.js";

const T0 = 1_800_000_000_000;

describe("RateTable (GCRA)", () => {
  it("allows `limit` at once, then one every window / limit", () => {
    const t = new RateTable<string>(6, 60, 100);
    for (let i = 0; i < 6; i++) {
      const next = t.peek("a", T0);
      expect(next, `call ${i}`).toBeGreaterThan(0);
      t.take("a", next);
    }
    expect(t.peek("a", T0)).toBe(-1);
    expect(t.remaining("a", T0)).toBe(0);
    expect(t.retryAfterSeconds("a", T0)).toBe(10);
    expect(t.peek("a", T0 + 9_999)).toBe(-1);
    expect(t.peek("a", T0 + 10_000)).toBeGreaterThan(0);
    // A full window later the whole burst is back.
    expect(t.remaining("a", T0 + 60_000)).toBe(6);
  });

  it("peek changes nothing; keys are independent", () => {
    const t = new RateTable<string>(1, 60, 100);
    expect(t.peek("a", T0)).toBeGreaterThan(0);
    expect(t.peek("a", T0)).toBeGreaterThan(0);
    t.take("a", t.peek("a", T0));
    expect(t.peek("a", T0)).toBe(-1);
    expect(t.peek("b", T0)).toBeGreaterThan(0);
  });

  it("keeps at most maxKeys keys, forgetting the one added longest ago", () => {
    const t = new RateTable<number>(1, 60, 3);
    for (const k of [1, 2, 3]) t.take(k, t.peek(k, T0));
    t.take(4, t.peek(4, T0));
    expect(t.size).toBe(3);
    expect(t.peek(1, T0)).toBeGreaterThan(0); // forgotten: a full bucket again
    expect(t.peek(2, T0)).toBe(-1);
    for (let k = 10; k < 10_000; k++) t.take(k, t.peek(k, T0));
    expect(t.size).toBe(3);
  });

  it("a clock that went back (or a test clock that jumped ahead and back) does not lock a key out", () => {
    const t = new RateTable<string>(2, 60, 100);
    t.take("a", t.peek("a", T0 + 30 * 86_400_000));
    t.take("a", t.peek("a", T0 + 30 * 86_400_000));
    expect(t.peek("a", T0)).toBeGreaterThan(0);
    expect(t.retryAfterSeconds("a", T0)).toBe(1);
    expect(t.remaining("a", T0)).toBe(2);
  });

  it("refuses bad options", () => {
    expect(() => new RateTable(0, 60, 1)).toThrow(/limit/);
    expect(() => new RateTable(1, 0.5, 1)).toThrow(/windowSeconds/);
    expect(() => new RateTable(1, 60, 0)).toThrow(/maxKeys/);
  });
});

describe("BeaconRateLimits", () => {
  const ip = (s: string) => parseIp(s)!;
  const refusal = (f: () => void): ApiError => {
    try {
      f();
    } catch (err) {
      return err as ApiError;
    }
    throw new Error("not refused");
  };

  it("refuses an address past its limit with 429 RATE_LIMITED, Retry-After and the RateLimit fields", () => {
    const l = new BeaconRateLimits({ perAddress: 3, perProject: 100 });
    for (let i = 0; i < 3; i++) l.admit("prj_a", ip("198.51.100.7"), T0);
    const err = refusal(() => l.admit("prj_a", ip("198.51.100.7"), T0));
    expect(err.code).toBe("RATE_LIMITED");
    expect(err.status).toBe(429);
    expect(err.message).toMatch(/client address.*at most 3 every 60 s.*Retry after 20 s/);
    expect(err.headers).toEqual({ "retry-after": "20", "ratelimit-policy": '"address";q=3;w=60', ratelimit: '"address";r=0;t=20' });
    // Another address of the same project is still served.
    l.admit("prj_a", ip("198.51.100.8"), T0);
    expect(l.refused).toEqual({ address: 1, project: 0 });
  });

  it("refuses a project past its limit, whatever the address, without using up the addresses", () => {
    const l = new BeaconRateLimits({ perAddress: 2, perProject: 3 });
    for (let i = 0; i < 3; i++) l.admit("prj_a", ip(`203.0.113.${i}`), T0);
    const err = refusal(() => l.admit("prj_a", ip("203.0.113.50"), T0));
    expect(err.headers?.["ratelimit-policy"]).toBe('"project";q=3;w=60');
    // The refused call did not count against 203.0.113.50: two calls of another project pass.
    l.admit("prj_b", ip("203.0.113.50"), T0);
    l.admit("prj_b", ip("203.0.113.50"), T0);
    expect(l.refused).toEqual({ address: 0, project: 1 });
  });

  it("counts an IPv6 client by its /64", () => {
    expect(addressKey(ip("2001:db8:1:2::1"))).toBe(addressKey(ip("2001:db8:1:2:ffff::9")));
    expect(addressKey(ip("2001:db8:1:2::1"))).not.toBe(addressKey(ip("2001:db8:1:3::1")));
    expect(addressKey(ip("::ffff:1.2.3.4"))).toBe(addressKey(ip("1.2.3.4")));
    const l = new BeaconRateLimits({ perAddress: 1, perProject: 0 });
    l.admit("prj_a", ip("2001:db8:1:2::1"), T0);
    expect(refusal(() => l.admit("prj_a", ip("2001:db8:1:2::beef"), T0)).code).toBe("RATE_LIMITED");
  });

  it("0 turns a limit off", () => {
    const l = new BeaconRateLimits({ perAddress: 0, perProject: 0 });
    for (let i = 0; i < 10_000; i++) l.admit("prj_a", ip("192.0.2.1"), T0);
    expect(l.refused).toEqual({ address: 0, project: 0 });
  });
});

describe("ObservationBudget", () => {
  it("records up to the budget per org and UTC day, then drops and counts", () => {
    const b = new ObservationBudget(new LocalQuotaCells(), 3);
    const day = Date.UTC(2027, 0, 15, 12);
    expect([1, 2, 3, 4, 5].map(() => b.take("org_a", day))).toEqual([true, true, true, false, false]);
    expect(b.take("org_b", day)).toBe(true);
    expect(b.standing("org_a", day)).toEqual({ day: "2027-01-15", recorded: 3, dropped: 2, budget: 3 });
    expect(b.dropped).toBe(2);
    // The next UTC day starts again.
    const next = Date.UTC(2027, 0, 16, 0, 0, 1);
    expect(b.take("org_a", next)).toBe(true);
    expect(b.standing("org_a", next)).toEqual({ day: "2027-01-16", recorded: 1, dropped: 0, budget: 3 });
  });

  it("holds for every front thread together (shared table)", () => {
    const buffer = SharedQuotaCells.allocate(64);
    const threads = [new ObservationBudget(new SharedQuotaCells(buffer), 5), new ObservationBudget(new SharedQuotaCells(buffer), 5)];
    const day = Date.UTC(2027, 0, 15);
    const taken = Array.from({ length: 8 }, (_, i) => threads[i % 2]!.take("org_a", day)).filter(Boolean).length;
    expect(taken).toBe(5);
    expect(threads[1]!.standing("org_a", day)).toMatchObject({ recorded: 5, dropped: 3 });
  });

  it("0 means no budget", () => {
    const b = new ObservationBudget(new LocalQuotaCells(), 0);
    for (let i = 0; i < 1000; i++) expect(b.take("org_a", T0)).toBe(true);
    expect(b.standing("org_a", T0)).toMatchObject({ budget: null, dropped: 0 });
  });
});

describe("BeaconBudget", () => {
  const ip = (s: string) => parseIp(s)!;
  const day = Date.UTC(2027, 0, 15, 12);
  function budgets(org: number, project: number, share: number) {
    const cells = new LocalQuotaCells();
    return new BeaconBudget(new ObservationBudget(cells, org), new ObservationBudget(cells, project, "obsp:"), { perDay: share, v4: 24, v6: 48 });
  }

  it("keys an address by its /24 or /48, without mixing the families", () => {
    const k = (a: string) => prefixKey(ip(a), 24, 48);
    expect(k("198.51.100.1")).toBe(k("198.51.100.254"));
    expect(k("198.51.100.1")).not.toBe(k("198.51.101.1"));
    expect(k("2001:db8:0:ff00::1")).toBe(k("2001:db8::1"));
    expect(k("2001:db8:1::1")).not.toBe(k("2001:db8::1"));
    expect(k("0.0.0.1")).not.toBe(k("::1"));
    expect(prefixKey(null, 24, 48)).not.toBe(k("0.0.0.1"));
    expect(prefixKey(ip("2001:db8:ab::1"), 24, 52)).not.toBe(prefixKey(ip("2001:db8:ab:1000::1"), 24, 52));
  });

  it("nests: a prefix's share within its project's budget within its org's; drops are counted per project", () => {
    const b = budgets(10, 6, 2);
    const take = (project: string, address: string) => b.take("org_a", project, ip(address), day);
    expect([1, 2, 3].map(() => take("prj_a", "198.51.100.1"))).toEqual([true, true, false]);
    expect(take("prj_a", "198.51.100.99")).toBe(false); // same /24
    expect([1, 2, 3, 4, 5].map((i) => take("prj_a", `203.0.${i}.1`))).toEqual([true, true, true, true, false]); // the project's 6
    expect([1, 2, 3, 4, 5].map((i) => take("prj_b", `203.0.${i}.1`))).toEqual([true, true, true, true, false]); // the org's 10
    expect(b.standing("org_a", day)).toMatchObject({ recorded: 10, dropped: 4 });
    expect(b.projectStanding("prj_a", day)).toMatchObject({ recorded: 6, dropped: 3, budget: 6 });
    // prj_b's refused hit was the org's: not counted as recorded for the project.
    expect(b.projectStanding("prj_b", day)).toMatchObject({ recorded: 4, dropped: 1 });
    expect([...b.droppedByProject]).toEqual([
      ["prj_a", 3],
      ["prj_b", 1],
    ]);
    // The next UTC day starts again, prefixes too.
    expect(b.take("org_a", "prj_a", ip("198.51.100.1"), day + 86_400_000)).toBe(true);
  });
});
