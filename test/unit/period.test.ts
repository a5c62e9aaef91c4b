import { describe, expect, it } from "vitest";
import { periodEndMs, periodOf } from "../../src/shared/period.js";

describe("billing periods", () => {
  it("names the UTC calendar month", () => {
    expect(periodOf(Date.UTC(2026, 0, 1))).toBe("202601");
    expect(periodOf(Date.UTC(2026, 11, 31, 23, 59, 59, 999))).toBe("202612");
  });
  it("ends at the first instant of the next month, across years", () => {
    expect(periodEndMs(Date.UTC(2026, 11, 15))).toBe(Date.UTC(2027, 0, 1));
    expect(periodEndMs(Date.UTC(2028, 1, 29))).toBe(Date.UTC(2028, 2, 1));
  });
});
