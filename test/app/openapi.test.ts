import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import type { AppDeps } from "../../src/http/deps.js";
import { buildOpenApiDocument, openApiOptions } from "../../src/http/openapi.js";
import { allRoutes } from "../../src/http/routes/index.js";
import { useApp, type TestApp } from "../helpers/app.js";
import { api } from "../integration/helpers/server.js";

let server!: TestApp;
useApp((s) => (server = s));

/** The document this repository generates for the test server's settings (helpers/server.ts: FS_TEST_CLOCK=true). */
function generated() {
  const result = loadConfig({ FS_TEST_CLOCK: "true" });
  if (!result.ok) throw new Error(result.problems.join("\n"));
  const config = result.config;
  return buildOpenApiDocument(allRoutes({ config } as unknown as AppDeps), openApiOptions(config));
}

describe("GET /openapi.json", () => {
  it("answers the generated document itself as JSON, not in the envelope", async () => {
    const r = await api(server, "GET", "/openapi.json");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("x-request-id")).toMatch(/^req_/);
    expect(r.body).not.toHaveProperty("data");
    expect(r.body).toEqual(generated());
  });

  it("answers the same bytes every time, and HEAD with headers only", async () => {
    const [a, b] = await Promise.all([server.fetch(`${server.url}/openapi.json`), server.fetch(`${server.url}/openapi.json`)]);
    expect(await a.text()).toBe(await b.text());
    const head = await server.fetch(`${server.url}/openapi.json`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("keeps the error envelope for other methods", async () => {
    const r = await api(server, "POST", "/openapi.json", { body: {} });
    expect(r.status).toBe(405);
    expect(r.body.error.code).toBe("METHOD_NOT_ALLOWED");
    expect(r.headers.get("allow")).toBe("GET, HEAD");
  });
});
