import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { loadConfig, type Config } from "../../src/config/index.js";
import type { AppDeps } from "../../src/http/deps.js";
import { ERROR_CATALOGUE } from "../../src/shared/errors.js";
import {
  buildOpenApiDocument,
  errorCodesOf,
  openApiMethod,
  openApiOptions,
  openApiPath,
  pathParams,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiOperation,
  type ResponseObject,
} from "../../src/http/openapi.js";
import { RawJson } from "../../src/http/respond.js";
import type { Route } from "../../src/http/route.js";
import { allRoutes } from "../../src/http/routes/index.js";
import { OpenApiContract, describeErrors } from "../integration/helpers/contract.js";

/** The routing table of an installation with this environment; the handlers are never called. */
function installation(env: Record<string, string>): { config: Config; routes: Route<any>[] } {
  const result = loadConfig(env);
  if (!result.ok) throw new Error(result.problems.join("\n"));
  // Building the routing table only stores deps in closures (and reads config); a stub suffices.
  return { config: result.config, routes: allRoutes({ config: result.config } as unknown as AppDeps) };
}

/** What GET /openapi.json answers: the handler's pre-serialised text. */
function served(routes: Route<any>[]): { text: string; doc: OpenApiDocument } {
  const route = routes.find((r) => r.pattern === "/openapi.json");
  if (!route) throw new Error("no GET /openapi.json route");
  const data = (route.handle({} as never) as { data: unknown }).data;
  if (!(data instanceof RawJson)) throw new Error("GET /openapi.json does not answer RawJson");
  return { text: data.json, doc: JSON.parse(data.json) as OpenApiDocument };
}

function operationOf(doc: OpenApiDocument, route: Route<any>): OpenApiOperation | undefined {
  return doc.paths[openApiPath(route.pattern)]?.[openApiMethod(route.method)];
}

function responseOf(doc: OpenApiDocument, entry: ResponseObject | { $ref: string } | undefined): ResponseObject | undefined {
  if (!entry || !("$ref" in entry)) return entry;
  return doc.components.responses![entry.$ref.replace("#/components/responses/", "")] as ResponseObject | undefined;
}

const INSTALLATIONS = {
  "production defaults": {},
  "test clock, meter preview on, public URL, no demo": { FS_TEST_CLOCK: "true", FS_ENABLE_METER: "true", FS_PUBLIC_URL: "https://fraudscore.acme-shop.net", FS_DEMO: "false" },
};

for (const [name, env] of Object.entries(INSTALLATIONS)) {
  describe(`OpenAPI document (${name})`, () => {
    const { config, routes: all } = installation(env);
    const { text, doc } = served(all);
    // A route with no success answer here (announced, a preview switched off) is listed in x-announced, not as an operation.
    const routes = all.filter((r) => r.docs.response !== null);
    const announced = all.filter((r) => r.docs.response === null);

    it("is a valid OpenAPI 3.1 document", async () => {
      const result = await new Validator().validate(structuredClone(doc) as never);
      expect(result.errors, JSON.stringify(result.errors, null, 2)?.slice(0, 4000)).toBeUndefined();
      expect(result.valid).toBe(true);
      expect(doc.openapi).toBe("3.1.0");
    });

    it("is what the generator builds, served as pre-serialised text, with the package version", () => {
      expect(doc).toEqual(buildOpenApiDocument(all, openApiOptions(config)));
      expect(served(all).text).toBe(text); // the same text every time
      const pkg = JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8")) as { version: string };
      expect(doc.info.version).toBe(pkg.version);
    });

    it("lists every route with its method, and nothing else; the announced ones apart", () => {
      for (const route of routes) expect(operationOf(doc, route), `${route.method} ${route.pattern}`).toBeDefined();
      // The pages static.ts serves, and the HEAD and OPTIONS the router adds, are checked below.
      const operations = Object.values(doc.paths).flatMap((item) => Object.entries(item).filter(([m, op]) => m !== "head" && m !== "options" && !op.tags.includes("pages")));
      expect(operations).toHaveLength(routes.length);
      expect(operationOf(doc, routes.find((r) => r.pattern === "/openapi.json")!)).toBeDefined();
      expect(announced.length).toBeGreaterThan(0);
      expect(doc["x-announced"]!.map((a) => `${a.method} ${a.path}`)).toEqual(announced.map((r) => `${r.method.toUpperCase()} ${openApiPath(r.pattern)}`));
      for (const route of announced) expect(operationOf(doc, route), route.pattern).toBeUndefined();
    });

    it("lists HEAD wherever GET works, the beacon routes' CORS preflights, and the pages", () => {
      for (const route of routes) {
        const item = doc.paths[openApiPath(route.pattern)]!;
        expect(item.head !== undefined, `HEAD ${route.pattern}`).toBe(routes.some((r) => r.pattern === route.pattern && r.method === "get"));
        if (route.beacon) expect(Object.keys(item.options!.responses), route.pattern).toContain("204");
      }
      expect(Object.keys(doc.paths["/healthz"]!.head!.responses)).toEqual(expect.arrayContaining(["200", "431"]));
      // A metered GET's HEAD is checked as the GET and not run: it says so.
      expect(doc.paths["/v1/ip/{ip}"]!.head!.description).toMatch(/neither run nor charged/);
      expect(Object.keys(doc.paths["/js/fs.js"]!)).toEqual(["get", "head"]);
      for (const path of ["/favicon.ico", "/billing/success", "/billing/canceled", ...(config.FS_DEMO ? ["/demo"] : [])]) expect(Object.keys(doc.paths[path]!), path).toEqual(["get", "head"]);
      expect(doc.paths["/js/fs.js"]!.get!.responses["200"]).toMatchObject({ content: { "text/javascript": { schema: { type: "string" } } } });
      for (const path of ["/demo", "/demo/submit", "/demo/observations"]) expect(doc.paths[path] !== undefined, path).toBe(config.FS_DEMO);
    });

    it("passes Redocly's recommended rules with no error and no warning", async () => {
      const config = await createConfig({ extends: ["recommended"] });
      const problems = await lintFromString({ source: text, absoluteRef: "openapi.json", config });
      expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} (${p.location[0]?.pointer})`)).toEqual([]);
    });

    it("declares every path parameter, required, and no other", () => {
      for (const route of routes) {
        const declared = operationOf(doc, route)!.parameters.filter((p) => p.in === "path");
        expect(declared.map((p) => p.name), route.pattern).toEqual(pathParams(route.pattern));
        for (const p of declared) expect(p.required, `${route.pattern} {${String(p.name)}}`).toBe(true);
        for (const name of pathParams(route.pattern)) expect(openApiPath(route.pattern)).toContain(`{${name}}`);
      }
    });

    it("gives operations unique ids, a summary, a description and a known tag", () => {
      const ops = routes.map((r) => operationOf(doc, r)!);
      expect(new Set(ops.map((o) => o.operationId)).size).toBe(ops.length);
      const tags = new Set(doc.tags.map((t) => t.name));
      for (const op of ops) {
        expect(op.summary.length, op.operationId).toBeGreaterThan(3);
        expect(op.description.length, op.operationId).toBeGreaterThan(10);
        for (const tag of op.tags) expect(tags.has(tag), `${op.operationId}: tag ${tag}`).toBe(true);
      }
    });

    it("documents every error code a route can answer with, under its status", () => {
      for (const route of routes) {
        const op = operationOf(doc, route)!;
        for (const code of errorCodesOf(route, config.FS_TEST_CLOCK)) {
          const status = ERROR_CATALOGUE[code].status;
          const schema = responseOf(doc, op.responses[String(status)])?.content?.["application/json"]?.schema as
            | { properties: { error: { properties: { code: { enum: string[] } } } } }
            | undefined;
          expect(schema?.properties.error.properties.code.enum, `${route.pattern} ${status}`).toContain(code);
        }
      }
    });

    it("states credits exactly on the routes that answer them, and the least is what the router holds", () => {
      for (const route of routes) {
        const where = `${route.method} ${route.pattern}`;
        const keyed = route.auth.kind === "secret" || route.auth.kind === "publishable";
        expect(route.docs.credits !== undefined, where).toBe(keyed);
        if (route.minCredits) expect(Math.min(...route.docs.credits!), where).toBe(route.minCredits);
      }
    });

    it("has an example per endpoint that matches its own schemas", () => {
      const contract = new OpenApiContract(doc);
      // Not coercing: a linter reads an example as written, so "20" is no integer (Redocly 2's no-invalid-parameter-examples).
      const exact = new Ajv2020({ strict: false });
      for (const route of routes) {
        const op = operationOf(doc, route)!;
        const ex = route.docs.example;
        const url = openApiPath(route.pattern).replace(/\{([^}]+)\}/g, (_, name: string) => ex.params?.[name] ?? `x-${name}`);
        if (route.docs.response) {
          const status = route.docs.status ?? 200;
          const example = op.responses[String(status)] && Object.values((op.responses[String(status)] as ResponseObject).content!)[0]!.example;
          expect(contract.check(route.method === "del" ? "DELETE" : route.method, url, status, example), url).toBeNull();
        }
        if (route.body) {
          const parsed = route.body.safeParse(ex.body);
          expect(parsed.success, `${route.pattern} example body: ${parsed.error?.message}`).toBe(true);
        }
        if (route.docs.rawBody) expect(route.docs.rawBody.safeParse(ex.body).success, route.pattern).toBe(true);
        for (const p of op.parameters) {
          if (p.in !== "path" && p.in !== "query") continue;
          if (p.in === "path") expect(p.example, `${route.pattern}: example of {${String(p.name)}}`).toBeDefined();
          if (p.example === undefined) continue;
          const validate = exact.compile(p.schema as JsonSchema);
          expect(validate(p.example), `${route.pattern} ${String(p.name)}=${String(p.example)}: ${describeErrors(validate.errors ?? [])}`).toBe(true);
        }
      }
      // Error examples, shared by the routes in components.responses.
      const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
      for (const [name, response] of Object.entries(doc.components.responses as Record<string, ResponseObject>)) {
        if (!response.content) continue; // what uWebSockets.js answers itself carries no body
        const media = response.content["application/json"]!;
        const validate = ajv.compile(media.schema);
        expect(validate(media.example), `${name}: ${describeErrors(validate.errors ?? [])}`).toBe(true);
      }
    });

    it("describes the installation: servers, test clock header, the meter preview", () => {
      expect(doc.servers[0]!.url).toBe(config.FS_PUBLIC_URL ?? "/");
      const ip = doc.paths["/v1/ip/{ip}"]!.get!;
      expect(ip.parameters.some((p) => p.$ref === "#/components/parameters/TestNow")).toBe(config.FS_TEST_CLOCK);
      const meter = doc.paths["/v1/meter"]?.post;
      if (config.FS_ENABLE_METER) {
        expect(meter!.security).toEqual([{ secretKey: [] }]);
        expect(meter!.responses["200"]).toBeDefined();
      } else {
        // Switched off: not an operation of this installation, listed with how to switch it on.
        expect(meter).toBeUndefined();
        expect(doc["x-announced"]!.find((a) => a.path === "/v1/meter")).toMatchObject({ method: "POST", description: expect.stringMatching(/FS_ENABLE_METER=true/) });
      }
    });
  });
}

describe("security requirements", () => {
  const { doc } = served(installation({}).routes);

  it("names the key each kind of route takes", () => {
    expect(doc.paths["/v1/ip/{ip}"]!.get!.security).toEqual([{ secretKey: [] }]);
    expect(doc.paths["/v1/sessions/resolve"]!.post!.security).toEqual([{ secretKey: ["sessions"] }]);
    expect(doc.paths["/v1/auth/check"]!.post!.security).toEqual([{ secretKey: ["sessions"] }]);
    expect(doc.paths["/v1/check/deep"]!.post!.security).toEqual([{ secretKey: [] }]);
    expect(doc.paths["/v1/check/deep"]!.post!["x-credits"]).toEqual([2, 4]);
    expect(doc.paths["/v1/orgs/{orgId}/billing/checkout"]!.post!.security).toEqual([{ secretKey: ["billing"] }]);
    expect(doc.paths["/v1/collect"]!.post!.security).toEqual([{ publishableKey: [] }]);
    expect(doc.paths["/v1/admin/orgs"]!.post!.security).toEqual([{ adminToken: [] }]);
    expect(doc.paths["/webhooks/stripe"]!.post!.security).toEqual([{ stripeSignature: [] }]);
    expect(doc.paths["/healthz"]!.get!.security).toEqual([]);
    expect(Object.keys(doc.components.securitySchemes!)).toEqual(["secretKey", "publishableKey", "adminToken", "stripeSignature"]);
  });

  it("counts in docs/api.md's key table the admin calls the routing table has", () => {
    const { routes } = installation({});
    const admin = routes.filter((r) => r.pattern.startsWith("/v1/admin/") && !r.pattern.includes("/webhooks"));
    const apiDoc = readFileSync(join(import.meta.dirname, "../../docs/api.md"), "utf8");
    expect(apiDoc).toContain(`[\`/v1/admin/...\`](#admin-api) (${admin.length} calls)`);
    const table = apiDoc.slice(apiDoc.indexOf("### Admin API"));
    for (const r of admin) expect(table, r.pattern).toContain(`| \`${openApiMethod(r.method).toUpperCase()} ${openApiPath(r.pattern)}`);
  });

  it("answers GET /openapi.json with the document itself, not the envelope", () => {
    const schema = (doc.paths["/openapi.json"]!.get!.responses["200"] as ResponseObject).content!["application/json"]!.schema;
    expect(schema.properties).toHaveProperty("openapi");
    expect(schema.properties).not.toHaveProperty("data");
  });
});

describe("OpenApiContract", () => {
  const { doc } = served(installation({}).routes);
  const contract = new OpenApiContract(doc);
  const ok = (data: unknown, metadata: Record<string, unknown> = {}) => ({
    version: "1",
    data,
    error: null,
    metadata: { request_id: "r1", processing_time_ms: 0.1, ...metadata },
  });

  it("matches concrete paths to their templates, static segments first", () => {
    expect(contract.match("/v1/ip/2001:db8::1?include=all")).toBe("/v1/ip/{ip}");
    expect(contract.match("/v1/admin/datasets/reload")).toBe("/v1/admin/datasets/reload");
    expect(contract.match("/v1/admin/orgs/org_1/projects/prj_1")).toBe("/v1/admin/orgs/{orgId}/projects/{projectId}");
    expect(contract.match("/v1/nope")).toBeNull();
  });

  it("accepts a matching answer and names the route and schema path of a mismatch", () => {
    expect(contract.check("GET", "/healthz", 200, ok({ status: "ok" }))).toBeNull();
    const extra = contract.check("GET", "/healthz", 200, ok({ status: "ok", uptime: 3 }));
    expect(extra).toMatch(/GET \/healthz answered 200, which does not match the OpenAPI document for GET \/healthz, response 200/);
    expect(extra).toMatch(/\/data must NOT have additional properties 'uptime' \(schema #\/properties\/data\/additionalProperties\)/);
    const wrongType = contract.check("GET", "/v1/orgs/org_1/usage", 200, ok({ plan: "pro" }, { credits: 0 }));
    expect(wrongType).toMatch(/GET \/v1\/orgs\/\{orgId\}\/usage/);
    expect(wrongType).toMatch(/\/data must have required property 'monthly_quota'/);
  });

  it("refuses statuses and codes the document does not list for the route", () => {
    const err = (code: string, status: number) => contract.check("GET", "/healthz", status, { version: "1", data: null, error: { code, message: "m" }, metadata: { request_id: "r", processing_time_ms: 1 } });
    expect(err("INTERNAL_ERROR", 500)).toBeNull();
    expect(err("NOT_READY", 503)).toMatch(/a status the OpenAPI document does not list for GET \/healthz/);
  });

  it("expects 404 for unlisted paths and 405 for unlisted methods, in the error envelope", () => {
    const envelope = (code: string) => ({ version: "1", data: null, error: { code, message: "m" }, metadata: { request_id: "r", processing_time_ms: 1 } });
    expect(contract.check("GET", "/v1/nope", 404, envelope("NOT_FOUND"))).toBeNull();
    expect(contract.check("DELETE", "/v1/ip/8.8.8.8", 405, envelope("METHOD_NOT_ALLOWED"))).toBeNull();
    expect(contract.check("GET", "/v1/nope", 200, ok({}))).toMatch(/not in the OpenAPI document/);
  });
});
