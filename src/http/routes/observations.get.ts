import type { ObservationRecord } from "../../store/records.js";
import { lineSeq, pageLinesNewestFirst } from "../../store/observation-pages.js";
import type { AppDeps } from "../deps.js";
import { dataScope } from "../../front/auth.js";
import { defineRoute } from "../route.js";
import { observationsQuery, observationsResponse } from "../schemas/beacon.js";
import { projectIdParam } from "../schemas/params.js";
import { ackOrThrow } from "./ack.js";
import { ownedProject } from "./project-access.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon" | "flushObservations" | "reads" | "store">;

/** Most observations examined for one page when filtering (by session or kind). */
const SCAN_LIMIT = 5000;

/**
 * GET /v1/projects/{projectId}/observations?limit=&cursor=&session_id=&kind=
 * A project's observations, newest first (secret key of the owning org; free). `next_cursor`
 * continues the listing; null at the end. Reads after everything answered so far is stored.
 */
export function observationsGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/projects/:projectId/observations",
    auth: { kind: "secret" },
    params: { projectId: projectIdParam },
    query: observationsQuery,
    docs: {
      summary: "List a project's observations",
      description: `The beacon's observations of a project of the key's org, newest first, optionally of one session or kind: a live key's hits for a live key, a test key's (\`fs_pub_test_\`) for a test key. \`next_cursor\` continues the listing (null at the end); a filtered page examines at most ${SCAN_LIMIT} observations, so it may hold fewer items than \`limit\` and still have a cursor. Reads after every hit answered so far is stored.`,
      tag: "projects",
      response: observationsResponse,
      credits: [0],
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "NOT_READY"],
      example: {
        params: { projectId: "prj_8Hq2LmT7aZ3kXw9B" },
        query: { limit: "20", kind: "form.submit" },
        response: {
          items: [
            {
              id: "obs_Xk3Lm9Qa2b1f",
              kind: "form.submit",
              action: "signup",
              session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A",
              created_at: "2026-11-20T22:20:00.000Z",
              score: 0.0474,
              decision: "allow",
              reasons: [],
              ua: { browser: "Firefox", os: "Linux", device: null, bot_kind: null, bot_name: null },
              bot_id: null,
              bot_operator: null,
              bot_verified: null,
              policy: null,
              dry_run: null,
              ip: "203.0.113.7",
              country: "DE",
              page: "/signup",
              fingerprint: "9f2c4e1ab37d5c80",
              token_valid: true,
              client_tells: [],
            },
          ],
          next_cursor: null,
        },
      },
    },
    async handle({ principal, params, query }) {
      const project = await ownedProject(deps.beacon.projects, principal!, params.projectId);
      await syncObservations(deps);
      const q = { limit: query.limit, before: query.cursor ?? Number.MAX_SAFE_INTEGER, sessionId: query.session_id, kind: query.kind };
      // A test key lists its project's test observations, a live key the live ones (records.ts scopedId).
      const page = await listObservations(deps, dataScope(principal!, project.id), q);
      return { data: { items: page.items.map(publicObservation), next_cursor: page.next }, credits: 0 };
    },
  });
}

interface ListQuery {
  limit: number;
  /** Only observations older than this sequence number. */
  before: number;
  sessionId: string | undefined;
  kind: string | undefined;
}

/** Sends observations gathered on the front to the writer and waits until it has stored them. */
export async function syncObservations(deps: Deps): Promise<void> {
  deps.flushObservations();
  ackOrThrow(await deps.store.send({ op: "ping" }));
}

/** One page of a project's observations, newest first; `projectId` as stored (scoped for test data, records.ts scopedId). */
export async function listObservations(deps: Deps, projectId: string, q: ListQuery): Promise<{ items: ObservationRecord[]; next: string | null }> {
  const items: ObservationRecord[] = [];
  let scanned = 0;
  let last = 0;
  let truncated = false;
  // Pages are keyed by their first sequence number: the first page at or below `before - 1`
  // holds the newest observations older than the cursor.
  pages: for await (const { key, value: text } of deps.reads.range("observations", { start: [projectId, q.before - 1], end: [projectId], reverse: true })) {
    if (key[0] !== projectId) continue;
    for (const line of pageLinesNewestFirst(text)) {
      const seq = lineSeq(line);
      if (!(seq < q.before)) continue;
      if (scanned === SCAN_LIMIT) {
        truncated = true;
        break pages;
      }
      scanned++;
      last = seq;
      // Cheap text prefilter before parsing (a session id cannot occur by chance in other fields).
      if (q.sessionId !== undefined && !line.includes(q.sessionId)) continue;
      const value = JSON.parse(line) as ObservationRecord;
      if (q.sessionId !== undefined && value.session_id !== q.sessionId) continue;
      if (q.kind !== undefined && value.kind !== q.kind) continue;
      items.push(value);
      if (items.length === q.limit) break pages;
    }
  }
  const next = (items.length === q.limit || truncated) && last > 1 ? last.toString(36) : null;
  return { items, next };
}

/** The observation as the API shows it: the scored fields first, then where it came from. */
export function publicObservation(o: ObservationRecord) {
  return {
    id: o.id,
    kind: o.kind,
    action: o.action,
    session_id: o.session_id,
    created_at: new Date(o.ts).toISOString(),
    score: o.score,
    decision: o.decision,
    reasons: o.reasons,
    ua: o.ua,
    bot_id: o.bot_id,
    bot_operator: o.bot_operator,
    bot_verified: o.bot_verified,
    policy: o.policy,
    dry_run: o.dry_run ?? null,
    ip: o.ip,
    country: o.country,
    page: o.page,
    fingerprint: o.fingerprint,
    token_valid: o.token_valid,
    client_tells: o.tells,
  };
}
