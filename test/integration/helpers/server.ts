import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, inject } from "vitest";
import type { OpenApiDocument } from "../../../src/http/openapi.js";
import { scaled } from "../../helpers/time.js";
import { OpenApiContract } from "./contract.js";
import pg from "pg";

const REPO = resolve(import.meta.dirname, "../../..");
/** How long a start may take before it counts as hung (four front threads on a loaded 2-core machine: about 60 s). */
const startTimeoutMs = scaled(120_000);
export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";

export interface DemoAccount {
  orgId: string;
  projectId: string;
  secretKey: string;
  publishableKey: string;
}

/** A real service process: uWS on a free port, LMDB in a temp DATA_DIR, real pool threads. */
export interface TestServer {
  url: string;
  port: number;
  dataDir: string;
  demo: DemoAccount;
  /** The server's own GET /openapi.json, fetched at each start; api() checks every answer against it. */
  contract: OpenApiContract;
  output(): string;
  /** Graceful stop (SIGTERM). */
  stop(): Promise<void>;
  /** kill -9. */
  kill9(): Promise<void>;
  /** Starts again on the same DATA_DIR (new port), after stop() or kill9(). */
  restart(): Promise<void>;
  /** Removes the temp directory (after stop). */
  cleanup(): void;
  /** Sends a signal to the running process (e.g. SIGHUP). */
  signal(sig: NodeJS.Signals): void;
  /** Exit code of the last process once it ended (null while running or when killed by a signal). */
  exitCode(): number | null;
  /** Process id of the running server (to read its memory from /proc). */
  pid(): number;
}

/**
 * Starts `node dist/src/main.js` with a fresh DATA_DIR whose datasets link to the shared build.
 * In the `integration-pg` project (global-setup-pg.ts), each server also gets a fresh database of
 * the run's PostgreSQL (FS_STORE=postgres), unless `env` names its own DATABASE_URL (a cluster's
 * nodes share one). `demo`: the account printed by another node's first start (later nodes of a
 * cluster print none).
 */
export async function startServer(env: Record<string, string> = {}, opts: { ownDatasets?: boolean; demo?: DemoAccount } = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "fs-it-"));
  const pgStore = inject("postgresUrl");
  if (pgStore && env.FS_STORE === undefined) {
    env = { FS_STORE: "postgres", DATABASE_URL: await freshDatabase(pgStore), FS_NODE_ID: `node-${process.pid}-${dbCounter}`, ...env };
  }
  const shared = join(inject("datasetDataDir"), "datasets");
  // Tests that switch datasets get a private copy; the rest share one build read-only.
  if (opts.ownDatasets) cpSync(shared, join(dataDir, "datasets"), { recursive: true });
  else symlinkSync(shared, join(dataDir, "datasets"));
  let child: ChildProcess;
  let out = "";
  let demo: DemoAccount | null = opts.demo ?? null;
  let port = 0;
  let contract: OpenApiContract | null = null;

  const launch = async (): Promise<void> => {
    out = "";
    const childEnv: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      FS_ADMIN_TOKEN: ADMIN_TOKEN,
      FS_POOL_THREADS: "1",
      FS_TEST_CLOCK: "true",
      FS_LOG_LEVEL: "info",
      ...env,
    };
    // An empty value means "leave it unset" (e.g. to see the generated admin token).
    for (const k of Object.keys(childEnv)) if (childEnv[k] === "") delete childEnv[k];
    child = spawn(process.execPath, [join(REPO, "dist/src/main.js")], {
      env: childEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (out += d));
    port = await new Promise<number>((res, rej) => {
      // Waits for the "listening" line; the timer only bounds a start that hangs.
      const timer = setTimeout(() => rej(new Error(`server did not start within ${startTimeoutMs} ms:\n${out}`)), startTimeoutMs);
      const check = (): void => {
        const m = /"port":(\d+)[^\n]*"msg":"listening"|"msg":"listening"[^\n]*?"port":(\d+)/.exec(out);
        // On the first start, also wait for the demo org's record (logged after listening).
        if (m && (demo || firstStartRecord(out) !== null)) {
          clearTimeout(timer);
          child.stdout!.off("data", check);
          res(Number(m[1] ?? m[2]));
        }
      };
      child.stdout!.on("data", check);
      child.once("exit", (code) => {
        clearTimeout(timer);
        rej(new Error(`server exited with ${code}:\n${out}`));
      });
    }).catch((err: unknown) => {
      // Never leave a half-started server behind.
      child.kill("SIGKILL");
      throw err;
    });
    child.removeAllListeners("exit");
    if (!demo) {
      try {
        demo = parseDemo(out);
      } catch (err) {
        child.kill("SIGKILL");
        throw err;
      }
    }
    try {
      contract = await fetchContract(`http://127.0.0.1:${port}`);
    } catch (err) {
      child.kill("SIGKILL");
      throw err;
    }
  };
  const waitExit = (): Promise<void> =>
    new Promise((res) => (child.exitCode !== null || child.signalCode !== null ? res() : child.once("exit", () => res())));

  await launch();
  const server: TestServer = {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    dataDir,
    demo: demo!,
    get contract() {
      return contract!;
    },
    output: () => out,
    async stop() {
      child.kill("SIGTERM");
      await waitExit();
    },
    async kill9() {
      child.kill("SIGKILL");
      await waitExit();
    },
    async restart() {
      // Two processes on one DATA_DIR would be two writers, and the first would outlive the test.
      if (child.exitCode === null && child.signalCode === null) throw new Error("restart(): the server is still running; stop() or kill9() it first");
      await launch();
    },
    cleanup() {
      rmSync(dataDir, { recursive: true, force: true });
    },
    signal(sig) {
      child.kill(sig);
    },
    exitCode() {
      return child.exitCode;
    },
    pid() {
      return child.pid!;
    },
  };
  return server;
}

let dbCounter = 0;

/** A new, empty database on the run's PostgreSQL server; returns its URL. */
export async function freshDatabase(serverUrl: string): Promise<string> {
  const name = `fs_it_${process.pid}_${++dbCounter}`;
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  return serverUrl.replace(/\/[^/]*$/, `/${name}`);
}

/** The first start's log record of the demo org (one JSON line), or null while it has not come. */
export function firstStartRecord(out: string): Record<string, string> | null {
  const line = out.split("\n").find((l) => l.includes('"msg":"first start: demo org created'));
  if (line === undefined) return null;
  try {
    return JSON.parse(line) as Record<string, string>;
  } catch {
    return null; // the line is still arriving
  }
}

function parseDemo(out: string): DemoAccount {
  const r = firstStartRecord(out);
  if (!r) throw new Error(`no first-start record in the output:\n${out}`);
  return { orgId: r.org_id!, projectId: r.project_id!, secretKey: r.secret_key!, publishableKey: r.publishable_key! };
}

/**
 * What api() calls: a spawned server (by URL), or an in-process app (test/helpers/app.ts), which
 * brings its own `fetch`.
 */
export type Reachable = Pick<TestServer, "url"> & { contract?: OpenApiContract; fetch?: (url: string, init?: RequestInit) => Promise<Response> };

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  // Loose on purpose: tests assert the shape, including that `error` is null on success.
  body: { version: string; data: T; error: any; metadata: Record<string, any> };
}

/**
 * One HTTP call; parses the envelope and checks the answer against the server's OpenAPI document
 * (its schema for the route, method and status), throwing with the mismatches when it does not
 * match, so every call doubles as a contract test.
 */
export async function api<T = any>(
  server: Reachable,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetchAgainIfClosed(server, method, server.url + path, { method, headers, body });
  const text = await res.text();
  let parsed: ApiResponse<T>["body"];
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`non-JSON response ${res.status}: ${text.slice(0, 200)}`);
  }
  const contract = server.contract ?? (await contractOf(server.url));
  const mismatch = contract.check(method, path, res.status, parsed);
  if (mismatch) throw new Error(mismatch);
  return { status: res.status, headers: res.headers, body: parsed };
}

/**
 * fetch, sent again once when a GET or HEAD found its kept-alive connection already closed by the
 * server. That is a race of the client, not an answer: a test whose process was busy (building a
 * dataset, say) for longer than the server's idle timeout reuses a connection the server has just
 * closed. Other methods are never sent twice.
 */
async function fetchAgainIfClosed(server: Reachable, method: string, url: string, init: RequestInit): Promise<Response> {
  const send = server.fetch ?? fetch;
  try {
    return await send(url, init);
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code;
    if ((method !== "GET" && method !== "HEAD") || code !== "UND_ERR_SOCKET") throw err;
    return await send(url, init);
  }
}

/** Contracts of servers reached by URL only (not through a TestServer), fetched once per URL. */
const contractsByUrl = new Map<string, Promise<OpenApiContract>>();

function contractOf(url: string): Promise<OpenApiContract> {
  let contract = contractsByUrl.get(url);
  if (!contract) {
    contract = fetchContract(url);
    contractsByUrl.set(url, contract);
    contract.catch(() => contractsByUrl.delete(url));
  }
  return contract;
}

/** GET /openapi.json of a running server, as a contract to check answers against. */
async function fetchContract(url: string): Promise<OpenApiContract> {
  const res = await fetch(`${url}/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return new OpenApiContract((await res.json()) as OpenApiDocument);
}

/** Admin call with the test admin token. */
export function admin<T = any>(server: Reachable, method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
  return api<T>(server, method, path, { key: ADMIN_TOKEN, body });
}

/** Creates an org with a secret key (and optionally a plan); returns ids and the plain key. */
export async function createOrgWithKey(server: Reachable, plan = "free", scopes: string[] = []): Promise<{ orgId: string; key: string; keyId: string }> {
  const org = await admin(server, "POST", "/v1/admin/orgs", { name: `org ${Math.random()}`, plan });
  if (org.status !== 201) throw new Error(`create org: ${JSON.stringify(org.body)}`);
  const key = await admin(server, "POST", `/v1/admin/orgs/${org.body.data.id}/keys`, { type: "secret", scopes });
  if (key.status !== 201) throw new Error(`create key: ${JSON.stringify(key.body)}`);
  return { orgId: org.body.data.id, key: key.body.data.key, keyId: key.body.data.id };
}

/**
 * Starts one server for the test file (beforeAll) and stops it afterwards (afterAll).
 * @example let server!: TestServer; useServer((s) => (server = s));
 */
export function useServer(onStarted: (server: TestServer) => void, env?: Record<string, string>): void {
  let started: TestServer | undefined;
  beforeAll(async () => {
    started = await startServer(env);
    onStarted(started);
  });
  afterAll(async () => {
    if (!started) return;
    await started.stop();
    started.cleanup();
  });
}

/** An org with one project, a secret key and a publishable key for that project (beacon tests). */
export async function createBeaconProject(
  server: Reachable,
  plan = "free",
): Promise<{ orgId: string; projectId: string; secretKey: string; publishableKey: string }> {
  const { orgId, key } = await createOrgWithKey(server, plan, ["sessions"]);
  const project = await admin(server, "POST", `/v1/admin/orgs/${orgId}/projects`, { name: "site" });
  if (project.status !== 201) throw new Error(`create project: ${JSON.stringify(project.body)}`);
  const pub = await admin(server, "POST", `/v1/admin/orgs/${orgId}/keys`, { type: "publishable", project_id: project.body.data.id });
  if (pub.status !== 201) throw new Error(`create publishable key: ${JSON.stringify(pub.body)}`);
  return { orgId, projectId: project.body.data.id, secretKey: key, publishableKey: pub.body.data.key };
}
