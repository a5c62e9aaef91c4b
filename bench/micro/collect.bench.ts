/**
 * What parts of POST /v1/collect cost on the front thread (issue 19), each against the code it
 * replaced, in the same process:
 *
 * - the answer's envelope as the router renders it (respond.ts renderData): the hit's answer
 *   written by hitAnswerJson (RawJson, the credits appended as text) against the object with
 *   `{credits: 0}` metadata, which went through JSON.stringify;
 * - what a hit takes from its classified UA (beacon/hits.ts uaViewOf, storedUa: made once per
 *   UaInfo) against building the scoring's parts and bot and cleaning the stored parts per hit;
 * - scoreHit for the bench's hit (no tells) and for one with three tells (after only: the version
 *   before built a set and two copies of it per hit; bench/README.md has the comparison);
 * - the observation's journal line (observation-journal.ts OBSERVATION_CODEC.encode): the record
 *   built with its `seq` and handed over (AppendJournal.appendOwned) against the fields copied
 *   into a new record after `seq` (appendRecord);
 * - a beacon POST's whole request snapshot (request.ts snapshot: one walk over the headers for
 *   the body's Content-Length lines, the Idempotency-Key check and, for a Chromium UA, the header
 *   order) on a live uWS request, with the bench scenario's headers (a Chrome UA), with the 16
 *   headers of Chrome's beacon fetch and with Firefox's, against a bare walk that only lists the
 *   header names. uWS requests are valid only inside their handler, so this part is timed there
 *   with a plain loop (one local request each, no load).
 *
 *   node dist/bench/micro/collect.bench.js
 */
import { connect } from "node:net";
import { Bench } from "tinybench";
import { App, us_socket_local_port, type HttpRequest } from "uWebSockets.js";
import type { UaInfo } from "../../src/datasets/ua.js";
import { hitAnswerJson, storedUa, uaViewOf } from "../../src/front/beacon/hits.js";
import { snapshot } from "../../src/http/request.js";
import { renderData, type ResponseState } from "../../src/http/respond.js";
import { resolvePolicy } from "../../src/scoring/bot-policy.js";
import { scoreHit, type HitInput } from "../../src/scoring/observation.js";
import { cleanLine } from "../../src/shared/text.js";
import { OBSERVATION_CODEC } from "../../src/store/observation-journal.js";
import type { ObservationRecord } from "../../src/store/records.js";
import { machineLine, microRow } from "../lib/context.js";

const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const SESSION = "s_4mQx9TbV2kLr8ZpW3nYc0A";

const CHROME_INFO: UaInfo = Object.freeze({ browser: "Chrome 131", os: "Windows 10", device: "desktop", bot: null, automation: false, client: null });
const BOT_INFO: UaInfo = Object.freeze({
  browser: null,
  os: null,
  device: null,
  bot: { bot_id: "googlebot", bot_name: "Googlebot", bot_operator: "Google", bot_kind: "search_crawler" as const, verification: { range_ids: ["googlebot"], rdns_masks: ["*.googlebot.com"] } },
  automation: false,
  client: null,
});

function botBefore(ua: UaInfo): HitInput["bot"] {
  const b = ua.bot;
  if (!b) return null;
  return { bot_id: b.bot_id, bot_name: b.bot_name, bot_operator: b.bot_operator, bot_kind: b.bot_kind, range_ids: b.verification.range_ids, rdns_masks: b.verification.rdns_masks };
}

function cleanUaBefore<T extends { browser: string | null; os: string | null; device: string | null; bot_name: string | null }>(ua: T): T {
  const clean = (v: string | null) => (v === null ? null : cleanLine(v));
  return { ...ua, browser: clean(ua.browser), os: clean(ua.os), device: clean(ua.device), bot_name: clean(ua.bot_name) };
}

// eslint-disable-next-line @typescript-eslint/no-unused-vars -- written, never read: the engine cannot drop the work measured
let sink: unknown;
let seq = 0;
const state = (): ResponseState => ({ aborted: false, requestId: "req_Xk3Lm9Qa2b1f_1a", startedAt: performance.now(), route: "POST /v1/collect" });

const bench = new Bench({ time: 1000, warmupTime: 250 });
bench
  .add("answer envelope, hitAnswerJson (after)", () => {
    sink = renderData(state(), hitAnswerJson(`obs_Xk3Lm9Qa2b${(seq++).toString(36)}`, SESSION), undefined, `"credits":0`);
  })
  .add("answer envelope, object + JSON.stringify (before)", () => {
    sink = renderData(state(), { observation_id: `obs_Xk3Lm9Qa2b${(seq++).toString(36)}`, session_id: SESSION }, { credits: 0 });
  });
for (const [name, info] of [["browser", CHROME_INFO], ["bot", BOT_INFO]] as const) {
  const scored = { browser: info.browser, os: info.os, device: info.device, bot_kind: info.bot ? info.bot.bot_kind : null, bot_name: info.bot ? info.bot.bot_name : null };
  bench
    .add(`UA parts, ${name}, uaViewOf + storedUa (after)`, () => {
      const v = uaViewOf(info);
      sink = v.parts;
      sink = v.bot;
      sink = storedUa(v, scored);
    })
    .add(`UA parts, ${name}, per hit (before)`, () => {
      sink = { browser: info.browser, os: info.os, device: info.device };
      sink = botBefore(info);
      sink = cleanUaBefore(scored);
    });
}

const HIT_INPUT: HitInput = {
  ua: { browser: "Chrome 131", os: "Windows 10", device: "desktop" },
  automationUa: false,
  bot: null,
  clientUa: null,
  ip: null,
  tokenValid: true,
  tells: [],
  clientUaMismatch: false,
  rdnsVerified: null,
};
const POLICY = resolvePolicy(null);
bench
  .add("scoreHit, the bench's hit (no tells)", () => {
    sink = scoreHit(HIT_INPUT, POLICY);
  })
  .add("scoreHit, three tells", () => {
    sink = scoreHit({ ...HIT_INPUT, tells: ["cdp", "no_plugins", "header_order"] }, POLICY);
  });

/** The bench scenario's observation: a Chrome page view with a valid token, from loopback. */
function observation(n: number): ObservationRecord {
  return {
    seq: 0,
    id: `obs_Xk3Lm9Qa2b${n.toString(36)}`,
    org_id: "org_3fK9xQ2mT7aW4bZk",
    project_id: "prj_8Hq2LmT7aZ3kXw9B",
    session_id: SESSION,
    kind: "page.view",
    action: "pageview",
    ts: 1_763_677_200_000 + n,
    score: 0.0474,
    decision: "allow",
    reasons: [],
    ua: { browser: "Chrome 131", os: "Windows 10", device: "desktop", bot_kind: null, bot_name: null },
    bot_id: null,
    bot_operator: null,
    bot_verified: null,
    policy: null,
    ip: "127.0.0.1",
    country: null,
    page: `/products/${n % 64}`,
    fingerprint: (0x1000000 + (n % 64) * 7919).toString(16).padStart(14, "0"),
    token_valid: true,
    tells: [],
  };
}
/** The same observation without `seq`, as the route built it for appendRecord. */
function observationFields(n: number): Omit<ObservationRecord, "seq"> {
  return {
    id: `obs_Xk3Lm9Qa2b${n.toString(36)}`,
    org_id: "org_3fK9xQ2mT7aW4bZk",
    project_id: "prj_8Hq2LmT7aZ3kXw9B",
    session_id: SESSION,
    kind: "page.view",
    action: "pageview",
    ts: 1_763_677_200_000 + n,
    score: 0.0474,
    decision: "allow",
    reasons: [],
    ua: { browser: "Chrome 131", os: "Windows 10", device: "desktop", bot_kind: null, bot_name: null },
    bot_id: null,
    bot_operator: null,
    bot_verified: null,
    policy: null,
    ip: "127.0.0.1",
    country: null,
    page: `/products/${n % 64}`,
    fingerprint: (0x1000000 + (n % 64) * 7919).toString(16).padStart(14, "0"),
    token_valid: true,
    tells: [],
  };
}

bench
  .add("journal line, record handed over (after)", () => {
    const rec = observation(seq);
    rec.seq = seq++;
    sink = `${OBSERVATION_CODEC.encode(rec)}\n`;
  })
  .add("journal line, fields copied after seq (before)", () => {
    const fields = observationFields(seq);
    const rec = { seq: seq++, ...fields };
    sink = `${OBSERVATION_CODEC.encode(rec)}\n`;
  });

console.log(machineLine());
await bench.run();
console.table(bench.tasks.map(microRow));

function beaconSnapshot(req: HttpRequest, _userAgent: string) {
  return snapshot(req, 0, true, false, true);
}

function namesOnly(req: HttpRequest, _userAgent: string) {
  const order: string[] = [];
  req.forEach((name) => {
    order.push(name);
  });
  return { secChUa: req.getHeader("sec-ch-ua"), secChUaPlatform: req.getHeader("sec-ch-ua-platform"), secChUaMobile: req.getHeader("sec-ch-ua-mobile"), order };
}

const ROUNDS = 5;
const CALLS = 100_000;
const timings: Array<Record<string, string | number>> = [];
const app = App();
app.post("/*", (res, req) => {
  const which = req.getHeader("x-case");
  const ua = req.getHeader("user-agent");
  for (const [task, fn] of [["snapshot", beaconSnapshot], ["names walk only", namesOnly]] as const) {
    const ns: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < CALLS; i++) sink = fn(req, ua);
      ns.push(Number(process.hrtime.bigint() - t0) / CALLS);
    }
    ns.sort((a, b) => a - b);
    timings.push({ task: `beacon request, ${which}, ${task}`, "median of 5 (ns)": +ns[2]!.toFixed(1), "min (ns)": +ns[0]!.toFixed(1) });
  }
  res.onAborted(() => {});
  res.onData((_chunk, last) => {
    if (last) res.cork(() => res.end("ok"));
  });
});

const port: number = await new Promise((resolve, reject) => {
  app.listen("127.0.0.1", 0, (sock) => (sock ? resolve(us_socket_local_port(sock)) : reject(new Error("listen failed"))));
});

/** One request with these headers (after host), on its own connection. */
function send(headers: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1", () => s.write(`POST /v1/collect HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${headers.join("\r\n")}\r\ncontent-length: 2\r\n\r\n{}`));
    s.on("data", () => {
      s.destroy();
      resolve();
    });
    s.on("error", reject);
  });
}

// The bench scenario's request (autocannon, wrk): its three headers and the body's length.
await send(["x-case: bench scenario", "authorization: Bearer pk_live_8Hq2LmT7aZ3kXw9B0000000000", "content-type: application/json", `user-agent: ${CHROME}`]);
// What Chrome 131 sends with the beacon's fetch (cross-origin).
await send([
  "x-case: chrome fetch",
  "connection: keep-alive",
  'sec-ch-ua-platform: "Windows"',
  "authorization: Bearer pk_live_8Hq2LmT7aZ3kXw9B0000000000",
  'sec-ch-ua: "Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"',
  "sec-ch-ua-mobile: ?0",
  `user-agent: ${CHROME}`,
  "content-type: application/json",
  "accept: */*",
  "origin: https://shop.example.com",
  "sec-fetch-site: cross-site",
  "sec-fetch-mode: cors",
  "sec-fetch-dest: empty",
  "referer: https://shop.example.com/",
  "accept-encoding: gzip, deflate, br, zstd",
  "accept-language: en-US,en;q=0.9",
]);
// What Firefox 133 sends with the same fetch.
await send([
  "x-case: firefox fetch",
  "user-agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
  "accept: */*",
  "accept-language: en-US,en;q=0.5",
  "accept-encoding: gzip, deflate, br, zstd",
  "referer: https://shop.example.com/",
  "authorization: Bearer pk_live_8Hq2LmT7aZ3kXw9B0000000000",
  "content-type: application/json",
  "origin: https://shop.example.com",
  "connection: keep-alive",
  "sec-fetch-dest: empty",
  "sec-fetch-mode: cors",
  "sec-fetch-site: cross-site",
  "priority: u=4",
]);
console.table(timings);
process.exit(0);
