/**
 * CPU time per response, read from /proc (Linux) around each measured run: the server process
 * (all its threads, and its main thread, the one that owns the sockets) and the load generator
 * (wrk: a child of this process, counted once reaped; autocannon: this process).
 *
 * What it is for: on a machine whose cores the generator, the baseline and the service share, a
 * scenario cannot go faster than cores / (CPU per response), however its work is spread over
 * threads. Set beside hello world's rate in the same run, that gives the highest ratio the
 * scenario could reach at its current CPU cost (bench/README.md, "Reading the results").
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/** CPU microseconds spent during one run. */
export interface CpuSpent {
  /** The server process, all threads. */
  serverUs: number;
  /** The server's main thread (the uWS event loop). */
  frontUs: number;
  /** The load generator. */
  generatorUs: number;
  /** PostgreSQL (its postmaster and every backend), when the service runs on it (--store postgres). */
  dbUs?: number;
}

/** A reading to subtract from a later one. */
export interface CpuReading {
  server: number;
  front: number;
  self: number;
  children: number;
  db?: number;
}

const TICK_US = clockTickUs();

function clockTickUs(): number {
  try {
    const hz = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
    return hz > 0 ? 1e6 / hz : 10_000;
  } catch {
    return 10_000;
  }
}

/**
 * utime+stime (fields 14 and 15 of proc(5)'s stat) and, with `children`, cutime+cstime (16, 17),
 * in µs. The command name (field 2) may hold spaces, so fields are counted after its `)`.
 */
function statTimes(path: string): { own: number; children: number } {
  const text = readFileSync(path, "utf8");
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // f[0] is field 3 (state): field n is f[n - 3].
  return { own: (Number(f[11]) + Number(f[12])) * TICK_US, children: (Number(f[13]) + Number(f[14])) * TICK_US };
}

/** The CPU times now, or null where /proc cannot be read (not Linux, or the server is gone). */
export function readCpu(serverPid: number, dbPid?: number): CpuReading | null {
  try {
    const self = statTimes("/proc/self/stat");
    return {
      server: statTimes(`/proc/${serverPid}/stat`).own,
      front: statTimes(`/proc/${serverPid}/task/${serverPid}/stat`).own,
      self: self.own,
      children: self.children,
      db: dbPid === undefined ? undefined : treeTimes(dbPid),
    };
  } catch {
    return null;
  }
}

/**
 * A process and its live children (PostgreSQL's postmaster and its backends): their own CPU,
 * plus what exited children left in the postmaster's cutime/cstime.
 */
function treeTimes(pid: number): number {
  const root = statTimes(`/proc/${pid}/stat`);
  let sum = root.own + root.children;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, "utf8");
      const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
      if (Number(f[1]) === pid) sum += statTimes(`/proc/${entry}/stat`).own;
    } catch {
      // gone meanwhile
    }
  }
  return sum;
}

/**
 * What a run spent between two readings. `generator` says where the generator ran: in this
 * process (autocannon) or as a child that has exited and been reaped by now (wrk).
 */
export function cpuSpent(before: CpuReading | null, after: CpuReading | null, generator: "in-process" | "child"): CpuSpent | undefined {
  if (!before || !after) return undefined;
  return {
    serverUs: after.server - before.server,
    frontUs: after.front - before.front,
    generatorUs: generator === "child" ? after.children - before.children : after.self - before.self,
    dbUs: before.db !== undefined && after.db !== undefined ? after.db - before.db : undefined,
  };
}

/** Cores this process may run on. */
export function cores(): number {
  return availableParallelism();
}
