import { setImmediate as nextTurn } from "node:timers/promises";
import { decideWithPolicy, resolvePolicy, type BotPolicy, type PolicyKind } from "../../scoring/bot-policy.js";
import { decide as decideCheck, type DecisionThresholds } from "../../scoring/check.js";
import { decide as decideHit } from "../../scoring/observation.js";
import { ReplayTally, type ReplayGroup } from "../../scoring/replay.js";
import { pageLinesNewestFirst } from "../../store/observation-pages.js";
import type { CheckHistoryRecord, ObservationRecord } from "../../store/records.js";
import type { AppDeps } from "../deps.js";
import { defineRoute } from "../route.js";
import { replayBody, replayResponse } from "../schemas/bot-policy.js";
import { projectIdParam } from "../schemas/params.js";
import { syncChecks } from "./checks.get.js";
import { syncObservations } from "./observations.get.js";
import { ownedProject } from "./project-access.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon" | "config" | "flushLedger" | "flushObservations" | "reads" | "store">;

const DAY_MS = 24 * 3600 * 1000;

/**
 * POST /v1/projects/{projectId}/bot-policy/replay (secret key of the owning org; free): what a
 * proposed policy, or proposed check thresholds, would have changed over the stored hits and
 * checks of the last `days` days. Changes nothing.
 */
export function botPolicyReplayPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/projects/:projectId/bot-policy/replay",
    auth: { kind: "secret" },
    body: replayBody,
    params: { projectId: projectIdParam },
    docs: {
      summary: "Replay a proposed bot policy or check thresholds",
      description: [
        "Re-decides the project's stored hits of the last `days` days under a proposed bot policy (the document PUT bot-policy takes), and the org's stored checks with proposed thresholds, with the same functions that decide live hits and checks; saves nothing.",
        `Answers how many were re-decided and how many would change, by old and new decision, by kind and by reason (hits) or by form (checks), with up to \`examples\` examples in each group. At most FS_REPLAY_SCAN_LIMIT hits and FS_REPLAY_SCAN_LIMIT checks (20,000 by default) are re-decided, newest first; \`partial\` says the cap cut the period short (the figures then cover the newest ones only). Checks are kept only as the org's check history setting says.`,
      ].join("\n\n"),
      tag: "projects",
      response: replayResponse,
      credits: [0],
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "NOT_READY"],
      example: EXAMPLE,
    },
    async handle({ principal, params, body, nowMs }) {
      const project = await ownedProject(deps.beacon.projects, principal!, params.projectId);
      const since = nowMs - body.days * DAY_MS;
      const limit = deps.config.FS_REPLAY_SCAN_LIMIT;
      const hits = body.policy ? await replayHits(deps, project.id, resolvePolicy(body.policy), since, body.examples, limit) : null;
      const checks = body.thresholds ? await replayChecks(deps, project.org_id, body.thresholds, since, body.examples, limit) : null;
      return { data: { project_id: project.id, days: body.days, since: new Date(since).toISOString(), hits, checks }, credits: 0 };
    },
  });
}

/** Records re-decided between two yields to the event loop, as the traffic scan does, so a long replay never holds the front thread for long. */
const SLICE = 2000;

/** Names a group's key after its dimension (`{ kind: "ai_crawler", count, examples }`). */
function named<E>(name: string, groups: Array<ReplayGroup<E>>) {
  return groups.map((g) => ({ [name]: g.key, count: g.count, examples: g.examples }));
}

/** The project's hits since `since`, newest first (at most `limit`), re-decided under `policy`. */
async function replayHits(deps: Deps, projectId: string, policy: Readonly<BotPolicy>, since: number, examples: number, limit: number) {
  await syncObservations(deps);
  const tally = new ReplayTally<ReturnType<typeof hitExample>>(["kind", "reason"], examples);
  let partial = false;
  let sliced = 0;
  pages: for await (const { key, value: text } of deps.reads.range("observations", { start: [projectId, Number.MAX_SAFE_INTEGER], end: [projectId], reverse: true })) {
    if (key[0] !== projectId) continue;
    let inPeriod = false;
    for (const line of pageLinesNewestFirst(text)) {
      const o = JSON.parse(line) as ObservationRecord;
      if (o.ts < since) continue;
      inPeriod = true;
      if (tally.count === limit) {
        partial = true;
        break pages;
      }
      // The hit's score decides, unless a live rule of the proposal does: the live path's own function.
      const d = decideWithPolicy(decideHit(o.score), policy, { bot_id: o.bot_id, bot_kind: o.ua.bot_kind as PolicyKind | null, bot_verified: o.bot_verified });
      const rule = d.outcome?.rule ?? null;
      tally.scan(
        o.decision,
        d.decision,
        () => ({ kind: o.ua.bot_kind ?? "browser", reason: rule ?? "score" }),
        () => hitExample(o, d.decision, rule),
      );
    }
    // Pages are numbered by time: once a whole page is older than the period, so are the rest.
    if (!inPeriod) break;
    if (tally.count - sliced >= SLICE) {
      sliced = tally.count;
      await nextTurn();
    }
  }
  const s = tally.summary();
  return { scanned: s.scanned, changed: s.changed, partial, transitions: s.transitions, by_kind: named("kind", s.groups.kind!), by_reason: named("reason", s.groups.reason!) };
}

function hitExample(o: ObservationRecord, to: string, rule: string | null) {
  return { id: o.id, created_at: new Date(o.ts).toISOString(), page: o.page, bot_id: o.bot_id, bot_kind: o.ua.bot_kind, score: o.score, from: o.decision, to, rule };
}

/** The org's stored checks since `since`, newest first (at most `limit`), re-decided with `thresholds`. */
async function replayChecks(deps: Deps, orgId: string, thresholds: DecisionThresholds, since: number, examples: number, limit: number) {
  await syncChecks(deps);
  const tally = new ReplayTally<ReturnType<typeof checkExample>>(["form"], examples);
  let partial = false;
  for await (const { value: c } of deps.reads.range("checks", { start: [orgId, Number.MAX_SAFE_INTEGER], end: [orgId, since], reverse: true })) {
    if (c.org_id !== orgId || c.ts < since) break;
    if (tally.count === limit) {
      partial = true;
      break;
    }
    const to = decideCheck(c.score, thresholds);
    tally.scan(c.decision, to, () => ({ form: c.form_id }), () => checkExample(c, to));
    if (tally.count % SLICE === 0) await nextTurn();
  }
  const s = tally.summary();
  return { scanned: s.scanned, changed: s.changed, partial, transitions: s.transitions, by_form: named("form_id", s.groups.form!) };
}

function checkExample(c: CheckHistoryRecord, to: string) {
  return { request_id: c.request_id, created_at: new Date(c.ts).toISOString(), form_id: c.form_id, score: c.score, from: c.decision, to };
}

const EXAMPLE = {
  params: { projectId: "prj_8Hq2LmT7aZ3kXw9B" },
  body: { policy: { kinds: { ai_crawler: "block" } }, thresholds: { review: 0.5, block: 0.8 }, days: 7, examples: 1 },
  response: {
    project_id: "prj_8Hq2LmT7aZ3kXw9B",
    days: 7,
    since: "2026-11-13T22:15:00.000Z",
    hits: {
      scanned: 1840,
      changed: 212,
      partial: false,
      transitions: [{ from: "review", to: "block", count: 212 }],
      by_kind: [{ kind: "ai_crawler", count: 212, examples: [hitEx()] }],
      by_reason: [{ reason: "kinds.ai_crawler", count: 212, examples: [hitEx()] }],
    },
    checks: {
      scanned: 930,
      changed: 41,
      partial: false,
      transitions: [{ from: "review", to: "allow", count: 41 }],
      by_form: [{ form_id: "contact", count: 41, examples: [{ request_id: "req_3kT9xQ2mLbVf", created_at: "2026-11-20T22:20:00.000Z", form_id: "contact", score: 0.4712, from: "review", to: "allow" }] }],
    },
  },
};

function hitEx() {
  return { id: "obs_Xk3Lm9Qa2b1f", created_at: "2026-11-20T22:20:00.000Z", page: "/blog/launch", bot_id: "gptbot", bot_kind: "ai_crawler", score: 0.7311, from: "review", to: "block", rule: "kinds.ai_crawler" };
}
