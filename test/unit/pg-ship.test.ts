import { describe, expect, it } from "vitest";
import { toBufferKey } from "ordered-binary";
import { inRuns, shipOps } from "../../src/store/pg/writer-ship.js";
import { literal, scriptOf } from "../../src/store/pg/sql-text.js";

const hex = (k: unknown) => toBufferKey(k as string).toString("hex");
const NOW = Date.UTC(2026, 10, 26, 12);

describe("shipOps", () => {
  it("sums an org's debits, keeps an adjustment apart and out of the lease, and carries stored answers", () => {
    const idem = { scope: "org_a", key: "k1", fingerprint: "f", status: 200, body: "{}", headers: {}, created_ms: NOW };
    const ops = shipOps(
      [
        { seq: 1, orgId: "org_b", credits: 2, period: "202611" },
        { seq: 2, orgId: "org_a", credits: 1, period: "202611" },
        { seq: 3, orgId: "org_a", credits: 3, period: "202611" },
        { seq: 4, orgId: "org_a", credits: -5, period: "202611", adjust: true },
        { seq: 5, orgId: "org_a", credits: 1, period: "202611" },
        { seq: 6, orgId: "org_a", credits: 0, period: "202611", idem },
      ],
      NOW,
    );
    expect(ops.leases).toEqual([
      { o: "org_a", p: "202611", c: 5 },
      { o: "org_b", p: "202611", c: 2 },
    ]);
    // In journal order; the adjustment on its own, so that clamping at zero applies to it alone.
    expect(ops.usage).toEqual([
      { k: hex("org_b:202611"), org: hex("org_b"), o: "org_b", p: "202611", c: 2 },
      { k: hex("org_a:202611"), org: hex("org_a"), o: "org_a", p: "202611", c: 4 },
      { k: hex("org_a:202611"), org: hex("org_a"), o: "org_a", p: "202611", c: -5 },
      { k: hex("org_a:202611"), org: hex("org_a"), o: "org_a", p: "202611", c: 1 },
    ]);
    expect(ops.daily).toHaveLength(2);
    expect(ops.daily.find((d) => (d as { k: string }).k === hex(["org_a", "202611", "2026-11-26"]))).toEqual({ k: hex(["org_a", "202611", "2026-11-26"]), c: 0 });
    expect(ops.idem).toEqual([{ k: hex(["org_a", "k1"]), v: idem }]);
  });
});

describe("scriptOf", () => {
  it("writes parameters as literals, so a transaction is one message", () => {
    expect(scriptOf([{ sql: "BEGIN" }, { sql: "SELECT $1, $2, $10", params: ["it's", 2, 3, 4, 5, 6, 7, 8, 9, null] }, { sql: "COMMIT" }])).toBe("BEGIN;\nSELECT 'it''s', 2, NULL;\nCOMMIT");
    // A backslash doubled, in an E'' string (pg's escapeLiteral).
    expect(literal(["a", "b\\c"])).toBe("ARRAY['a', E'b\\\\c']");
    expect(literal([])).toBe("'{}'");
    expect(literal(Buffer.from([1, 255]))).toBe("'\\x01ff'::bytea");
    expect(() => literal(Number.NaN)).toThrow();
    expect(() => scriptOf([{ sql: "SELECT $2", params: [1] }])).toThrow(/\$2/);
  });
});

describe("inRuns", () => {
  type B = { journal?: string; afterSeq?: number; upToSeq: number; n: number[] };
  const merge = (run: B[]): B => ({ ...run[0]!, upToSeq: run[run.length - 1]!.upToSeq, n: run.flatMap((b) => b.n) });

  it("applies each journal's batches that continue one another at once, a gap apart, and fails the rest of a journal after a failure", () => {
    const applied: B[] = [];
    const batches: B[] = [
      { afterSeq: 0, upToSeq: 2, n: [1] },
      { journal: "f1", afterSeq: 0, upToSeq: 5, n: [2] },
      { afterSeq: 2, upToSeq: 4, n: [3] },
      { afterSeq: 9, upToSeq: 12, n: [4] }, // a gap: on its own
      { journal: "f1", afterSeq: 5, upToSeq: 6, n: [5] },
    ];
    const acks = inRuns(batches, (b) => (applied.push(b), b.journal === "f1" ? { ok: false, error: "STORE_FAILED", message: "away" } : { ok: true }), merge);
    expect(applied.map((b) => [b.journal ?? "", b.afterSeq, b.upToSeq, b.n])).toEqual([
      ["", 0, 4, [1, 3]],
      ["f1", 0, 6, [2, 5]],
      ["", 9, 12, [4]],
    ]);
    expect(acks.map((a) => a.ok)).toEqual([true, false, true, true, false]);
    // After a failure, a later run of that journal is not tried: it gets the same answer.
    applied.length = 0;
    const again = inRuns([{ afterSeq: 0, upToSeq: 1, n: [1] }, { afterSeq: 5, upToSeq: 6, n: [2] }], (b) => (applied.push(b), { ok: false, error: "STORE_FAILED", message: "away" }), merge);
    expect(applied).toHaveLength(1);
    expect(again.map((a) => a.ok)).toEqual([false, false]);
  });
});
