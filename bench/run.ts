/**
 * Runs every benchmark: the micro benchmarks (each dist/bench/micro/*.bench.js in its own
 * process, output passed through), then the HTTP runner (bench/http/runner.ts). Prints the
 * results and writes them to bench/results/latest.md (gitignored).
 *
 *   npm run bench                                  build, then everything, 10 s per HTTP run
 *   node dist/bench/run.js --only http --duration 5
 *   node dist/bench/run.js --only micro
 *
 *   node dist/bench/run.js --only cluster --nodes 3   N nodes on one PostgreSQL vs one node (bench/http/cluster.ts)
 *
 * Flags: --only micro|http|cluster (cluster runs only when asked: it starts PostgreSQL and N services;
 * --nodes N, default 3); --scenarios a,b (HTTP scenarios to run besides hello); --duration S (seconds per HTTP measurement, default 10);
 * --rounds N (interleaved rounds, default 3); --warmup S (default 3); --connections N (default 100);
 * --ablate a,b serves an ablated build with those parts cut out (HTTP only; bench/http/ablate.ts).
 * --store postgres runs the service on a real PostgreSQL started for the run (docs/cluster.md).
 * --compare-ref [name=]REF (repeatable) builds REF in a temporary git worktree and measures it beside
 * the current build in the same rounds; --variant name[:ENV=value,...] (repeatable) measures the
 * current build with extra environment; rows are named scenario@variant (bench/http/variants.ts).
 * FS_POOL_THREADS sets the service's pool threads (default 1). Exits 0 when targets are missed
 * (targets are not tests); exits 1 when a benchmark crashed or the HTTP run was not clean.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { REPO_ROOT } from "../src/config/index.js";
import { parseCuts, type CutName } from "./http/ablate.js";
import { runClusterBench } from "./http/cluster.js";
import { runHttpBench } from "./http/runner.js";
import { parseVariantFlags, type VariantSpec } from "./http/variants.js";
import { machineLine } from "./lib/context.js";

const MICRO_DIR = join(REPO_ROOT, "dist/bench/micro");
const RESULTS = join(REPO_ROOT, "bench/results/latest.md");

interface Flags {
  only: "micro" | "http" | "cluster" | null;
  nodes: number;
  durationS: number;
  rounds: number;
  warmupS: number;
  connections: number;
  scenarios: string[] | undefined;
  ablate: CutName[] | undefined;
  store: "lmdb" | "postgres";
  variants: VariantSpec[];
}

function parseFlags(argv: string[]): Flags {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: "string" },
      duration: { type: "string", default: "10" },
      rounds: { type: "string", default: "3" },
      warmup: { type: "string", default: "3" },
      connections: { type: "string", default: "100" },
      nodes: { type: "string", default: "3" },
      scenarios: { type: "string" },
      ablate: { type: "string" },
      store: { type: "string", default: "lmdb" },
      "compare-ref": { type: "string", multiple: true },
      variant: { type: "string", multiple: true },
    },
  });
  const num = (name: string, v: string, min: number, integer: boolean): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n)))
      usage(`--${name} must be ${integer ? "an integer" : "a number"} >= ${min}, got ${v}`);
    return n;
  };
  if (values.only !== undefined && !["micro", "http", "cluster"].includes(values.only)) usage(`--only takes micro, http or cluster, got ${values.only}`);
  let ablate: CutName[] | undefined;
  try {
    ablate =
      values.ablate === undefined
        ? undefined
        : parseCuts(
            values.ablate
              .split(",")
              .map((c) => c.trim())
              .filter(Boolean),
          );
  } catch (err) {
    usage((err as Error).message);
  }
  if (ablate && values.only !== "http") usage("--ablate needs --only http");
  if (values.store !== "lmdb" && values.store !== "postgres") usage(`--store takes lmdb or postgres, got ${values.store}`);
  let variants: VariantSpec[] = [];
  try {
    variants = parseVariantFlags(values["compare-ref"] ?? [], values.variant ?? []);
  } catch (err) {
    usage((err as Error).message);
  }
  if (variants.length && values.only !== "http") usage("--compare-ref and --variant need --only http");
  return {
    only: (values.only as Flags["only"]) ?? null,
    durationS: num("duration", values.duration, 1, false),
    rounds: num("rounds", values.rounds, 1, true),
    warmupS: num("warmup", values.warmup, 0, false),
    connections: num("connections", values.connections, 1, true),
    nodes: num("nodes", values.nodes, 2, true),
    scenarios: values.scenarios
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    ablate,
    store: values.store as Flags["store"],
    variants,
  };
}

function usage(problem: string): never {
  process.stderr.write(
    `${problem}\nusage: node dist/bench/run.js [--only micro|http|cluster] [--nodes N] [--duration S] [--rounds N] [--warmup S] [--connections N] [--scenarios a,b] [--ablate a,b] [--store lmdb|postgres] [--compare-ref [name=]REF]... [--variant name[:ENV=value,...]]...\n`,
  );
  process.exit(2);
}

/** Runs one micro benchmark in its own process; passes its output through and keeps a copy. */
function runMicro(file: string): Promise<{ output: string; ok: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(MICRO_DIR, file)], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      output += d;
      process.stdout.write(d);
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      output += d;
      process.stderr.write(d);
    });
    child.once("exit", (code, signal) => {
      const ok = code === 0;
      if (!ok) output += `\n${file} FAILED (${signal ?? `exit ${code}`})\n`;
      resolve({ output, ok });
    });
  });
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  const poolThreads = Number(process.env.FS_POOL_THREADS ?? "1");
  if (!Number.isInteger(poolThreads) || poolThreads < 1) usage(`FS_POOL_THREADS must be a positive integer, got ${process.env.FS_POOL_THREADS}`);
  console.log(`benchmarks: ${machineLine()}\n`);
  const sections: string[] = [];
  const failed: string[] = [];

  if (flags.only === "cluster") {
    console.log("=== cluster ===");
    try {
      const result = await runClusterBench({
        nodes: flags.nodes,
        durationS: flags.durationS,
        warmupS: flags.warmupS,
        rounds: flags.rounds,
        connections: flags.connections,
        poolThreads,
      });
      console.log(`\n${result.markdown}`);
      sections.push(result.markdown);
      if (!result.clean) failed.push("cluster (see Problems)");
    } catch (err) {
      const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
      console.error(`cluster runner failed: ${text}`);
      sections.push(`## Cluster\n\nrunner failed:\n\n\`\`\`\n${text}\n\`\`\`\n`);
      failed.push("cluster runner");
    }
  }

  if (flags.only === null || flags.only === "micro") {
    const files = readdirSync(MICRO_DIR)
      .filter((f) => f.endsWith(".bench.js"))
      .sort();
    const parts: string[] = [];
    for (const file of files) {
      console.log(`=== micro: ${file} ===`);
      const { output, ok } = await runMicro(file);
      if (!ok) failed.push(file);
      parts.push(`### ${file}\n\n\`\`\`\n${output.trim()}\n\`\`\``);
      console.log();
    }
    sections.push(`## Micro benchmarks\n\n${parts.join("\n\n")}\n`);
  }

  if (flags.only === null || flags.only === "http") {
    console.log("=== http ===");
    try {
      const result = await runHttpBench({
        durationS: flags.durationS,
        warmupS: flags.warmupS,
        rounds: flags.rounds,
        connections: flags.connections,
        poolThreads,
        only: flags.scenarios,
        ablate: flags.ablate,
        store: flags.store,
        variants: flags.variants,
      });
      console.log(`\n${result.markdown}`);
      sections.unshift(result.markdown);
      if (!result.clean) failed.push("http (see Problems)");
    } catch (err) {
      const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
      console.error(`http runner failed: ${text}`);
      sections.unshift(`## HTTP\n\nrunner failed:\n\n\`\`\`\n${text}\n\`\`\`\n`);
      failed.push("http runner");
    }
  }

  mkdirSync(join(REPO_ROOT, "bench/results"), { recursive: true });
  writeFileSync(RESULTS, `# Benchmarks\n\n${sections.join("\n")}`);
  console.log(`written to ${RESULTS}`);
  if (failed.length) {
    console.error(`failed: ${failed.join(", ")}`);
    process.exit(1);
  }
}

await main();
