import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { cpuSpent, readCpu } from "../../bench/http/cpu.js";
import { cpuTable, type Series } from "../../bench/http/report.js";

/** Keeps this thread on the CPU for `ms` milliseconds. */
function burn(ms: number): void {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  expect(x).toBeGreaterThan(0);
}

describe("benchmark CPU accounting (/proc)", () => {
  it.runIf(process.platform === "linux")("counts CPU the server process and an in-process generator spend", () => {
    const before = readCpu(process.pid)!;
    expect(before).not.toBeNull();
    burn(300);
    const spent = cpuSpent(before, readCpu(process.pid), "in-process")!;
    // The tick is 10 ms; 300 ms of busy loop shows as well over 150 ms on any machine.
    expect(spent.serverUs).toBeGreaterThan(150_000);
    expect(spent.frontUs).toBeGreaterThan(150_000); // this is the main thread
    expect(spent.generatorUs).toBeGreaterThan(150_000);
  });

  it.runIf(process.platform === "linux")("counts a child generator once it has exited", async () => {
    const before = readCpu(process.pid)!;
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ["-e", "const e = Date.now() + 300; let x = 0; while (Date.now() < e) x += Math.sqrt(x + 1);"]);
      child.once("error", reject);
      child.once("exit", () => resolve());
    });
    const spent = cpuSpent(before, readCpu(process.pid), "child")!;
    expect(spent.generatorUs).toBeGreaterThan(150_000);
  });

  it("gives no reading for a process that does not exist", () => {
    expect(readCpu(2 ** 30)).toBeNull();
    expect(cpuSpent(null, null, "child")).toBeUndefined();
  });
});

describe("CPU ceilings in the report", () => {
  const run = (rps: number, serverUs: number, frontUs: number, generatorUs: number) => ({
    requests: rps * 5,
    rps,
    p50Ms: 1,
    p99Ms: 2,
    errorStatuses: 0,
    socketErrors: 0,
    cpu: { serverUs: serverUs * rps * 5, frontUs: frontUs * rps * 5, generatorUs: generatorUs * rps * 5 },
  });
  const series = (scenario: string, runs: ReturnType<typeof run>[], target?: number): Series => ({ scenario, generator: "wrk", target, runs, unexpected: 0, socketErrors: 0 });

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
});
