import type { ZodType } from "zod";
import { ApiError } from "./errors.js";

/**
 * Parses untrusted input with a zod schema; a failure becomes 400 VALIDATION_ERROR whose message
 * names the failing field path (e.g. `body.expires_at: Invalid ISO datetime`).
 */
export function validate<T>(schema: ZodType<T>, value: unknown, root: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = [root, ...issue.path.map(String)].join(".");
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : "";
  throw new ApiError("VALIDATION_ERROR", `${path}: ${issue.message}${more}`);
}
