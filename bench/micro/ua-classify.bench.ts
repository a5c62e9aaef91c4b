/**
 * User-Agent classification per request: the cached `createUaClassifier().classify` (ua-parser-js
 * + bot registry + automation tells + the browser-shape test), the same with a cache of one entry
 * (every call a new UA), against ua-parser-js parsing every call (one reused parser,
 * `setUA(...).getResult()`, no cache) and the bot registry alone (cached, and uncached `explain`).
 *
 *   node dist/bench/micro/ua-classify.bench.js
 *
 * Traffic mix, deterministic: the 10,000 entries of the `user-agents` package in file order (real
 * browser UAs, drawn by popularity, so a few repeat a lot and the rest form a long tail) with one
 * bot UA (arcjet's example UAs, in order) after every 19 browser UAs, so 5% bots. Each task call
 * classifies the next UA of that stream. The registry is merged from all four sources (three from
 * the repository's snapshot, crawler-user-agents from npm). Target: cached at least 10x faster than
 * ua-parser-js uncached in the same run.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Bench } from "tinybench";
import UAParser from "ua-parser-js";
import { mergeBotRegistry, readBotSources } from "../../scripts/bots/registry.js";
import { loadSnapshot, snapshotBytes } from "../../scripts/sources/snapshot.js";
import { compileBotRegistry } from "../../src/datasets/bot-registry.js";
import { createUaClassifier } from "../../src/datasets/ua.js";
import { machineLine, microRow } from "../lib/context.js";

const TIME_MS = 1000;
const WARMUP_MS = 250;
const require = createRequire(import.meta.url);
const snapshot = loadSnapshot();
const fromSnapshot = (path: string): Buffer => snapshotBytes(snapshot, path);

function trafficMix(botUas: string[]): string[] {
  const file = join(dirname(require.resolve("user-agents")), "user-agents.json");
  const browsers = (JSON.parse(readFileSync(file, "utf8")) as Array<{ userAgent: string }>).map((u) => u.userAgent);
  const out: string[] = [];
  let bot = 0;
  browsers.forEach((ua, i) => {
    out.push(ua);
    if (i % 19 === 18 && botUas.length > 0) out.push(botUas[bot++ % botUas.length]!);
  });
  return out;
}


async function main(): Promise<void> {
  const from = "all four registries";
  const { bots } = mergeBotRegistry(readBotSources(fromSnapshot));
  const arcjet = JSON.parse(fromSnapshot("bots/arcjet-well-known-bots/well-known-bots.json").toString("utf8")) as Array<{ instances: { accepted: string[] } }>;
  const botUas = arcjet.flatMap((e) => e.instances.accepted);
  const stream = trafficMix(botUas.length > 0 ? botUas : ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"]);
  const distinct = new Set(stream).size;

  const registry = compileBotRegistry(bots);
  const classifier = createUaClassifier(compileBotRegistry(bots));
  const parser = new UAParser();
  // Cache of one entry: every call parses, matches and judges the UA's shape (the cost of a new UA).
  const fresh = createUaClassifier(compileBotRegistry(bots, 1), 1);

  // Check the contenders agree on what they share before timing anything.
  for (const ua of stream.slice(0, 500)) {
    const got = classifier.classify(ua);
    const res = parser.setUA(ua).getResult();
    const browser = res.browser.name ? `${res.browser.name}${res.browser.major ? ` ${res.browser.major}` : ""}` : null;
    if (got.browser !== browser) throw new Error(`ua-classify check: ${ua}: ${got.browser} vs ${browser}`);
    // A browser-shaped UA names a bot only by a whole token (ua.ts), so the classifier's bot is the
    // registry's or none.
    if (got.bot !== null && got.bot.bot_id !== registry.classify(ua)?.bot_id) throw new Error(`ua-classify check: bot differs for ${ua}`);
  }

  let sink = 0;
  let i = 0;
  let j = 0;
  let k = 0;
  let l = 0;
  let m = 0;
  const next = (n: number) => stream[n % stream.length]!;
  const bench = new Bench({ time: TIME_MS, warmupTime: WARMUP_MS });
  bench
    .add("createUaClassifier().classify (cached)", () => {
      sink += classifier.classify(next(i++)).automation ? 1 : 0;
    })
    .add("createUaClassifier().classify (uncached, cache of 1)", () => {
      sink += fresh.classify(next(m++)).automation ? 1 : 0;
    })
    .add("ua-parser-js setUA().getResult() (uncached)", () => {
      sink += parser.setUA(next(j++)).getResult().browser.name?.length ?? 0;
    })
    .add("bot registry classify (cached)", () => {
      sink += registry.classify(next(k++)) === null ? 0 : 1;
    })
    .add("bot registry explain (uncached)", () => {
      sink += registry.explain(next(l++)) === null ? 0 : 1;
    });
  await bench.run();

  const mean = (name: string) => bench.tasks.find((t) => t.name === name)?.result;
  const cached = mean("createUaClassifier().classify (cached)");
  const uncached = mean("ua-parser-js setUA().getResult() (uncached)");
  console.log(`ua-classify (${sink > 0 ? "ok" : "?"}): ${machineLine()}`);
  console.log(
    `tinybench: ${TIME_MS} ms per task after ${WARMUP_MS} ms warm-up; stream of ${stream.length} UAs (${distinct} distinct, 5% bots); ` +
      `registry: ${bots.length} bots from ${from}`,
  );
  console.table(bench.table(microRow));
  if (cached?.state === "completed" && uncached?.state === "completed") {
    const ratio = uncached.latency.mean / cached.latency.mean;
    console.log(`cached classify vs ua-parser-js uncached: ${ratio.toFixed(1)}x faster (target >= 10x: ${ratio >= 10 ? "met" : "MISSED"})`);
  }
}

await main();
