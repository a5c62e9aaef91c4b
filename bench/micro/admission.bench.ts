/**
 * What sharing admission between front threads costs (FS_FRONT_THREADS, issue 19): QuotaGate.hold
 * then charge for a 1-credit call, the synchronous admission every metered request makes, with
 * this thread's own counters (LocalQuotaCells) and with the shared table (SharedQuotaCells, a
 * compare-and-swap lock per org); then the shared table under contention: 1, 2 and 4 worker
 * threads admitting at once, all against one org (the worst case: every admission takes the same
 * lock) and each against an org of its own. Journal writes are real (a temporary folder).
 *
 *   node dist/bench/micro/admission.bench.js
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { REPO_ROOT } from "../../src/config/index.js";
import { LocalQuotaCells, SharedQuotaCells, type QuotaCells } from "../../src/front/admission/cells.js";
import { QuotaGate } from "../../src/front/quota.js";
import { ChargeJournal } from "../../src/store/charge-journal.js";
import { machineLine } from "../lib/context.js";

const CALLS = 200_000;
const DIST = join(REPO_ROOT, "dist/src");
const NOW = Date.UTC(2026, 10, 15);

/** A pro org (no hard stop: every call admitted) keyed by id. */
const dbs = {
  orgs: { get: (id: string) => ({ id, name: id, plan: "pro" as const, subscription_status: "active" as const, trial_end: null, created_at: "2026-11-01T00:00:00Z" }) },
  usage: { get: () => undefined },
};

/** ns per hold+charge on this thread. */
async function timeGate(cells: QuotaCells, dir: string): Promise<number> {
  const journal = new ChargeJournal(dir, 0, () => {});
  const gate = new QuotaGate(dbs, journal, null, null, cells);
  const noop = (): void => {};
  let t = 0;
  for (let round = 0; round < CALLS / 10_000; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 10_000; i++) gate.charge("org_a", 1, NOW, false, noop, gate.hold("org_a", 1, NOW));
    t += Number(process.hrtime.bigint() - start);
    await new Promise((r) => setImmediate(r)); // the journal writes its batch
  }
  journal.close();
  return t / CALLS;
}

/** Total admissions per second with `threads` workers on one shared table (same org, or one each). */
async function contended(threads: number, sameOrg: boolean, dir: string): Promise<{ perSecond: number; nsPerCall: number }> {
  const buffer = SharedQuotaCells.allocate(1024);
  const code = `
    const { parentPort, workerData } = require("node:worker_threads");
    (async () => {
      const { SharedQuotaCells } = await import(workerData.dist + "/front/admission/cells.js");
      const { QuotaGate } = await import(workerData.dist + "/front/quota.js");
      const { ChargeJournal } = await import(workerData.dist + "/store/charge-journal.js");
      const dbs = { orgs: { get: (id) => ({ id, name: id, plan: "pro", subscription_status: "active", trial_end: null, created_at: "2026-11-01T00:00:00Z" }) }, usage: { get: () => undefined } };
      const journal = new ChargeJournal(workerData.journal, 0, () => {});
      const gate = new QuotaGate(dbs, journal, null, null, new SharedQuotaCells(workerData.buffer));
      const org = workerData.org;
      const noop = () => {};
      for (let i = 0; i < 20000; i++) gate.charge(org, 1, workerData.now, false, noop, gate.hold(org, 1, workerData.now));
      parentPort.postMessage("ready");
      await new Promise((r) => parentPort.once("message", r));
      const start = process.hrtime.bigint();
      let n = 0;
      while (n < workerData.calls) {
        for (let i = 0; i < 5000; i++) gate.charge(org, 1, workerData.now, false, noop, gate.hold(org, 1, workerData.now));
        n += 5000;
        await new Promise((r) => setImmediate(r));
      }
      parentPort.postMessage(Number(process.hrtime.bigint() - start));
      journal.close();
    })();
  `;
  const workers = Array.from({ length: threads }, (_, i) => new Worker(code, { eval: true, workerData: { buffer, dist: DIST, journal: join(dir, `w${threads}-${sameOrg}-${i}`), org: sameOrg ? "org_hot" : `org_${i}`, now: NOW, calls: CALLS } }));
  await Promise.all(workers.map((w) => new Promise((r) => w.once("message", r))));
  const t0 = process.hrtime.bigint();
  const times = await Promise.all(workers.map((w) => new Promise<number>((r) => { w.once("message", r); w.postMessage("go"); })));
  const wall = Number(process.hrtime.bigint() - t0);
  await Promise.all(workers.map((w) => w.terminate()));
  return { perSecond: (threads * CALLS) / (wall / 1e9), nsPerCall: times.reduce((a, b) => a + b, 0) / (threads * CALLS) };
}

async function main(): Promise<void> {
  console.log(machineLine());
  const dir = mkdtempSync(join(tmpdir(), "fs-admission-bench-"));
  try {
    // Interleaved, twice, so both see the same machine.
    for (let round = 1; round <= 2; round++) {
      const local = await timeGate(new LocalQuotaCells(), join(dir, `l${round}`));
      const shared = await timeGate(new SharedQuotaCells(SharedQuotaCells.allocate(1024)), join(dir, `s${round}`));
      console.log(`round ${round}: hold+charge, one thread: own counters ${local.toFixed(0)} ns, shared table ${shared.toFixed(0)} ns`);
    }
    for (const threads of [1, 2, 4]) {
      for (const same of [true, false]) {
        const r = await contended(threads, same, dir);
        console.log(
          `${threads} thread(s), ${same ? "one org       " : "an org each   "}: ${(r.perSecond / 1e6).toFixed(2)} M admissions/s in all, ${r.nsPerCall.toFixed(0)} ns per admission per thread`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
