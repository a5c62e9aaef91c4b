import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import type { JsonSchema, OpenApiDocument, ResponseObject } from "../../../src/http/openapi.js";

/**
 * Checks real answers against the OpenAPI document (GET /openapi.json): the schema of the
 * answer's route, method and status, with ajv (JSON Schema 2020-12, formats checked). The
 * integration helper `api()` runs every JSON answer through it, so each integration test is also
 * a contract test.
 */
export class OpenApiContract {
  private readonly ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: Array<{ path: string; re: RegExp; params: number }>;

  constructor(readonly doc: OpenApiDocument) {
    addFormats(this.ajv);
    this.templates = Object.keys(doc.paths)
      .map((path) => ({ path, re: templateRegExp(path), params: (path.match(/\{/g) ?? []).length }))
      // A static segment wins over a parameter, as in the router.
      .sort((a, b) => a.params - b.params);
  }

  /** The templated path a concrete path (query ignored) belongs to, e.g. `/v1/ip/{ip}`; null for none. */
  match(url: string): string | null {
    const path = url.split("?")[0]!;
    return this.templates.find((t) => t.re.test(path))?.path ?? null;
  }

  /**
   * Checks one answer. Paths the document does not list must answer 404 NOT_FOUND, listed paths
   * called with a method they lack 405 METHOD_NOT_ALLOWED, and the endpoints of `x-announced`
   * 501 NOT_IMPLEMENTED, in the generic error envelope.
   * @returns null when the answer matches; otherwise a message naming the call, the route, and
   *   each mismatch with its place in the answer and in the schema.
   */
  check(method: string, url: string, status: number, body: unknown): string | null {
    const m = method.toLowerCase() as keyof OpenApiDocument["paths"][string];
    const call = `${method.toUpperCase()} ${url} answered ${status}`;
    const template = this.match(url);
    const operation = template === null ? undefined : this.doc.paths[template]![m];
    const path = url.split("?")[0];
    const announced = (this.doc["x-announced"] ?? []).filter((a) => a.path === path);
    if (!operation && announced.some((a) => a.method === method.toUpperCase())) {
      // Announced (or a preview switched off): 501 NOT_IMPLEMENTED in the generic error envelope.
      if (status !== 501 || (body as { error?: { code?: unknown } } | null)?.error?.code !== "NOT_IMPLEMENTED") return `${call}, an announced endpoint: expected 501 NOT_IMPLEMENTED`;
      return this.run("announced", this.doc.components.schemas!.ErrorEnvelope as JsonSchema, body, `${call} (announced: components.schemas.ErrorEnvelope)`);
    }
    if (!operation) {
      const known = template !== null || announced.length > 0;
      const expected = known ? 405 : 404;
      if (status !== expected) return `${call}, but ${known ? `${path} has no ${method.toUpperCase()} operation` : "the path is not in the OpenAPI document"}: expected ${expected}`;
      const code = expected === 404 ? "NOT_FOUND" : "METHOD_NOT_ALLOWED";
      if ((body as { error?: { code?: unknown } } | null)?.error?.code !== code) return `${call} for an undocumented operation: expected error code ${code}`;
      return this.run("unlisted", this.doc.components.schemas!.ErrorEnvelope as JsonSchema, body, `${call} (not a documented operation: components.schemas.ErrorEnvelope)`);
    }
    const route = `${method.toUpperCase()} ${template}`;
    const response = this.response(operation.responses[String(status)]);
    if (!response) return `${call}, a status the OpenAPI document does not list for ${route} (it lists ${Object.keys(operation.responses).join(", ")})`;
    // One media type per answer: JSON, or text where a route says so (GET /metrics).
    const schema = response.content?.["application/json"]?.schema ?? (typeof body === "string" ? Object.values(response.content ?? {})[0]?.schema : undefined);
    if (!schema) return `${call}: the OpenAPI document gives no application/json schema for ${route} ${status}`;
    return this.run(`${route} ${status}`, schema, body, `${call}, which does not match the OpenAPI document for ${route}, response ${status}`);
  }

  /** A response object, following a `$ref` into components.responses. */
  private response(entry: ResponseObject | { $ref: string } | undefined): ResponseObject | undefined {
    if (!entry || !("$ref" in entry)) return entry;
    const name = entry.$ref.replace(/^#\/components\/responses\//, "");
    return this.doc.components.responses![name] as ResponseObject | undefined;
  }

  private run(key: string, schema: JsonSchema, body: unknown, what: string): string | null {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(key, validate);
    }
    if (validate(body)) return null;
    return `${what}:\n${describeErrors(validate.errors ?? [])}\nanswer: ${JSON.stringify(body).slice(0, 2000)}`;
  }
}

/** One line per mismatch: where in the answer, what is wrong, and the schema path. */
export function describeErrors(errors: ErrorObject[]): string {
  return errors
    .map((e) => {
      const extra = e.keyword === "additionalProperties" ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'` : e.keyword === "enum" || e.keyword === "const" ? ` ${JSON.stringify(e.params)}` : "";
      return `  ${e.instancePath || "(root)"} ${e.message ?? e.keyword}${extra} (schema ${e.schemaPath})`;
    })
    .join("\n");
}

function templateRegExp(template: string): RegExp {
  const src = template
    .split("/")
    .map((seg) => (/^\{[^}]+\}$/.test(seg) ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${src}$`);
}

// ajv-formats is CommonJS: its plugin is the module itself and also its `default`, and which of
// the two a default import yields depends on the loader.
function addFormats(ajv: Ajv2020): void {
  const plugin = ((formats as unknown as { default?: unknown }).default ?? formats) as (a: Ajv2020) => void;
  plugin(ajv);
}
