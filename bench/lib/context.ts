/**
 * What every benchmark prints with its numbers (STYLE.md §12: numbers without Node version, CPU
 * and warm-up cannot be compared), and the one dataset every benchmark that looks up addresses needs.
 */
import { cpus } from "node:os";
import { buildIpDataset } from "../../scripts/data-build.js";
import { dataDirFromEnv } from "../../src/config/index.js";
import { currentIpDatasetDir } from "../../src/datasets/ip-dataset.js";

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
  if (!currentIpDatasetDir(dataDir)) {
    log(`no IP dataset in ${dataDir}; building one`);
    await buildIpDataset({ dataDir, log: (line) => log(`  ${line}`) });
  }
  return dataDir;
}
