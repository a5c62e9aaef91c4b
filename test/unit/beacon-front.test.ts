import { describe, expect, it } from "vitest";
import { hostnameMatchesMask } from "../../src/datasets/rdns.js";
import { BeaconTokens, SESSION_ID, newSessionId } from "../../src/front/beacon/token.js";
import { TrustedProxies } from "../../src/front/client-address.js";
import { originAllowed } from "../../src/front/projects.js";
import { formatIp } from "../../src/shared/ip.js";
import type { ProjectRecord } from "../../src/store/records.js";

describe("BeaconTokens", () => {
  const tokens = new BeaconTokens(Buffer.alloc(32, 7), 60_000);
  const sid = newSessionId();

  it("verifies its own token for the same project until it expires", () => {
    const { token, expiresAt } = tokens.issue("prj_a", sid, 1_000);
    expect(expiresAt).toBe(61_000);
    expect(tokens.verify(token, "prj_a", 1_000)).toBe(sid);
    expect(tokens.verify(token, "prj_a", 60_999)).toBe(sid);
    expect(tokens.verify(token, "prj_a", 61_000)).toBeNull();
    expect(tokens.verify(token, "prj_b", 1_000)).toBeNull();
  });

  it("refuses tampered, foreign-secret and malformed tokens", () => {
    const { token } = tokens.issue("prj_a", sid, 1_000);
    const parts = token.split(".");
    expect(parts[1]).toBe("prj_a");
    const other = newSessionId();
    expect(tokens.verify([parts[0], parts[1], other, parts[3], parts[4]].join("."), "prj_a", 1_000)).toBeNull();
    expect(tokens.verify([parts[0], parts[1], parts[2], "zzzzzz", parts[4]].join("."), "prj_a", 1_000)).toBeNull();
    expect(tokens.inspect([parts[0], "prj_b", parts[2], parts[3], parts[4]].join("."), 1_000)).toBeNull();
    expect(tokens.inspect(token, 1_000)).toEqual({ projectId: "prj_a", sessionId: sid, expiresAt: 61_000 });
    expect(new BeaconTokens(Buffer.alloc(32, 8), 60_000).verify(token, "prj_a", 1_000)).toBeNull();
    for (const t of ["", "v1", "v2.a.b.c", `${token}.x`, "x".repeat(500)]) expect(tokens.verify(t, "prj_a", 1_000)).toBeNull();
  });

  it("a verified token, remembered, is still bound to its project and expiry", () => {
    const t = new BeaconTokens(Buffer.alloc(32, 9), 1_000);
    const { token } = t.issue("prj_a", sid, 0);
    expect(t.verify(token, "prj_a", 10)).toBe(sid); // computes and remembers
    expect(t.verify(token, "prj_a", 20)).toBe(sid); // from memory
    expect(t.verify(token, "prj_b", 20)).toBeNull();
    expect(t.verify(token, "prj_a", 1_000)).toBeNull();
  });

  it("an expired token still proves its session within the grace, for its project only", () => {
    const t = new BeaconTokens(Buffer.alloc(32, 10), 1_000);
    const { token } = t.issue("prj_a", sid, 0);
    expect(t.provenSession(token, "prj_a", 500, 10_000)).toBe(sid);
    expect(t.provenSession(token, "prj_a", 10_999, 10_000)).toBe(sid);
    expect(t.provenSession(token, "prj_a", 11_000, 10_000)).toBeNull();
    expect(t.provenSession(token, "prj_b", 500, 10_000)).toBeNull();
    // Proving the session does not make the token valid again.
    expect(t.verify(token, "prj_a", 5_000)).toBeNull();
    expect(t.ageMs(token, 5_000)).toBeNull();
    expect(t.provenSession("v1.prj_a.garbage", "prj_a", 500, 10_000)).toBeNull();
  });

  it("session ids are s_ plus 22 base62 characters, unique", () => {
    const ids = new Set(Array.from({ length: 1000 }, newSessionId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(SESSION_ID);
  });
});

describe("TrustedProxies", () => {
  const ip = (peer: string, xff: string, t: TrustedProxies) => {
    const r = t.clientIp(peer, xff);
    return r ? formatIp(r) : null;
  };

  it("without trusted proxies the peer is the client, whatever X-Forwarded-For says", () => {
    const t = new TrustedProxies([]);
    expect(ip("10.0.0.5", "1.2.3.4", t)).toBe("10.0.0.5");
    expect(ip("::ffff:127.0.0.1", "", t)).toBe("127.0.0.1");
    expect(ip("garbage", "", t)).toBeNull();
  });

  it("behind trusted proxies takes the rightmost untrusted hop", () => {
    const t = new TrustedProxies(["127.0.0.1", "10.0.0.0/8", "fd00::/8"]);
    expect(ip("127.0.0.1", "1.2.3.4", t)).toBe("1.2.3.4");
    expect(ip("127.0.0.1", "6.6.6.6, 1.2.3.4, 10.1.2.3", t)).toBe("1.2.3.4");
    expect(ip("fd12::1", "2001:db8::7", t)).toBe("2001:db8::7");
    expect(ip("9.9.9.9", "1.2.3.4", t)).toBe("9.9.9.9"); // not from a proxy: ignored
    expect(ip("127.0.0.1", "not-an-ip", t)).toBe("127.0.0.1");
    expect(ip("127.0.0.1", "10.0.0.1", t)).toBe("127.0.0.1"); // only proxies: the peer
    expect(ip("127.0.0.1", "1.2.3.4, , 10.1.2.3,", t)).toBe("1.2.3.4"); // empty entries are no hop
  });

  it("trusts() answers for the peer alone, at once when no proxy is trusted", () => {
    const t = new TrustedProxies(["127.0.0.1", "fd00::/8"]);
    expect(t.trusts("127.0.0.1")).toBe(true);
    expect(t.trusts("::ffff:127.0.0.1")).toBe(true);
    expect(t.trusts("fd00:0000:0000:0000:0000:0000:0000:0001")).toBe(true);
    expect(t.trusts("127.0.0.2")).toBe(false);
    expect(t.trusts("garbage")).toBe(false);
    expect(new TrustedProxies([]).trusts("127.0.0.1")).toBe(false);
  });

  it("refuses entries that are not addresses or CIDR blocks", () => {
    expect(() => new TrustedProxies(["10.0.0.0/33"])).toThrow(/10\.0\.0\.0\/33/);
    expect(() => new TrustedProxies(["example.com"])).toThrow(/example\.com/);
  });
});

describe("originAllowed", () => {
  const project = (allowed?: string[]): ProjectRecord => ({ id: "prj", org_id: "org", name: "p", created_at: "", allowed_origins: allowed });

  it("allows any origin without a list, and calls without an Origin header", () => {
    expect(originAllowed(project(), "https://x.test")).toBe(true);
    expect(originAllowed(project([]), "https://x.test")).toBe(true);
    expect(originAllowed(project(["https://a.test"]), "")).toBe(true);
  });

  it("matches exact origins, * and subdomain wildcards (not the apex, not look-alikes)", () => {
    const p = project(["https://a.test", "https://*.b.test", "http://localhost:3000"]);
    expect(originAllowed(p, "https://a.test")).toBe(true);
    expect(originAllowed(p, "HTTPS://A.TEST")).toBe(true);
    expect(originAllowed(p, "http://a.test")).toBe(false);
    expect(originAllowed(p, "https://x.b.test")).toBe(true);
    expect(originAllowed(p, "https://x.y.b.test")).toBe(true);
    expect(originAllowed(p, "https://b.test")).toBe(false);
    expect(originAllowed(p, "https://evilb.test")).toBe(false);
    expect(originAllowed(p, "https://b.test.evil")).toBe(false);
    expect(originAllowed(p, "http://localhost:3000")).toBe(true);
    expect(originAllowed(p, "http://localhost:3001")).toBe(false);
    expect(originAllowed(project(["*"]), "https://anything.test")).toBe(true);
  });
});

describe("hostnameMatchesMask", () => {
  it("matches the registry's masks", () => {
    const masks = ["crawl-***-***-***-***.googlebot.com", "*.google.com"];
    expect(hostnameMatchesMask("crawl-66-249-66-1.googlebot.com", masks)).toBe(true);
    expect(hostnameMatchesMask("CRAWL-66-249-66-1.GOOGLEBOT.COM", masks)).toBe(true);
    expect(hostnameMatchesMask("rate-limited-proxy-1-2-3-4.google.com", masks)).toBe(true);
    expect(hostnameMatchesMask("google.com", masks)).toBe(false);
    expect(hostnameMatchesMask("crawl-66-249-66-1.googlebot.com.evil.net", masks)).toBe(false);
    expect(hostnameMatchesMask("crawl-66.249.66.1.googlebot.com", ["crawl-***-***-***-***.googlebot.com"])).toBe(false);
    expect(hostnameMatchesMask("fakegooglebot.com", masks)).toBe(false);
    expect(hostnameMatchesMask("baiduspider-1-2-3-4.crawl.baidu.com", ["@.baidu.com"])).toBe(true);
    expect(hostnameMatchesMask("baidu.com", ["@.baidu.com"])).toBe(false);
    expect(hostnameMatchesMask("notbaidu.com", ["@.baidu.com"])).toBe(false);
    expect(hostnameMatchesMask("out.adyen.com", ["out.adyen.com"])).toBe(true);
    expect(hostnameMatchesMask("x.out.adyen.com", ["out.adyen.com"])).toBe(false);
  });
});
