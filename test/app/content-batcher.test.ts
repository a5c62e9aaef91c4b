import { afterAll, describe, expect, inject, it } from "vitest";
import { currentIpDatasetDir } from "../../src/datasets/ip-dataset.js";
import { loadContentModel } from "../../src/scoring/content/index.js";
import { ContentBatcher } from "../../src/front/content-batcher.js";
import { ScoringPool } from "../../src/front/scoring-pool.js";

/** The real pool (its threads run the sources, as this test does) running the real content model from data/content-model. */
const dir = currentIpDatasetDir(inject("datasetDataDir"))!;
const model = loadContentModel();
const pools: ScoringPool[] = [];
afterAll(() => Promise.all(pools.map((p) => p.close())));

function pool(opts: { maxQueue?: number; tasksPerThread?: number } = {}): ScoringPool {
  const p = new ScoringPool({ ipDatasetDir: dir, threads: 1, maxQueue: opts.maxQueue ?? 64, retryAfterSeconds: 1, tasksPerThread: opts.tasksPerThread });
  pools.push(p);
  return p;
}

const TEXTS = [
  "Hi, could you tell me when my order #4411 will ship? Thanks, Anna",
  "CONGRATULATIONS! You have WON a $1000 gift card. Click http://bit.ly/xyz now to claim!!!",
  "Wir möchten gern einen Termin für nächste Woche vereinbaren. Passt Ihnen Dienstag?",
  "We help businesses like yours get more leads with SEO and web design. Can I send you a quote?",
  "Your account has been suspended. Verify your password at http://secure-login.example.com",
  "ok",
];

describe("ContentBatcher", () => {
  it("answers each text with what the front's own model says, also past one task's worth", async () => {
    const batcher = new ContentBatcher(pool(), model);
    // 40 texts in one event-loop turn: three tasks (16 + 16 + 8), answers matched to their texts.
    const texts = Array.from({ length: 40 }, (_, i) => `${TEXTS[i % TEXTS.length]} ${i}`);
    const got = await Promise.all(texts.map((t) => batcher.analyze(t)));
    expect(got).toEqual(texts.map((t) => model.analyze(t)));
    expect(batcher.fallbacks).toBe(0);
    expect(batcher.version).toBe(model.version);
  });

  it("analyses on the front when the pool refuses, with the same answers", async () => {
    const busy = pool({ maxQueue: 1, tasksPerThread: 1 });
    const blockers = [busy.run({ kind: "busy", ms: 300 }), busy.run({ kind: "busy", ms: 300 })];
    const batcher = new ContentBatcher(busy, model);
    const got = await Promise.all(TEXTS.map((t) => batcher.analyze(t)));
    expect(got).toEqual(TEXTS.map((t) => model.analyze(t)));
    expect(batcher.fallbacks).toBe(TEXTS.length);
    await Promise.all(blockers);
  });
});
