import { describe, expect, it } from "vitest";
import { EARLIEST_EVENT_DATE_S, LATEST_EVENT_DATE_AHEAD_S, normalizeEvent } from "../../src/front/billing/events.js";

/** normalizeEvent's date bounds (issue 25, finding 10): from 2000-01-01 to 10 years after now, both ends included. */

const NOW_MS = Date.UTC(2026, 10, 20, 12);
const NOW_S = NOW_MS / 1000;
const setup = { prices: { pro: { monthly: "price_pro", overage: "price_pro_o" }, business: { monthly: "price_b", overage: "price_b_o" } } };

function event(dates: { created?: number; trial_end?: number; start?: number; end?: number }) {
  return {
    id: "evt_1",
    type: "customer.subscription.updated",
    created: dates.created ?? NOW_S,
    data: {
      object: {
        id: "sub_1",
        status: "trialing",
        metadata: { org_id: "org_1" },
        trial_end: dates.trial_end ?? NOW_S + 86_400,
        items: { data: [{ price: { id: "price_pro" }, current_period_start: dates.start ?? NOW_S, current_period_end: dates.end ?? NOW_S + 86_400 }] },
      },
    },
  };
}

describe("normalizeEvent: dates", () => {
  const latest = NOW_S + LATEST_EVENT_DATE_AHEAD_S;

  it("accepts dates from 2000-01-01 to 10 years ahead", () => {
    for (const d of [{ created: EARLIEST_EVENT_DATE_S }, { created: latest }, { trial_end: latest }, { start: EARLIEST_EVENT_DATE_S, end: latest }]) {
      expect(normalizeEvent(event(d), setup, NOW_MS), JSON.stringify(d)).toMatchObject({ ok: true });
    }
    expect(EARLIEST_EVENT_DATE_S).toBe(Date.UTC(2000, 0, 1) / 1000);
    expect(LATEST_EVENT_DATE_AHEAD_S / 86_400 / 365.25).toBeCloseTo(10, 2);
  });

  it("refuses a date outside, naming the field", () => {
    const cases: Array<[string, Parameters<typeof event>[0]]> = [
      ["body.created", { created: EARLIEST_EVENT_DATE_S - 1 }],
      ["body.created", { created: latest + 1 }],
      ["body.data.object.trial_end", { trial_end: 1e300 }],
      ["body.data.object.trial_end", { trial_end: -1e15 }],
      ["body.data.object.items.data.0.current_period_start", { start: -1e15 }],
      ["body.data.object.items.data.0.current_period_end", { end: latest + 1 }],
    ];
    for (const [field, d] of cases) {
      const r = normalizeEvent(event(d), setup, NOW_MS);
      expect(r.ok, field).toBe(false);
      if (!r.ok) expect(r.message).toMatch(new RegExp(`^${field.replace(/\./g, "\\.")}: epoch seconds between 2000-01-01 and 10 years from now$`));
    }
  });
});
