import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProtectOptions, Verdict } from "@fraudscore/client";
import { useApp, type TestApp } from "./app.js";
import { admin, createOrgWithKey } from "../integration/helpers/server.js";

/** An example app of a framework, listening on a free port of 127.0.0.1. */
export interface RunningExample {
  url: string;
  close(): Promise<void>;
}

/** Starts a framework's example app (examples/<framework>-signup) with these middleware options. */
export type StartExample = (options: ProtectOptions, trustProxy: boolean | string) => Promise<RunningExample>;

/**
 * The middleware contract every framework adapter passes (@fraudscore/express, @fraudscore/fastify,
 * @fraudscore/next), each through its example app, against the real service (test/helpers/app.ts)
 * with a test-mode key and the documented magic inputs.
 */
export function describeMiddleware(framework: string, start: StartExample): void {
  let server!: TestApp;
  useApp((s) => (server = s));
  let testKey = "";
  let blackHole: { server: Server; sockets: Set<Socket>; url: string } | null = null;
  let closedUrl = "";

  beforeAll(async () => {
    const org = await createOrgWithKey(server);
    const key = await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/keys`, { type: "secret", mode: "test", scopes: ["sessions"] });
    testKey = key.body.data.key;
    // A service that accepts connections and never answers, and a port nothing listens on.
    const sockets = new Set<Socket>();
    const hole = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => hole.listen(0, "127.0.0.1", resolve));
    blackHole = { server: hole, sockets, url: `http://127.0.0.1:${(hole.address() as { port: number }).port}` };
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    closedUrl = `http://127.0.0.1:${(gone.address() as { port: number }).port}`;
    await new Promise((resolve) => gone.close(resolve));
  });
  afterAll(async () => {
    if (!blackHole) return;
    for (const s of blackHole.sockets) s.destroy();
    await new Promise((resolve) => blackHole!.server.close(resolve));
  });

  /** The real service, reached in process. */
  const service = (extra: Partial<ProtectOptions> = {}): ProtectOptions => ({ baseUrl: server.url, apiKey: testKey, fetch: ((url: string, init?: RequestInit) => server.fetch(url, init)) as typeof fetch, ...extra });

  async function submit(options: ProtectOptions, form: Record<string, string>, opts: { trustProxy?: boolean | string; headers?: Record<string, string> } = {}) {
    const app = await start(options, opts.trustProxy ?? false);
    try {
      const res = await fetch(`${app.url}/signup`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", ...opts.headers }, body: new URLSearchParams(form).toString() });
      return { status: res.status, body: (await res.json()) as { ok: boolean; verdict: Verdict } };
    } finally {
      await app.close();
    }
  }

  const clean = { name: "Jane Doe", email: "jane.doe@gmail.com", about: "I run a small bakery in Lyon and would like to try the service." };

  describe(`${framework} middleware (examples/${framework}-signup)`, () => {
    it("blocks a spam submission: the route sees the verdict and refuses", async () => {
      const r = await submit(service(), { ...clean, email: "bot@block.fraudscore.test" });
      expect(r.status).toBe(403);
      expect(r.body.verdict).toMatchObject({ decision: "block", source: "service", observed: "block", isDryRun: false, error: null });
      expect(r.body.verdict.requestId).toMatch(/^req_/);
    });

    it("passes a clean submission", async () => {
      const r = await submit(service(), clean);
      expect(r.status).toBe(201);
      expect(r.body.verdict.source).toBe("service");
      expect(r.body.verdict.decision).not.toBe("block");
    });

    it("sends the client address from X-Forwarded-For only when the framework trusts the proxy", async () => {
      const headers = { "x-forwarded-for": "203.0.113.66" };
      expect((await submit(service(), clean, { trustProxy: "loopback", headers })).body.verdict.decision).toBe("block");
      expect((await submit(service(), clean, { trustProxy: false, headers })).body.verdict.decision).not.toBe("block");
    });

    it("protects a signup with the pre-flight /v1/auth/check", async () => {
      const r = await submit(service({ kind: "signup" }), { ...clean, email: "bot@block.fraudscore.test" });
      expect(r.status).toBe(403);
      expect(r.body.verdict.observed).toBe("block");
    });

    it("in dry run only logs: the route is told allow", async () => {
      const logged: string[] = [];
      const r = await submit(service({ mode: "dry_run", log: (m) => void logged.push(m) }), { ...clean, email: "bot@block.fraudscore.test" });
      expect(r.status).toBe(201);
      expect(r.body.verdict).toMatchObject({ decision: "allow", observed: "block", isDryRun: true, source: "service" });
      expect(logged.join("\n")).toMatch(/dry run: block/);
    });

    it("fails open or closed, as chosen, when the service is down", async () => {
      const quiet = { log: () => {} };
      const open = await submit({ baseUrl: closedUrl, apiKey: testKey, onError: "open", ...quiet }, clean);
      expect(open.status).toBe(201);
      expect(open.body.verdict).toMatchObject({ decision: "allow", source: "fail_open", score: null, error: { code: "NETWORK_ERROR", status: 0 } });
      const closed = await submit({ baseUrl: closedUrl, apiKey: testKey, onError: "closed", ...quiet }, clean);
      expect(closed.status).toBe(403);
      expect(closed.body.verdict).toMatchObject({ decision: "block", source: "fail_closed" });
    });

    it("gives up after timeoutMs when the service does not answer", async () => {
      const r = await submit({ baseUrl: blackHole!.url, apiKey: testKey, onError: "closed", timeoutMs: 300, log: () => {} }, clean);
      expect(r.status).toBe(403);
      expect(r.body.verdict).toMatchObject({ source: "fail_closed", error: { code: "TIMEOUT" } });
    });
  });
}
