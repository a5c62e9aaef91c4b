/**
 * Runs on the writer thread with FS_STORE=postgres: a node's journaled debits and observations
 * shipped to PostgreSQL by cursor (docs/cluster.md, "Debits").
 *
 * A batch applies only when it continues the journal's applied sequence number (its cursor, in
 * fs_meta); one that ends at or below it was applied already. Anything else (an earlier batch
 * failed, or a commit whose answer was lost did commit) is made good from the journal itself:
 * the records past the cursor are read back from the node's journal files and applied one by one,
 * never a merged sum of unknown fate. Debits move as increments of the usage rows, in one
 * statement (fs_ship_charges) in a READ COMMITTED transaction: other nodes shipping to the same
 * rows wait for each other instead of failing. Both commit without waiting for the WAL flush:
 * the journal holds the records until a durable checkpoint says PostgreSQL has them on disk
 * (durableCursors), and only then are its segments pruned.
 */
import { toBufferKey } from "ordered-binary";
import { listSegments, readSegment } from "../charge-journal.js";
import { listJournalSegments, readJournalSegment } from "../journal.js";
import { OBSERVATION_CODEC } from "../observation-journal.js";
import type { Ack, IntentOf } from "../protocol.js";
import type { ChargeRecord, ObservationRecord } from "../records.js";
import type { IntentApplier } from "../writer/apply.js";
import { utcDay } from "../writer/apply.js";
import { PLAN_RULES } from "../../shared/plans.js";
import { upsert, type KvStore } from "./kv.js";
import { PgError, type SyncPg } from "./sync-client.js";
import type { Statement } from "./sync-protocol.js";

/** One front thread's journals: charges and observations, in `dir`; `id` "" for the first thread. */
export interface JournalDir {
  id: string;
  dir: string;
}

/** Plans that bill overage: plan -> included quota (fs_ship_charges computes overage from it). */
const OVERAGE_QUOTAS = JSON.stringify(
  Object.fromEntries(Object.entries(PLAN_RULES).filter(([, r]) => !r.hardStop && r.monthlyQuota !== null).map(([plan, r]) => [plan, r.monthlyQuota])),
);

/** Every plan with an included quota: plan -> quota (fs_ship_charges announces 80% and 100% of it). */
const QUOTAS = JSON.stringify(Object.fromEntries(Object.entries(PLAN_RULES).filter(([, r]) => r.monthlyQuota !== null).map(([plan, r]) => [plan, r.monthlyQuota])));

/** fs_ship_charges refused a batch that crosses a quota threshold not announced yet (migration 005). */
const QUOTA_CROSSED = "FSQ01";

/** A quota threshold a shipped batch crossed, as fs_ship_charges returns it (the event's data). */
interface QuotaEvent {
  org_id: string;
  period: string;
  used: number;
  quota: number;
  percent: 80 | 100;
}

/** Journal records applied per statement when shipping from the journal (start-up replay, catch-up). */
const REPLAY_CHUNK = 5000;

export class PgShipping {
  constructor(
    private readonly sql: SyncPg,
    private readonly kv: KvStore,
    private readonly applier: IntentApplier,
    private readonly nodeId: string,
    private readonly journals: readonly JournalDir[],
  ) {}

  /**
   * The charges.apply intents of one writer batch: each journal's batches that continue one another
   * are shipped together, in one statement; once one fails (PostgreSQL away), the rest of that
   * journal's fail with it at once rather than wait for a deadline each. One ack per intent.
   */
  chargesAll(intents: ReadonlyArray<IntentOf<"charges.apply">>): Ack[] {
    return inRuns(intents, (i) => this.charges(i), (run) => ({ ...run[0]!, records: run.flatMap((x) => x.records), upToSeq: run[run.length - 1]!.upToSeq }));
  }

  /** The same for observations.apply. */
  observationsAll(intents: ReadonlyArray<IntentOf<"observations.apply">>): Ack[] {
    return inRuns(intents, (i) => this.observations(i), (run) => ({
      ...run[0]!,
      pages: run.flatMap((x) => x.pages),
      sessions: run.flatMap((x) => x.sessions),
      budgets: run.flatMap((x) => x.budgets ?? []),
      upToSeq: run[run.length - 1]!.upToSeq,
    }));
  }

  /** charges.apply: applied, already applied, or made good from the journal. */
  charges(i: IntentOf<"charges.apply">): Ack {
    const j = i.journal ?? "";
    try {
      return withRaces(() => {
        const cursor = this.shipCharges(j, i.afterSeq ?? this.applier.appliedSeq(j), i.upToSeq, i.records);
        if (cursor >= i.upToSeq) return { ok: true };
        // Not a continuation: from the journal, from the cursor on.
        const done = this.chargesFromJournal(j, i.upToSeq);
        if (done >= i.upToSeq) return { ok: true };
        return { ok: false, error: "CONFLICT", message: `charges up to ${i.upToSeq} are not in the journal (applied up to ${done})` };
      });
    } catch (err) {
      return failed(err);
    }
  }

  /** observations.apply: the same, for a batch of observation pages and their sessions' deltas. */
  observations(i: IntentOf<"observations.apply">): Ack {
    const j = i.journal ?? "";
    try {
      withRaces(() =>
        this.kv.withOptions({ synchronousCommit: false }).transactionSync(() => {
          this.applier.reset();
          const applied = this.applier.appliedObservationSeq(j);
          if (i.upToSeq <= applied) return;
          if ((i.afterSeq ?? applied) === applied) return this.applier.applyObservationBatch(i.pages, i.sessions, i.upToSeq, j, i.budgets);
          const { records, lines } = journalObservations(this.dirOf(j), applied, i.upToSeq);
          this.applier.applyObservations(records, lines, j);
        }),
      );
      return { ok: true };
    } catch (err) {
      this.applier.reset();
      return failed(err);
    }
  }

  /** At start: every journaled debit past the cursor. Returns how many records were applied. */
  replayCharges(j: JournalDir): number {
    const before = this.applier.appliedSeq(j.id);
    const after = withRaces(() => this.chargesFromJournal(j.id, Number.MAX_SAFE_INTEGER, true));
    return countBetween(j.dir, before, after);
  }

  /**
   * The cursors of this node's journals as PostgreSQL has them on disk: read, then a durable
   * commit (which flushes the WAL up to it, and so every commit before it). Journal segments
   * below them may go.
   */
  durableCursors(): { charges: Map<string, number>; observations: Map<string, number> } {
    const keys = this.journals.flatMap((j) => [this.applier.cursorKey("charges", j.id), this.applier.cursorKey("observations", j.id)]);
    const rows = this.sql.run([
      { sql: "BEGIN" },
      // An id makes the commit write a record, and a durable commit flushes the WAL up to it.
      { sql: "SELECT txid_current()" },
      { sql: "SELECT convert_from(k, 'UTF8'), v::text FROM fs_meta WHERE k = ANY (SELECT decode(x, 'hex') FROM unnest($1::text[]) AS x)", params: [keys.map(hexKey)] },
      { sql: "COMMIT" },
    ]);
    const values = new Map(rows.map((r) => [r[0] as string, Number(JSON.parse(r[1] as string))]));
    const charges = new Map<string, number>();
    const observations = new Map<string, number>();
    for (const j of this.journals) {
      charges.set(j.id, values.get(this.applier.cursorKey("charges", j.id)) ?? 0);
      observations.set(j.id, values.get(this.applier.cursorKey("observations", j.id)) ?? 0);
    }
    return { charges, observations };
  }

  /**
   * One call of fs_ship_charges, in one round trip; returns the cursor after it. A batch that
   * crosses a quota threshold not announced yet is refused by it (QUOTA_CROSSED, nothing applied)
   * and shipped again with its events (shipAnnouncing). `durable`: wait for the commit's flush.
   */
  private shipCharges(journal: string, after: number, upto: number, records: readonly ChargeRecord[], durable = false): number {
    const stmts: Statement[] = [{ sql: "BEGIN ISOLATION LEVEL READ COMMITTED" }];
    if (!durable) stmts.push({ sql: "SET LOCAL synchronous_commit = off" });
    stmts.push(...historyStatements(records), shipStatement(this.nodeId, this.applier.cursorKey("charges", journal), after, upto, records, Date.now()), { sql: "COMMIT" });
    try {
      return Number(this.sql.run(stmts)[0]?.[0] ?? 0);
    } catch (err) {
      if (!(err instanceof PgError) || err.code !== QUOTA_CROSSED) throw err;
      this.sql.query("ROLLBACK");
    }
    return this.shipAnnouncing(journal, after, upto, records, durable);
  }

  /**
   * The batch again, with the quota events it brings appended to the webhook outbox before the
   * commit (writer/webhooks.ts emit: the same outbox, ids and bounds as on the embedded store).
   * This transaction is READ COMMITTED while the writer's others are SERIALIZABLE: the rows emit
   * reads and writes (the outbox sequence, the org's endpoints) are locked first, so it reads
   * them as committed and a concurrent writer's transaction on them fails and runs again.
   */
  private shipAnnouncing(journal: string, after: number, upto: number, records: readonly ChargeRecord[], durable: boolean): number {
    const kv = this.kv.withOptions({ isolation: "READ COMMITTED", synchronousCommit: durable ? undefined : false });
    return kv.transactionSync(() => {
      for (const s of historyStatements(records)) kv.defer(s);
      const row = kv.read(shipStatement(this.nodeId, this.applier.cursorKey("charges", journal), after, upto, records, Date.now(), true))[0];
      const events = (typeof row?.[1] === "string" ? JSON.parse(row[1]) : (row?.[1] ?? [])) as QuotaEvent[];
      if (events.length > 0) {
        kv.read({ sql: "INSERT INTO fs_meta (k, v) VALUES (convert_to('webhook_seq', 'UTF8'), '0') ON CONFLICT (k) DO NOTHING" });
        kv.read({ sql: "SELECT 1 FROM fs_meta WHERE k = convert_to('webhook_seq', 'UTF8') FOR UPDATE" });
      }
      for (const orgId of new Set(events.map((e) => e.org_id))) {
        const range = [hexKey([orgId]), hexKey([orgId, "\uffff"])];
        kv.read({ sql: "SELECT 1 FROM fs_webhook_endpoints WHERE k >= decode($1, 'hex') AND k < decode($2, 'hex') FOR UPDATE", params: range });
      }
      const nowMs = Date.now();
      // jsonb orders an object's members by key length: rebuilt in the LMDB writer's order (apply.ts,
      // quotaCrossed), so that a delivery's body is the same text on both stores.
      for (const { org_id, period, used, quota, percent } of events) {
        this.applier.webhooks.emit(org_id, percent === 80 ? "quota.80_percent" : "quota.100_percent", { org_id, period, used, quota, percent, livemode: true }, nowMs);
      }
      return Number(row?.[0] ?? 0);
    });
  }

  /**
   * Applies the journal's records past the cursor (as PostgreSQL has it now), up to `upto`, in
   * order and in chunks; returns the cursor reached. `durable`: wait for each commit's flush (at
   * start, before the journal is pruned).
   */
  private chargesFromJournal(journal: string, upto: number, durable = false): number {
    let at = this.currentCursor(journal);
    const records = journalCharges(this.dirOf(journal), at, upto);
    for (let i = 0; i < records.length; i += REPLAY_CHUNK) {
      const part = records.slice(i, i + REPLAY_CHUNK);
      const end = part[part.length - 1]!.seq;
      const reached = this.shipCharges(journal, at, end, part, durable);
      // Only this node ships its journal: a cursor that moved meanwhile is a second node with its id.
      if (reached !== end) throw new Error(`the cursor of journal '${journal}' moved while this node shipped from it (to ${reached}): is FS_NODE_ID '${this.nodeId}' running twice?`);
      at = reached;
    }
    return at;
  }

  /** The charge cursor as PostgreSQL has it now. */
  private currentCursor(journal: string): number {
    const v = this.sql.value("SELECT v::text FROM fs_meta WHERE k = decode($1, 'hex')", [hexKey(this.applier.cursorKey("charges", journal))]);
    return v === undefined ? 0 : Number(JSON.parse(v as string));
  }

  private dirOf(journal: string): string {
    const j = this.journals.find((x) => x.id === journal);
    if (!j) throw new Error(`no journal '${journal}' on this node`);
    return j.dir;
  }
}

/**
 * Acks for `intents` (batches of several journals, each journal's in order): consecutive batches
 * of a journal that continue one another (afterSeq = the previous upToSeq) are merged (`merge`)
 * and applied once (`apply`); after a failure, the journal's later batches get the same ack.
 */
export function inRuns<T extends { journal?: string; afterSeq?: number; upToSeq: number }>(intents: readonly T[], apply: (i: T) => Ack, merge: (run: T[]) => T): Ack[] {
  const acks = new Array<Ack>(intents.length);
  const failed = new Map<string, Ack>();
  let i = 0;
  while (i < intents.length) {
    const j = intents[i]!.journal ?? "";
    const run = [i];
    for (let k = i + 1; k < intents.length; k++) {
      const x = intents[k]!;
      if ((x.journal ?? "") !== j) continue;
      if (x.afterSeq !== intents[run[run.length - 1]!]!.upToSeq) break;
      run.push(k);
    }
    const ack = failed.get(j) ?? apply(run.length === 1 ? intents[i]! : merge(run.map((k) => intents[k]!)));
    if (!ack.ok) failed.set(j, ack);
    for (const k of run) acks[k] = ack;
    while (i < intents.length && acks[i] !== undefined) i++;
  }
  return acks;
}

/**
 * The statement that ships `records` of a journal as continuing `after`, up to `upto`: one row,
 * the cursor after it and the quota thresholds crossed. `emit`: a batch that crosses one not
 * announced yet is applied (marked announced) rather than refused with QUOTA_CROSSED.
 */
export function shipStatement(nodeId: string, cursorKey: string, after: number, upto: number, records: readonly ChargeRecord[], nowMs: number, emit = false): Statement {
  return {
    sql: "SELECT * FROM fs_ship_charges($1, decode($2, 'hex'), $3, $4, $5::json, $6::json, $7::json, $8)",
    params: [nodeId, hexKey(cursorKey), after, upto, JSON.stringify(shipOps(records, nowMs)), OVERAGE_QUOTAS, QUOTAS, emit],
  };
}

/**
 * What `records` change, as fs_ship_charges takes it: the credits admitted against this node's
 * leases per org and period (operator adjustments were never admitted); usage moves in journal
 * order, consecutive positive debits of an org summed (a negative adjustment stays on its own, so
 * that clamping at zero applies to it alone, as on the embedded store); per-day sums on `nowMs`'s
 * UTC day; and the stored answers of Idempotency-Keys.
 */
export function shipOps(records: readonly ChargeRecord[], nowMs: number): { leases: unknown[]; usage: unknown[]; daily: unknown[]; idem: unknown[] } {
  const day = utcDay(nowMs);
  const leases = new Map<string, { o: string; p: string; c: number }>();
  const usage: Array<{ k: string; org: string; o: string; p: string; c: number }> = [];
  const open = new Map<string, { k: string; org: string; o: string; p: string; c: number }>();
  const daily = new Map<string, number>();
  const idem: Array<{ k: string; v: unknown }> = [];
  for (const r of records) {
    if (r.idem) idem.push({ k: hexKey([r.idem.scope, r.idem.key]), v: r.idem });
    if (r.credits === 0) continue;
    if (!r.adjust) {
      const lk = `${r.orgId}\t${r.period}`;
      const l = leases.get(lk);
      if (l) l.c += r.credits;
      else leases.set(lk, { o: r.orgId, p: r.period, c: r.credits });
    }
    const uk = `${r.orgId}:${r.period}`;
    const sum = open.get(uk);
    if (r.credits > 0 && sum) sum.c += r.credits;
    else {
      const op = { k: hexKey(uk), org: hexKey(r.orgId), o: r.orgId, p: r.period, c: r.credits };
      usage.push(op);
      if (r.credits > 0) open.set(uk, op);
      else open.delete(uk);
    }
    const dk = hexKey([r.orgId, r.period, day]);
    daily.set(dk, (daily.get(dk) ?? 0) + r.credits);
  }
  return {
    leases: [...leases.values()].sort((a, b) => (a.o + "\t" + a.p < b.o + "\t" + b.p ? -1 : 1)),
    usage,
    daily: [...daily].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, c]) => ({ k, c })),
    idem,
  };
}

/**
 * The check history records that travel with `records` (a check's debit line carries its record),
 * put in the tables the writer's feedback code reads (feedback.ts keepCheck: checks and check_ids),
 * in the transaction that ships the debits. A put is the same whatever the cursor says, so a batch
 * that turns out to be applied already, or is made good from the journal, writes the same rows.
 */
export function historyStatements(records: readonly ChargeRecord[]): Statement[] {
  const checks: Array<{ k: string; v: string; b: null }> = [];
  const ids: Array<{ k: string; v: string; b: null }> = [];
  for (const r of records) {
    const h = r.history;
    if (!h) continue;
    checks.push({ k: hexKey([h.org_id, h.ts, h.request_id]), v: JSON.stringify(h), b: null });
    ids.push({ k: hexKey([h.org_id, h.request_id]), v: JSON.stringify(h.ts), b: null });
  }
  return checks.length === 0 ? [] : [upsert("fs_checks", checks), upsert("fs_check_ids", ids)];
}

/** The charge journal's records in (after, upto], in order, from the segment files. */
function journalCharges(dir: string, after: number, upto: number): ChargeRecord[] {
  const out: ChargeRecord[] = [];
  // A torn last line (the front is writing it) is left out by readSegment.
  for (const seg of listSegments(dir)) for (const r of readSegment(seg.path)) if (r.seq > after && r.seq <= upto) out.push(r);
  return out;
}

/** The observation journal's records in (after, upto], with their lines as written. */
function journalObservations(dir: string, after: number, upto: number): { records: ObservationRecord[]; lines: string[] } {
  const records: ObservationRecord[] = [];
  for (const seg of listJournalSegments(dir, OBSERVATION_CODEC.prefix)) {
    for (const r of readJournalSegment(seg.path, OBSERVATION_CODEC)) if (r.seq > after && r.seq <= upto) records.push(r);
  }
  // The codec is JSON.stringify of the record: re-encoding gives the lines as stored.
  return { records, lines: records.map((r) => `${OBSERVATION_CODEC.encode(r)}\n`) };
}

function countBetween(dir: string, after: number, upto: number): number {
  return upto <= after ? 0 : journalCharges(dir, after, upto).length;
}

/** Serialization failures and deadlocks tolerated before giving up (as the writer's batches). */
export const MAX_RACES = 30;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `action`, again after a short random pause each time it loses a race with another node's
 * transaction (serialization failure, deadlock), up to MAX_RACES times.
 */
export function withRaces<T>(action: () => T): T {
  for (let races = 0; ; races++) {
    try {
      return action();
    } catch (err) {
      if (!(err instanceof PgError) || !err.retryable || races >= MAX_RACES) throw err;
      Atomics.wait(sleeper, 0, 0, Math.random() * Math.min(50, 2 ** (races + 1)));
    }
  }
}

function failed(err: unknown): Ack {
  const message = err instanceof Error ? err.message : String(err);
  return { ok: false, error: "STORE_FAILED", message: `store write failed: ${message}` };
}

function hexKey(key: unknown): string {
  return toBufferKey(key as Parameters<typeof toBufferKey>[0]).toString("hex");
}
