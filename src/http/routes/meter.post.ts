import type { z } from "zod";
import { formatIp } from "../../shared/ip.js";
import type { AppDeps } from "../deps.js";
import { dataScope } from "../../front/auth.js";
import { defineRoute, type RouteDocs } from "../route.js";
import { meterBody, meterResponse, windowMs } from "../schemas/sessions.js";
import { ackOrThrow } from "./ack.js";
import { notLiveYet } from "./announced.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "config" | "pseudonyms" | "store">;

/**
 * POST /v1/meter (preview behind FS_ENABLE_METER, 2 credits): one decision against a
 * sliding window kept by the writer. The budget belongs to the identity's linked accounts (those
 * session resolution tied together through a shared session, fingerprint or IP), so rotating
 * accounts does not reset it. See docs/api.md, "POST /v1/meter (preview)".
 */
export function meterPost(deps: Deps) {
  if (!deps.config.FS_ENABLE_METER) {
    return defineRoute({
      method: "post",
      pattern: "/v1/meter",
      auth: { kind: "none" },
      docs: {
        summary: "Metering (preview, switched off here)",
        description: "Announced, not available on this installation: every call answers 501 NOT_IMPLEMENTED. An operator can enable the preview with FS_ENABLE_METER=true.",
        tag: "sessions",
        response: null,
        errors: ["NOT_IMPLEMENTED"],
        example: {},
      },
      handle() {
        throw notLiveYet("POST /v1/meter", "abuse-aware rate limiting (2 credits)", "An operator can enable the preview with FS_ENABLE_METER=true.");
      },
    });
  }
  return defineRoute({
    method: "post",
    pattern: "/v1/meter",
    auth: { kind: "secret" },
    body: meterBody,
    minCredits: 2,
    docs: METER_DOCS,
    async handle({ principal, body, nowMs }) {
      const h = deps.pseudonyms;
      const id = body.identity;
      // Parsed by the body's schema (schemas/ip.ts, bodyIp); canonical text, as session resolution hashes it.
      const ipText = id.ip !== undefined ? formatIp(id.ip.parsed) : undefined;
      const window = windowMs(body.limit.window)!;
      const ack = ackOrThrow(
        await deps.store.send({
          op: "meter.consume",
          request: {
            // A test key's budgets and bindings are its org's test scope's (records.ts scopedId).
            orgId: dataScope(principal!, principal!.orgId),
            resource: body.resource,
            user: id.user_id !== undefined ? h.hash("user", id.user_id) : undefined,
            session: id.session !== undefined ? h.hash("session", id.session) : undefined,
            ip: ipText !== undefined ? h.hash("ip", ipText) : undefined,
            max: body.limit.max,
            windowMs: window,
            cost: body.cost ?? 1,
            nowMs,
          },
        }),
      );
      const o = ack;
      const multi = o.linked_identities > 0;
      // Over the limit: throttle; over it while spread over linked accounts (rotation): block.
      const action = o.allowed ? "allow" : multi ? "block" : "throttle";
      const verdict = multi ? (o.allowed ? "multi_account" : "multi_account_over_limit") : o.allowed ? "ok" : "over_limit";
      const data: MeterAnswer = {
        action,
        verdict,
        confidence: multi ? Math.min(0.95, 0.6 + 0.1 * o.linked_identities) : 1,
        usage: {
          count: o.count,
          limit: body.limit.max,
          window: body.limit.window,
          remaining: Math.max(0, body.limit.max - o.count),
          retry_after_seconds: o.retry_at === null ? null : Math.max(1, Math.ceil((o.retry_at - nowMs) / 1000)),
        },
        linked_identities: o.linked_identities,
        budget: o.budget,
      };
      return { data, credits: 2 };
    },
  });
}

/** `data` of POST /v1/meter. */
export type MeterAnswer = z.infer<typeof meterResponse>;

const METER_DOCS: RouteDocs = {
  summary: "Meter an action (preview)",
  description: [
    "One decision against a sliding window (`limit.max` per `limit.window`) kept per resource for an identity (user_id, session, ip). The budget belongs to the identity's linked accounts (tied together by session resolution), so rotating accounts does not reset it: over the limit alone answers throttle, over it across linked accounts block. With `cost`, `max` is a budget of units rather than a request count.",
    "Preview, enabled with FS_ENABLE_METER=true.",
  ].join("\n\n"),
  tag: "sessions",
  response: meterResponse,
  credits: [2],
  errors: ["VALIDATION_ERROR", "NOT_READY"],
  example: {
    body: { resource: "login", identity: { user_id: "user_48213", ip: "203.0.113.7" }, limit: { max: 10, window: "15m" } },
    response: {
      action: "allow",
      verdict: "ok",
      confidence: 1,
      usage: { count: 3, limit: 10, window: "15m", remaining: 7, retry_after_seconds: null },
      linked_identities: 0,
      budget: "account",
    },
  },
};
