import { describe, expect, it } from "vitest";
import { addressOwner, BodyBudget, networkOwner } from "../../src/front/body-budget.js";
import { parseIp } from "../../src/shared/ip.js";

describe("BodyBudget", () => {
  const budget = () => new BodyBudget({ public: 1000, webhook: 1000, keyed: 5000 }, { public: 400, webhook: 400, keyed: 3000 }, 7, 600);

  it("counts bytes as they arrive, not as declared", () => {
    const b = budget();
    const lease = b.lease("public");
    expect(b.holding("public")).toBe(0);
    expect(lease.grow(300)).toBeNull();
    expect(lease.grow(300)).toBeNull(); // growing to what it holds is free
    expect(b.holding("public")).toBe(300);
    expect(lease.grow(900)).toBeNull();
    expect(b.holding("public")).toBe(900);
    lease.release();
    lease.release();
    expect(b.holding("public")).toBe(0);
  });

  it("refuses past the pool with 503 OVERLOADED and Retry-After, leaving the lease as it was", () => {
    const b = budget();
    const first = b.lease("public");
    expect(first.grow(800)).toBeNull();
    const second = b.lease("public");
    const refusal = second.grow(201);
    expect(refusal?.code).toBe("OVERLOADED");
    expect(refusal?.headers).toEqual({ "retry-after": "7" });
    expect(b.holding("public")).toBe(800);
    expect(second.grow(200)).toBeNull();
    expect(b.holding("keyed")).toBe(0); // the other pool is apart
  });

  it("moves a lease to another owner's share (a key's org learnt later), refusing past that share", () => {
    const b = budget();
    const org = b.lease("keyed");
    expect(org.grow(2000)).toBeNull();
    expect(org.ownedBy("org-1")).toBeNull();
    const early = b.lease("keyed");
    expect(early.grow(900)).toBeNull();
    expect(early.ownedBy("Bearer key-1")).toBeNull();
    expect(early.moveTo("org-1")).toBeNull();
    expect([b.holdingFor("keyed", "org-1"), b.holdingFor("keyed", "Bearer key-1")]).toEqual([2900, 0]);
    const late = b.lease("keyed");
    expect(late.grow(200)).toBeNull();
    expect(late.ownedBy("Bearer key-1")).toBeNull();
    expect(late.moveTo("org-1")?.code).toBe("OVERLOADED"); // 3100 > 3000
    expect([b.holdingFor("keyed", "org-1"), b.holdingFor("keyed", "Bearer key-1")]).toEqual([2900, 200]);
    late.release();
    early.release();
    expect(b.holdingFor("keyed", "org-1")).toBe(2000);
    expect(b.holding("keyed")).toBe(2000);
  });

  it("holds an owner of bodies arriving in pieces to its share, and others are not refused for it", () => {
    const b = budget();
    const a1 = b.lease("public");
    expect(a1.grow(100)).toBeNull();
    expect(a1.ownedBy("client-a")).toBeNull();
    const a2 = b.lease("public");
    expect(a2.ownedBy("client-a")).toBeNull();
    expect(a2.grow(300)).toBeNull(); // 100 + 300: the share is full
    const a3 = b.lease("public");
    expect(a3.ownedBy("client-a")).toBeNull();
    const refusal = a3.grow(1);
    expect(refusal?.code).toBe("OVERLOADED");
    expect(refusal?.message).toMatch(/This client/);
    // Another client has the rest of the pool.
    const other = b.lease("public");
    expect(other.ownedBy("client-b")).toBeNull();
    expect(other.grow(400)).toBeNull();
    expect(b.holdingFor("public", "client-a")).toBe(400);
    a2.release();
    expect(b.holdingFor("public", "client-a")).toBe(100);
    expect(a3.grow(250)).toBeNull();
    for (const l of [a1, a3, other]) l.release();
    expect(b.holdingFor("public", "client-a")).toBe(0);
    expect(b.holding("public")).toBe(0);
  });

  it("holds the addresses of one network together to the network's share; another network and the other pools are not refused for it", () => {
    const b = budget();
    const leases = ["client-a", "client-b", "client-c"].map((owner) => {
      const l = b.lease("webhook");
      expect(l.ownedBy(owner, "net-1")).toBeNull();
      return l;
    });
    expect(leases[0]!.grow(300)).toBeNull();
    expect(leases[1]!.grow(300)).toBeNull(); // 600: the network's share is full, each client's is not
    const refusal = leases[2]!.grow(1);
    expect(refusal?.code).toBe("OVERLOADED");
    expect(refusal?.message).toMatch(/network/);
    expect([b.holdingFor("webhook", "client-c"), b.holdingForNetwork("webhook", "net-1"), b.holding("webhook")]).toEqual([0, 600, 600]);
    const other = b.lease("webhook");
    expect(other.ownedBy("client-d", "net-2")).toBeNull();
    expect(other.grow(400)).toBeNull();
    const pub = b.lease("public");
    expect(pub.ownedBy("client-a", "net-1")).toBeNull();
    expect(pub.grow(400)).toBeNull(); // the public pool is apart: the webhook cannot take it
    expect(other.grow(401)?.code).toBe("OVERLOADED"); // nor the webhook more than its pool
    leases[0]!.release();
    expect(b.holdingForNetwork("webhook", "net-1")).toBe(300);
    expect(leases[2]!.grow(300)).toBeNull();
    for (const l of [...leases, other, pub]) l.release();
    expect([b.holding("webhook"), b.holding("public"), b.holdingForNetwork("webhook", "net-1"), b.holdingForNetwork("public", "net-1")]).toEqual([0, 0, 0, 0]);
  });

  it("refuses to count a body already past its owner's share", () => {
    const b = budget();
    const big = b.lease("public");
    expect(big.grow(401)).toBeNull(); // a whole body is not counted per owner
    expect(big.ownedBy("client-a")?.code).toBe("OVERLOADED");
    expect(b.holdingFor("public", "client-a")).toBe(0);
    big.release();
    expect(b.holding("public")).toBe(0);
  });

  it("rejects limits and shares that are not positive integers", () => {
    expect(() => new BodyBudget({ public: 0, webhook: 1, keyed: 1 }, { public: 1, webhook: 1, keyed: 1 })).toThrow(/public limit/);
    expect(() => new BodyBudget({ public: 1, webhook: 1, keyed: 1 }, { public: 1, webhook: 1, keyed: 1.5 })).toThrow(/keyed share/);
    expect(() => new BodyBudget({ public: 1, webhook: 1, keyed: 1 }, { public: 1, webhook: 1, keyed: 1 }, 1, 0)).toThrow(/network share/);
  });
});

describe("addressOwner", () => {
  it("is the IPv4 address, the /64 of an IPv6 one, and one owner for unreadable peers", () => {
    const of = (s: string) => addressOwner(parseIp(s));
    expect(of("203.0.113.7")).toBe(of("203.0.113.7"));
    expect(of("203.0.113.7")).not.toBe(of("203.0.113.8"));
    expect(of("2001:db8:1:2::1")).toBe(of("2001:db8:1:2:ffff::9"));
    expect(of("2001:db8:1:2::1")).not.toBe(of("2001:db8:1:3::1"));
    expect(addressOwner(null)).toBe(addressOwner(null));
  });
});

describe("networkOwner", () => {
  it("is the /24 of an IPv4 address and the /48 of an IPv6 one", () => {
    const of = (s: string) => networkOwner(parseIp(s));
    expect(of("203.0.113.7")).toBe(of("203.0.113.250"));
    expect(of("203.0.113.7")).not.toBe(of("203.0.114.7"));
    expect(of("2001:db8:1:2::1")).toBe(of("2001:db8:1:ffff::9"));
    expect(of("2001:db8:1::1")).not.toBe(of("2001:db8:2::1"));
    expect(of("::ffff:203.0.113.7")).toBe(of("203.0.113.9"));
    expect(of("0.0.1.7")).not.toBe(of("::1")); // the families never meet
  });
});
