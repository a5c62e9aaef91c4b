import { generateKey } from "../../../src/shared/api-keys.js";
import { envelopeProblem } from "./envelope.js";
import type { Scenario } from "./types.js";

/**
 * GET /v1/ip/8.8.8.8 with a well-formed secret key that does not exist: the 401 path, which
 * hashes the key and looks its id up (a store read on every call, since unknown ids are not
 * cached), then builds and writes the error. Shows what a flood of bad keys costs.
 */
export const ipInvalidKey: Scenario = {
  name: "ip-invalid-key",
  server: "service",
  expectedStatus: 401,
  setup: async () => ({ paths: ["/v1/ip/8.8.8.8"], headers: { authorization: `Bearer ${generateKey("secret").plain}` } }),
  check(_path, body) {
    const problem = envelopeProblem(body, "error");
    if (problem) return problem;
    const code = (body as { error: { code?: unknown } }).error.code;
    return code === "INVALID_KEY" ? null : `expected error.code INVALID_KEY, got ${JSON.stringify(code)}`;
  },
};
