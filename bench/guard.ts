/**
 * `npm run bench:guard`: the request path of the current build against a pinned reference build,
 * measured in the same interleaved rounds (bench/README.md, "Guard"). Fails (exit 1) when
 * `GET /v1/ip` or `POST /v1/collect` costs more than LIMIT times the reference's service CPU per
 * response under any load generator, or when the run was not clean. Run by hand before a release,
 * on a machine as quiet as can be had: on a shared machine a single run moves by 10% or more, so
 * it is no CI gate.
 *
 *   npm run bench:guard                      # against REFERENCE
 *   npm run bench:guard -- --ref <commit>    # against another build
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { runHttpBench } from "./http/runner.js";
import { cpuPerResponse, type Series } from "./http/report.js";
import { parseVariantFlags, variantScenarioName } from "./http/variants.js";
import { machineLine } from "./lib/context.js";

/** The pinned reference: the last build before the request path grew slower (issue 27). Move it forward on purpose, with the figures, in bench/README.md. */
export const REFERENCE = "efaf249";
/** Largest service CPU per response allowed, as a factor of the reference's. */
export const LIMIT = 1.1;
const SCENARIOS = ["ip-lookup", "collect"];

/** One scenario under one generator: the current build's CPU per response against the reference's. */
export interface GuardLine {
  scenario: string;
  generator: string;
  reference: number;
  current: number;
  factor: number;
  ok: boolean;
}

/** The guard's verdict per scenario and generator, from a run's series (variants `reference` and `HEAD`). */
export function guardLines(series: Series[], limit = LIMIT): GuardLine[] {
  const lines: GuardLine[] = [];
  for (const scenario of SCENARIOS) {
    for (const generator of [...new Set(series.map((s) => s.generator))]) {
      const of = (variant: string) => series.find((s) => s.scenario === variantScenarioName(scenario, variant) && s.generator === generator);
      const ref = of("reference");
      const cur = of("HEAD");
      const refCpu = ref && cpuPerResponse(ref);
      const curCpu = cur && cpuPerResponse(cur);
      if (!refCpu || !curCpu) continue;
      const factor = curCpu.server / refCpu.server;
      lines.push({ scenario, generator, reference: refCpu.server, current: curCpu.server, factor, ok: factor <= limit });
    }
  }
  return lines;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { ref: { type: "string", default: REFERENCE }, duration: { type: "string", default: "5" }, rounds: { type: "string", default: "3" } } });
  console.log(`bench:guard: ${machineLine()}\nreference ${values.ref}, limit ${LIMIT}x the reference's service CPU per response\n`);
  const result = await runHttpBench({
    durationS: Number(values.duration),
    warmupS: 2,
    rounds: Number(values.rounds),
    connections: 100,
    poolThreads: 1,
    only: SCENARIOS,
    variants: parseVariantFlags([`reference=${values.ref}`], []),
  });
  console.log(result.markdown);
  const lines = guardLines(result.series);
  console.log("\n| scenario | generator | reference µs | current µs | factor | |\n|---|---|---:|---:|---:|---|");
  for (const l of lines) console.log(`| ${l.scenario} | ${l.generator} | ${l.reference.toFixed(1)} | ${l.current.toFixed(1)} | ${l.factor.toFixed(2)} | ${l.ok ? "ok" : `OVER ${LIMIT}`} |`);
  if (!result.clean) console.log("\nthe run was not clean (see Problems above)");
  if (lines.length === 0) console.log("\nno CPU figures (no /proc?): nothing compared");
  return result.clean && lines.length > 0 && lines.every((l) => l.ok) ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
      process.exit(1);
    },
  );
}
