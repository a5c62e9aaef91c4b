import { z } from "zod";

/**
 * The answer of GET /openapi.json, loosely: an OpenAPI 3.1 document (its full structure is
 * checked by test/unit/openapi.test.ts against the OpenAPI schema). Documentation and tests only.
 */
export const openApiDocumentResponse = z.looseObject({
  openapi: z.string().regex(/^3\.1\.\d+$/),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.looseObject({})),
});
