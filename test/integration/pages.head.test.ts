import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./helpers/server.js";

/**
 * HEAD on the pages without a key, on the real uWS in its own process: answered as GET is,
 * without the body, and the process keeps serving (uWS aborts the process when a handler
 * returns without answering, which the in-process tests' stand-in cannot show).
 */
let server!: TestServer;

beforeAll(async () => {
  server = await startServer({ FS_DEMO: "true" });
});

afterAll(async () => {
  if (server) {
    await server.stop();
    server.cleanup();
  }
});

describe("HEAD on the pages, real uWS", () => {
  it("answers each page's HEAD as its GET, without the body, and keeps serving", async () => {
    for (const path of ["/favicon.ico", "/billing/success", "/billing/canceled", "/demo", "/js/fs.js"]) {
      const get = await fetch(`${server.url}${path}`);
      const body = Buffer.from(await get.arrayBuffer());
      expect(get.status, path).toBe(200);
      const head = await fetch(`${server.url}${path}`, { method: "HEAD" });
      expect(head.status, path).toBe(200);
      expect(head.headers.get("content-type"), path).toBe(get.headers.get("content-type"));
      expect(await head.text(), path).toBe("");
      if (get.headers.get("content-encoding") === null) expect(head.headers.get("content-length"), path).toBe(String(body.length));
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it("answers HEAD on the unauthenticated GET routes and the dashboard's pages as their GET, and keeps serving", async () => {
    for (const [path, status] of [
      ["/healthz", 200],
      ["/readyz", 200],
      ["/openapi.json", 200],
      ["/dashboard/login", 200],
      ["/dashboard/style.css", 200],
      ["/dashboard", 303],
      ["/dashboard/checks", 303],
      ["/dashboard/", 303],
    ] as const) {
      const get = await fetch(`${server.url}${path}`, { redirect: "manual" });
      await get.arrayBuffer();
      expect(get.status, path).toBe(status);
      const head = await fetch(`${server.url}${path}`, { method: "HEAD", redirect: "manual" });
      expect(head.status, path).toBe(status);
      expect(head.headers.get("content-type"), path).toBe(get.headers.get("content-type"));
      expect(await head.text(), path).toBe("");
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});
