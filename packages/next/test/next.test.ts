import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll } from "vitest";
import type { ProtectOptions, Verdict } from "@fraudscore/client";
import { describeMiddleware, type RunningExample } from "../../../test/helpers/protect-suite.js";
import { scaled } from "../../../test/helpers/time.js";

/**
 * @fraudscore/next through examples/next-signup, a real Next.js app: built once (`next build`),
 * then one `next start` per case, configured by the environment its route reads. The service is
 * the in-process one of the shared suite; a small HTTP bridge gives it a socket the Next process
 * can reach.
 */
const EXAMPLE = fileURLToPath(new URL("../../../examples/next-signup/", import.meta.url));
const NEXT_BIN = createRequire(EXAMPLE).resolve("next/dist/bin/next");
const NEXT_ENV = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" };

/** Runs the Next.js CLI in the example; resolves with its output, or rejects with it. */
function runNext(args: string[], env: Record<string, string> = {}, onLine?: (line: string) => void): { done: Promise<string>; kill: () => void } {
  const child = spawn(process.execPath, [NEXT_BIN, ...args], { cwd: EXAMPLE, env: { ...NEXT_ENV, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let partial = "";
  const take = (chunk: Buffer) => {
    output += chunk.toString();
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) onLine?.(line);
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  const done = new Promise<string>((resolve, reject) => {
    child.once("error", reject);
    // "close": the output is all read.
    child.once("close", (code, signal) =>
      code === 0 || signal === "SIGTERM" ? resolve(output) : reject(new Error(`next ${args.join(" ")}: exit ${code ?? signal}\n${output}`)),
    );
  });
  return { done, kill: () => child.kill("SIGTERM") };
}

/** A socket for a service reached through `fetch` (the suite's in-process one): forwards each request. */
async function bridge(baseUrl: string, fetchImpl: typeof fetch): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers = Object.entries(req.headers).flatMap(([k, v]) => (typeof v === "string" ? [[k, v] as [string, string]] : []));
      fetchImpl(new URL(req.url ?? "/", baseUrl).href, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined })
        .then(async (answer) => {
          res.writeHead(answer.status, Object.fromEntries(answer.headers));
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Starts the built example with these options as its environment (app/signup/route.ts reads them). */
async function startNext(options: ProtectOptions, trustProxy: boolean | string): Promise<RunningExample> {
  const { baseUrl, apiKey, fetch: fetchImpl, kind, mode, onError, timeoutMs, log, ...rest } = options;
  if (Object.keys(rest).length > 0) throw new Error(`the example's environment has no setting for ${Object.keys(rest).join(", ")}`);
  const service = fetchImpl ? await bridge(baseUrl, fetchImpl) : null;
  // Next has no trusted-proxy setting: the suite's "loopback" (the test client is the proxy) is one hop.
  const env = {
    TRUST_PROXY: trustProxy === false ? "0" : "1",
    FS_URL: service?.url ?? baseUrl,
    FS_KEY: apiKey ?? "",
    FS_KIND: kind ?? "",
    FS_MODE: mode ?? "",
    FS_ON_ERROR: onError ?? "",
    FS_TIMEOUT_MS: String(timeoutMs ?? ""),
  };
  let ready!: (url: string) => void;
  let local: string | undefined;
  const started = new Promise<string>((resolve) => (ready = resolve));
  const next = runNext(["start", "-p", "0", "-H", "127.0.0.1"], env, (line) => {
    local ??= /- Local:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1];
    if (local && line.includes("Ready in")) ready(local);
    // The route's log lines (dry runs, failures); the verdict itself stays in the Next process.
    if (line.startsWith("fraudscore")) log?.(line, undefined as unknown as Verdict);
  });
  try {
    const url = await Promise.race([
      started,
      next.done.then((out) => Promise.reject(new Error(`next start ended early\n${out}`))),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("next start: not ready")), scaled(60_000)).unref()),
    ]);
    return {
      url,
      close: async () => {
        next.kill();
        await next.done;
        await service?.close();
      },
    };
  } catch (error) {
    next.kill();
    await next.done.catch(() => {});
    await service?.close();
    throw error;
  }
}

/** Whether the example's last build is newer than all it was built from (its files, the packages, Next). */
function isBuildCurrent(): boolean {
  const built = statSync(join(EXAMPLE, ".next", "BUILD_ID"), { throwIfNoEntry: false });
  if (!built) return false;
  const inputs = [
    ...readdirSync(EXAMPLE, { recursive: true, encoding: "utf8" })
      .filter((f) => !/^(\.next|node_modules)(\/|$)/.test(f))
      .map((f) => join(EXAMPLE, f)),
    ...["next", "client"].map((p) => fileURLToPath(new URL(`../../${p}/dist/index.js`, import.meta.url))),
    createRequire(EXAMPLE).resolve("next/package.json"),
  ];
  return inputs.every((f) => statSync(f).mtimeMs < built.mtimeMs);
}

// A production build: a minute or two of a loaded 2-core machine (`next dev` compiles the route
// on its first request instead, about a minute at each start), skipped when the last one is
// current. The bound only stops a hang.
beforeAll(async () => {
  if (!isBuildCurrent()) await runNext(["build"]).done;
}, scaled(600_000));

describeMiddleware("next", startNext);
