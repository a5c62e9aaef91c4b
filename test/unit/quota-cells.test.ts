import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { LocalQuotaCells, SharedQuotaCells } from "../../src/front/admission/cells.js";
import { REPO_ROOT } from "../../src/config/index.js";

/**
 * Admission counters shared by front threads: real worker threads contending for one org's cell.
 * The threads import the TypeScript sources through test/helpers/ts-hooks.mjs.
 */
const SRC = join(REPO_ROOT, "src");

/** The TypeScript hooks, which an eval'd worker does not get from execArgv: it imports them first. */
const TS_HOOKS = join(REPO_ROOT, "test/helpers/ts-register.mjs");

/** Runs `threads` workers of `body` (an async function body with `workerData` in scope) and collects what each posts. */
function runWorkers<T>(threads: number, data: (i: number) => unknown, body: string): Promise<T[]> {
  const code = `
    const { parentPort, workerData } = require("node:worker_threads");
    (async () => { await import(${JSON.stringify(TS_HOOKS)}); ${body} })().then((r) => parentPort.postMessage(r), (e) => { throw e; });
  `;
  return Promise.all(
    Array.from({ length: threads }, (_, i) =>
      new Promise<T>((resolve, reject) => {
        const w = new Worker(code, { eval: true, workerData: data(i) });
        w.once("message", resolve);
        w.once("error", reject);
      }),
    ),
  );
}

describe("SharedQuotaCells", () => {
  it("four threads admitting against one org's cell: exactly the quota, never more", async () => {
    const buffer = SharedQuotaCells.allocate(1024);
    const admitted = await runWorkers<number>(4, () => ({ buffer, src: SRC }), `
      const { SharedQuotaCells } = await import(workerData.src + "/front/admission/cells.ts");
      const cells = new SharedQuotaCells(workerData.buffer);
      let ok = 0;
      for (let i = 0; i < 5000; i++) {
        const cell = cells.cell("org_contended", "202611", () => 0);
        if (cells.locked(cell, () => (cell.used + cell.held + 1 <= 10000 ? ((cell.used += 1), true) : false))) ok++;
      }
      return ok;
    `);
    expect(admitted.reduce((a, b) => a + b, 0)).toBe(10_000);
    const cells = new SharedQuotaCells(buffer);
    expect(cells.cell("org_contended", "202611", () => -1).used).toBe(10_000);
    // A new period starts over from the ledger, once.
    expect(cells.cell("org_contended", "202612", () => 7).used).toBe(7);
  });

  it("the real QuotaGate in four threads, hold then charge: exactly 10,000 free credits admitted", async () => {
    const buffer = SharedQuotaCells.allocate(1024);
    const dir = mkdtempSync(join(tmpdir(), "fs-cells-"));
    try {
      const results = await runWorkers<{ ok: number; refused: number; written: number }>(4, (i) => ({ buffer, src: SRC, journal: join(dir, `j${i}`) }), `
        const { SharedQuotaCells } = await import(workerData.src + "/front/admission/cells.ts");
        const { QuotaGate } = await import(workerData.src + "/front/quota.ts");
        const { ChargeJournal } = await import(workerData.src + "/store/charge-journal.ts");
        const org = { id: "org_free", name: "t", plan: "free", subscription_status: "active", trial_end: null, created_at: "2026-11-01T00:00:00Z" };
        const dbs = { orgs: { get: () => org }, usage: { get: () => undefined } };
        const journal = new ChargeJournal(workerData.journal, 0, () => {});
        const gate = new QuotaGate(dbs, journal, null, null, new SharedQuotaCells(workerData.buffer));
        const now = Date.UTC(2026, 10, 15);
        let ok = 0, refused = 0, written = 0;
        for (let i = 0; i < 4000; i++) {
          try {
            const hold = gate.hold("org_free", 1, now);
            gate.charge("org_free", 1, now, false, (err) => { if (!err) written++; }, hold);
            ok++;
          } catch (err) {
            if (err.code !== "QUOTA_EXCEEDED") throw err;
            refused++;
          }
          if (i % 256 === 0) await new Promise((r) => setImmediate(r));
        }
        journal.close(); // writes what is queued: every charge's callback has run
        return { ok, refused, written };
      `);
      expect(results.reduce((a, r) => a + r.ok, 0)).toBe(10_000);
      expect(results.reduce((a, r) => a + r.refused, 0)).toBe(6_000);
      expect(results.map((r) => r.written)).toEqual(results.map((r) => r.ok));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives each org its own slot, and says so when the table is full", () => {
    const cells = new SharedQuotaCells(SharedQuotaCells.allocate(8));
    const all = Array.from({ length: 8 }, (_, i) => cells.cell(`org_${i}`, "p", () => i));
    all.forEach((c, i) => expect(c.used).toBe(i));
    expect(() => cells.cell("org_9", "p", () => 0)).toThrow(/full \(8 orgs\)/);
  });
});

describe("LocalQuotaCells", () => {
  it("starts a period from the ledger and keeps its counters until the next one", () => {
    const cells = new LocalQuotaCells();
    const c = cells.cell("org", "p1", () => 5);
    c.used += 2;
    expect(cells.cell("org", "p1", () => 0).used).toBe(7);
    expect(cells.cell("org", "p2", () => 1).used).toBe(1);
  });
});
