import type { KeyPrincipal } from "../front/auth.js";
import { ApiError } from "../shared/errors.js";
import type { RequestSnapshot } from "../http/request.js";
import { inputsOf } from "../http/inputs.js";
import type { Route } from "../http/route.js";
import { validate } from "../http/validate.js";

/**
 * Runs an API route's handler in-process for a dashboard page, so the dashboard does what the
 * API does, with the same checks: the body, path and query are validated by the route's own schemas, the handler
 * sees the signed-in key as its principal (ownership checks such as ownedProject apply), and a
 * route that needs a scope refuses a key without it, as the router does.
 *
 * Admin routes (`auth.kind === "admin"`) are run only with `ownOrg`: the caller has put the
 * session's own org id (and nothing else) into the parameters that name an org, and has checked
 * that any other resource named belongs to that org.
 *
 * Nothing the dashboard calls is metered; a route that would charge credits is refused.
 */
export async function invoke(
  route: Route<any>,
  principal: KeyPrincipal,
  call: { params?: string[]; query?: string; body?: unknown; nowMs: number; ownOrg?: true },
): Promise<any> {
  const need = route.auth;
  if (need.kind === "admin") {
    if (!call.ownOrg) throw new Error(`dashboard: ${route.pattern} is an admin route; call it for the session's own org only`);
  } else if (need.kind !== "secret") {
    throw new Error(`dashboard: ${route.pattern} is not a secret-key route`);
  } else if (need.scope && !principal.key.scopes.includes(need.scope)) {
    throw new ApiError("INSUFFICIENT_SCOPE", `This needs a secret key with the '${need.scope}' scope; sign in with one.`);
  }
  if (route.minCredits) throw new Error(`dashboard: ${route.pattern} is metered`);
  const body = route.body ? validate(route.body, call.body, "body") : undefined;
  const snap: RequestSnapshot = {
    query: call.query ?? "",
    params: call.params ?? [],
    authorization: "",
    contentType: "",
    contentLength: "",
    idempotencyKeySent: false,
    requestId: "",
    testNow: "",
    origin: "",
    userAgent: "",
    forwardedFor: "",
    peer: "",
    ifNoneMatch: "",
    client: null,
    extra: {},
  };
  const inputs = inputsOf(route);
  const params = inputs.params(snap.params);
  const query = inputs.query(snap.query);
  const result = await route.handle({ snap, body, params, query, principal, nowMs: call.nowMs, requestId: "", startedAt: performance.now() });
  if (result.credits) throw new Error(`dashboard: ${route.pattern} charged ${result.credits} credits`);
  return result.data;
}
