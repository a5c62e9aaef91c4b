/**
 * Load generators behind one interface, so the baseline and the service are driven identically:
 * autocannon (programmatic, in this process) and wrk (when on PATH; one thread, Lua script).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import type { CpuSpent } from "./cpu.js";

/** What to fire: every connection goes round `paths` with the same headers. */
export interface Load {
  /** `http://127.0.0.1:<port>` */
  url: string;
  paths: string[];
  headers: Record<string, string>;
  /** Default GET. */
  method?: "GET" | "POST";
  /** One body per path (same index), for POST. */
  bodies?: string[];
  connections: number;
  durationS: number;
}

/** One run's figures. */
export interface Measurement {
  /** Completed responses. */
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses with a status of 400 or more. */
  errorStatuses: number;
  /** Responses per status code, where the generator reports them (autocannon; wrk does not). */
  byStatus?: Record<number, number>;
  /** Connection errors and timeouts. */
  socketErrors: number;
  /** CPU the server and the generator spent in this run (cpu.ts), where /proc can be read. */
  cpu?: CpuSpent;
}

/** A load generator. */
export interface LoadGenerator {
  name: string;
  /** Name and version, for the report. */
  version: string;
  /** How it is driven, for the report. */
  settings: string;
  /** Where its CPU time is counted (cpu.ts). */
  runsIn: "in-process" | "child";
  run(load: Load): Promise<Measurement>;
}

/** autocannon 9, programmatic, pipelining 1. */
export function autocannonGenerator(): LoadGenerator {
  const pkg = createRequire(import.meta.url)("autocannon/package.json") as { version: string };
  return {
    name: "autocannon",
    version: `autocannon ${pkg.version}`,
    settings: "in the runner's process, pipelining 1",
    runsIn: "in-process",
    async run(load) {
      const r = await autocannon({
        url: load.url,
        connections: load.connections,
        pipelining: 1,
        duration: load.durationS,
        headers: load.headers,
        requests: load.paths.map((path, i) => ({ method: load.method ?? "GET", path, body: load.bodies?.[i] })),
      });
      let errorStatuses = 0;
      const byStatus: Record<number, number> = {};
      for (const [code, { count }] of Object.entries(r.statusCodeStats)) {
        byStatus[Number(code)] = count;
        if (Number(code) >= 400) errorStatuses += count;
      }
      return {
        requests: r.requests.total,
        rps: r.requests.total / r.duration,
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        errorStatuses,
        byStatus,
        socketErrors: r.errors,
      };
    },
  };
}

/** `wrk --version` output, or null when wrk is not on PATH. */
function wrkVersion(): string | null {
  const r = spawnSync("wrk", ["--version"], { encoding: "utf8" });
  if (r.error) return null;
  const m = /wrk\s+(\S+)/.exec(`${r.stdout}${r.stderr}`);
  return m ? `wrk ${m[1]}` : "wrk";
}

const MARK = "WRK-RESULT ";

/**
 * A Lua script that goes round `paths` with `headers` (requests formatted once, in init) and
 * prints exact figures as one JSON line when done: latency in µs, status errors are >= 400.
 */
function wrkScript(paths: string[], headers: Record<string, string>, method: string, bodies: string[] | undefined): string {
  const lua = (s: string): string => JSON.stringify(s); // the strings here are plain ASCII
  return `local paths = { ${paths.map(lua).join(", ")} }
local bodies = { ${(bodies ?? []).map(lua).join(", ")} }
local headers = { ${Object.entries(headers).map(([k, v]) => `[${lua(k)}] = ${lua(v)}`).join(", ")} }
local reqs, i = {}, 0
function init(args)
  for k, p in ipairs(paths) do reqs[k] = wrk.format(${lua(method)}, p, headers, bodies[k]) end
end
function request()
  i = i % #reqs + 1
  return reqs[i]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('${MARK}{"requests":%d,"duration_us":%d,"status":%d,"socket":%d,"p50_us":%.1f,"p99_us":%.1f}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

/** wrk with one thread (`-t1 -c<connections>`), or null when wrk is not on PATH. */
export function wrkGenerator(): LoadGenerator | null {
  const version = wrkVersion();
  if (!version) return null;
  return {
    name: "wrk",
    version,
    settings: "-t1, Lua script going round the paths",
    runsIn: "child",
    async run(load) {
      const dir = mkdtempSync(join(tmpdir(), "fs-bench-wrk-"));
      try {
        const script = join(dir, "load.lua");
        writeFileSync(script, wrkScript(load.paths, load.headers, load.method ?? "GET", load.bodies));
        const args = ["-t1", `-c${load.connections}`, `-d${Math.max(1, Math.round(load.durationS))}s`, "--timeout", "10s", "-s", script, load.url];
        const out = await new Promise<string>((resolve, reject) => {
          const child = spawn("wrk", args, { stdio: ["ignore", "pipe", "pipe"] });
          let text = "";
          child.stdout.setEncoding("utf8").on("data", (d: string) => (text += d));
          child.stderr.setEncoding("utf8").on("data", (d: string) => (text += d));
          child.once("error", reject);
          // "close", not "exit": the result line may still be in the pipe when the process exits.
          child.once("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}:\n${text}`))));
        });
        const line = out.split("\n").find((l) => l.startsWith(MARK));
        if (!line) throw new Error(`no result line from wrk:\n${out}`);
        const r = JSON.parse(line.slice(MARK.length)) as { requests: number; duration_us: number; status: number; socket: number; p50_us: number; p99_us: number };
        return {
          requests: r.requests,
          rps: r.requests / (r.duration_us / 1e6),
          p50Ms: r.p50_us / 1000,
          p99Ms: r.p99_us / 1000,
          errorStatuses: r.status,
          socketErrors: r.socket,
        };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
