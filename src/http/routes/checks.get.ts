import type { CheckHistoryRecord } from "../../store/records.js";
import type { AppDeps } from "../deps.js";
import { dataScope } from "../../front/auth.js";
import { defineRoute, type InputsOf } from "../route.js";
import { checksQuery, checksResponse } from "../schemas/feedback.js";
import { orgIdParam } from "../schemas/params.js";
import { ackOrThrow } from "./ack.js";
import { ownOrgId } from "./project-access.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "flushLedger" | "reads" | "store">;

/** Most checks examined for one page of a filtered listing. */
export const CHECKS_SCAN_LIMIT = 5000;

/**
 * GET /v1/orgs/{orgId}/checks?limit=&cursor=&decision=&label=&form_id=: the org's check history,
 * newest first (secret key of that org; free). Reads after every check answered so far is stored.
 */
export function checksGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/orgs/:orgId/checks",
    auth: { kind: "secret" },
    params: { orgId: orgIdParam },
    query: checksQuery,
    docs: {
      summary: "List the org's checks",
      description: `The checks the org's history keeps (its check history setting), newest first, optionally with one decision, one feedback label (\`none\`: without feedback) or of one form. \`next_cursor\` continues the listing (null at the end); a filtered page examines at most ${CHECKS_SCAN_LIMIT} checks, so it may hold fewer items than \`limit\` and still have a cursor. \`text\` is there only when the org keeps text. A test key lists its test checks, a live key the live ones. Another org's id answers 404 NOT_FOUND.`,
      tag: "scoring",
      response: checksResponse,
      credits: [0],
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        query: { limit: "20", decision: "review" },
        response: {
          items: [
            {
              request_id: "req_3kT9xQ2mLbVf",
              created_at: "2026-11-20T22:20:00.000Z",
              form_id: "contact",
              score: 0.6121,
              decision: "review",
              spam_probability: 0.6121,
              language: "en",
              flags: ["links"],
              org_model: 0,
              email_domain: "example.com",
              learnable: true,
              text: null,
              label: null,
            },
          ],
          next_cursor: null,
        },
      },
    },
    async handle({ principal, params, query }) {
      const orgId = ownOrgId(principal!, params.orgId);
      await syncChecks(deps);
      // A test key lists its test checks, a live key the live ones (records.ts scopedId).
      const page = await listChecks(deps, dataScope(principal!, orgId), checksFilter(query));
      return { data: { items: page.items.map(publicCheck), next_cursor: page.next }, credits: 0 };
    },
  });
}

export interface ChecksQuery {
  limit: number;
  /** Only checks before this one (a cursor): [ts, request_id]. */
  before: [number, string] | null;
  decision: string | undefined;
  label: "spam" | "ham" | "none" | undefined;
  formId: string | undefined;
}

/** The listing's filter from the query (checksQuery). */
function checksFilter(q: InputsOf<typeof checksQuery>): ChecksQuery {
  return { limit: q.limit, before: q.cursor ?? null, decision: q.decision, label: q.label, formId: q.form_id };
}

/** The cursor of the page after `r`: its time (base 36) and request id. */
function cursorOf(r: CheckHistoryRecord): string {
  return `${r.ts.toString(36)}.${r.request_id}`;
}

/** Hands the checks answered so far (their history rides on their debits) to the writer and waits until it stored them. */
export async function syncChecks(deps: Deps): Promise<void> {
  deps.flushLedger();
  ackOrThrow(await deps.store.send({ op: "ping" }));
}

/** One page of the org's checks that pass the filters, newest first. */
export async function listChecks(deps: Deps, orgId: string, q: ChecksQuery): Promise<{ items: CheckHistoryRecord[]; next: string | null }> {
  const items: CheckHistoryRecord[] = [];
  let scanned = 0;
  const start = q.before ? [orgId, q.before[0], q.before[1]] : [orgId, Number.MAX_SAFE_INTEGER];
  for await (const { key, value } of deps.reads.range("checks", { start, end: [orgId], reverse: true })) {
    if (q.before && key[1] === q.before[0] && key[2] === q.before[1]) continue; // the cursor's own check
    if (matches(value, q)) items.push(value);
    if (items.length === q.limit) return { items, next: cursorOf(value) };
    if (++scanned >= CHECKS_SCAN_LIMIT) return { items, next: cursorOf(value) };
  }
  return { items, next: null };
}

function matches(r: CheckHistoryRecord, q: ChecksQuery): boolean {
  if (q.decision !== undefined && r.decision !== q.decision) return false;
  if (q.label !== undefined && (r.label ?? "none") !== q.label) return false;
  if (q.formId !== undefined && r.form_id !== q.formId) return false;
  return true;
}

/** A check as the API lists it. */
export function publicCheck(r: CheckHistoryRecord) {
  return {
    request_id: r.request_id,
    created_at: new Date(r.ts).toISOString(),
    form_id: r.form_id,
    score: r.score,
    decision: r.decision,
    spam_probability: r.spam_probability,
    language: r.language,
    flags: r.flags,
    org_model: r.org_model,
    email_domain: r.email_domain,
    learnable: r.evidence !== null,
    text: r.text,
    label: r.label ?? null,
  };
}
