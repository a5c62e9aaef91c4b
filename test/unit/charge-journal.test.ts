import { appendFileSync, closeSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CHARGE_CODEC, ChargeJournal, JournalClosedError, listSegments, pruneSegments, readSegment, RecordWithdrawnError, truncateTornTail } from "../../src/store/charge-journal.js";
import type { ChargeRecord } from "../../src/store/records.js";

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "fs-journal-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("ChargeJournal", () => {
  it("writes one batch per turn, resolves appends after the write, and hands the batch on", async () => {
    const dir = tempDir();
    const batches: ChargeRecord[][] = [];
    const j = new ChargeJournal(dir, 41, (r) => batches.push(r));
    const append = (org: string, credits: number) => new Promise<void>((resolve, reject) => j.append(org, credits, "202611", (err) => (err ? reject(err) : resolve())));
    const done = [append("org_a", 1), append("org_b", 2), append("org_a", -5)];
    expect(batches).toHaveLength(0);
    await Promise.all(done);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((r) => r.seq)).toEqual([42, 43, 44]);
    const [seg] = listSegments(dir);
    expect(seg!.firstSeq).toBe(42);
    expect(readSegment(seg!.path)).toEqual(batches[0]);
    j.close();
  });

  it("drops a debit whose request left before the batch is written, and writes the rest", async () => {
    const dir = tempDir();
    const batches: ChargeRecord[][] = [];
    const j = new ChargeJournal(dir, 0, (r) => batches.push(r));
    const outcome = (org: string, live?: { aborted: boolean }) =>
      new Promise<Error | undefined>((resolve) => j.append(org, 1, "202611", resolve, undefined, false, live));
    const left = { aborted: false };
    const stays = { aborted: false };
    const done = [outcome("org_left", left), outcome("org_stays", stays), outcome("org_plain")];
    // The client leaves after its debit was queued, before the turn's write (uWS closing a
    // connection for a pipelined request does this within the same native callback).
    left.aborted = true;
    const [a, b, c] = await Promise.all(done);
    expect(a).toBeInstanceOf(RecordWithdrawnError);
    expect([b, c]).toEqual([undefined, undefined]);
    expect(batches.map((batch) => batch.map((r) => r.orgId))).toEqual([["org_stays", "org_plain"]]);
    expect(readSegment(listSegments(dir)[0]!.path).map((r) => [r.seq, r.orgId])).toEqual([[2, "org_stays"], [3, "org_plain"]]);
    expect(j.lastSeq).toBe(3);
    // A batch with nothing left to write writes nothing, and the written sequence stays.
    const alone = { aborted: false };
    const gone = outcome("org_gone", alone);
    alone.aborted = true;
    expect(await gone).toBeInstanceOf(RecordWithdrawnError);
    expect(batches).toHaveLength(1);
    expect(j.lastSeq).toBe(3);
    j.close();
    expect(readSegment(listSegments(dir)[0]!.path)).toHaveLength(2);
  });

  it("refuses appends after close, and reports a failed write to every waiter of the batch", async () => {
    const dir = tempDir();
    const forwarded: ChargeRecord[][] = [];
    const j = new ChargeJournal(dir, 0, (r) => forwarded.push(r));
    j.close();
    expect(() => j.append("org_a", 1, "202611", () => {})).toThrow(JournalClosedError);
    const k = new ChargeJournal(dir, 10, (r) => forwarded.push(r));
    // Simulate an I/O failure: the descriptor is closed under the journal.
    closeSync((k as unknown as { fd: number }).fd);
    const errors: Array<Error | undefined> = [];
    await new Promise<void>((resolve) => {
      k.append("org_a", 1, "202611", (err) => errors.push(err));
      k.append("org_b", 1, "202611", (err) => {
        errors.push(err);
        resolve();
      });
    });
    expect(errors).toHaveLength(2);
    expect(errors.every((e) => e instanceof Error)).toBe(true);
    expect(forwarded).toHaveLength(0);
  });

  it("cuts a torn tail so the next append starts on a fresh line", () => {
    const dir = tempDir();
    const path = join(dir, "charges-0000000000000001.log");
    writeFileSync(path, "1\torg_a\t1\t202611\n2\torg_a\t1\t20");
    expect(truncateTornTail(path)).toBe(12);
    expect(readSegment(path).map((r) => r.seq)).toEqual([1]);
    expect(truncateTornTail(path)).toBe(0);
    writeFileSync(join(dir, "charges-0000000000000009.log"), "9\torg_a");
    expect(truncateTornTail(join(dir, "charges-0000000000000009.log"))).toBe(7);
  });

  it("ignores a torn final line but refuses a corrupt complete line", () => {
    const dir = tempDir();
    const path = join(dir, "charges-0000000000000001.log");
    writeFileSync(path, "1\torg_a\t1\t202611\n2\torg_a\t1\t2026");
    expect(readSegment(path).map((r) => r.seq)).toEqual([1]);
    appendFileSync(path, "\n3\torg_a\tx\t202611\n");
    expect(() => readSegment(path)).toThrow(/corrupt charge journal/);
  });

  it("prunes only segments that are wholly applied, never the newest", () => {
    const dir = tempDir();
    for (const first of [1, 100, 200]) writeFileSync(join(dir, `charges-${String(first).padStart(16, "0")}.log`), "");
    pruneSegments(dir, 150);
    expect(readdirSync(dir).sort()).toEqual(["charges-0000000000000100.log", "charges-0000000000000200.log"]);
    pruneSegments(dir, 10_000);
    expect(readdirSync(dir)).toEqual(["charges-0000000000000200.log"]);
  });
});

describe("CHARGE_CODEC with an Idempotency-Key answer", () => {
  const idem = {
    scope: "org_a",
    key: "k-1",
    fingerprint: "fp",
    status: 200,
    body: '{"data":"tab\there, newline\nthere"}',
    headers: { "x-fs-credits": "2" },
    created_ms: 1_764_000_000_000,
  };

  it("keeps the answer on the debit's line and reads it back", () => {
    const rec: ChargeRecord = { seq: 7, orgId: "org_a", credits: 2, period: "202611", idem };
    const line = CHARGE_CODEC.encode(rec);
    expect(line).not.toMatch(/\n/);
    expect(line.split("\t")).toHaveLength(5);
    expect(CHARGE_CODEC.decode(line)).toEqual(rec);
    expect(CHARGE_CODEC.decode(CHARGE_CODEC.encode({ ...rec, credits: 0 }))).toEqual({ ...rec, credits: 0 });
  });

  it("refuses a line whose answer field is not a stored answer", () => {
    expect(CHARGE_CODEC.decode('7\torg_a\t2\t202611\t{"scope":"org_a"}')).toBeNull();
    expect(CHARGE_CODEC.decode("7\torg_a\t2\t202611\tnot json")).toBeNull();
    expect(CHARGE_CODEC.decode("7\torg_a\t2\t202611")).toEqual({ seq: 7, orgId: "org_a", credits: 2, period: "202611" });
  });
});
