import { randomBase62 } from "../../shared/ids.js";
import { periodOf } from "../../shared/period.js";
import type { AckFailure, WebhookBlock, WebhookSettings } from "../protocol.js";
import type { WebhookAttempt, WebhookEndpointRecord, WebhookEventType, WebhookOutboxEntry } from "../records.js";
import type { StateDbs } from "../state-env.js";

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  concurrency: 8,
  timeoutMs: 10_000,
  backoffMs: [5_000, 30_000, 120_000, 600_000, 3_600_000],
  retryForMs: 86_400_000,
  outboxMax: 1_000,
  logMax: 100,
  endpointsMax: 10,
  pollMs: 1_000,
  allowPrivate: false,
};

/**
 * An event's `data`: what it is about, and `livemode` (as Stripe's events): false when a test key
 * (fs_test_…, fs_pub_test_…) caused it, true otherwise (an org's quota, plan and subscription
 * events are always live: test keys touch no quota).
 */
export type WebhookEventData = Record<string, unknown> & { livemode: boolean };

/** A due entry the deliverer took (claimed until `claimedUntil`), with what it needs to send it. */
export interface WebhookClaim {
  endpoint: WebhookEndpointRecord;
  seq: number;
  entry: WebhookOutboxEntry;
  claimedUntil: number;
}

/** What one attempt came to: the receiver's status, or why there was none. */
export interface WebhookResult {
  status: number | null;
  error: string | null;
  durationMs: number;
}

const END = "\uffff";
/** Highest outbox sequence number (the end of an endpoint's key range). */
const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/**
 * The webhook records of the store, written only on the writer thread inside its transactions
 * (both stores: LMDB and PostgreSQL hold the same named databases). Endpoints, the outbox of
 * events per endpoint in commit order, an index of each endpoint's head entry by the time it is
 * due, and each endpoint's delivery log.
 *
 * Delivery order per endpoint comes from the index holding only the head: the next entry becomes
 * due when the one before is delivered or given up. A delivery claims its head by moving the
 * head's due time forward (to the end of the attempt's timeout); a node that dies mid-attempt
 * leaves a claim that expires, and the entry is sent again with the same `webhook-id`. On
 * PostgreSQL two nodes claiming the same head conflict in their serializable transactions and
 * one of them fails: only one delivers it.
 */
export class WebhookStore {
  /** Entries written since the last takeEmitted(): the writer wakes the deliverer after such a commit. */
  private emitted = 0;

  constructor(
    private readonly dbs: StateDbs,
    private readonly settings: WebhookSettings,
  ) {}

  /** The org's endpoints, in id order. */
  list(orgId: string): WebhookEndpointRecord[] {
    return [...this.dbs.webhookEndpoints.getRange({ start: [orgId], end: [orgId, END] })].map((e) => e.value);
  }

  get(orgId: string, id: string): WebhookEndpointRecord | undefined {
    return this.dbs.webhookEndpoints.get([orgId, id]);
  }

  create(endpoint: WebhookEndpointRecord): { ok: true; endpoint: WebhookEndpointRecord } | AckFailure {
    if (this.list(endpoint.org_id).length >= this.settings.endpointsMax) {
      return {
        ok: false,
        error: "LIMIT",
        message: `The org has ${this.settings.endpointsMax} webhook endpoints, the most this installation allows (FS_WEBHOOK_ENDPOINTS_MAX); nothing was created. Delete one first, or the operator can raise FS_WEBHOOK_ENDPOINTS_MAX.`,
      };
    }
    if (this.get(endpoint.org_id, endpoint.id)) return { ok: false, error: "CONFLICT", message: "webhook endpoint id already exists" };
    this.dbs.webhookEndpoints.putSync([endpoint.org_id, endpoint.id], endpoint);
    return { ok: true, endpoint };
  }

  update(
    orgId: string,
    id: string,
    patch: { url?: string; events?: WebhookEventType[]; enabled?: boolean },
    nowMs: number,
  ): { ok: true; endpoint: WebhookEndpointRecord } | AckFailure {
    const endpoint = this.get(orgId, id);
    if (!endpoint) return notFound(id);
    const next: WebhookEndpointRecord = { ...endpoint };
    if (patch.url !== undefined) next.url = patch.url;
    if (patch.events !== undefined) next.events = patch.events;
    if (patch.enabled !== undefined) next.enabled = patch.enabled;
    this.dbs.webhookEndpoints.putSync([orgId, id], next);
    // Enabled again: what waited is due now rather than at its parked time.
    if (!endpoint.enabled && next.enabled) this.reschedule(next, nowMs);
    return { ok: true, endpoint: next };
  }

  /** Deletes the endpoint with its waiting entries and its log. */
  delete(orgId: string, id: string): { ok: true; endpoint: WebhookEndpointRecord } | AckFailure {
    const endpoint = this.get(orgId, id);
    if (!endpoint) return notFound(id);
    const head = this.head(id);
    if (head?.entry.due_at != null) this.dbs.webhookDue.removeSync([head.entry.due_at, orgId, id]);
    for (const k of [...this.dbs.webhookOutbox.getKeys({ start: [id], end: [id, MAX_SEQ] })]) this.dbs.webhookOutbox.removeSync(k);
    for (const k of [...this.dbs.webhookLog.getKeys({ start: [id], end: [id, MAX_SEQ] })]) this.dbs.webhookLog.removeSync(k);
    this.dbs.webhookEndpoints.removeSync([orgId, id]);
    return { ok: true, endpoint };
  }

  /** A new secret; the current one keeps signing alongside it until `oldExpiresAt`. */
  roll(orgId: string, id: string, secret: string, oldExpiresAt: number, nowMs: number): { ok: true; endpoint: WebhookEndpointRecord } | AckFailure {
    const endpoint = this.get(orgId, id);
    if (!endpoint) return notFound(id);
    const kept = endpoint.previous_secrets.filter((p) => p.expires_at > nowMs);
    const previous = oldExpiresAt > nowMs ? [...kept, { secret: endpoint.secret, expires_at: oldExpiresAt }] : kept;
    const next = { ...endpoint, secret, previous_secrets: previous };
    this.dbs.webhookEndpoints.putSync([orgId, id], next);
    return { ok: true, endpoint: next };
  }

  /** The endpoint's delivery log, newest first. */
  deliveries(orgId: string, id: string): { ok: true; attempts: WebhookAttempt[] } | AckFailure {
    if (!this.get(orgId, id)) return notFound(id);
    const attempts = [...this.dbs.webhookLog.getRange({ start: [id, MAX_SEQ], end: [id], reverse: true, limit: this.settings.logMax })].map((e) => e.value);
    return { ok: true, attempts };
  }

  /**
   * Appends event `type` to the outbox of every enabled endpoint of the org that subscribed to
   * it, inside the transaction of the change it reports. Returns how many entries were written.
   */
  emit(orgId: string, type: WebhookEventType, data: WebhookEventData, nowMs: number): number {
    const endpoints = this.list(orgId).filter((e) => e.enabled && e.events.includes(type));
    if (endpoints.length === 0) return 0;
    const waiting = this.list(orgId).reduce((n, e) => n + e.pending, 0);
    const payload = JSON.stringify({ type, timestamp: new Date(nowMs).toISOString(), data });
    let written = 0;
    for (const endpoint of endpoints) {
      const msgId = `msg_${randomBase62(24)}`;
      if (waiting + written >= this.settings.outboxMax) {
        this.log(endpoint.id, {
          msg_id: msgId,
          type,
          at: nowMs,
          status: null,
          error: `outbox full (${this.settings.outboxMax} entries waiting for the org: FS_WEBHOOK_OUTBOX_MAX)`,
          outcome: "dropped",
          duration_ms: 0,
        });
        continue;
      }
      const seq = this.nextSeq();
      const first = this.head(endpoint.id) === undefined;
      const entry: WebhookOutboxEntry = { msg_id: msgId, org_id: orgId, type, payload, created_ms: nowMs, attempts: 0, due_at: first ? nowMs : null };
      this.dbs.webhookOutbox.putSync([endpoint.id, seq], entry);
      if (first) this.dbs.webhookDue.putSync([nowMs, orgId, endpoint.id], seq);
      this.dbs.webhookEndpoints.putSync([orgId, endpoint.id], { ...endpoint, pending: endpoint.pending + 1 });
      written++;
    }
    this.emitted += written;
    return written;
  }

  /**
   * A session or account judged `block`: announced once per (project, subject) and period (a
   * marker in meta, written only when an endpoint of the org subscribed, so a flood of blocked
   * hits writes one entry per endpoint and an org without such an endpoint nothing).
   */
  blocked(i: WebhookBlock): number {
    if (!this.list(i.orgId).some((e) => e.enabled && e.events.includes(i.type))) return 0;
    // A test key's subjects are apart from live ones (an account id may be the same in both).
    const marker = `webhook_block:${i.projectId ?? ""}:${i.type}:${i.livemode ? "" : "test:"}${i.subject}:${periodOf(i.nowMs)}`;
    if (this.dbs.meta.get(marker) !== undefined) return 0;
    this.dbs.meta.putSync(marker, i.nowMs);
    const subject = i.type === "session.blocked" ? { session_id: i.subject } : { account_id: i.subject };
    return this.emit(i.orgId, i.type, { org_id: i.orgId, project_id: i.projectId, ...subject, reasons: i.reasons, livemode: i.livemode }, i.nowMs);
  }

  /**
   * A project's first observation dropped past a budget on UTC day `day` (applyObservationBatch):
   * announced once per project and day (a marker in meta, written only when an endpoint of the
   * org subscribed), with the day's counts so far.
   */
  dropped(orgId: string, projectId: string, day: number, counts: { recorded: number; dropped: number }, nowMs: number): number {
    if (!this.list(orgId).some((e) => e.enabled && e.events.includes("observations.dropped"))) return 0;
    const date = new Date(day * 86_400_000).toISOString().slice(0, 10);
    const marker = `webhook_dropped:${projectId}:${date}`;
    if (this.dbs.meta.get(marker) !== undefined) return 0;
    this.dbs.meta.putSync(marker, nowMs);
    return this.emit(
      orgId,
      "observations.dropped",
      { org_id: orgId, project_id: projectId, day: date, recorded: counts.recorded, dropped: counts.dropped, livemode: true },
      nowMs,
    );
  }

  /** Whether entries were written since the last call (committed or not: a spurious wake-up costs a read). */
  takeEmitted(): boolean {
    const any = this.emitted > 0;
    this.emitted = 0;
    return any;
  }

  /** The earliest time an entry is due, or null when none waits (the deliverer's next wake-up). */
  nextDue(): number | null {
    for (const k of this.dbs.webhookDue.getKeys({ limit: 1 })) return k[0];
    return null;
  }

  /**
   * Takes up to `max` heads due at `nowMs`, each claimed until the attempt's timeout has passed
   * (plus a margin), so no one else sends it meanwhile. A disabled endpoint's head is parked.
   */
  claim(nowMs: number, max: number): WebhookClaim[] {
    const due = [...this.dbs.webhookDue.getRange({ end: [nowMs, END], limit: max })];
    const claims: WebhookClaim[] = [];
    const claimedUntil = nowMs + this.settings.timeoutMs + 5_000;
    for (const { key, value: seq } of due) {
      const [, orgId, endpointId] = key;
      const endpoint = this.get(orgId, endpointId);
      const entry = this.dbs.webhookOutbox.get([endpointId, seq]);
      this.dbs.webhookDue.removeSync(key);
      if (!endpoint || !entry) continue; // deleted meanwhile
      const until = endpoint.enabled ? claimedUntil : nowMs + PARKED_MS;
      this.dbs.webhookDue.putSync([until, orgId, endpointId], seq);
      this.dbs.webhookOutbox.putSync([endpointId, seq], { ...entry, due_at: until });
      if (endpoint.enabled) claims.push({ endpoint, seq, entry, claimedUntil: until });
    }
    return claims;
  }

  /**
   * Records an attempt's result: delivered (2xx) moves the endpoint on to its next entry; a
   * failure schedules a retry after the backoff, or gives the entry up past FS_WEBHOOK_RETRY_HOURS.
   * A claim that is no longer the endpoint's (expired and taken again, or the endpoint deleted)
   * only logs the attempt.
   */
  settle(claim: WebhookClaim, result: WebhookResult, nowMs: number): WebhookAttempt["outcome"] {
    const { endpoint, seq, entry } = claim;
    const delivered = result.status !== null && result.status >= 200 && result.status < 300;
    const attempts = entry.attempts + 1;
    const givenUp = !delivered && nowMs - entry.created_ms + this.backoff(attempts) > this.settings.retryForMs;
    const outcome = delivered ? "delivered" : givenUp ? "failed" : "retry";
    const current = this.get(endpoint.org_id, endpoint.id);
    const stored = this.dbs.webhookOutbox.get([endpoint.id, seq]);
    if (current)
      this.log(endpoint.id, {
        msg_id: entry.msg_id,
        type: entry.type,
        at: nowMs,
        status: result.status,
        error: result.error,
        outcome,
        duration_ms: Math.round(result.durationMs),
      });
    if (!current || !stored || stored.due_at !== claim.claimedUntil) return outcome;
    this.dbs.webhookDue.removeSync([claim.claimedUntil, endpoint.org_id, endpoint.id]);
    if (outcome === "retry") {
      const at = nowMs + this.backoff(attempts);
      this.dbs.webhookOutbox.putSync([endpoint.id, seq], { ...stored, attempts, due_at: at });
      this.dbs.webhookDue.putSync([at, endpoint.org_id, endpoint.id], seq);
      return outcome;
    }
    this.dbs.webhookOutbox.removeSync([endpoint.id, seq]);
    const next = { ...current, pending: Math.max(0, current.pending - 1) };
    this.dbs.webhookEndpoints.putSync([endpoint.org_id, endpoint.id], next);
    this.reschedule(next, nowMs);
    return outcome;
  }

  /** Makes the endpoint's head (if any) due at `nowMs`. */
  private reschedule(endpoint: WebhookEndpointRecord, nowMs: number): void {
    const head = this.head(endpoint.id);
    if (!head) return;
    if (head.entry.due_at !== null) this.dbs.webhookDue.removeSync([head.entry.due_at, endpoint.org_id, endpoint.id]);
    this.dbs.webhookOutbox.putSync([endpoint.id, head.seq], { ...head.entry, due_at: nowMs });
    this.dbs.webhookDue.putSync([nowMs, endpoint.org_id, endpoint.id], head.seq);
  }

  private head(endpointId: string): { seq: number; entry: WebhookOutboxEntry } | undefined {
    for (const { key, value } of this.dbs.webhookOutbox.getRange({ start: [endpointId], end: [endpointId, MAX_SEQ], limit: 1 }))
      return { seq: key[1], entry: value };
    return undefined;
  }

  /** The wait before retry number `attempts` (1 = the first retry). */
  private backoff(attempts: number): number {
    const b = this.settings.backoffMs;
    return b[Math.min(attempts, b.length) - 1]!;
  }

  private nextSeq(): number {
    const seq = ((this.dbs.meta.get("webhook_seq") as number | undefined) ?? 0) + 1;
    this.dbs.meta.putSync("webhook_seq", seq);
    return seq;
  }

  /** Appends an attempt to the endpoint's log and trims the log to FS_WEBHOOK_LOG_MAX. */
  private log(endpointId: string, attempt: WebhookAttempt): void {
    this.dbs.webhookLog.putSync([endpointId, attempt.at, attempt.msg_id], attempt);
    const old = [...this.dbs.webhookLog.getKeys({ start: [endpointId, MAX_SEQ], end: [endpointId], reverse: true, limit: this.settings.logMax + 8 })].slice(
      this.settings.logMax,
    );
    for (const k of old) this.dbs.webhookLog.removeSync(k);
  }
}

/** How long a disabled endpoint's head waits before it is looked at again (it is due at once when enabled). */
const PARKED_MS = 60_000;

function notFound(id: string): AckFailure {
  return { ok: false, error: "NOT_FOUND", message: `No webhook endpoint with id ${id}.` };
}
