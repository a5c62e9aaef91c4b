/**
 * What a hop to the scoring pool costs against answering inline on the front thread: the
 * evidence for keeping the base IP lookup inline (src/http/routes/ip.get.ts).
 *
 *   node dist/bench/micro/pool-hop.bench.js
 *
 * Contenders: parseIp + typed-array lookup inline; one `ping` task round trip through the real
 * ScoringPool (one thread); one `ip.lookupBatch` task of 1, 16 and 256 addresses; 64 pings in
 * flight at once (the most the pool can turn around). Round trips run one at a time, so they
 * measure latency. "µs per address" divides a call by the addresses (or tasks) it carries.
 * Uses the current IP dataset under DATA_DIR, building one first when there is none.
 */
import { Bench, type Task } from "tinybench";
import { openIpDataset } from "../../src/datasets/ip-dataset.js";
import { parseIp } from "../../src/shared/ip.js";
import { ScoringPool } from "../../src/front/scoring-pool.js";
import { sampleAddresses } from "../lib/addresses.js";
import { ensureIpDataset, machineLine } from "../lib/context.js";

const TIME_MS = 1500;
const WARMUP_MS = 300;
const BATCHES = [1, 16, 256] as const;
const CONCURRENT_PINGS = 64;

/** Addresses each task carries, to report a per-address (per-task) cost. */
const perCall = new Map<string, number>();

function row(task: Task): Record<string, string | number> {
  const r = task.result;
  if (r.state !== "completed") return { task: task.name, state: r.state };
  const n = perCall.get(task.name) ?? 1;
  return {
    task: task.name,
    "mean (µs)": +(r.latency.mean * 1e3).toFixed(2),
    "p50 (µs)": +(r.latency.p50 * 1e3).toFixed(2),
    "p99 (µs)": +(r.latency.p99 * 1e3).toFixed(2),
    "calls/s": Math.round(r.throughput.mean),
    "µs per address": +((r.latency.mean * 1e3) / n).toFixed(3),
    "rme %": +r.latency.rme.toFixed(2),
    samples: r.latency.samplesCount,
  };
}

async function main(): Promise<void> {
  const dataDir = await ensureIpDataset();
  const dataset = openIpDataset(dataDir);
  const pool = new ScoringPool({ ipDatasetDir: dataset.dir, threads: 1, maxQueue: 1024, retryAfterSeconds: 1 });
  const addresses = sampleAddresses(256);
  try {
    // Same answers both ways before anything is timed.
    const viaPool = await pool.run({ kind: "ip.lookupBatch", ips: addresses });
    addresses.forEach((ip, i) => {
      const inline = dataset.lookup(parseIp(ip)!);
      const pooled = viaPool.results[i];
      if (!pooled || pooled.asn !== inline.asn || pooled.country !== inline.country) throw new Error(`pool and inline disagree on ${ip}`);
    });
    if (!(await pool.ping()).ok) throw new Error("pool ping failed");

    let sink = 0;
    let next = 0;
    const bench = new Bench({ time: TIME_MS, warmupTime: WARMUP_MS });
    bench.add("inline: parseIp + lookup", () => {
      next = (next + 1) & 255;
      if (dataset.lookup(parseIp(addresses[next]!)!).asn !== null) sink++;
    });
    bench.add("pool: ping round trip", async () => {
      if ((await pool.run({ kind: "ping" })).ok) sink++;
    });
    for (const n of BATCHES) {
      const ips = addresses.slice(0, n);
      const name = `pool: ip.lookupBatch x${n}`;
      perCall.set(name, n);
      bench.add(name, async () => {
        sink += (await pool.run({ kind: "ip.lookupBatch", ips })).results.length;
      });
    }
    const concurrentName = `pool: ${CONCURRENT_PINGS} pings in flight`;
    perCall.set(concurrentName, CONCURRENT_PINGS);
    bench.add(concurrentName, async () => {
      const all = await Promise.all(Array.from({ length: CONCURRENT_PINGS }, () => pool.run({ kind: "ping" })));
      sink += all.length;
    });
    await bench.run();

    console.log(`pool-hop (${sink > 0 ? "ok" : "?"}): ${machineLine()}`);
    console.log(`tinybench: ${TIME_MS} ms per task after ${WARMUP_MS} ms warm-up; pool of ${pool.threads} thread; dataset ${dataset.meta.version}`);
    console.table(bench.table(row));
  } finally {
    await pool.close();
    dataset.close();
  }
}

await main();
