import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/**
 * A real PostgreSQL server for the tests and the benchmark: Debian's binaries, `initdb` into a temporary folder, a
 * free loopback port, run as an unprivileged user (`postgres` when the tests run as root).
 * fsync is off for the tests (they kill service nodes and stop PostgreSQL itself, never the
 * machine); the benchmark asks for `durable`, so a commit costs what it costs in production.
 */
export interface TestPostgres {
  port: number;
  /** postgres:// URL of a database of this server. */
  url(database?: string): string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server: "fast" (clean) or "immediate" (as a crash: no shutdown checkpoint). */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** Starts it again on the same folder and port. */
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  destroy(): Promise<void>;
  /** The postmaster's process id (its backends are its children), or undefined while stopped. */
  pid(): number | undefined;
}

/** The folder of Debian's PostgreSQL programs (initdb, postgres), newest version first. */
export function postgresBinDir(): string {
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir && existsSync(join(dir, "initdb")) && existsSync(join(dir, "postgres"))) return dir;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(join(root, v, "bin/initdb"))) return join(root, v, "bin");
  throw new Error("PostgreSQL is not installed: apt-get install -y postgresql (.ci/run does)");
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** uid/gid to run the server as: ourselves, or `postgres` (else `nobody`) when we are root. */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const user of ["postgres", "nobody"]) {
    try {
      const uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
      const gid = Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());
      return { uid, gid };
    } catch {
      // try the next
    }
  }
  throw new Error("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL as");
}

export async function startPostgres(opts: { durable?: boolean } = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(join(tmpdir(), "fs-pg-"));
  const data = join(dir, "data");
  const user = runAs();
  if (user) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  execFileSync(join(bin, "initdb"), ["-D", data, "-U", "fs", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"], { ...as, stdio: "pipe" });
  const port = await freePort();
  let child: ChildProcess | null = null;
  let log = "";

  const start = async (): Promise<void> => {
    log = "";
    child = spawn(
      join(bin, "postgres"),
      [
        ...["-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", "-c", "shared_buffers=64MB"],
        ...(opts.durable ? [] : ["-c", "fsync=off", "-c", "full_page_writes=off"]),
      ],
      { ...as, stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout!.on("data", (d: Buffer) => (log += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    const until = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`postgres exited:\n${log}`);
      const c = new pg.Client({ connectionString: `postgres://fs@127.0.0.1:${port}/postgres` });
      try {
        await c.connect();
        await c.end();
        return;
      } catch {
        await c.end().catch(() => {});
        if (Date.now() > until) throw new Error(`postgres did not accept connections:\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const stop = async (mode: "fast" | "immediate" = "fast"): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once("exit", () => resolve());
      c.kill(mode === "immediate" ? "SIGQUIT" : "SIGINT");
    });
    child = null;
  };

  await start();
  const url = (database = "postgres"): string => `postgres://fs@127.0.0.1:${port}/${database}`;
  return {
    port,
    url,
    async createDatabase(name) {
      const c = new pg.Client({ connectionString: url() });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return url(name);
    },
    stop,
    start,
    pid: () => (child && child.exitCode === null ? child.pid : undefined),
    async destroy() {
      await stop("fast");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
