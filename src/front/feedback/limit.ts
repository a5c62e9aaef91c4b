/**
 * The per-org limit on POST /v1/feedback (docs/operations.md, "Feedback and check history"): each
 * feedback rewrites the org's model in a writer commit, so one org's key cannot keep the writer
 * busy for the others. Counted per front thread, checked before the body is read.
 */
import { RateTable, tableRefusal } from "../admission/rate-table.js";

export const FEEDBACK_WINDOW_SECONDS = 60;
/** Most orgs the table keeps; past it the one added longest ago is forgotten. */
const MAX_ORGS = 100_000;

export class FeedbackLimit {
  private readonly table: RateTable<string> | null;
  /** Feedback refused since start (GET /metrics could show it). */
  refused = 0;

  /** @param perMinute feedback per org per minute (FS_FEEDBACK_PER_MINUTE); 0: no limit. */
  constructor(perMinute: number) {
    this.table = perMinute > 0 ? new RateTable(perMinute, FEEDBACK_WINDOW_SECONDS, MAX_ORGS) : null;
  }

  /** @throws ApiError RATE_LIMITED with Retry-After and the RateLimit fields past the org's limit. */
  admit(orgId: string, nowMs: number): void {
    const t = this.table;
    if (!t) return;
    const next = t.peek(orgId, nowMs);
    if (next >= 0) return t.take(orgId, next);
    this.refused++;
    throw tableRefusal("feedback", t, orgId, nowMs, "Too much feedback for this org");
  }
}
