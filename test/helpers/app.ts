import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, inflateSync } from "node:zlib";
import { afterAll, beforeAll, inject } from "vitest";
import { ensureChallengeSecret } from "../../src/front/challenge/index.js";
import { loadConfig, type Config } from "../../src/config/index.js";
import { orgLimitsOf, webhookSettingsOf } from "../../src/store/protocol.js";
import { LocalQuotaCells } from "../../src/front/admission/cells.js";
import { startFront, type RunningFront } from "../../src/front/front.js";
import type { OpenApiDocument } from "../../src/http/openapi.js";
import type { HandlerWrap } from "../../src/http/pipeline.js";
import type { ReportScans } from "../../src/front/traffic/scan-thread.js";
import { listen, mountApp, type Listener } from "../../src/front/server.js";
import { createLogger } from "../../src/shared/log.js";
import { journalDirOf } from "../../src/store/charge-journal.js";
import { bootstrap } from "../../src/store/front/bootstrap.js";
import { StoreClient } from "../../src/store/front/client.js";
import { stateDirOf } from "../../src/store/state-env.js";
import { LeaseClock } from "../../src/store/pg/leases.js";
import { OpenApiContract } from "../integration/helpers/contract.js";
import { ADMIN_TOKEN, freshDatabase, type DemoAccount } from "../integration/helpers/server.js";
import { FakeUwsApp, type FakeRequest } from "./fake-uws.js";

/**
 * The service in the test's own process, called without a socket: the real front (routes,
 * router, auth, quota, journals, dashboard) over a real store writer thread (LMDB in a temp
 * DATA_DIR, or a fresh PostgreSQL database in the `app-pg` project) and a real scoring pool,
 * wired as `main.ts` wires one front thread, with uWS replaced by test/helpers/fake-uws.ts. For
 * tests about an answer's content; what needs a process (kill -9, front threads, sockets, signals
 * other than SIGHUP) stays with helpers/server.ts's spawned server, whose interface this shares.
 */
export interface TestApp {
  /** A base URL for paths and Origin headers; nothing listens on it: call `fetch`. */
  url: string;
  dataDir: string;
  demo: DemoAccount;
  config: Config;
  /** The app's GET /openapi.json, fetched at each start; api() checks every answer against it. */
  contract: OpenApiContract;
  /** `fetch` through the app's routes; `peer` is the connection's address (default 127.0.0.1). */
  fetch(input: string | URL, init?: AppRequestInit): Promise<Response>;
  /** Log lines the app wrote since its last start. */
  output(): string;
  /** Clean stop, as SIGTERM does. */
  stop(): Promise<void>;
  /** Starts again on the same DATA_DIR, after stop(); `env` changes settings from this start on. */
  restart(env?: Record<string, string>): Promise<void>;
  cleanup(): void;
  /** SIGHUP: load the dataset build `current` names. */
  signal(sig: "SIGHUP"): void;
  /** The front's report scans (src/front/traffic/scan-thread.ts): their thread's handle, to terminate it as a crash would. */
  scans(): ReportScans;
}

export interface AppRequestInit extends RequestInit {
  peer?: string;
  /** Size of the pieces the body arrives in (default one piece). */
  chunkBytes?: number;
}

const BASE_URL = "http://fs.test";

/**
 * Starts the app with the test defaults of helpers/server.ts (FS_TEST_CLOCK, one pool thread,
 * the run's shared dataset) and `env` on top; an empty value leaves a setting unset.
 * `socket`: serve on the real uWS (a free port on 127.0.0.1; `url` and `fetch` go through it), for
 * what uWS itself adds to an answer; `peer` and `chunkBytes` are then ignored. `wrap`: replaces
 * every route's handler and dashboard page's and action's function (in-process only), e.g. to
 * record which ran.
 */
export async function startApp(env: Record<string, string> = {}, opts: { socket?: boolean; wrap?: HandlerWrap } = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), "fs-app-"));
  symlinkSync(join(inject("datasetDataDir"), "datasets"), join(dataDir, "datasets"));
  const pgServer = inject("postgresUrl");
  if (pgServer && env.FS_STORE === undefined) {
    env = { FS_STORE: "postgres", DATABASE_URL: await freshDatabase(pgServer), FS_NODE_ID: `app-${process.pid}`, ...env };
  }
  const settings = {
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    FS_ADMIN_TOKEN: ADMIN_TOKEN,
    FS_POOL_THREADS: "1",
    FS_TEST_CLOCK: "true",
    FS_LOG_LEVEL: "info",
    ...env,
  };
  let config = configOf(settings);
  let running = await boot(config, opts.socket === true, opts.wrap);
  const demo = running.demo;
  if (!demo) throw new Error("startApp: the first start created no demo account");
  const through = (input: string | URL, init?: AppRequestInit): Promise<Response> => {
    if (running.port === null) return fetchThrough(running.fake, input, init);
    const url = new URL(String(input), BASE_URL);
    return fetch(`http://127.0.0.1:${running.port}${url.pathname}${url.search}`, init);
  };
  let contract = await contractOf(through);

  const app: TestApp = {
    get url() {
      return running.port === null ? BASE_URL : `http://127.0.0.1:${running.port}`;
    },
    dataDir,
    demo,
    get config() {
      return config;
    },
    get contract() {
      return contract;
    },
    fetch: through,
    output: () => running.log.join(""),
    async stop() {
      await running.stop();
    },
    async restart(env?: Record<string, string>) {
      if (!running.stopped) throw new Error("restart(): stop() the app first");
      if (env) config = configOf(Object.assign(settings, env));
      running = await boot(config, opts.socket === true, opts.wrap);
      contract = await contractOf(through);
    },
    cleanup() {
      rmSync(dataDir, { recursive: true, force: true });
    },
    scans: () => running.front.deps.scans,
    signal() {
      running.front.reloadDatasets();
      running.front.deps.peers.datasets();
    },
  };
  return app;
}

function configOf(env: Record<string, string>): Config {
  const loaded = loadConfig(env);
  if (!loaded.ok) throw new Error(`test app config: ${loaded.problems.join("; ")}`);
  if (loaded.config.FS_FRONT_THREADS !== 1) throw new Error("startApp runs one front thread; use helpers/server.ts for several");
  return loaded.config;
}

/**
 * Starts one app for the test file (beforeAll) and stops it afterwards (afterAll).
 * @example let app!: TestApp; useApp((a) => (app = a));
 */
export function useApp(onStarted: (app: TestApp) => void, env?: Record<string, string>, opts?: { socket?: boolean; wrap?: HandlerWrap }): void {
  let started: TestApp | undefined;
  beforeAll(async () => {
    started = await startApp(env, opts);
    onStarted(started);
  });
  afterAll(async () => {
    if (!started) return;
    await started.stop();
    started.cleanup();
  });
}

interface Running {
  fake: FakeUwsApp;
  /** The real socket's port, or null when served through `fake`. */
  port: number | null;
  front: RunningFront;
  demo: DemoAccount | null;
  log: string[];
  stopped: boolean;
  stop(): Promise<void>;
}

/** main.ts's start for one front thread: the store writer, the first-start bootstrap and secrets, the front. */
async function boot(config: Config, socket: boolean, wrap?: HandlerWrap): Promise<Running> {
  const log: string[] = [];
  const endCapture = captureLogs(log);
  const stateDir = stateDirOf(config.DATA_DIR);
  const journalDir = journalDirOf(stateDir);
  const pg = config.FS_STORE === "postgres" ? { url: config.DATABASE_URL!, nodeId: config.FS_NODE_ID, timeoutMs: config.FS_PG_TIMEOUT_MS } : undefined;
  const store = await StoreClient.start(stateDir, journalDir, {
    bindingRetentionMs: config.FS_BINDING_RETENTION_DAYS * 86_400_000,
    observationRetentionMs: config.FS_OBSERVATION_RETENTION_DAYS * 86_400_000,
    logLevel: config.FS_LOG_LEVEL,
    postgres: pg,
    webhooks: webhookSettingsOf(config),
    orgLimits: orgLimitsOf(config),
    frontThreads: 1,
  });
  const booted = await bootstrap(store, config.FS_ADMIN_TOKEN);
  const secret = async (name: "beacon_secret" | "identifier_secret"): Promise<string> => {
    const ack = await store.send({ op: "secret.ensure", name, value: randomBytes(32).toString("hex") });
    if (!ack.ok) throw new Error(`secret ${name}: ${ack.message}`);
    return ack.value;
  };
  const fake = new FakeUwsApp();
  const listener: Listener = socket
    ? listen
    : async (deps, asset) => {
        mountApp(fake.app, deps, asset, { wrap });
        return { port: 0, close: () => {}, closeAll: () => {} };
      };
  const front = await startFront(
    {
      config,
      index: 0,
      threads: 1,
      port: 0,
      stateDir,
      journalDir,
      journalId: "",
      journalSeq: store.journalSeq,
      observationSeq: store.observationSeq,
      adminTokenHash: booted.adminTokenHash,
      secrets: { beacon: await secret("beacon_secret"), challenge: await ensureChallengeSecret(store), identifier: await secret("identifier_secret") },
      cells: new LocalQuotaCells(),
      claims: null,
      cluster: pg && store.cluster ? { ...pg, nodeIndex: store.cluster.nodeIndex, leaseClock: LeaseClock.allocate() } : null,
    },
    store,
    createLogger(config.FS_LOG_LEVEL, "main"),
    listener,
  );
  const first = booted.firstStart;
  const running: Running = {
    fake,
    port: socket ? front.port : null,
    front,
    demo: first && { orgId: first.orgId, projectId: first.projectId, secretKey: first.secretKey, publishableKey: first.publishableKey },
    log,
    stopped: false,
    async stop() {
      if (running.stopped) return;
      running.stopped = true;
      const { chargesWaiting } = await front.stop();
      await store.close(chargesWaiting > 0);
      await front.close();
      endCapture();
    },
  };
  return running;
}

async function contractOf(through: (input: string) => Promise<Response>): Promise<OpenApiContract> {
  const res = await through(`${BASE_URL}/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return new OpenApiContract((await res.json()) as OpenApiDocument);
}

/** What undici's fetch adds to a request when the caller did not set it. */
const DEFAULT_HEADERS: Array<[string, string]> = [
  ["accept", "*/*"],
  ["accept-language", "*"],
  ["sec-fetch-mode", "cors"],
  ["user-agent", "node"],
  ["accept-encoding", "gzip, deflate"],
];

/**
 * A `fetch` through the fake app, as undici's: headers and body sent as it sends them, redirects
 * followed (unless `redirect: "manual"`), a gzip or deflate answer decoded.
 */
async function fetchThrough(fake: FakeUwsApp, input: string | URL, init: AppRequestInit = {}, hops = 0): Promise<Response> {
  const res = await fetchOnce(fake, input, init);
  const location = res.headers.get("location");
  if (!location || ![301, 302, 303, 307, 308].includes(res.status) || (init.redirect ?? "follow") !== "follow") return res;
  if (hops >= 20) throw new TypeError("fetch failed: redirect count exceeded");
  const next = new URL(location, new URL(String(input), BASE_URL));
  // 303 (and 301/302 after a POST) continue as a GET without the body, as the Fetch standard says.
  const asGet = res.status === 303 || ((res.status === 301 || res.status === 302) && (init.method ?? "GET").toUpperCase() === "POST");
  const followed = await fetchThrough(fake, next, asGet ? { ...init, method: "GET", body: undefined } : init, hops + 1);
  // The last hop's answer keeps its own URL (fetchOnce set it); it is marked redirected once.
  if (!followed.redirected) Object.defineProperty(followed, "redirected", { value: true });
  return followed;
}

async function fetchOnce(fake: FakeUwsApp, input: string | URL, init: AppRequestInit): Promise<Response> {
  const url = new URL(String(input), BASE_URL);
  const method = (init.method ?? "GET").toUpperCase();
  const given = [...new Headers(init.headers ?? {}).entries()];
  const { body, type } = await bodyOf(init.body);
  const headers: Array<[string, string]> = [
    ["host", url.host],
    ["connection", "keep-alive"],
  ];
  if (body !== undefined) headers.push(["content-length", String(body.length)]);
  if (type && !given.some(([k]) => k === "content-type")) headers.push(["content-type", type]);
  headers.push(...given);
  for (const d of DEFAULT_HEADERS) if (!given.some(([k]) => k === d[0])) headers.push(d);
  const request: FakeRequest = {
    method,
    path: url.pathname,
    query: url.search ? url.search.slice(1) : undefined,
    headers,
    body,
    peer: init.peer,
    chunkBytes: init.chunkBytes,
    signal: init.signal ?? undefined,
  };
  const answer = await fake.request(request);
  const noBody = method === "HEAD" || [101, 204, 205, 304].includes(answer.status);
  const out = new Headers();
  for (const [k, v] of answer.headers) out.append(k, v);
  if (!noBody) out.set("content-length", String(answer.body.length));
  const encoding = out.get("content-encoding");
  const decoded = noBody ? null : encoding === "gzip" ? gunzipSync(answer.body) : encoding === "deflate" ? inflateSync(answer.body) : answer.body;
  const res = new Response(decoded && new Uint8Array(decoded), { status: answer.status, headers: out });
  Object.defineProperty(res, "url", { value: url.href });
  return res;
}

async function bodyOf(body: RequestInit["body"]): Promise<{ body?: Uint8Array; type?: string }> {
  if (body === undefined || body === null) return {};
  if (typeof body === "string") return { body: Buffer.from(body), type: "text/plain;charset=UTF-8" };
  if (body instanceof URLSearchParams) return { body: Buffer.from(body.toString()), type: "application/x-www-form-urlencoded;charset=UTF-8" };
  if (body instanceof ArrayBuffer) return { body: new Uint8Array(body) };
  if (ArrayBuffer.isView(body)) return { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
  if (body instanceof ReadableStream) {
    const chunks: Uint8Array[] = [];
    for await (const c of body as ReadableStream<Uint8Array>) chunks.push(c);
    return { body: Buffer.concat(chunks) };
  }
  throw new Error(`test app fetch: unsupported body ${Object.prototype.toString.call(body)}`);
}

/**
 * Keeps the service's log lines (pino's JSON lines on stdout and stderr) in `into` instead of the
 * test output, until the returned function is called; other output passes through.
 */
function captureLogs(into: string[]): () => void {
  const streams = [process.stdout, process.stderr] as const;
  const originals = streams.map((s) => s.write);
  streams.forEach((stream, i) => {
    const original = originals[i]!;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
      if (typeof chunk === "string" && chunk.startsWith('{"level":')) {
        into.push(chunk);
        return true;
      }
      return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof stream.write;
  });
  return () => streams.forEach((s, i) => (s.write = originals[i]!));
}
