import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BotKind } from "../../src/datasets/bot-registry.js";
import type { UaInfo } from "../../src/datasets/ua.js";
import { CLIENT_TELLS } from "../../src/datasets/ua-shape.js";
import { headerOrder, headerTells, readsHeaderOrder, type ClientHeaders } from "../../src/front/beacon/header-tells.js";
import { hitAnswerJson, storedUa, uaViewOf } from "../../src/front/beacon/hits.js";
import { renderData, type ResponseState } from "../../src/http/respond.js";
import { applyPolicy, resolvePolicy, type BotPolicy, type PolicyKind } from "../../src/scoring/bot-policy.js";
import { CONSISTENCY_TELLS, SCORE_WEIGHTS, STRONG_TELLS, WEAK_TELLS, decide, scoreHit, verifyBot, type HitInput, type ScoredHit } from "../../src/scoring/observation.js";
import { cleanLine } from "../../src/shared/text.js";
import { observationSeqs } from "../../src/store/pg/cluster.js";
import { ObservationJournal } from "../../src/store/observation-journal.js";
import type { ObservationRecord } from "../../src/store/records.js";

/**
 * POST /v1/collect's cheaper steps against the code they replaced, on many varied inputs: the
 * answer written by hand (hitAnswerJson), the UA parts made once per classified UA (uaViewOf,
 * storedUa), scoreHit without sets for hits that sent no tells, the header order listed only for Chromium UAs (request.ts clientHeaders), and the
 * record handed to the journal as built (AppendJournal.appendOwned). Answers, observations and
 * journal lines must be exactly what they were.
 */

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

const TEXT = ["", "Chrome 131", 'a "quoted" name', "back\\slash", "tab\there", "line\nbreak", "\u0000\u001f\u007f", "\u2028\u2029", "\u202e bidi", "é漢字", "\ud83d\ude00", "\ud800", "\udc00x", "</script>", "Googlebot"];
const KINDS: BotKind[] = ["search_crawler", "ai_crawler", "ai_search", "ai_assistant", "monitor", "preview", "seo", "feed", "archive", "scraper"];

/** The code before: the scoring's bot and the stored UA parts, made per hit. */
function botBefore(ua: UaInfo): HitInput["bot"] {
  const b = ua.bot;
  if (!b) return null;
  return { bot_id: b.bot_id, bot_name: b.bot_name, bot_operator: b.bot_operator, bot_kind: b.bot_kind, range_ids: b.verification.range_ids, rdns_masks: b.verification.rdns_masks };
}
function cleanUaBefore<T extends { browser: string | null; os: string | null; device: string | null; bot_name: string | null }>(ua: T): T {
  const clean = (v: string | null) => (v === null ? null : cleanLine(v));
  return { ...ua, browser: clean(ua.browser), os: clean(ua.os), device: clean(ua.device), bot_name: clean(ua.bot_name) };
}
/** scoreHit before: a set and two copies of it per hit, tells or none. */
const AI_KINDS: ReadonlySet<BotKind> = new Set<BotKind>(["ai_crawler", "ai_search", "ai_assistant"]);
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
function scoreHitBefore(input: HitInput, policy: Readonly<BotPolicy>): ScoredHit {
  const { bot } = input;
  const tells = new Set(input.tells);
  const automation = input.automationUa || [...tells].some((t) => STRONG_TELLS.has(t));
  const verified = bot === null ? null : verifyBot(bot, input.ip, input.rdnsVerified);

  const reasons: string[] = [];
  let logit = SCORE_WEIGHTS.base;
  const fire = (reason: string, weight: number): void => {
    reasons.push(reason);
    logit += weight;
  };

  // A client tell only when nothing names the client (ua.ts sets it so; a strong tell still wins).
  const client = automation || bot !== null ? null : input.clientUa;
  if (automation) fire("automation_detected", SCORE_WEIGHTS.automation_detected);
  if (bot !== null || input.automationUa) fire("ua_bot", SCORE_WEIGHTS.ua_bot);
  if (client !== null) fire(`ua_client:${client}`, SCORE_WEIGHTS.ua_client);
  if (bot !== null) {
    // One AI reason for three registry kinds; ua.bot_kind keeps the finer kind.
    if (AI_KINDS.has(bot.bot_kind)) reasons.push("bot:ai_crawler");
    else if (bot.bot_kind === "search_crawler") reasons.push("bot:search_crawler");
    reasons.push(`bot:id:${bot.bot_id}`);
    if (verified === true) fire("bot:verified", SCORE_WEIGHTS.bot_verified);
    if (verified === false) fire(`bot:spoofed:${bot.bot_id}`, SCORE_WEIGHTS.bot_spoofed);
  }
  if (!input.tokenValid) fire("client_token_missing", SCORE_WEIGHTS.client_token_missing);
  const ip = input.ip;
  if (ip !== null) {
    if (ip.type.datacenter || ip.type.hosting || ip.type.cloud) fire("ip_datacenter", SCORE_WEIGHTS.ip_datacenter);
    if (ip.risk.vpn) fire("ip_vpn", SCORE_WEIGHTS.ip_vpn);
    if (ip.risk.proxy || ip.risk.tor || ip.risk.residential_proxy) fire("ip_proxy", SCORE_WEIGHTS.ip_proxy);
    if (ip.risk.scanner) fire("ip_scanner", SCORE_WEIGHTS.ip_scanner);
  }
  for (const t of tells) {
    const weight = CONSISTENCY_TELLS.get(t); // a Map: tell names come from the client
    if (weight !== undefined) fire(`tell:${t}`, weight);
  }
  const weak = [...tells].filter((t) => WEAK_TELLS.has(t)).length;
  logit += Math.min(weak, SCORE_WEIGHTS.weak_tell_max) * SCORE_WEIGHTS.weak_tell;
  if (input.clientUaMismatch) logit += SCORE_WEIGHTS.client_ua_mismatch;

  const score = Math.round(sigmoid(logit) * 10_000) / 10_000;
  const bot_kind: PolicyKind | null = automation ? "automation" : (bot?.bot_kind ?? (client !== null ? "client" : null));
  const bot_id = bot?.bot_id ?? null;
  let decision = decide(score);
  const outcome = applyPolicy(policy, { bot_id, bot_kind, bot_verified: verified });
  if (outcome !== null && outcome.action !== decision) {
    decision = outcome.action;
    reasons.push(`policy:${outcome.action}:${outcome.rule}`);
  }

  return {
    score,
    decision,
    reasons,
    ua: {
      browser: input.ua.browser,
      os: input.ua.os,
      device: input.ua.device,
      bot_kind,
      bot_name: automation ? null : (bot?.bot_name ?? null),
    },
    bot_id,
    bot_operator: bot?.bot_operator ?? null,
    bot_verified: verified,
    policy: outcome,
  };
}

function headerOrderBefore(h: ClientHeaders): boolean {
  if (!/(?:Chrome|Chromium)\//.test(h.userAgent) || /Firefox\//.test(h.userAgent)) return false;
  const language = h.order.indexOf("accept-language");
  const encoding = h.order.indexOf("accept-encoding");
  return language >= 0 && encoding >= 0 && language < encoding;
}

describe("hitAnswerJson", () => {
  const state: ResponseState = { aborted: false, requestId: "req_abc_1", startedAt: performance.now() };
  it("writes JSON.stringify's text, and the router's envelope, for any ids", () => {
    const r = rng(19);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const ids = [...TEXT, "obs_Xk3Lm9Qa2b1f", "s_4mQx9TbV2kLr8ZpW3nYc0A", "obs_", "s_"];
    for (let i = 0; i < 3000; i++) {
      const obs = r() < 0.5 ? `obs_${Math.floor(r() * 1e12).toString(36)}` : pick(ids) + pick(ids);
      const session = r() < 0.5 ? "s_4mQx9TbV2kLr8ZpW3nYc0A" : pick(ids) + pick(ids);
      const raw = hitAnswerJson(obs, session);
      expect(raw.json).toBe(JSON.stringify({ observation_id: obs, session_id: session }));
      const t = performance.now();
      const s = { ...state, startedAt: t };
      const after = renderData(s, raw, undefined, `"credits":0`).replace(/"processing_time_ms":[^,}]+/, "");
      const before = renderData(s, { observation_id: obs, session_id: session }, { credits: 0 }).replace(/"processing_time_ms":[^,}]+/, "");
      expect(after).toBe(before);
    }
  });
});

describe("uaViewOf and storedUa", () => {
  it("give the scoring the same input and store the same ua as before, for varied UAs", () => {
    const r = rng(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const opt = (): string | null => (r() < 0.25 ? null : pick(TEXT) + (r() < 0.3 ? pick(TEXT) : ""));
    for (let i = 0; i < 3000; i++) {
      const info: UaInfo = Object.freeze({
        browser: opt(),
        os: opt(),
        device: r() < 0.3 ? null : pick(["desktop", "mobile", "tablet"] as const),
        bot:
          r() < 0.5
            ? null
            : {
                bot_id: pick(["googlebot", "gptbot", "curl", 'x"y']),
                bot_name: pick(TEXT),
                bot_operator: r() < 0.3 ? null : pick(TEXT),
                bot_kind: pick(KINDS),
                verification: { range_ids: r() < 0.5 ? [] : ["googlebot"], rdns_masks: r() < 0.5 ? [] : ["*.googlebot.com"] },
              },
        automation: r() < 0.2,
        client: r() < 0.2 ? pick(CLIENT_TELLS) : null,
      });
      const common = { automationUa: info.automation, clientUa: info.client, ip: null, tokenValid: r() < 0.7, tells: r() < 0.2 ? ["webdriver"] : [], clientUaMismatch: false, rdnsVerified: r() < 0.5 ? null : r() < 0.5 };
      const policy = resolvePolicy(null);
      const before = scoreHit({ ...common, ua: { browser: info.browser, os: info.os, device: info.device }, bot: botBefore(info) }, policy);
      const view = uaViewOf(info);
      expect(uaViewOf(info)).toBe(view);
      const after = scoreHit({ ...common, ua: view.parts, bot: view.bot }, policy);
      expect(after).toEqual(before);
      expect(JSON.stringify(storedUa(view, after.ua))).toBe(JSON.stringify(cleanUaBefore(before.ua)));
    }
  });
});

describe("scoreHit", () => {
  it("scores as before for varied tells, bots, addresses and policies", () => {
    const r = rng(23);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const tellNames = [...STRONG_TELLS, ...WEAK_TELLS, ...CONSISTENCY_TELLS.keys(), "unknown", "", "__proto__", "tell:x", ...TEXT];
    const policies = [
      resolvePolicy(null),
      resolvePolicy({ bots: { googlebot: "allow" }, kinds: { automation: "block", client: "allow" }, spoofed: "block", allow_unverified: true }),
      resolvePolicy({ kinds: { search_crawler: "allow", ai_crawler: "block" }, spoofed: "score" }),
    ];
    for (let i = 0; i < 20_000; i++) {
      const on = (p = 0.5): boolean => r() < p;
      const input: HitInput = {
        ua: { browser: on(0.8) ? "Chrome 131" : null, os: on(0.8) ? pick(TEXT) : null, device: on(0.8) ? "desktop" : null },
        automationUa: on(0.15),
        bot: on(0.3)
          ? { bot_id: pick(["googlebot", "gptbot", "curl"]), bot_name: pick(TEXT), bot_operator: on() ? "Google" : null, bot_kind: pick(KINDS), range_ids: on() ? ["googlebot"] : [], rdns_masks: on() ? ["*.googlebot.com"] : [] }
          : null,
        clientUa: on(0.2) ? pick(CLIENT_TELLS) : null,
        ip: on(0.6)
          ? ({
              type: { datacenter: on(0.2), hosting: on(0.1), cloud: on(0.1) },
              risk: { vpn: on(0.2), proxy: on(0.1), tor: on(0.05), residential_proxy: on(0.05), scanner: on(0.05) },
              crawler: on(0.2) ? { id: pick(["googlebot", "bingbot"]) } : null,
            } as unknown as HitInput["ip"])
          : null,
        tokenValid: on(0.7),
        tells: on(0.5) ? [] : Array.from({ length: 1 + Math.floor(r() * 6) }, () => pick(tellNames)),
        clientUaMismatch: on(0.1),
        rdnsVerified: on(0.6) ? null : on(),
      };
      const policy = pick(policies);
      expect(scoreHit(input, policy)).toEqual(scoreHitBefore(input, policy));
    }
  });
});

describe("header order listed for Chromium UAs only", () => {
  it("leaves the header tells as they were with the full order", () => {
    const r = rng(11);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const uas = [
      "",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
      "Chromium/99 Firefox/1",
      "curl/8.4.0",
      "chrome/131",
      "Chrome/\u0000",
    ];
    const names = ["host", "accept-language", "accept-encoding", "user-agent", "sec-ch-ua", "authorization", "accept-language", "content-type"];
    for (let i = 0; i < 5000; i++) {
      const order = Array.from({ length: Math.floor(r() * 8) }, () => pick(names));
      const full: ClientHeaders = { userAgent: pick(uas), secChUa: r() < 0.5 ? "" : '"Chromium";v="131"', secChUaPlatform: r() < 0.5 ? "" : '"Windows"', secChUaMobile: pick(["", "?0", "?1"]), order };
      const listed: ClientHeaders = { ...full, order: readsHeaderOrder(full.userAgent) ? order : [] };
      expect(headerOrder(full)).toBe(headerOrderBefore(full));
      expect(headerTells(listed)).toEqual(headerTells(full));
    }
  });
});

describe("AppendJournal.appendOwned", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const journal = (seqAfter: boolean) => {
    const d = mkdtempSync(join(tmpdir(), "fs-obs-journal-"));
    dirs.push(d);
    const out: { records: ObservationRecord[]; lines: string[] } = { records: [], lines: [] };
    const j = new ObservationJournal(d, 41, (records, lines) => {
      out.records.push(...records);
      out.lines.push(...lines);
    });
    if (seqAfter) j.seqAfter = observationSeqs(3, () => 1_763_677_200_000); // a fixed clock: both journals number alike
    return { j, out };
  };

  it("writes the lines and numbers appendRecord wrote for the same fields", () => {
    const r = rng(3);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const opt = (): string | null => (r() < 0.3 ? null : pick(TEXT));
    for (const seqAfter of [false, true]) {
      const a = journal(seqAfter);
      const b = journal(seqAfter);
      for (let i = 0; i < 500; i++) {
        const fields: Omit<ObservationRecord, "seq"> = {
          id: `obs_${i}`,
          org_id: "org_1",
          project_id: pick(["prj_a", "prj_b"]),
          session_id: pick(TEXT),
          kind: pick(["page.view", "form.submit"] as const),
          action: pick(TEXT),
          ts: 1_763_677_200_000 + i,
          score: Math.round(r() * 10_000) / 10_000,
          decision: pick(["allow", "review", "block"] as const),
          reasons: r() < 0.5 ? [] : [pick(TEXT), "ua_bot"],
          ua: { browser: opt(), os: opt(), device: opt(), bot_kind: opt(), bot_name: opt() },
          bot_id: opt(),
          bot_operator: opt(),
          bot_verified: r() < 0.3 ? null : r() < 0.5,
          policy: r() < 0.7 ? null : { action: pick(["allow", "block"] as const), rule: pick(TEXT) },
          ip: opt(),
          country: opt(),
          page: opt(),
          fingerprint: opt(),
          token_valid: r() < 0.5,
          tells: r() < 0.5 ? [] : [pick(TEXT)],
        };
        const before = a.j.appendRecord(fields, () => {});
        const after = b.j.appendOwned({ seq: 0, ...fields }, () => {});
        expect(after.seq).toBe(before.seq);
      }
      a.j.close();
      b.j.close();
      expect(b.out.lines).toEqual(a.out.lines);
      expect(b.out.lines.length).toBe(500);
      expect(b.out.records).toEqual(a.out.records);
    }
  });

  it("refuses after close", () => {
    const { j } = journal(false);
    j.close();
    expect(() => j.appendOwned({ seq: 0 } as ObservationRecord, () => {})).toThrow(/closed/);
  });
});
