import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ApiError, ERROR_CATALOGUE, STATUS_TEXT, statusOf, type ErrorCode } from "../../src/shared/errors.js";
import { toApiError } from "../../src/http/to-api-error.js";

const API_DOC = readFileSync(join(import.meta.dirname, "../../docs/api.md"), "utf8");

/** Rows of docs/api.md's error table, in order: | HTTP | `CODE` | meaning | */
function documentedErrorRows(): Array<[string, number]> {
  const section = API_DOC.split(/^## /m).find((s) => s.startsWith("Errors"));
  if (!section) throw new Error("docs/api.md has no '## Errors' section");
  return [...section.matchAll(/^\|\s*(\d{3})\s*\|\s*`([A-Z_]+)`\s*\|/gm)].map((m) => [m[2]!, Number(m[1])]);
}

describe("error catalogue", () => {
  it("contains every error code of the API with its documented status", () => {
    const spec: Record<string, number> = {
      VALIDATION_ERROR: 400,
      MISSING_KEY: 401,
      INVALID_KEY: 401,
      EXPIRED_KEY: 401,
      KEY_DISABLED: 403,
      MISSING_REQUIRED_DATA: 422,
      QUOTA_EXCEEDED: 429,
      INTERNAL_ERROR: 500,
    };
    for (const [code, status] of Object.entries(spec)) expect(statusOf(code as ErrorCode)).toBe(status);
  });

  it("gives every code a status line and a meaning", () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect(STATUS_TEXT[entry.status], code).toBeDefined();
      expect(entry.meaning.length, code).toBeGreaterThan(5);
    }
  });

  it("matches the error table of docs/api.md exactly: every code once, with its status", () => {
    const rows = documentedErrorRows();
    const codes = rows.map(([code]) => code);
    expect(codes.filter((c, i) => codes.indexOf(c) !== i), "codes listed more than once").toEqual([]);
    const catalogue = new Map(Object.entries(ERROR_CATALOGUE).map(([c, e]) => [c, e.status]));
    expect(new Map(rows)).toEqual(catalogue);
  });

  it("maps unknown throwables to a 500 that leaks nothing", () => {
    const e = toApiError(new Error("ENOENT: /secret/path/data.mdb"));
    expect(e.code).toBe("INTERNAL_ERROR");
    expect(e.status).toBe(500);
    expect(e.message).not.toContain("secret");
    const own = new ApiError("KEY_DISABLED", "x");
    expect(toApiError(own)).toBe(own);
  });
});
