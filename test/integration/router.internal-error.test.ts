import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BodyBudget } from "../../src/front/body-budget.js";
import { BodyDeadlines } from "../../src/front/body-deadline.js";
import { App, us_listen_socket_close, us_socket_local_port, type us_listen_socket } from "uWebSockets.js";
import { Authenticator } from "../../src/front/auth.js";
import { TrustedProxies } from "../../src/front/client-address.js";
import { mountRoutes } from "../../src/http/router.js";
import { defineRoute, type RouteDocs } from "../../src/http/route.js";
import type { TestModeBudget } from "../../src/front/test-mode-budget.js";
import type { QuotaGate } from "../../src/front/quota.js";
import { createLogger } from "../../src/shared/log.js";

/**
 * The router on a real uWS app with routes that fail in ways the service's own routes should
 * never fail, to check the last line of defence: 500 INTERNAL_ERROR, nothing leaked.
 */
let socket: us_listen_socket;
let base: string;
const logged: string[] = [];

beforeAll(async () => {
  const app = App();
  const docs: RouteDocs = { summary: "fails", description: "Fails.", tag: "meta", response: null, errors: [], example: {} };
  const routes = [
    defineRoute({ method: "get", pattern: "/boom", auth: { kind: "none" }, docs, handle: () => { throw new Error("ENOENT /var/secret/data.mdb"); } }),
    defineRoute({ method: "get", pattern: "/reject", auth: { kind: "none" }, docs, handle: async () => Promise.reject(new TypeError("cannot read x of undefined")) }),
  ];
  const log = createLogger("error", "test");
  const origWrite = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => (logged.push(String(chunk)), true)) as typeof process.stderr.write;
  afterAll(() => {
    process.stderr.write = origWrite;
  });
  mountRoutes(app, routes, {
    auth: new Authenticator({ keys: { get: () => undefined } } as never, "00"),
    quota: {} as QuotaGate,
    testMode: {} as TestModeBudget,
    idempotency: null,
    bodies: { budget: new BodyBudget({ public: 1 << 20, webhook: 1 << 20, keyed: 1 << 20 }, { public: 1 << 20, webhook: 1 << 20, keyed: 1 << 20 }), deadlines: new BodyDeadlines(10_000, 1024, 2000, 65_536), trusted: new TrustedProxies([]) },
    log,
    maxBodyBytes: 1024,
    testClock: false,
    trusted: new TrustedProxies([]),
  });
  await new Promise<void>((res) =>
    app.listen("127.0.0.1", 0, (s) => {
      socket = s as us_listen_socket;
      base = `http://127.0.0.1:${us_socket_local_port(socket)}`;
      res();
    }),
  );
});
afterAll(() => us_listen_socket_close(socket));

describe("internal failures", () => {
  for (const path of ["/boom", "/reject"]) {
    it(`${path}: 500 INTERNAL_ERROR in the envelope without internals, logged with the request id`, async () => {
      const res = await fetch(base + path, { headers: { "x-request-id": `rid-${path.slice(1)}` } });
      expect(res.status).toBe(500);
      const body = await res.json();
      expect(body).toEqual({
        version: "1",
        data: null,
        error: { code: "INTERNAL_ERROR", message: "Internal server error." },
        metadata: { request_id: `rid-${path.slice(1)}`, processing_time_ms: expect.any(Number) },
      });
      expect(JSON.stringify(body)).not.toMatch(/secret|undefined|stack/);
      expect(logged.some((l) => l.includes(`rid-${path.slice(1)}`))).toBe(true);
    });
  }
});
