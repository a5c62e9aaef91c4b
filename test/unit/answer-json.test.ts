import { describe, expect, it } from "vitest";
import { RawJson, renderData, type ResponseState } from "../../src/http/respond.js";
import { checkAnswerJson, type CheckAnswer } from "../../src/http/routes/check.post.js";
import { meterAnswerJson, type MeterAnswer } from "../../src/http/routes/meter.post.js";

/**
 * POST /v1/check and POST /v1/meter write their answers by hand (checkAnswerJson,
 * meterAnswerJson): the text must be exactly JSON.stringify's, for every shape the answer takes
 * and for any text callers supply (field names, e-mail domains, details, the meter's window), and
 * the envelope the router renders from it must be the one it rendered from the object.
 */

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

const TEXT = ["", "message", 'a "quoted" name', "back\\slash", "tab\there", "line\nbreak", "\u0000\u001f", "\u2028\u2029", "é漢字", "\ud83d\ude00", "\ud800", "\udc00x", "</script>"];
const NUMBERS = [0, -0, 1, 0.0312, 0.595, -0.981, 1.2, 1e-7, 1e21, 123456.789, Number.NaN, Infinity, -Infinity];

function randomAnswer(r: () => number): CheckAnswer {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const n = (): number => (r() < 0.2 ? pick(NUMBERS) : Math.round(r() * 10_000) / 10_000);
  const on = (p = 0.5): boolean => r() < p;
  const matches = Array.from({ length: Math.floor(r() * 5) }, () => {
    const m = { rule: pick(["content_model", "ip_datacenter", "ua_client", "email_no_mx"]), signal: pick(["content", "ip", "user_agent", "email"] as const), contribution: n() };
    return on() ? { ...m, detail: pick(TEXT) } : m;
  });
  return {
    score: n(),
    confidence: n(),
    decision: pick(["allow", "review", "block"] as const),
    categories: { spam: n(), fraud: n(), cold_email: n() },
    signals: {
      ip: on(0.7) ? { risk: n(), country_code: pick(["US", "DE", null]), is_vpn: on(), is_datacenter: on() } : null,
      email: on(0.7) ? { risk: n(), disposable: on(), domain: pick(TEXT) } : null,
      content: on(0.7)
        ? { risk: n(), spam_probability: n(), language: pick(["en", null]), flags: ["links", "money"].filter(() => on()), fields: TEXT.filter(() => on(0.2)) }
        : null,
    },
    rule_matches: matches,
    fusion: { method: "log-odds sum: calibrated content probability + per-signal likelihood ratios (naive Bayes)", model_version: pick(["content:content-2.525ef7fdfba1+fusion:1", "content:other+fusion:1"]) },
  } as CheckAnswer;
}

function randomMeterAnswer(r: () => number): MeterAnswer {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const n = (): number => (r() < 0.2 ? pick(NUMBERS) : Math.floor(r() * 10_000));
  return {
    action: pick(["allow", "throttle", "block"] as const),
    verdict: pick(["ok", "over_limit", "multi_account", "multi_account_over_limit"] as const),
    confidence: pick([1, 0.7, 0.95, 0.6 + 0.1 * 3, n()]),
    usage: { count: n(), limit: n(), window: pick(["1s", "15m", "31d", ...TEXT]), remaining: n(), retry_after_seconds: r() < 0.5 ? null : n() },
    linked_identities: n(),
    budget: pick(["account", "session", "ip"] as const),
  };
}

describe("answers written by hand", () => {
  it("checkAnswerJson writes exactly what JSON.stringify writes", () => {
    const r = rng(19);
    for (let i = 0; i < 5000; i++) {
      const a = randomAnswer(r);
      expect(checkAnswerJson(a)).toBe(JSON.stringify(a));
    }
  });

  it("meterAnswerJson writes exactly what JSON.stringify writes", () => {
    const r = rng(6);
    for (let i = 0; i < 5000; i++) {
      const a = randomMeterAnswer(r);
      expect(meterAnswerJson(a)).toBe(JSON.stringify(a));
    }
  });

  it("give the envelope the router rendered from the answer object, credits included", () => {
    const state: ResponseState = { aborted: false, requestId: "req_1", startedAt: performance.now() };
    const time = /"processing_time_ms":[0-9.e-]+/;
    const r = rng(7);
    for (let i = 0; i < 200; i++) {
      const a = randomAnswer(r);
      const before = renderData(state, a, { credits: 2 }).replace(time, '"processing_time_ms":0');
      const after = renderData(state, new RawJson(checkAnswerJson(a)), undefined, '"credits":2').replace(time, '"processing_time_ms":0');
      expect(after).toBe(before);
      const m = randomMeterAnswer(r);
      const meterBefore = renderData(state, m, { credits: 2 }).replace(time, '"processing_time_ms":0');
      expect(renderData(state, new RawJson(meterAnswerJson(m)), undefined, '"credits":2').replace(time, '"processing_time_ms":0')).toBe(meterBefore);
    }
  });
});
