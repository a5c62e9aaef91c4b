/**
 * The scans behind the traffic report and the bot-policy replay: a project's stored observations
 * and its org's checks read newest first, parsed, and tallied or re-decided. They run on the scan
 * thread (scan-worker.ts), never on a front thread, so one org's report costs other orgs' calls
 * nothing but the message to the thread and its answer.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { decideWithPolicy, resolvePolicy, type BotPolicy, type PolicyKind } from "../../scoring/bot-policy.js";
import { decide as decideCheck, type DecisionThresholds } from "../../scoring/check.js";
import { decide as decideHit } from "../../scoring/observation.js";
import { ReplayTally, type ReplayGroup } from "../../scoring/replay.js";
import { pageLinesNewestFirst } from "../../store/observation-pages.js";
import type { IpDataset } from "../../datasets/ip-dataset.js";
import { parseIp } from "../../shared/ip.js";
import type { StoreReader } from "../../store/reader.js";
import type { CheckHistoryRecord, ObservationRecord } from "../../store/records.js";
import type { ReplayCheckExample, ReplayHitExample, ReplayScanResult, ReplayScanTask, TrafficScanResult, TrafficScanTask } from "./scan-messages.js";
import { TrafficTally, type Network } from "./tally.js";

/**
 * Records read between two yields to the thread's event loop, so that scans of several orgs on
 * the one scan thread take turns rather than wait for each other's end.
 */
const SLICE = 2000;

/** The traffic report's figures: the project's observations and the org's checks of the range. */
export async function trafficScan(reads: StoreReader, network: (ip: string) => Network, t: TrafficScanTask): Promise<TrafficScanResult> {
  const tally = new TrafficTally(t.from, t.to, t.bucket);
  const hits = await tallyObservations(reads, network, t.projectId, tally, t.limit);
  const checks = await tallyChecks(reads, t.orgId, tally, t.limit);
  return { kind: "traffic", figures: tally.figures(), hits, checks };
}

/** The network of an address by `dataset`, looked up once per address and report. */
export function networkOf(dataset: Pick<IpDataset, "lookup">): (ip: string) => Network {
  const seen = new Map<string, Network>();
  return (ip) => {
    let n = seen.get(ip);
    if (n === undefined) {
      const parsed = parseIp(ip);
      const facts = parsed ? dataset.lookup(parsed) : null;
      n = { asn: facts?.asn ?? null, org: facts?.org ?? null };
      seen.set(ip, n);
    }
    return n;
  };
}

/**
 * Reads the project's observation pages newest first into the tally, until a page is entirely
 * older than the range or `limit` observations not older than the range were read (partial only
 * when another such observation is left: older ones, read only in pages that reach the range's
 * start, do not count).
 */
async function tallyObservations(
  reads: StoreReader,
  network: (ip: string) => Network,
  projectId: string,
  tally: TrafficTally,
  limit: number,
): Promise<{ scanned: number; partial: boolean }> {
  let scanned = 0;
  let counted = 0;
  let sliced = 0;
  for await (const { key, value: text } of reads.range("observations", { start: [projectId, Number.MAX_SAFE_INTEGER], end: [projectId], reverse: true })) {
    if (key[0] !== projectId) continue;
    let newest = -Infinity;
    for (const line of pageLinesNewestFirst(text)) {
      const o = JSON.parse(line) as ObservationRecord;
      if (o.ts >= tally.fromMs) {
        if (counted === limit) return { scanned, partial: true };
        counted++;
      }
      scanned++;
      if (o.ts > newest) newest = o.ts;
      if (tally.covers(o.ts)) tally.addHit(o, o.ip === null ? null : network(o.ip));
    }
    if (!(newest >= tally.fromMs)) break;
    if (scanned - sliced >= SLICE) {
      sliced = scanned;
      await nextTurn();
    }
  }
  return { scanned, partial: false };
}

/** Reads the org's checks of the range (stored under [org, ts, request id]) into the tally. */
async function tallyChecks(reads: StoreReader, orgId: string, tally: TrafficTally, limit: number): Promise<{ partial: boolean }> {
  let scanned = 0;
  for await (const { value } of reads.range("checks", { start: [orgId, tally.toMs], end: [orgId, tally.fromMs - 1], reverse: true })) {
    if (scanned === limit) return { partial: true };
    if (++scanned % SLICE === 0) await nextTurn();
    tally.addCheck(value);
  }
  return { partial: false };
}

/** What a proposed policy and proposed thresholds would have changed over the stored hits and checks since `since`. */
export async function replayScan(reads: StoreReader, t: ReplayScanTask): Promise<ReplayScanResult> {
  const hits = t.policy ? await replayHits(reads, t.projectId, resolvePolicy(t.policy), t.since, t.examples, t.limit) : null;
  const checks = t.thresholds ? await replayChecks(reads, t.orgId, t.thresholds, t.since, t.examples, t.limit) : null;
  return { kind: "replay", hits, checks };
}

/** Names a group's key after its dimension (`{ kind: "ai_crawler", count, examples }`). */
function named<E>(name: string, groups: Array<ReplayGroup<E>>) {
  return groups.map((g) => ({ [name]: g.key, count: g.count, examples: g.examples }));
}

/** The project's hits since `since`, newest first (at most `limit`), re-decided under `policy`. */
async function replayHits(reads: StoreReader, projectId: string, policy: Readonly<BotPolicy>, since: number, examples: number, limit: number) {
  const tally = new ReplayTally<ReplayHitExample>(["kind", "reason"], examples);
  let partial = false;
  let sliced = 0;
  pages: for await (const { key, value: text } of reads.range("observations", {
    start: [projectId, Number.MAX_SAFE_INTEGER],
    end: [projectId],
    reverse: true,
  })) {
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
  return {
    scanned: s.scanned,
    changed: s.changed,
    partial,
    transitions: s.transitions,
    by_kind: named("kind", s.groups.kind!),
    by_reason: named("reason", s.groups.reason!),
  };
}

function hitExample(o: ObservationRecord, to: string, rule: string | null): ReplayHitExample {
  return {
    id: o.id,
    created_at: new Date(o.ts).toISOString(),
    page: o.page,
    bot_id: o.bot_id,
    bot_kind: o.ua.bot_kind,
    score: o.score,
    from: o.decision,
    to,
    rule,
  };
}

/** The org's stored checks since `since`, newest first (at most `limit`), re-decided with `thresholds`. */
async function replayChecks(reads: StoreReader, orgId: string, thresholds: DecisionThresholds, since: number, examples: number, limit: number) {
  const tally = new ReplayTally<ReplayCheckExample>(["form"], examples);
  let partial = false;
  for await (const { value: c } of reads.range("checks", { start: [orgId, Number.MAX_SAFE_INTEGER], end: [orgId, since], reverse: true })) {
    if (c.org_id !== orgId || c.ts < since) break;
    if (tally.count === limit) {
      partial = true;
      break;
    }
    const to = decideCheck(c.score, thresholds);
    tally.scan(
      c.decision,
      to,
      () => ({ form: c.form_id }),
      () => checkExample(c, to),
    );
    if (tally.count % SLICE === 0) await nextTurn();
  }
  const s = tally.summary();
  return { scanned: s.scanned, changed: s.changed, partial, transitions: s.transitions, by_form: named("form_id", s.groups.form!) };
}

function checkExample(c: CheckHistoryRecord, to: string): ReplayCheckExample {
  return { request_id: c.request_id, created_at: new Date(c.ts).toISOString(), form_id: c.form_id, score: c.score, from: c.decision, to };
}
