import type { ObservationRecord } from "../../store/records.js";
import { lineSeq, pageLinesNewestFirst } from "../../store/observation-pages.js";
import type { AppDeps } from "../deps.js";
import { ApiError } from "../../shared/errors.js";
import { queryParam } from "../request.js";
import { defineRoute } from "../route.js";
import { observationsQuery, observationsResponse } from "../schemas/beacon.js";
import { projectIdParam } from "../schemas/params.js";
import { ackOrThrow } from "./ack.js";
import { ownedProject } from "./project-access.js";

/** Most observations examined for one page when filtering (by session or kind). */
const SCAN_LIMIT = 5000;

/**
 * GET /v1/projects/{projectId}/observations?limit=&cursor=&session_id=&kind=
 * A project's observations, newest first (secret key of the owning org; free). `next_cursor`
 * continues the listing; null at the end. Reads after everything answered so far is stored.
 */
export function observationsGet(deps: AppDeps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/projects/:projectId/observations",
    auth: { kind: "secret" },
    docs: {
      summary: "List a project's observations",
      description: `The beacon's observations of a project of the key's org, newest first, optionally of one session or kind. \`next_cursor\` continues the listing (null at the end); a filtered page examines at most ${SCAN_LIMIT} observations, so it may hold fewer items than \`limit\` and still have a cursor. Reads after every hit answered so far is stored.`,
      tag: "projects",
      response: observationsResponse,
      credits: [0],
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "NOT_READY"],
      params: { projectId: projectIdParam },
      query: observationsQuery,
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
    async handle({ principal, snap }) {
      const project = await ownedProject(deps.beacon.projects, principal!, snap.params[0]!);
      const q = readQuery(snap.query);
      await syncObservations(deps);
      const page = await listObservations(deps, project.id, q);
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

function readQuery(query: string): ListQuery {
  const limitText = queryParam(query, "limit");
  const limit = limitText === undefined ? 50 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError("VALIDATION_ERROR", "query.limit: an integer from 1 to 100.");
  const cursor = queryParam(query, "cursor");
  let before = Number.MAX_SAFE_INTEGER;
  if (cursor !== undefined) {
    before = /^[0-9a-z]{1,11}$/.test(cursor) ? parseInt(cursor, 36) : NaN;
    if (!Number.isSafeInteger(before)) throw new ApiError("VALIDATION_ERROR", "query.cursor: not a cursor this listing returned.");
  }
  const kind = queryParam(query, "kind");
  if (kind !== undefined && kind !== "page.view" && kind !== "form.submit") throw new ApiError("VALIDATION_ERROR", "query.kind: page.view or form.submit.");
  return { limit, before, sessionId: queryParam(query, "session_id"), kind };
}

/** Sends observations gathered on the front to the writer and waits until it has stored them. */
export async function syncObservations(deps: AppDeps): Promise<void> {
  deps.flushObservations();
  ackOrThrow(await deps.store.send({ op: "ping" }));
}

/** One page of a project's observations, newest first. */
export async function listObservations(deps: AppDeps, projectId: string, q: ListQuery): Promise<{ items: ObservationRecord[]; next: string | null }> {
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
    ip: o.ip,
    country: o.country,
    page: o.page,
    fingerprint: o.fingerprint,
    token_valid: o.token_valid,
    client_tells: o.tells,
  };
}
