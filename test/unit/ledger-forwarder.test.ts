import { describe, expect, it } from "vitest";
import type { ChargeRecord } from "../../src/store/records.js";
import { LedgerForwarder } from "../../src/store/front/ledger-forwarder.js";

describe("LedgerForwarder", () => {
  it("sums debits per org and period, keeps adjustments apart, and flushes in one message", () => {
    const sent: ChargeRecord[][] = [];
    const f = new LedgerForwarder((r) => sent.push(r), 60_000);
    f.add([
      { seq: 1, orgId: "a", credits: 1, period: "202611" },
      { seq: 2, orgId: "b", credits: 2, period: "202611" },
      { seq: 3, orgId: "a", credits: 1, period: "202611" },
    ]);
    f.add([
      { seq: 4, orgId: "a", credits: -10, period: "202611" },
      { seq: 5, orgId: "a", credits: 3, period: "202611" },
      { seq: 6, orgId: "a", credits: 1, period: "202612" },
    ]);
    expect(sent).toHaveLength(0);
    f.flush();
    expect(sent).toEqual([
      [
        { seq: 3, orgId: "a", credits: 2, period: "202611" },
        { seq: 2, orgId: "b", credits: 2, period: "202611" },
        { seq: 4, orgId: "a", credits: -10, period: "202611" },
        { seq: 5, orgId: "a", credits: 3, period: "202611" },
        { seq: 6, orgId: "a", credits: 1, period: "202612" },
      ],
    ]);
    f.flush();
    expect(sent).toHaveLength(1);
  });
});
