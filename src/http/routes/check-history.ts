import type { CheckHistorySetting, OrgLearningRecord } from "../../store/records.js";
import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { checkHistoryBody, checkHistoryResponse } from "../schemas/feedback.js";
import { orgIdParam } from "../schemas/params.js";
import { ackOrThrow } from "./ack.js";
import { ownOrgId } from "./project-access.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "learning" | "peers" | "store">;

/** The answer of both routes: the setting in force, and whether it is the default. */
export function historyView(setting: CheckHistorySetting, record: OrgLearningRecord | null) {
  return { mode: setting.mode, days: setting.days, default: !record?.history };
}

const EXAMPLE = { params: { orgId: "org_3kT9xQ2mLbVfZ8aW" }, response: { mode: "features", days: 30, default: true } };

/** GET /v1/orgs/{orgId}/check-history (secret key of that org; free). */
export function checkHistoryGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/orgs/:orgId/check-history",
    auth: { kind: "secret" },
    params: { orgId: orgIdParam },
    docs: {
      summary: "What the org keeps of its checks",
      description: "The org's check history setting: `none`, `features` (the verdict and the text's hashed features, enough to learn from feedback; no text) or `text` (the verdict and the text), each check kept `days`. Default: features for 30 days. Another org's id answers 404 NOT_FOUND, as a missing one does.",
      tag: "scoring",
      response: checkHistoryResponse,
      credits: [0],
      errors: ["NOT_FOUND", "NOT_READY"],
      example: EXAMPLE,
    },
    async handle({ principal, params }) {
      const l = await deps.learning.get(ownOrgId(principal!, params.orgId));
      return { data: historyView(l.history, l.record), credits: 0 };
    },
  });
}

/**
 * PUT /v1/orgs/{orgId}/check-history: sets what the org keeps of its next checks. What the new
 * setting no longer keeps (older checks, or all of them for `none`) is deleted at once.
 */
export function checkHistoryPut(deps: Deps) {
  return defineRoute({
    method: "put",
    pattern: "/v1/orgs/:orgId/check-history",
    auth: { kind: "secret", live: true },
    body: checkHistoryBody,
    params: { orgId: orgIdParam },
    docs: {
      summary: "Choose what the org keeps of its checks",
      description: "Sets the org's check history setting for its next checks. Checks the new setting no longer keeps (older than `days`, or every one for `none`) are deleted at once (up to 5,000 in the call, the rest within 10 minutes); the org's own model and its feedback figures stay. Another org's id answers 404 NOT_FOUND.",
      tag: "scoring",
      response: checkHistoryResponse,
      credits: [0],
      errors: ["NOT_FOUND", "NOT_READY"],
      example: { ...EXAMPLE, body: { mode: "text", days: 14 }, response: { mode: "text", days: 14, default: false } },
    },
    async handle({ principal, params, body, nowMs }) {
      const orgId = ownOrgId(principal!, params.orgId);
      const { learning } = ackOrThrow(await deps.store.send({ op: "history.set", orgId, setting: body, nowMs }));
      deps.learning.take(learning, null);
      deps.peers.learning(orgId);
      return { data: historyView(body, learning), credits: 0 };
    },
  });
}
