import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RawJson, renderData, type ResponseState } from "../../src/http/respond.js";
import { checkAnswerJson, type CheckAnswer } from "../../src/http/routes/check.post.js";

/**
 * POST /v1/check writes its answer by hand (checkAnswerJson; the meter's and the beacon's
 * hand-written answers were retired in issue 27, bench/README.md): the text must be exactly
 * JSON.stringify's, for every shape the answer takes and for any text callers supply (field names,
 * e-mail domains, details), and the envelope the router renders from it must be the one it
 * rendered from the object.
 */

const TEXT = [
  "",
  "message",
  'a "quoted" name',
  "back\\slash",
  "tab\there",
  "line\nbreak",
  "\u0000\u001f",
  "\u2028\u2029",
  "é漢字",
  "\ud83d\ude00",
  "\ud800",
  "\udc00x",
  "</script>",
];
const NUMBERS = [0, -0, 1, 0.0312, 0.595, -0.981, 1.2, 1e-7, 1e21, 123456.789, Number.NaN, Infinity, -Infinity];

/** Callers' text: the awkward cases above, or any string at all (lone surrogates included). */
const text = fc.oneof(fc.constantFrom(...TEXT), fc.string({ unit: "binary" }));
/** A number as the scoring writes them (four decimals), or one that JSON writes oddly. */
const score = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 10_000 }).map((n) => n / 10_000) },
  { weight: 1, arbitrary: fc.constantFrom(...NUMBERS) },
);
const ruleMatch = fc.record(
  {
    rule: fc.constantFrom("content_model", "ip_datacenter", "ua_client", "email_no_mx"),
    signal: fc.constantFrom("content", "ip", "user_agent", "email"),
    contribution: score,
    detail: text,
  },
  { requiredKeys: ["rule", "signal", "contribution"] },
);

const checkAnswer: fc.Arbitrary<CheckAnswer> = fc.record({
  score,
  confidence: score,
  decision: fc.constantFrom("allow", "review", "block"),
  categories: fc.record({ spam: score, fraud: score, cold_email: score }),
  signals: fc.record({
    ip: fc.option(fc.record({ risk: score, country_code: fc.constantFrom("US", "DE", null), is_vpn: fc.boolean(), is_datacenter: fc.boolean() })),
    email: fc.option(fc.record({ risk: score, disposable: fc.boolean(), domain: text })),
    content: fc.option(
      fc.record({
        risk: score,
        spam_probability: score,
        language: fc.constantFrom("en", null),
        flags: fc.subarray(["links", "money"]),
        fields: fc.array(text, { maxLength: 4 }),
      }),
    ),
  }),
  rule_matches: fc.array(ruleMatch, { maxLength: 4 }),
  fusion: fc.record({
    method: fc.constant("log-odds sum: calibrated content probability + per-signal likelihood ratios (naive Bayes)"),
    model_version: fc.constantFrom("content:content-2.0748b140a864+fusion:1", "content:other+fusion:1"),
  }),
}) as fc.Arbitrary<CheckAnswer>;

describe("the check's answer written by hand", () => {
  it("checkAnswerJson writes exactly what JSON.stringify writes", () => {
    fc.assert(
      fc.property(checkAnswer, (a) => {
        expect(checkAnswerJson(a)).toBe(JSON.stringify(a));
      }),
      { numRuns: 5000 },
    );
  });

  it("give the envelope the router rendered from the answer object, credits included", () => {
    const state: ResponseState = { aborted: false, requestId: "req_1", startedAt: performance.now() };
    const time = /"processing_time_ms":[0-9.e-]+/;
    fc.assert(
      fc.property(checkAnswer, (a) => {
        const before = renderData(state, a, { credits: 2 }).replace(time, '"processing_time_ms":0');
        const after = renderData(state, new RawJson(checkAnswerJson(a)), undefined, '"credits":2').replace(time, '"processing_time_ms":0');
        expect(after).toBe(before);
      }),
      { numRuns: 200 },
    );
  });
});
