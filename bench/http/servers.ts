/**
 * The two processes the HTTP runner measures: the uWS hello-world baseline and the real service,
 * each started from dist/ on a free port of 127.0.0.1, found through its `"msg":"listening"` line.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/config/index.js";

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

/** Children still running; killed if the runner itself exits early. */
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** A started server process. */
export interface ServerProcess {
  name: string;
  url: string;
  /** Its process id (CPU accounting, cpu.ts). */
  pid: number;
  /** Admin bearer token (service only; empty for hello-world). */
  adminToken: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** null while running; otherwise how it ended, e.g. `exit 1` or `signal SIGSEGV`. */
  ended(): string | null;
  /** SIGTERM, then SIGKILL after 10 s; resolves with how it ended. Idempotent. */
  stop(): Promise<string>;
}

function launch(name: string, args: string[], env: Record<string, string>, adminToken: string, cwd = REPO_ROOT): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  live.add(child);
  let out = "";
  let end: string | null = null;
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => {
      live.delete(child);
      end = signal ? `signal ${signal}` : `exit ${code}`;
      resolve(end);
    });
  });
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (out += d));

  const handle = (port: number): ServerProcess => ({
    name,
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    adminToken,
    output: () => out,
    ended: () => end,
    async stop() {
      if (end) return end;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      const how = await exited;
      clearTimeout(timer);
      return how;
    },
  });

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name} did not start within ${START_TIMEOUT_MS / 1000} s:\n${out}`));
    }, START_TIMEOUT_MS);
    const onData = (): void => {
      const m = /"port":(\d+)[^\n]*"msg":"listening"|"msg":"listening"[^\n]*?"port":(\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      resolve(handle(Number(m[1] ?? m[2])));
    };
    child.stdout!.on("data", onData);
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`${name} ended (${how}) before listening:\n${out}`));
    });
  });
}

/** Starts `node dist/bench/http/hello.js 0`. */
export function startHello(): Promise<ServerProcess> {
  return launch("hello", [join(REPO_ROOT, "dist/bench/http/hello.js"), "0"], { PATH: process.env.PATH ?? "" }, "");
}

/** The service and the temporary DATA_DIR it runs on (removed by `cleanup`). */
export interface ServiceProcess extends ServerProcess {
  dataDir: string;
  cleanup(): void;
}

/**
 * Node flags the service runs with, as in `npm start` (package.json; a unit test keeps the two in
 * step): a 64 MB young generation, so the allocation-heavy request path scavenges less often
 * (A/B bench runs under wrk: collect 0.29 -> 0.34, check 0.17 -> 0.20, resolve 0.27 -> 0.32 of
 * hello world; bench/README.md).
 */
export const SERVICE_NODE_FLAGS = ["--max-semi-space-size=64"];

/**
 * Extra Node flags for every service process, from BENCH_SERVICE_NODE_FLAGS in the runner's
 * environment (space-separated), e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the
 * service under load (Node refuses --cpu-prof in NODE_OPTIONS).
 */
export function extraNodeFlags(value = process.env.BENCH_SERVICE_NODE_FLAGS): string[] {
  return (value ?? "").split(/\s+/).filter(Boolean);
}

/**
 * Starts `node dist/src/main.js` (with SERVICE_NODE_FLAGS) on a fresh temporary DATA_DIR whose `datasets` links to
 * `datasetsFrom/datasets` (a DATA_DIR with a built IP dataset), with its own admin token. `root`
 * is the checkout whose dist/ runs (default this one; an ablated build, ablate.ts; another commit's
 * build, variants.ts); `databaseUrl` runs it on PostgreSQL (FS_STORE=postgres); `env` is added
 * last (a variant's settings).
 */
export async function startService(opts: { datasetsFrom: string; poolThreads: number; root?: string; databaseUrl?: string; env?: Record<string, string>; name?: string }): Promise<ServiceProcess> {
  const root = opts.root ?? REPO_ROOT;
  const dataDir = mkdtempSync(join(tmpdir(), "fs-bench-"));
  symlinkSync(join(opts.datasetsFrom, "datasets"), join(dataDir, "datasets"));
  const adminToken = `bench-admin-${randomBytes(16).toString("hex")}`;
  const cleanup = (): void => rmSync(dataDir, { recursive: true, force: true });
  try {
    const server = await launch(
      opts.name ?? "service",
      [...SERVICE_NODE_FLAGS, ...extraNodeFlags(), join(root, "dist/src/main.js")],
      {
        PATH: process.env.PATH ?? "",
        PORT: "0",
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        FS_ADMIN_TOKEN: adminToken,
        FS_POOL_THREADS: String(opts.poolThreads),
        FS_LOG_LEVEL: "info",
        // The meter is a preview, off by default; the benchmark measures it.
        FS_ENABLE_METER: "true",
        // The collect scenario sends from one address as fast as it can and checks that every
        // answered hit is stored: the beacon's rate limits and observation budget are off.
        FS_BEACON_ADDRESS_LIMIT: "0",
        FS_BEACON_PROJECT_LIMIT: "0",
        FS_OBSERVATION_BUDGET_PER_DAY: "0",
        FS_OBSERVATION_BUDGET_PROJECT_PER_DAY: "0",
        FS_OBSERVATION_BUDGET_PREFIX_PER_DAY: "0",
        ...(opts.databaseUrl ? { FS_STORE: "postgres", DATABASE_URL: opts.databaseUrl, FS_NODE_ID: "bench" } : {}),
        // A variant's own environment (--variant name:ENV=value) comes last and wins.
        ...opts.env,
      },
      adminToken,
      root,
    );
    return { ...server, dataDir, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}
