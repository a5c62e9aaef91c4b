import { afterAll, describe, expect, it, inject } from "vitest";
import { ApiError } from "../../src/shared/errors.js";
import { currentIpDatasetDir } from "../../src/datasets/ip-dataset.js";
import { ScoringPool, TASKS_PER_THREAD } from "../../src/front/scoring-pool.js";

/** The real piscina pool (its threads run the sources, real dataset) with a tiny queue. */
const pool = new ScoringPool({ ipDatasetDir: currentIpDatasetDir(inject("datasetDataDir"))!, threads: 1, maxQueue: 2, retryAfterSeconds: 3 });
afterAll(() => pool.close());

describe("ScoringPool", () => {
  it("answers pings and batched lookups from the dataset on its threads", async () => {
    expect((await pool.ping()).ok).toBe(true);
    const r = await pool.run({ kind: "ip.lookupBatch", ips: ["8.8.8.8", "bogus", "2001:4860:4860::8888"] });
    expect(r.results[0]).toMatchObject({ asn: 15169, country: "US" });
    expect(r.results[1]).toBeNull();
    expect(r.results[2]).toMatchObject({ asn: 15169 });
  });

  it("maps a full queue to 503 OVERLOADED with Retry-After, and recovers", async () => {
    // One thread holds TASKS_PER_THREAD tasks and the queue 2 more: the rest are refused.
    const tasks = Array.from({ length: TASKS_PER_THREAD + 6 }, () => pool.run({ kind: "busy", ms: 200 }).then(() => "ok", (e: unknown) => e));
    const outcomes = await Promise.all(tasks);
    const overloaded = outcomes.filter((o): o is ApiError => o instanceof ApiError);
    expect(overloaded.length).toBeGreaterThanOrEqual(4); // exactly 4 once the thread is up; more while it starts
    expect(outcomes.filter((o) => o === "ok").length).toBeGreaterThan(0);
    for (const e of overloaded) {
      expect(e.code).toBe("OVERLOADED");
      expect(e.status).toBe(503);
      expect(e.headers).toEqual({ "retry-after": "3" });
    }
    expect((await pool.ping()).ok).toBe(true);
  });
});
