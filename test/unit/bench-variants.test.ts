import { describe, expect, it } from "vitest";
import type { Measurement } from "../../bench/http/generators.js";
import { splitVariantName, toRows, variantTable, type Series } from "../../bench/http/report.js";
import { parseCompareRef, parseVariant, parseVariantFlags, variantOrder, variantScenarioName } from "../../bench/http/variants.js";

describe("bench variants: flags (bench/http/variants.ts)", () => {
  it("--variant takes a name and optional ENV=value pairs", () => {
    expect(parseVariant("t1:FS_FRONT_THREADS=1")).toEqual({ name: "t1", env: { FS_FRONT_THREADS: "1" } });
    expect(parseVariant("pg:FS_STORE=postgres, FS_NODE_ID=a")).toEqual({ name: "pg", env: { FS_STORE: "postgres", FS_NODE_ID: "a" } });
    expect(parseVariant("HEAD")).toEqual({ name: "HEAD", env: {} });
    expect(parseVariant("plain:")).toEqual({ name: "plain", env: {} });
    expect(parseVariant("empty:FS_X=")).toEqual({ name: "empty", env: { FS_X: "" } });
    expect(parseVariant("lean:ablate=metrics+ratelimit,FS_X=1")).toEqual({ name: "lean", env: { FS_X: "1" }, cuts: ["metrics", "ratelimit"] });
    expect(() => parseVariant("bad:ablate=nosuchcut")).toThrow(/unknown cut 'nosuchcut'/);
    expect(parseVariant("url:DATABASE_URL=postgres://u@h/db?x=1")).toEqual({ name: "url", env: { DATABASE_URL: "postgres://u@h/db?x=1" } });
  });

  it("--variant refuses bad names, pairs without '=', bad variable names and repeats", () => {
    expect(() => parseVariant(":FS_X=1")).toThrow(/name/);
    expect(() => parseVariant("a b:FS_X=1")).toThrow(/name/);
    expect(() => parseVariant("x@y")).toThrow(/name/);
    expect(() => parseVariant("t:FS_X")).toThrow(/ENV=value/);
    expect(() => parseVariant("t:1X=2")).toThrow(/ENV=value/);
    expect(() => parseVariant("t:FS_X=1,FS_X=2")).toThrow(/twice/);
  });

  it("--compare-ref takes [name=]ref", () => {
    expect(parseCompareRef("2ae030b", "base")).toEqual({ name: "base", ref: "2ae030b", env: {} });
    expect(parseCompareRef("old=0af6818^1", "base")).toEqual({ name: "old", ref: "0af6818^1", env: {} });
    expect(() => parseCompareRef("", "base")).toThrow(/not a git ref/);
    expect(() => parseCompareRef("--help", "base")).toThrow(/not a git ref/);
    expect(() => parseCompareRef("a b=main", "base")).toThrow(/name/);
  });

  it("a plain run has no variants; --compare-ref alone adds the current build as HEAD, after the ref", () => {
    expect(parseVariantFlags([], [])).toEqual([]);
    expect(parseVariantFlags(["2ae030b"], [])).toEqual([
      { name: "base", ref: "2ae030b", env: {} },
      { name: "HEAD", env: {} },
    ]);
    // Several refs are named after themselves unless named.
    expect(parseVariantFlags(["2ae030b", "v1=main~3"], []).map((v) => v.name)).toEqual(["2ae030b", "v1", "HEAD"]);
  });

  it("with --variant the current build runs only as the variants listed", () => {
    expect(parseVariantFlags([], ["t1:FS_FRONT_THREADS=1", "t2:FS_FRONT_THREADS=2"])).toEqual([
      { name: "t1", env: { FS_FRONT_THREADS: "1" } },
      { name: "t2", env: { FS_FRONT_THREADS: "2" } },
    ]);
    expect(parseVariantFlags(["main"], ["HEAD", "pg:FS_STORE=postgres"]).map((v) => [v.name, v.ref])).toEqual([
      ["base", "main"],
      ["HEAD", undefined],
      ["pg", undefined],
    ]);
  });

  it("refuses two variants of the same name", () => {
    expect(() => parseVariantFlags([], ["a:FS_X=1", "a:FS_X=2"])).toThrow(/'a' used twice/);
    expect(() => parseVariantFlags(["HEAD=main"], [])).toThrow(/'HEAD' used twice/);
    expect(() => parseVariantFlags(["main", "main"], [])).toThrow(/'main' used twice/);
  });
});

describe("bench variants: rows", () => {
  it("are named scenario@variant, and plain without variants", () => {
    expect(variantScenarioName("check", "base")).toBe("check@base");
    expect(variantScenarioName("check", undefined)).toBe("check");
    expect(splitVariantName("check@HEAD")).toEqual({ scenario: "check", variant: "HEAD" });
    expect(splitVariantName("ip-lookup")).toEqual({ scenario: "ip-lookup", variant: undefined });
  });

  it("run in the given order on odd rounds and reversed on even ones", () => {
    expect(variantOrder(["a", "b", "c"], 1)).toEqual(["a", "b", "c"]);
    expect(variantOrder(["a", "b", "c"], 2)).toEqual(["c", "b", "a"]);
    expect(variantOrder(["hello"], 2)).toEqual(["hello"]);
  });

  it("are ratios to the same hello world, side by side, each variant against the one before it", () => {
    const run = (rps: number, serverUs: number, frontUs: number): Measurement => ({
      requests: rps * 5,
      rps,
      p50Ms: 1,
      p99Ms: 2,
      errorStatuses: 0,
      socketErrors: 0,
      cpu: { serverUs: serverUs * rps * 5, frontUs: frontUs * rps * 5, generatorUs: 5 * rps * 5 },
    });
    const series = (scenario: string, runs: Measurement[]): Series => ({ scenario, generator: "wrk", target: 0.3, runs, unexpected: 0, socketErrors: 0 });
    const rows = toRows(
      [series("hello", [run(100_000, 5, 5)]), series("check@base", [run(30_000, 50, 30), run(28_000, 52, 31)]), series("check@HEAD", [run(20_000, 75, 40), run(22_000, 77, 41)])],
      "hello",
    );
    expect(rows.map((r) => [r.series.scenario, r.ratio])).toEqual([
      ["hello", 1],
      ["check@base", 0.29],
      ["check@HEAD", 0.21],
    ]);
    const table = variantTable(rows, ["base", "HEAD"]);
    expect(table).toContain("| scenario | generator | @base | @HEAD | @HEAD / @base req/s | @HEAD / @base service µs |");
    // 21k / 29k req/s = 0.72; 76 / 51 µs = 1.49.
    expect(table).toContain("| check | wrk | 0.29 (51.0 µs, main 30.5) | 0.21 (76.0 µs, main 40.5) | 0.72 | 1.49 |");
    expect(table).not.toContain("| hello |");
    // Three variants: each against the one before it.
    const three = variantTable(toRows([...rows.map((r) => r.series), series("check@next", [run(25_000, 60, 35)])], "hello"), ["base", "HEAD", "next"]);
    expect(three).toContain("| @base | @HEAD | @next | @HEAD / @base req/s | @HEAD / @base service µs | @next / @HEAD req/s | @next / @HEAD service µs |");
    expect(three).toContain("| check | wrk | 0.29 (51.0 µs, main 30.5) | 0.21 (76.0 µs, main 40.5) | 0.25 (60.0 µs, main 35.0) | 0.72 | 1.49 | 1.19 | 0.79 |");
  });
});
