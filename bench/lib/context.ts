/**
 * What every benchmark prints with its numbers (numbers without Node version, CPU and warm-up
 * cannot be compared), and the one dataset every benchmark that looks up addresses needs.
 */
import type { Task } from "tinybench";
import { cpus } from "node:os";
import { buildIpDataset, usableListedSources } from "../../scripts/data-build.js";
import { dataDirFromEnv } from "../../src/config/index.js";
import { currentIpDatasetDir, openIpDatasetDir } from "../../src/datasets/ip-dataset.js";

/** Node version, CPU model, core count and platform of this machine. */
export interface MachineInfo {
  node: string;
  cpu: string;
  cores: number;
  platform: string;
}

/** Reads the machine description once. */
export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    node: process.version,
    cpu: list[0]?.model.trim() || "unknown CPU",
    cores: list.length,
    platform: `${process.platform}/${process.arch}`,
  };
}

/** One line, e.g. `node v20.20.2, AMD EPYC (2 cores), linux/x64`. */
export function machineLine(info: MachineInfo = machineInfo()): string {
  return `node ${info.node}, ${info.cpu} (${info.cores} cores), ${info.platform}`;
}

/**
 * The DATA_DIR of this environment (DATA_DIR or data/local), with a current IP dataset in it:
 * builds one there first when there is none, as bench/micro/ip-lookup.bench.ts does.
 */
export async function ensureIpDataset(log: (line: string) => void = (line) => console.log(line)): Promise<string> {
  const dataDir = dataDirFromEnv(process.env);
  const current = currentIpDatasetDir(dataDir);
  // Benchmarks measure the full dataset: build from the snapshot when the current build lacks
  // the range sources (an npm-only build).
  if (!current || !opens(current) || !hasRangeSources(current)) {
    log(`building an IP dataset in ${dataDir} from npm + the snapshot`);
    await buildIpDataset({ dataDir, force: true, log: (line) => log(`  ${line}`) });
  }
  return dataDir;
}

/** True when this reader can open the build (an older storage format cannot). */
function opens(dir: string): boolean {
  try {
    openIpDatasetDir(dir).close();
    return true;
  } catch {
    return false;
  }
}

/** True when the build at `dir` holds at least one range source besides the npm ASN/country data. */
function hasRangeSources(dir: string): boolean {
  return (usableListedSources(dir) ?? 0) > 0;
}

/**
 * One tinybench task as a table row in microseconds (tinybench's own table prints nanoseconds
 * with ± strings). Used by the micro benchmarks that time single calls.
 */
export function microRow(task: Task): Record<string, string | number> {
  const r = task.result;
  if (r.state !== "completed") return { task: task.name, state: r.state };
  return {
    task: task.name,
    "mean (µs)": +(r.latency.mean * 1e3).toFixed(3),
    "p50 (µs)": +(r.latency.p50 * 1e3).toFixed(3),
    "p99 (µs)": +(r.latency.p99 * 1e3).toFixed(3),
    "ops/s": Math.round(r.throughput.mean),
    "rme %": +r.latency.rme.toFixed(2),
    samples: r.latency.samplesCount,
  };
}
