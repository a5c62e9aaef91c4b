import { describe, expect, it } from "vitest";
import { useApp, type TestApp } from "../helpers/app.js";

/** What a person or a browser asks of the service's root before any API call. */
let server!: TestApp;
useApp((s) => (server = s));

describe("the service's front door", () => {
  it("GET / and HEAD / send a person to the dashboard", async () => {
    for (const method of ["GET", "HEAD"]) {
      const r = await server.fetch(`${server.url}/`, { method, redirect: "manual" });
      expect(r.status, method).toBe(302);
      expect(r.headers.get("location")).toBe("/dashboard");
    }
  });

  it("serves an icon at /favicon.ico", async () => {
    const r = await server.fetch(`${server.url}/favicon.ico`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/svg+xml");
    expect(await r.text()).toMatch(/^<svg /);
  });

  it("HEAD /js/fs.js answers as GET does, without the body", async () => {
    const get = await server.fetch(`${server.url}/js/fs.js`);
    const head = await server.fetch(`${server.url}/js/fs.js`, { method: "HEAD" });
    expect(head.status).toBe(200);
    for (const h of ["content-type", "etag", "cache-control"]) expect(head.headers.get(h), h).toBe(get.headers.get(h));
    expect(await head.text()).toBe("");
    const cached = await server.fetch(`${server.url}/js/fs.js`, { method: "HEAD", headers: { "if-none-match": get.headers.get("etag")! } });
    expect(cached.status).toBe(304);
  });

  it("answers HEAD on every page without a key as GET does, without the body", async () => {
    for (const path of ["/favicon.ico", "/billing/success", "/billing/canceled", "/demo"]) {
      const get = await server.fetch(`${server.url}${path}`);
      const body = Buffer.from(await get.arrayBuffer());
      expect(get.status, path).toBe(200);
      const head = await server.fetch(`${server.url}${path}`, { method: "HEAD" });
      expect(head.status, path).toBe(200);
      expect(head.headers.get("content-type"), path).toBe(get.headers.get("content-type"));
      expect(head.headers.get("content-length"), path).toBe(String(body.length));
      expect(await head.text(), path).toBe("");
    }
  });

  it("has the pages Stripe returns a customer to by default", async () => {
    const success = await server.fetch(`${server.url}/billing/success?session_id=cs_test_1`);
    expect(success.status).toBe(200);
    expect(await success.text()).toContain("Payment received");
    const canceled = await server.fetch(`${server.url}/billing/canceled`);
    expect(canceled.status).toBe(200);
    expect(await canceled.text()).toContain("Nothing was charged");
  });
});
