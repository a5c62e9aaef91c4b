import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { headerOrder, headerTells, readsHeaderOrder, type ClientHeaders } from "../../src/front/beacon/header-tells.js";
import { hitAnswerJson, storedUa, uaViewOf } from "../../src/front/beacon/hits.js";
import { renderData, type ResponseState } from "../../src/http/respond.js";
import { resolvePolicy } from "../../src/scoring/bot-policy.js";
import { scoreHit } from "../../src/scoring/observation.js";
import { observationSeqs } from "../../src/store/pg/cluster.js";
import { ObservationJournal } from "../../src/store/observation-journal.js";
import type { ObservationRecord } from "../../src/store/records.js";
import { POLICIES, TEXT, readCases, type HeaderCase, type HitCase, type UaCase } from "../fixtures/collect-golden/cases.js";

/**
 * POST /v1/collect's cheaper steps: the answer written by hand (hitAnswerJson) against
 * JSON.stringify, the UA parts made once per classified UA (uaViewOf, storedUa), scoreHit and the
 * header order (listed only for Chromium UAs, request.ts clientHeaders) against golden answers
 * recorded from the code before them (test/fixtures/collect-golden/README.md), and the record
 * handed to the journal as built (AppendJournal.appendOwned) against appendRecord. Answers,
 * observations and journal lines must be exactly what they were.
 */

const text = fc.constantFrom(...TEXT);

describe("hitAnswerJson", () => {
  const state: ResponseState = { aborted: false, requestId: "req_abc_1", startedAt: performance.now() };
  it("writes JSON.stringify's text, and the router's envelope, for any ids", () => {
    const part = fc.oneof(text, fc.constantFrom("obs_Xk3Lm9Qa2b1f", "s_4mQx9TbV2kLr8ZpW3nYc0A", "obs_", "s_"), fc.string({ unit: "binary" }));
    const id = fc.oneof(
      fc.tuple(part, part).map(([x, y]) => x + y),
      fc.nat().map((n) => `obs_${n.toString(36)}`),
    );
    fc.assert(
      fc.property(id, fc.oneof(fc.constant("s_4mQx9TbV2kLr8ZpW3nYc0A"), id), (obs, session) => {
        const raw = hitAnswerJson(obs, session);
        expect(raw.json).toBe(JSON.stringify({ observation_id: obs, session_id: session }));
        const s = { ...state, startedAt: performance.now() };
        const after = renderData(s, raw, undefined, `"credits":0`).replace(/"processing_time_ms":[^,}]+/, "");
        const before = renderData(s, { observation_id: obs, session_id: session }, { credits: 0 }).replace(/"processing_time_ms":[^,}]+/, "");
        expect(after).toBe(before);
      }),
      { seed: 19, numRuns: 3000 },
    );
  });
});

describe("uaViewOf and storedUa", () => {
  it("give the scoring the input and store the ua recorded for varied UAs", () => {
    const policy = resolvePolicy(null);
    for (const c of readCases<UaCase>("ua-view.json")) {
      const info = Object.freeze(c.info);
      const view = uaViewOf(info);
      expect(uaViewOf(info)).toBe(view);
      const common = {
        automationUa: info.automation,
        clientUa: info.client,
        ip: null,
        tokenValid: c.tokenValid,
        tells: c.webdriver ? ["webdriver"] : [],
        clientUaMismatch: false,
        rdnsVerified: c.rdnsVerified,
      };
      const scored = scoreHit({ ...common, ua: view.parts, bot: view.bot }, policy);
      expect(scored).toEqual(c.scored);
      expect(JSON.stringify(storedUa(view, scored.ua))).toBe(JSON.stringify(c.stored));
    }
  });
});

describe("scoreHit", () => {
  it("scores as recorded for varied tells, bots, addresses and policies", () => {
    const policies = POLICIES.map(resolvePolicy);
    const cases = readCases<HitCase>("score-hit.json");
    expect(cases.length).toBe(250);
    for (const c of cases) expect(scoreHit(c.input, policies[c.policy]!)).toEqual(c.answer);
  });
});

describe("header order listed for Chromium UAs only", () => {
  it("answers as recorded, and the header tells are the same with the order listed or not", () => {
    for (const c of readCases<HeaderCase>("header-order.json")) {
      expect(headerOrder(c.headers)).toBe(c.header_order);
      const listed: ClientHeaders = { ...c.headers, order: readsHeaderOrder(c.headers.userAgent) ? c.headers.order : [] };
      expect(headerTells(listed)).toEqual(headerTells(c.headers));
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
    const opt = fc.option(text, { nil: null });
    const fields = fc.record({
      project_id: fc.constantFrom("prj_a", "prj_b"),
      session_id: text,
      kind: fc.constantFrom("page.view", "form.submit" as const),
      action: text,
      score: fc.integer({ min: 0, max: 10_000 }).map((n) => n / 10_000),
      decision: fc.constantFrom("allow", "review", "block" as const),
      reasons: fc.oneof(
        fc.constant([]),
        text.map((t) => [t, "ua_bot"]),
      ),
      ua: fc.record({ browser: opt, os: opt, device: opt, bot_kind: opt, bot_name: opt }),
      bot_id: opt,
      bot_operator: opt,
      bot_verified: fc.option(fc.boolean(), { nil: null }),
      policy: fc.option(fc.record({ action: fc.constantFrom("allow", "block" as const), rule: text }), { nil: null }),
      ip: opt,
      country: opt,
      page: opt,
      fingerprint: opt,
      token_valid: fc.boolean(),
      tells: fc.oneof(
        fc.constant([]),
        text.map((t) => [t]),
      ),
    });
    const rows = fc.sample(fields, { seed: 3, numRuns: 500 });
    for (const seqAfter of [false, true]) {
      const a = journal(seqAfter);
      const b = journal(seqAfter);
      rows.forEach((row, i) => {
        const f: Omit<ObservationRecord, "seq"> = { id: `obs_${i}`, org_id: "org_1", ts: 1_763_677_200_000 + i, ...row } as Omit<ObservationRecord, "seq">;
        const before = a.j.appendRecord(f, () => {});
        const after = b.j.appendOwned({ seq: 0, ...f }, () => {});
        expect(after.seq).toBe(before.seq);
      });
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
