/**
 * The writer's side of check history, feedback and per-org models (issue 28). Runs only on the
 * writer thread, inside its transactions, so each org's model changes one feedback at a time and
 * is exact after a crash: a feedback is answered once its commit is done, and a check's history
 * record is journaled with its debit and replayed with it (apply.ts addUsage).
 */
import { decodeFeatures } from "../../scoring/content/evidence.js";
import { decodeOrgModel, encodeOrgModel } from "../../scoring/org-model/codec.js";
import { emptyOrgModel, learnFeedback, type OrgModel } from "../../scoring/org-model/model.js";
import type { AckFailure, AckOf, IntentOf } from "../protocol.js";
import { AGREEMENT_DAYS, emptyLearning, historySetting, scopedId, splitScopedId, type CheckHistoryRecord, type CheckHistorySetting, type OrgLearningRecord } from "../records.js";
import type { StateDbs } from "../state-env.js";

const DAY_MS = 86_400_000;
/** Past every check's time: the upper bound of an org's range of checks. */
const AFTER_ALL = Number.MAX_SAFE_INTEGER;

export type FeedbackDbs = Pick<StateDbs, "checks" | "checkIds" | "feedback" | "orgLearning" | "orgModels">;

/** Epoch ms before which an org's checks are past its retention (every check, for mode "none"). */
function cutoffOf(setting: CheckHistorySetting, nowMs: number): number {
  return setting.mode === "none" ? AFTER_ALL : nowMs - setting.days * DAY_MS;
}

export class FeedbackApplier {
  /** Where the retention pass goes on: its phase and the org it examines next (null: from the start). */
  private pruneCursor: { phase: "checks" | "feedback"; org: string | null } | null = null;

  constructor(private readonly dbs: FeedbackDbs) {}

  /** Stores a check's history record (from the charge journal). No read: a batch of checks costs its puts only. */
  keepCheck(r: CheckHistoryRecord): void {
    this.dbs.checks.putSync([r.org_id, r.ts, r.request_id], r);
    this.dbs.checkIds.putSync([r.org_id, r.request_id], r.ts);
  }

  /**
   * One feedback: the label is stored once per target (a repeat of the same label is counted as
   * such and changes nothing; another label relabels the example), and the org model learns it.
   */
  feedback(i: IntentOf<"feedback.apply">): AckOf<"feedback.apply"> {
    const { orgId, target } = i;
    let record: CheckHistoryRecord | undefined;
    let key: string;
    let evidence;
    if (target.kind === "request") {
      const ts = this.dbs.checkIds.get([orgId, target.requestId]);
      record = ts === undefined ? undefined : this.dbs.checks.get([orgId, ts, target.requestId]);
      // Another org's request id is looked up under this org: not found, as an unknown one.
      if (!record) return notFound(target.requestId);
      if (!record.evidence) return { ok: false, error: "CONFLICT", message: `The check ${target.requestId} had no text: feedback teaches the org's model about text only.` };
      key = `r:${target.requestId}`;
      evidence = record.evidence;
    } else {
      key = `c:${target.key}`;
      evidence = target.evidence;
    }
    const features = decodeFeatures(evidence.features);
    if (!features) return { ok: false, error: "CONFLICT", message: "The check's stored features could not be read; nothing was learned." };
    const learning = this.dbs.orgLearning.get(orgId) ?? emptyLearning(orgId);
    // A label given before the model was last reset is forgotten with it: this one is learned anew.
    const resetMs = learning.model_reset_at ? Date.parse(learning.model_reset_at) : -Infinity;
    const stored0 = this.dbs.feedback.get([orgId, key]);
    const previous = stored0 && stored0.ts >= resetMs ? stored0 : undefined;
    if (previous && previous.label === i.label) {
      const next = { ...learning, feedback: { ...learning.feedback, repeated: learning.feedback.repeated + 1 } };
      this.dbs.orgLearning.putSync(orgId, next);
      return { ok: true, outcome: "repeated", learning: next, model: null };
    }
    const stored = this.dbs.orgModels.get(orgId);
    // A fresh model for each feedback: learnFeedback changes it in place.
    const model: OrgModel = stored ? decodeOrgModel(stored) : emptyOrgModel();
    const spam = i.label === "spam";
    const learned = learnFeedback(model, { key, g: evidence.logit, features }, spam, previous ? previous.label === "spam" : null);
    const bytes = encodeOrgModel(learned.model);
    this.dbs.orgModels.putSync(orgId, bytes);
    this.dbs.feedback.putSync([orgId, key], { label: i.label, ts: i.nowMs, request_id: target.kind === "request" ? target.requestId : null });
    if (record) this.dbs.checks.putSync([orgId, record.ts, record.request_id], { ...record, label: i.label });
    const agreed = (p: number): number => ((p >= 0.5) === spam ? 1 : 0);
    const next: OrgLearningRecord = {
      ...learning,
      model_version: learned.model.version,
      feedback: { ...learning.feedback, spam: learned.model.spam, ham: learned.model.ham, relabelled: learning.feedback.relabelled + (previous ? 1 : 0) },
      agreement: addAgreement(learning.agreement, utcDay(i.nowMs), agreed(learned.orgProbability), agreed(learned.globalProbability)),
      updated_at: new Date(i.nowMs).toISOString(),
    };
    this.dbs.orgLearning.putSync(orgId, next);
    return { ok: true, outcome: previous ? "relabelled" : "recorded", learning: next, model: bytes };
  }

  /**
   * Resets the org's model (model.reset): the model record goes, and the figures start again from
   * 0; the history setting stays, and the checks keep their labels in the listing. The feedback
   * records stay until their retention: feedback() treats those older than the reset as never
   * given, so the reset is one commit however many labels the org gave.
   */
  resetModel(i: IntentOf<"model.reset">): AckOf<"model.reset"> {
    const prev = this.dbs.orgLearning.get(i.orgId) ?? emptyLearning(i.orgId);
    const at = new Date(i.nowMs).toISOString();
    this.dbs.orgModels.removeSync(i.orgId);
    const learning: OrgLearningRecord = { ...emptyLearning(i.orgId), history: prev.history, updated_at: at, model_reset_at: at };
    this.dbs.orgLearning.putSync(i.orgId, learning);
    return { ok: true, learning };
  }

  /** Sets the org's history setting and deletes what it no longer keeps (up to `limit` now; the retention pass does the rest). */
  setHistory(i: IntentOf<"history.set">, limit = 5000): AckOf<"history.set"> {
    const learning = { ...(this.dbs.orgLearning.get(i.orgId) ?? emptyLearning(i.orgId)), history: { ...i.setting } };
    this.dbs.orgLearning.putSync(i.orgId, learning);
    // The setting holds for the org's test scope's checks too (records.ts scopedId).
    const cutoff = cutoffOf(i.setting, i.nowMs);
    const live = this.pruneChecks(i.orgId, cutoff, limit);
    this.pruneChecks(scopedId(i.orgId, true), cutoff, limit - live.removed);
    return { ok: true, learning };
  }

  /**
   * The retention pass: deletes each org's checks older than its setting keeps them (all of them
   * for mode "none"), then the feedback records of orgs that gave feedback, as old (at least a
   * day, so a repeated content feedback still counts once that day). At most `limit` deletions
   * per call; returns how many, and whether it stopped part-way (call again).
   */
  prune(nowMs: number, limit = 2000): { removed: number; more: boolean } {
    let removed = 0;
    if (this.pruneCursor === null || this.pruneCursor.phase === "checks") {
      let org = this.firstOrgFrom(this.pruneCursor?.org ?? null);
      while (org !== null) {
        const setting = this.settingOf(org);
        const r = this.pruneChecks(org, cutoffOf(setting, nowMs), limit - removed);
        removed += r.removed;
        if (r.more) {
          this.pruneCursor = { phase: "checks", org };
          return { removed, more: true };
        }
        org = this.firstOrgFrom(org, true);
      }
      this.pruneCursor = { phase: "feedback", org: null };
    }
    for (const { key, value } of this.dbs.orgLearning.getRange({ start: this.pruneCursor.org ?? undefined })) {
      const cutoff = nowMs - Math.max(1, (splitScopedId(key).test ? this.settingOf(key) : historySetting(value)).days) * DAY_MS;
      const r = this.pruneFeedback(key, cutoff, limit - removed);
      removed += r.removed;
      if (r.more) {
        this.pruneCursor = { phase: "feedback", org: key };
        return { removed, more: true };
      }
    }
    this.pruneCursor = null;
    return { removed, more: false };
  }

  /** The history setting in force for an org's (or its test scope's: the org's own setting) checks. */
  private settingOf(stored: string): CheckHistorySetting {
    return historySetting(this.dbs.orgLearning.get(splitScopedId(stored).id));
  }

  /** The first org id with stored checks at or after `from` (after it, with `past`); null at the end. */
  private firstOrgFrom(from: string | null, past = false): string | null {
    const start = from === null ? undefined : past ? [from, AFTER_ALL] : [from];
    for (const k of this.dbs.checks.getKeys({ start, limit: 1 })) return k[0];
    return null;
  }

  /** Deletes one org's checks before `cutoff`, at most `limit`. */
  private pruneChecks(orgId: string, cutoff: number, limit: number): { removed: number; more: boolean } {
    let removed = 0;
    for (const k of this.dbs.checks.getKeys({ start: [orgId], end: [orgId, cutoff], limit: limit + 1 })) {
      if (removed >= limit) return { removed, more: true };
      this.dbs.checks.removeSync(k);
      // Only if the index still names this check (a request id may be reused by a later check).
      if (this.dbs.checkIds.get([orgId, k[2]]) === k[1]) this.dbs.checkIds.removeSync([orgId, k[2]]);
      removed++;
    }
    return { removed, more: false };
  }

  /** Deletes one org's feedback records given before `cutoff`, at most `limit`. */
  private pruneFeedback(orgId: string, cutoff: number, limit: number): { removed: number; more: boolean } {
    let removed = 0;
    for (const { key, value } of this.dbs.feedback.getRange({ start: [orgId], end: [orgId, "\uffff"] })) {
      if (value.ts >= cutoff) continue;
      if (removed >= limit) return { removed, more: true };
      this.dbs.feedback.removeSync(key);
      removed++;
    }
    return { removed, more: false };
  }
}

/** Adds one feedback's agreement to its day (the last entry, or a new one), keeping AGREEMENT_DAYS days. */
function addAgreement(days: readonly OrgLearningRecord["agreement"][number][], day: string, org: number, global: number): OrgLearningRecord["agreement"] {
  const out = days.slice();
  const last = out[out.length - 1];
  if (last && last.day === day) out[out.length - 1] = { day, n: last.n + 1, org: last.org + org, global: last.global + global };
  else out.push({ day, n: 1, org, global });
  return out.length > AGREEMENT_DAYS ? out.slice(out.length - AGREEMENT_DAYS) : out;
}

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function notFound(requestId: string): AckFailure {
  return { ok: false, error: "NOT_FOUND", message: `No check with request_id '${requestId}' in this org's history (unknown, another org's, not kept, or past its retention).` };
}
