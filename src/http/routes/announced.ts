import { ApiError } from "../../shared/errors.js";
import { defineRoute, type Method } from "../route.js";

/**
 * The endpoints the product has announced but that are not live: each answers
 * `501 NOT_IMPLEMENTED` in the envelope, naming the endpoint and what it will do, at once (no
 * key, no body read, nothing charged). docs/api.md, "Announced endpoints".
 */
export interface Announced {
  method: Method;
  pattern: string;
  /** What the endpoint will do, e.g. "commerce verification (30 credits)". */
  what: string;
}

/** The announced endpoints and the one answer they share. */
export const ANNOUNCED: readonly Announced[] = [
  { method: "post", pattern: "/v1/commerce/verify", what: "commerce verification of an order (30 credits)" },
  { method: "post", pattern: "/v1/signup/protect", what: "signup protection (5 credits)" },
];

/** The answer of an announced endpoint (also of a preview an operator has not switched on). */
export function notLiveYet(endpoint: string, what: string, hint = ""): ApiError {
  return new ApiError("NOT_IMPLEMENTED", `${endpoint} is announced and not live yet: ${what}.${hint ? ` ${hint}` : ""} Nothing was charged.`);
}

/** One route per announced endpoint. */
export function announcedRoutes() {
  return ANNOUNCED.map((a) => {
    const endpoint = `${a.method.toUpperCase()} ${a.pattern}`;
    return defineRoute({
      method: a.method,
      pattern: a.pattern,
      auth: { kind: "none" },
      docs: {
        summary: `Announced: ${a.what}`,
        description: `Announced, not live yet: every call answers 501 NOT_IMPLEMENTED, with nothing read or charged.`,
        tag: "announced",
        response: null,
        errors: ["NOT_IMPLEMENTED"],
        example: {},
      },
      handle() {
        throw notLiveYet(endpoint, a.what);
      },
    });
  });
}
