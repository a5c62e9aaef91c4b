import { splitScopedId, type BudgetDelta, type ObservationRecord, type SessionRecord, type ObservationPage, type SessionDelta } from "./records.js";

/**
 * Pages and session deltas of a batch of journaled observations (records and their lines, same
 * order). One page per project and batch; with `pagePerObservation` (a cluster: the nodes'
 * batches interleave in time, so pages of several lines would overlap and the listing, which
 * walks pages by their first sequence number, could not order them) one page per observation.
 */
export function groupObservations(
  records: readonly ObservationRecord[],
  lines: readonly string[],
  pagePerObservation = false,
): { pages: ObservationPage[]; sessions: SessionDelta[]; budgets: BudgetDelta[] } {
  const pages = new Map<string, { first: number; parts: string[] }>();
  const single: ObservationPage[] = [];
  const sessions = new Map<string, SessionDelta>();
  const budgets = new Map<string, BudgetDelta>();
  const count = (key: string, org: string, day: number, dropped: boolean): void => {
    const id = `${key}\t${day}`;
    let b = budgets.get(id);
    if (b === undefined) budgets.set(id, (b = { key, day, org, recorded: 0, dropped: 0 }));
    if (dropped) b.dropped++;
    else b.recorded++;
  };
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    // The day's budget counts of the org and the (live) project, as front/beacon/budget.ts keys them.
    const day = Math.floor(r.ts / 86_400_000);
    count(`obs:${r.org_id}`, r.org_id, day, r.unrecorded === true);
    count(`obsp:${splitScopedId(r.project_id).id}`, r.org_id, day, r.unrecorded === true);
    const page = pages.get(r.project_id);
    // Past a budget: the session's delta only (front/beacon/budget.ts).
    if (r.unrecorded === true) {
      /* no page */
    } else if (pagePerObservation) single.push({ project_id: r.project_id, first_seq: r.seq, text: lines[i]! });
    else if (page) page.parts.push(lines[i]!);
    else pages.set(r.project_id, { first: r.seq, parts: [lines[i]!] });
    const key = `${r.project_id}\t${r.session_id}`;
    const last = { id: r.id, kind: r.kind, score: r.score, decision: r.decision, reasons: r.reasons };
    const s = sessions.get(key);
    if (s) {
      s.first_seen = Math.min(s.first_seen, r.ts);
      s.last_seen = Math.max(s.last_seen, r.ts);
      s.observation_count++;
      s.last = last;
    } else {
      sessions.set(key, { project_id: r.project_id, session_id: r.session_id, first_seen: r.ts, last_seen: r.ts, observation_count: 1, last });
    }
  }
  return {
    pages: pagePerObservation ? single : [...pages].map(([project_id, p]) => ({ project_id, first_seq: p.first, text: p.parts.join("") })),
    sessions: [...sessions.values()],
    budgets: [...budgets.values()],
  };
}

/** A session record after a batch's delta. */
export function mergeSession(prev: SessionRecord | undefined, d: SessionDelta): SessionRecord {
  if (!prev) return d;
  return {
    ...prev,
    first_seen: Math.min(prev.first_seen, d.first_seen),
    last_seen: Math.max(prev.last_seen, d.last_seen),
    observation_count: prev.observation_count + d.observation_count,
    last: d.last,
  };
}

/** The sequence number of a journal line, read from its `{"seq":N,` prefix without parsing the rest. */
export function lineSeq(line: string): number {
  // JSON.stringify writes properties in insertion order and `seq` is the record's first.
  const end = line.indexOf(",", 7);
  return line.startsWith('{"seq":') && end > 7 ? Number(line.slice(7, end)) : NaN;
}

/** A page's lines, newest first. */
export function pageLinesNewestFirst(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.reverse();
}
