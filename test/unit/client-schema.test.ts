import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CLIENT_SCHEMA_PATH, defaultOpenApiDocument, generateClientSchema } from "../../scripts/client-generate.js";

describe("packages/client/src/schema.ts (generated from the OpenAPI document)", () => {
  it("is what openapi-typescript makes from the current document (run npm run build after changing a route)", async () => {
    expect(readFileSync(CLIENT_SCHEMA_PATH, "utf8")).toBe(await generateClientSchema());
  });

  it("changes when the document changes, so a route change without regenerating fails the test above", async () => {
    const doc = defaultOpenApiDocument();
    const check = doc.paths["/v1/check"]!.post!;
    check.summary = "Renamed";
    expect(await generateClientSchema(doc)).not.toBe(readFileSync(CLIENT_SCHEMA_PATH, "utf8"));
  });
});
