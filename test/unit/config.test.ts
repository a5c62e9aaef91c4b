import { describe, expect, it } from "vitest";
import { DEFAULT_DATA_DIR, loadConfig, redactConfig } from "../../src/config/index.js";

describe("loadConfig", () => {
  it("applies defaults for an empty environment", () => {
    const r = loadConfig({});
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config.PORT).toBe(8080);
    expect(r.config.HOST).toBe("127.0.0.1"); // a first start is not reachable from other machines
    expect(r.config.FS_DEMO).toBe(true);
    expect(r.config.DATA_DIR).toBe(DEFAULT_DATA_DIR);
    expect(DEFAULT_DATA_DIR).toMatch(/\/data\/local$/);
    expect(r.config.FS_MAX_BODY_BYTES).toBe(65536);
    expect(r.config.FS_TEST_CLOCK).toBe(false);
    expect(Object.isFrozen(r.config)).toBe(true);
  });

  it("bounds request bodies by default: shares per client and org, a deadline and a minimum rate", () => {
    const r = loadConfig({});
    expect(r.ok && r.config).toMatchObject({
      FS_BODY_BUFFER_PER_CLIENT_BYTES: 1024 * 1024,
      FS_BODY_BUFFER_PER_ORG_BYTES: 8 * 1024 * 1024,
      FS_BODY_TIMEOUT_MS: 10_000,
      FS_BODY_MIN_BYTES_PER_SECOND: 16 * 1024,
    });
    const off = loadConfig({ FS_BODY_TIMEOUT_MS: "0", FS_BODY_MIN_BYTES_PER_SECOND: "0" });
    expect(off.ok ? [] : off.problems.map((p) => p.split(":")[0])).toEqual(["FS_BODY_TIMEOUT_MS", "FS_BODY_MIN_BYTES_PER_SECOND"]);
  });

  it("serves the demo by default only on a loopback interface", () => {
    const demo = (env: Record<string, string>) => {
      const r = loadConfig(env);
      return r.ok ? r.config.FS_DEMO : null;
    };
    for (const HOST of ["127.0.0.1", "127.1.2.3", "::1", "localhost"]) expect(demo({ HOST }), HOST).toBe(true);
    for (const HOST of ["0.0.0.0", "::", "10.0.0.5", "example.com"]) expect(demo({ HOST }), HOST).toBe(false);
    expect(demo({ HOST: "0.0.0.0", FS_DEMO: "true" })).toBe(true); // an operator's explicit choice
    expect(demo({ HOST: "127.0.0.1", FS_DEMO: "0" })).toBe(false);
  });

  it("coerces strings and resolves DATA_DIR", () => {
    const r = loadConfig({ PORT: "9000", DATA_DIR: "/tmp/x", FS_POOL_THREADS: "3", FS_TEST_CLOCK: "true" });
    expect(r.ok && r.config).toMatchObject({ PORT: 9000, DATA_DIR: "/tmp/x", FS_POOL_THREADS: 3, FS_TEST_CLOCK: true });
  });

  it("reports every problem at once, with the offending values but never secrets", () => {
    const r = loadConfig({ PORT: "99999", FS_POOL_THREADS: "0", FS_LOG_LEVEL: "loud", FS_ADMIN_TOKEN: "short" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toHaveLength(4);
    expect(r.problems.join("\n")).toMatch(/PORT.*99999/);
    expect(r.problems.join("\n")).toMatch(/FS_POOL_THREADS/);
    expect(r.problems.join("\n")).toMatch(/FS_LOG_LEVEL/);
    const tokenLine = r.problems.find((p) => p.startsWith("FS_ADMIN_TOKEN"))!;
    expect(tokenLine).not.toContain("short");
  });

  it("redacts secrets for printing", () => {
    const r = loadConfig({ FS_ADMIN_TOKEN: "a-very-secret-admin-token" });
    expect(r.ok && redactConfig(r.config).FS_ADMIN_TOKEN).toBe("[redacted]");
  });

  it("treats empty values as unset", () => {
    const r = loadConfig({ PORT: "", FS_LOG_LEVEL: "" });
    expect(r.ok && r.config).toMatchObject({ PORT: 8080, FS_LOG_LEVEL: "info" });
  });
});
