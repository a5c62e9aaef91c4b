import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { cpuSpent, readCpu } from "../../bench/http/cpu.js";
import type { Measurement } from "../../bench/http/generators.js";
import { cpuTable, type Series } from "../../bench/http/report.js";

/** Spins until this process has used `ms` more milliseconds of CPU (not wall time: the machine is shared). */
function burn(ms: number): void {
  const start = process.cpuUsage();
  let x = 0;
  for (;;) {
    for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + 1);
    const used = process.cpuUsage(start);
    if (used.user + used.system >= ms * 1000) break;
  }
  expect(x).toBeGreaterThan(0);
}

describe("benchmark CPU accounting (/proc)", () => {
  it.runIf(process.platform === "linux")("counts CPU the server process and an in-process generator spend", () => {
    const before = readCpu(process.pid)!;
    expect(before).not.toBeNull();
    const start = process.cpuUsage();
    burn(300);
    const spent = cpuSpent(before, readCpu(process.pid), "in-process")!;
    const used = process.cpuUsage(start);
    const usedUs = used.user + used.system;
    // 300 ms of CPU, counted in 10 ms ticks (and partly by other threads of this process).
    expect(spent.serverUs).toBeGreaterThan(150_000);
    expect(spent.frontUs).toBeGreaterThan(150_000); // vitest runs test files on a forked process's main thread
    expect(spent.generatorUs).toBeGreaterThan(150_000);
    // ...and not more than the process used (a wrong tick scale or field would overshoot), give or take a tick each end.
    expect(spent.serverUs).toBeLessThanOrEqual(usedUs + 30_000);
    // The thread's and the process's counters are read apart: one 10 ms tick may fall between them.
    expect(spent.frontUs).toBeLessThanOrEqual(spent.serverUs + 10_000);
  });

  it.runIf(process.platform === "linux")("counts a child generator once it has exited", async () => {
    const before = readCpu(process.pid)!;
    await new Promise<void>((resolve, reject) => {
      const spin = "let x = 0; for (;;) { for (let i = 0; i < 10000; i++) x += Math.sqrt(x + 1); const u = process.cpuUsage(); if (u.user + u.system >= 300000) break; }";
      const child = spawn(process.execPath, ["-e", spin]);
      child.once("error", reject);
      child.once("exit", () => resolve());
    });
    const spent = cpuSpent(before, readCpu(process.pid), "child")!;
    expect(spent.generatorUs).toBeGreaterThan(150_000);
    // The child's start-up and exit add to its 300 ms; seconds would mean a wrong scale or field.
    expect(spent.generatorUs).toBeLessThan(1_500_000);
  });

  it("gives no reading for a process that does not exist", () => {
    expect(readCpu(2 ** 30)).toBeNull();
    expect(cpuSpent(null, null, "child")).toBeUndefined();
  });
});

describe("CPU ceilings in the report", () => {
  const run = (rps: number, serverUs: number, frontUs: number, generatorUs: number): Measurement => ({
    requests: rps * 5,
    rps,
    p50Ms: 1,
    p99Ms: 2,
    errorStatuses: 0,
    socketErrors: 0,
    cpu: { serverUs: serverUs * rps * 5, frontUs: frontUs * rps * 5, generatorUs: generatorUs * rps * 5 },
  });
  const series = (scenario: string, runs: Measurement[], target?: number): Series => ({ scenario, generator: "wrk", target, runs, unexpected: 0, socketErrors: 0 });

  it("are cores / (service + generator CPU) and 1 / main-thread CPU, as ratios to the baseline", () => {
    // Baseline 100k req/s; the scenario does 40k at 20 µs of service CPU (10 on the main thread) and 5 of generator.
    const rows = [
      { series: series("hello", [run(100_000, 8, 8, 4)]), rps: 100_000, minRps: 100_000, maxRps: 100_000, p50Ms: 1, p99Ms: 2, ratio: 1, verdict: null },
      { series: series("x", [run(40_000, 20, 10, 5)], 0.5), rps: 40_000, minRps: 40_000, maxRps: 40_000, p50Ms: 1, p99Ms: 2, ratio: 0.4, verdict: "MISSED" as const },
    ];
    const table = cpuTable(rows, 2);
    // 2 cores: 2e6 / 25 µs = 80k req/s = 0.80 of the baseline; main thread: 1e6 / 10 µs = 100k = 1.00.
    expect(table).toContain("| x | wrk | 20.0 | 10.0 | 5.0 | 0.80 | 1.00 | ≥ 0.5 |");
    expect(table).toContain("| hello | wrk | 8.0 | 8.0 | 4.0 | 1.67 | 1.25 | – |");
  });

  it("are left out where no run has CPU figures, and shown as – without a baseline", () => {
    const bare = { ...run(40_000, 20, 10, 5), cpu: undefined };
    const row = { series: series("x", [bare]), rps: 40_000, minRps: 40_000, maxRps: 40_000, p50Ms: 1, p99Ms: 2, ratio: null, verdict: null };
    expect(cpuTable([row], 2)).toBe("");
    const noBase = { ...row, series: series("x", [run(40_000, 20, 10, 5)]) };
    expect(cpuTable([noBase], 2)).toContain("| x | wrk | 20.0 | 10.0 | 5.0 | – | – | – |");
  });
});
