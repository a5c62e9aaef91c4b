import { describe, expect, it } from "vitest";
import { guardLines, LIMIT } from "../../bench/guard.js";
import type { Series } from "../../bench/http/report.js";

/** A series whose rounds each cost `us` of service CPU per response. */
function series(scenario: string, generator: string, ...us: number[]): Series {
  return {
    scenario,
    generator,
    runs: us.map((u) => ({ requests: 1000, rps: 1000, p50Ms: 1, p99Ms: 2, errorStatuses: 0, socketErrors: 0, cpu: { serverUs: u * 1000, frontUs: u * 500, generatorUs: 10_000 } })),
    unexpected: 0,
    socketErrors: 0,
  };
}

describe("bench:guard (bench/guard.ts)", () => {
  it("compares the current build's median service CPU per response with the reference's, per scenario and generator", () => {
    const lines = guardLines([
      series("ip-lookup@reference", "wrk", 10, 11, 12),
      series("ip-lookup@HEAD", "wrk", 12, 12.5, 13),
      series("collect@reference", "wrk", 20, 20, 20),
      series("collect@HEAD", "wrk", 21, 22, 21),
      series("hello", "wrk", 3, 3, 3),
    ]);
    expect(lines.map((l) => [l.scenario, l.generator, l.reference, l.current, l.ok])).toEqual([
      ["ip-lookup", "wrk", 11, 12.5, false],
      ["collect", "wrk", 20, 21, true],
    ]);
    expect(lines[0]!.factor).toBeGreaterThan(LIMIT);
  });

  it("leaves out a scenario that one of the two did not measure", () => {
    expect(guardLines([series("ip-lookup@HEAD", "autocannon", 10)])).toEqual([]);
  });
});
