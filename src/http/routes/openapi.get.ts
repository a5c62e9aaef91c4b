import { buildOpenApiDocument, type OpenApiOptions } from "../openapi.js";
import { RawJson } from "../respond.js";
import { defineRoute, type Route } from "../route.js";
import { openApiDocumentResponse } from "../schemas/openapi.js";

/**
 * GET /openapi.json: the OpenAPI 3.1 document of this installation (src/http/openapi.ts), built
 * once with the routing table and served as the same pre-serialised text every time.
 *
 * Not in the envelope, deliberately. The envelope is for answers that are computed per request;
 * this is a static description that tools (Swagger UI, Redoc, code generators, API clients) load
 * by URL and expect at the top level of the body, where they would not look inside `data`, and
 * its per-request fields (request_id, processing_time_ms) say nothing about the document. So a
 * success is the document itself (`envelope: false`, which the router mounts on its own handler,
 * leaving the other routes' path untouched), with X-Request-Id as on every answer; failures
 * (405 for another method, a 500) still use the error envelope. The document lists this route
 * too, with that answer.
 *
 * @param routes the rest of the routing table; the document covers them and this route
 * @param options what the document states about the installation (openApiOptions)
 */
export function openapiGet(routes: readonly Route<any>[], options: OpenApiOptions) {
  let document: RawJson | null = null;
  const route = defineRoute({
    method: "get",
    pattern: "/openapi.json",
    auth: { kind: "none" },
    envelope: false,
    docs: {
      summary: "This OpenAPI document",
      description: "The OpenAPI 3.1 document of this installation: every endpoint with its parameters, request and answer schemas, errors, credits and an example. The answer is the document itself, not wrapped in the envelope; errors still are.",
      tag: "meta",
      response: openApiDocumentResponse,
      errors: [],
      example: { response: { openapi: "3.1.0", info: { title: "fraudscore API", version: options.version }, paths: { "/healthz": { get: { summary: "Liveness" } } } } },
    },
    handle: () => ({ data: document! }),
  });
  document = new RawJson(JSON.stringify(buildOpenApiDocument([...routes, route], options)));
  return route;
}
