/**
 * What the reports that read stored observations cost on the front thread, per observation:
 * GET /v1/projects/{projectId}/traffic (the traffic tally, FS_TRAFFIC_SCAN_LIMIT) and POST
 * /v1/projects/{projectId}/bot-policy/replay (hits re-decided under a proposed policy,
 * FS_REPLAY_SCAN_LIMIT). Each task runs the route's own handler over a stored set of 20,000
 * observations of one project (one day, pages of 64 lines as the writer stores a batch, a mix
 * of browsers, crawlers and automation from 3,000 addresses) in a real LMDB state environment,
 * read through the same reader as on a single install, with the current IP dataset for networks.
 *
 * The baseline, in the same run: the same pages read and every line JSON.parse'd, nothing else
 * (the floor under any report that reads the stored lines). Rows give the process's CPU time per
 * observation (process.cpuUsage over 20 more passes; on a shared machine wall time also counts
 * time the process waited for a core) and tinybench's wall time, each also as a ratio to the
 * baseline.
 *
 *   node dist/bench/micro/traffic.bench.js
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Bench } from "tinybench";
import { currentIpDatasetDir, openIpDatasetDir } from "../../src/datasets/ip-dataset.js";
import type { KeyPrincipal } from "../../src/front/auth.js";
import type { AppDeps } from "../../src/http/deps.js";
import { botPolicyReplayPost } from "../../src/http/routes/bot-policy-replay.post.js";
import { trafficGet } from "../../src/http/routes/traffic.get.js";
import { groupObservations, pageLinesNewestFirst } from "../../src/store/observation-pages.js";
import { OBSERVATION_CODEC } from "../../src/store/observation-journal.js";
import { localReader } from "../../src/store/reader.js";
import type { ObservationRecord, ProjectRecord } from "../../src/store/records.js";
import { openState } from "../../src/store/state-env.js";
import { sampleAddresses } from "../lib/addresses.js";
import { ensureIpDataset, machineLine } from "../lib/context.js";

const N = 20_000;
const PAGE_LINES = 64;
const TIME_MS = 3000;
const WARMUP_MS = 500;
const CPU_ROUNDS = 20;
const ORG = "org_3fK9xQ2mT7aW4bZk";
const PROJECT = "prj_8Hq2LmT7aZ3kXw9B";
const DAY_MS = 86_400_000;
const NOW = 1_763_677_200_000;

type Ua = ObservationRecord["ua"];
/** Who sends the hits, with their share of 100 (browsers most, then crawlers and automation). */
const SENDERS: Array<{
  share: number;
  ua: Ua;
  bot_id: string | null;
  bot_operator: string | null;
  verified: boolean | null;
  reasons: string[];
  decision: ObservationRecord["decision"];
  score: number;
}> = [
  {
    share: 40,
    ua: { browser: "Chrome 131", os: "Windows 10", device: "desktop", bot_kind: null, bot_name: null },
    bot_id: null,
    bot_operator: null,
    verified: null,
    reasons: [],
    decision: "allow",
    score: 0.05,
  },
  {
    share: 15,
    ua: { browser: "Mobile Safari 18", os: "iOS 18.1", device: "mobile", bot_kind: null, bot_name: null },
    bot_id: null,
    bot_operator: null,
    verified: null,
    reasons: [],
    decision: "allow",
    score: 0.06,
  },
  {
    share: 10,
    ua: { browser: "Firefox 133", os: "Linux", device: "desktop", bot_kind: null, bot_name: null },
    bot_id: null,
    bot_operator: null,
    verified: null,
    reasons: ["datacenter_ip"],
    decision: "review",
    score: 0.45,
  },
  {
    share: 5,
    ua: { browser: "Chrome 131", os: "Android 14", device: "mobile", bot_kind: null, bot_name: null },
    bot_id: null,
    bot_operator: null,
    verified: null,
    reasons: ["headless_tells"],
    decision: "block",
    score: 0.91,
  },
  {
    share: 10,
    ua: { browser: null, os: null, device: null, bot_kind: "search_crawler", bot_name: "Googlebot" },
    bot_id: "googlebot",
    bot_operator: "Google",
    verified: true,
    reasons: ["bot_verified"],
    decision: "allow",
    score: 0.1,
  },
  {
    share: 3,
    ua: { browser: null, os: null, device: null, bot_kind: "search_crawler", bot_name: "Googlebot" },
    bot_id: "googlebot",
    bot_operator: "Google",
    verified: false,
    reasons: ["bot_spoofed"],
    decision: "block",
    score: 0.97,
  },
  {
    share: 7,
    ua: { browser: null, os: null, device: null, bot_kind: "ai_crawler", bot_name: "GPTBot" },
    bot_id: "gptbot",
    bot_operator: "OpenAI",
    verified: true,
    reasons: ["bot_verified"],
    decision: "review",
    score: 0.5,
  },
  {
    share: 4,
    ua: { browser: null, os: null, device: null, bot_kind: "seo", bot_name: "AhrefsBot" },
    bot_id: "ahrefsbot",
    bot_operator: "Ahrefs",
    verified: true,
    reasons: ["bot_verified"],
    decision: "review",
    score: 0.55,
  },
  {
    share: 6,
    ua: { browser: null, os: null, device: null, bot_kind: null, bot_name: null },
    bot_id: null,
    bot_operator: null,
    verified: null,
    reasons: ["automation_ua", "datacenter_ip"],
    decision: "block",
    score: 0.88,
  },
];
const COUNTRIES = ["US", "DE", "FR", "GB", "NL", "IN", "BR", "JP", null];

/** The stored set: N observations over the day before NOW, oldest first, as the journal writes them. */
function observations(): ObservationRecord[] {
  const addresses = sampleAddresses(3000);
  const senders = SENDERS.flatMap((s) => Array<(typeof SENDERS)[number]>(s.share).fill(s));
  const out: ObservationRecord[] = [];
  for (let i = 0; i < N; i++) {
    const s = senders[(i * 37) % senders.length]!;
    out.push({
      seq: i + 1,
      id: `obs_Xk3Lm9Qa2b${i.toString(36)}`,
      org_id: ORG,
      project_id: PROJECT,
      session_id: `s_4mQx9TbV2kLr8Zp${(i % 2000).toString(36).padStart(4, "0")}`,
      kind: "page.view",
      action: "pageview",
      ts: NOW - DAY_MS + Math.floor((i * DAY_MS) / N),
      score: s.score,
      decision: s.decision,
      reasons: s.reasons,
      ua: s.ua,
      bot_id: s.bot_id,
      bot_operator: s.bot_operator,
      bot_verified: s.verified,
      policy: null,
      ip: addresses[(i * 7919) % addresses.length]!,
      country: COUNTRIES[i % COUNTRIES.length]!,
      page: `/products/${i % 200}`,
      fingerprint: (0x1000000 + (i % 2000) * 7919).toString(16).padStart(14, "0"),
      token_valid: s.ua.bot_kind === null,
      tells: s.reasons.includes("headless_tells") ? ["cdp"] : [],
    });
  }
  return out;
}

const dataDir = await ensureIpDataset();
const datasetDir = currentIpDatasetDir(dataDir);
if (!datasetDir) throw new Error(`no IP dataset in ${dataDir}`);
const dataset = openIpDatasetDir(datasetDir);
const stateDir = mkdtempSync(join(tmpdir(), "fs-traffic-bench-"));
const dbs = openState(stateDir, false);
try {
  const records = observations();
  for (let i = 0; i < records.length; i += PAGE_LINES) {
    const batch = records.slice(i, i + PAGE_LINES);
    const { pages } = groupObservations(
      batch,
      batch.map((r) => `${OBSERVATION_CODEC.encode(r)}\n`),
    );
    for (const p of pages) dbs.observations.putSync([p.project_id, p.first_seq], p.text);
  }

  const project = { id: PROJECT, org_id: ORG } as ProjectRecord;
  const deps = {
    beacon: { projects: { get: () => project } },
    config: { FS_TRAFFIC_SCAN_LIMIT: N, FS_REPLAY_SCAN_LIMIT: N },
    flushLedger: () => {},
    flushObservations: () => {},
    store: { send: () => Promise.resolve({ ok: true }) },
    reads: localReader(dbs),
    ipDatasets: { get: () => dataset },
  } as unknown as AppDeps;
  const principal = { orgId: ORG } as KeyPrincipal;
  const traffic = trafficGet(deps);
  const replay = botPolicyReplayPost(deps);
  const base = { snap: null as never, body: undefined, params: { projectId: PROJECT }, query: {}, principal, nowMs: NOW, requestId: "req_bench", startedAt: 0 };

  // Each task reads the whole set once; it checks what it read, so nothing is skipped unseen.
  const expectScanned = (n: number, what: string) => {
    if (n !== N) throw new Error(`${what} read ${n} observations, not ${N}`);
  };
  const tasks: Array<[string, () => Promise<void>]> = [
    [
      "baseline: the pages read and each line JSON.parse'd",
      async () => {
        let n = 0;
        for await (const { value } of deps.reads.range("observations", { start: [PROJECT, Number.MAX_SAFE_INTEGER], end: [PROJECT], reverse: true })) {
          for (const line of pageLinesNewestFirst(value as string)) if ((JSON.parse(line) as ObservationRecord).ts > 0) n++;
        }
        expectScanned(n, "baseline");
      },
    ],
    [
      "traffic report (GET traffic, its handler)",
      async () => {
        const r = (await traffic.handle({ ...base, query: {} } as never)) as { data: { scanned: number } };
        expectScanned(r.data.scanned, "traffic");
      },
    ],
    [
      "bot-policy replay (POST replay, its handler)",
      async () => {
        const body = { policy: { kinds: { ai_crawler: "block", search_crawler: "score" } }, days: 7, examples: 5 };
        const r = (await replay.handle({ ...base, body } as never)) as { data: { hits: { scanned: number } } };
        expectScanned(r.data.hits.scanned, "replay");
      },
    ],
  ];
  const bench = new Bench({ time: TIME_MS, warmupTime: WARMUP_MS });
  for (const [name, fn] of tasks) bench.add(name, fn);
  await bench.run();
  // CPU time of the process (all its threads) per observation, over CPU_ROUNDS more passes of each task.
  const cpuUs = new Map<string, number>();
  for (const [name, fn] of tasks) {
    const before = process.cpuUsage();
    for (let i = 0; i < CPU_ROUNDS; i++) await fn();
    const used = process.cpuUsage(before);
    cpuUs.set(name, (used.user + used.system) / (CPU_ROUNDS * N));
  }

  console.log(machineLine());
  console.log(
    `${N.toLocaleString("en-US")} stored observations of one project in pages of ${PAGE_LINES}; tinybench ${TIME_MS} ms per task after ${WARMUP_MS} ms warm-up (wall time), then ${CPU_ROUNDS} passes of each for CPU time\n`,
  );
  const floor = bench.tasks[0]!.result;
  const floorCpu = cpuUs.get(tasks[0]![0])!;
  const perObs = (ms: number) => (ms * 1000) / N;
  console.table(
    bench.tasks.map((t) => {
      const r = t.result;
      if (r.state !== "completed" || floor.state !== "completed") return { task: t.name, state: r.state };
      const cpu = cpuUs.get(t.name)!;
      return {
        task: t.name,
        "CPU µs per observation": +cpu.toFixed(2),
        "CPU ratio to baseline": +(cpu / floorCpu).toFixed(2),
        "wall µs per observation (p50)": +perObs(r.latency.p50).toFixed(2),
        "wall ratio to baseline (p50)": +(r.latency.p50 / floor.latency.p50).toFixed(2),
        "rme %": +r.latency.rme.toFixed(2),
        samples: r.latency.samplesCount,
      };
    }),
  );
} finally {
  dataset.close();
  dbs.root.close();
  dbs.metersRoot.close();
  rmSync(stateDir, { recursive: true, force: true });
}
