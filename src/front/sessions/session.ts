import type { IpFacts } from "../../datasets/ip-dataset.js";
import { FRESH_SESSION_MS, ipVerdict, type EdgeVerdict } from "../../scoring/session-verdict.js";
import { splitScopedId, type SessionRecord } from "../../store/records.js";
import { withStore } from "../../store/store-wait.js";
import type { AppDeps } from "../../http/deps.js";

/**
 * The beacon session a caller names by its `_fs` id, when it is one of the caller's org's and of
 * the caller's mode (`test`: a test key's; read-only, from the state the writer keeps); undefined
 * for an unknown id, another org's or the other mode's, all alike.
 * On a cluster node the reads go over the front's pool (StoreReader), off the event loop.
 */
export async function orgSession(deps: Pick<AppDeps, "reads" | "beacon">, orgId: string, sessionId: string, test: boolean): Promise<SessionRecord | undefined> {
  // The session's project id as stored: scoped for a test key's session (records.ts scopedId).
  const stored = await deps.reads.get("sessionProjects", sessionId);
  if (stored === undefined) return undefined;
  const scope = splitScopedId(stored);
  if (scope.test !== test) return undefined;
  const project = await withStore(() => deps.beacon.projects.get(scope.id));
  return project && project.org_id === orgId ? deps.reads.get("sessions", [stored, sessionId]) : undefined;
}

/** `continuity` of POST /v1/sessions/resolve and POST /v1/auth/check: zeros when the session is not known. */
export function continuityOf(session: SessionRecord | undefined, nowMs: number) {
  return session
    ? {
        found: true,
        first_seen: session.first_seen,
        last_seen: session.last_seen,
        age_seconds: Math.max(0, Math.round((nowMs - session.first_seen) / 1000)),
        observation_count: session.observation_count,
        is_fresh: nowMs - session.first_seen < FRESH_SESSION_MS,
      }
    : { found: false, first_seen: 0, last_seen: 0, age_seconds: 0, observation_count: 0, is_fresh: false };
}

/** The verdict before correlation: the session's latest beacon hit, else the IP's reputation. */
export function edgeVerdictOf(session: SessionRecord | undefined, facts: IpFacts | null): EdgeVerdict {
  return session ? { score: session.last.score, reasons: session.last.reasons, source: "session" } : ipVerdict(facts);
}
