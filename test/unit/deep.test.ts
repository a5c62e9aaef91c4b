import { describe, expect, it } from "vitest";
import { fuseCheck, type CheckInput } from "../../src/scoring/check.js";
import { DEEP_WEIGHTS, fuseDeep, nameKind, summarizeSession, type DeepFindings, type SessionSummary } from "../../src/scoring/deep.js";
import { PREFLIGHT_WEIGHTS, RESOLVE_WEIGHTS, ipVerdict, preflightVerdict, verdictOf } from "../../src/scoring/session-verdict.js";
import type { ObservationRecord, SessionRecord } from "../../src/store/records.js";

const T0 = 1_800_000_000_000;
const noInput: CheckInput = { content: null, email: null, ip: null, honeypotFilled: null, elapsedMs: null, ua: null, challenge: null, beacon: null };
const check = fuseCheck({ ...noInput, content: { spam_probability: 0.05, fraud: 0.01, cold_email: 0.01, chars: 200 }, ip: { datacenter: false, vpn: false, proxy: false, scanner: false } });
const nothing: DeepFindings = { network: null, emailReasons: null, session: null, content: null };
const logit = (p: number) => Math.log(p / (1 - p));

const session: SessionRecord = { project_id: "prj_1", session_id: "s_1", first_seen: T0, last_seen: T0 + 60_000, observation_count: 3, last: { id: "obs_3", kind: "form.submit", score: 0.05, decision: "allow", reasons: [] } };
function hit(o: Partial<ObservationRecord>): ObservationRecord {
  return {
    seq: 1, id: "obs_1", org_id: "org_1", project_id: "prj_1", session_id: "s_1", kind: "page.view", action: "pageview", ts: T0, score: 0.05, decision: "allow", reasons: [],
    ua: { browser: "Chrome 131", os: "Windows 10", device: "desktop", bot_kind: null, bot_name: null }, bot_id: null, bot_operator: null, bot_verified: null, policy: null,
    ip: "73.15.20.30", country: "US", page: "/", fingerprint: "ab12cd34", token_valid: true, tells: [], ...o,
  };
}

describe("nameKind", () => {
  it.each([
    ["ec2-35-180-1-1.eu-west-3.compute.amazonaws.com", "server"],
    ["vps12.example-host.test", "server"],
    ["static.12.34.56.78.clients.your-server.de", "server"],
    ["pool-73-15-20-30.nycmny.fios.verizon.net", "access"],
    ["dsl-187-12.example.net", "access"],
    ["c-73-15-20-30.hsd1.ca.comcast.net", "other"],
    ["dns.google", "other"],
    ["serverless.example.com", "other"], // a word inside a label is not the label
  ])("%s reads as %s", (name, kind) => expect(nameKind(name)).toBe(kind));
});

describe("summarizeSession", () => {
  it("counts kinds, decisions, reasons, addresses, countries and browser families; versions do not make a new browser", () => {
    const hits = [
      hit({ kind: "form.submit", ua: { browser: "Chrome 132", os: "Windows 10", device: "desktop", bot_kind: null, bot_name: null } }),
      hit({ ip: "73.15.20.40", country: "DE", tells: ["webdriver"], reasons: ["automation_detected"], score: 0.99, decision: "block", token_valid: false }),
      hit({ ua: { browser: "Firefox 133", os: "Linux", device: "desktop", bot_kind: null, bot_name: null }, fingerprint: "ff00ff00" }),
    ];
    const s = summarizeSession(session, hits, true, 2, T0 + 120_000);
    expect(s).toMatchObject({ age_seconds: 120, observation_count: 3, examined: 3, complete: true, kinds: { page_view: 2, form_submit: 1 }, decisions: { allow: 2, review: 0, block: 1 } });
    expect(s).toMatchObject({ latest_score: 0.05, worst_score: 0.99, tells: ["webdriver"], distinct_ips: 2, countries: ["DE", "US"], distinct_user_agents: 2, distinct_fingerprints: 2, token_invalid: 1, accounts_bound: 2 });
    expect(s.reasons).toEqual([{ reason: "automation_detected", count: 1 }]);
  });
});

describe("fuseDeep", () => {
  it("without findings keeps the check's score and confidence", () => {
    const r = fuseDeep(check, nothing);
    expect(r.score).toBe(check.score);
    expect(r.confidence).toBe(check.confidence);
    expect(r.rule_matches).toEqual(check.rule_matches);
  });

  it("adds each finding's log-odds to the check's and lists it", () => {
    const summary = summarizeSession(session, [hit({ tells: ["webdriver"] }), hit({ ip: "a" }), hit({ ip: "b", ua: { browser: "Firefox 133", os: "Linux", device: null, bot_kind: null, bot_name: null } })], true, 2, T0);
    const r = fuseDeep(check, {
      network: { hostname: "vps1.host.test", verified: true, datasetsFlagHosting: false },
      emailReasons: ["implicit_mx"],
      session: summary,
      content: { wholeText: 0.05, strongest: { field: "company", spam_probability: 0.9 } },
    });
    const by = Object.fromEntries(r.rule_matches.map((m) => [m.rule, m.contribution]));
    expect(by).toMatchObject({
      rdns_server_name: DEEP_WEIGHTS.rdns_server_name,
      email_implicit_mx: DEEP_WEIGHTS.email_implicit_mx,
      session_automation: DEEP_WEIGHTS.session_automation,
      session_ua_changed: DEEP_WEIGHTS.session_ua_changed,
      session_ip_hopping: DEEP_WEIGHTS.session_ip_hopping,
      session_multi_account: DEEP_WEIGHTS.session_multi_account,
    });
    expect(by.content_strongest_field).toBeCloseTo(DEEP_WEIGHTS.content_field_scale * (logit(0.9) - logit(0.05)), 3);
    const deepSum = r.rule_matches.filter((m) => !check.rule_matches.includes(m as never)).reduce((s, m) => s + m.contribution, 0);
    expect(r.score).toBeCloseTo(1 / (1 + Math.exp(-(logit(check.score) + deepSum))), 4);
    expect(r.decision).toBe("block");
    expect(r.confidence).toBeCloseTo(Math.min(1, check.confidence + 0.3), 3);
    expect(r.categories.spam).toBe(r.score);
  });

  it("an unconfirmed PTR name counts; a server name the datasets already flagged does not count twice", () => {
    expect(fuseDeep(check, { ...nothing, network: { hostname: "x.test", verified: false, datasetsFlagHosting: false } }).rule_matches.map((m) => m.rule)).toContain("rdns_not_confirmed");
    expect(fuseDeep(check, { ...nothing, network: { hostname: "vps1.host.test", verified: true, datasetsFlagHosting: true } }).rule_matches.map((m) => m.rule)).not.toContain("rdns_server_name");
    expect(fuseDeep(check, { ...nothing, network: { hostname: null, verified: null, datasetsFlagHosting: false } }).score).toBe(check.score);
  });

  it("the session's worst hit adds only what the check's beacon verdict did not already", () => {
    const worst: SessionSummary = summarizeSession(session, [hit({ score: 0.9 })], true, 0, T0);
    const withBeacon = fuseCheck({ ...noInput, beacon: { tokenValid: true, strongTells: false, verdictScore: 0.05 } });
    const full = DEEP_WEIGHTS.session_worst_scale * (logit(0.9) - logit(0.05));
    const already = withBeacon.rule_matches.find((m) => m.rule === "beacon_session_verdict")?.contribution ?? 0;
    const r = fuseDeep(withBeacon, { ...nothing, session: worst });
    expect(r.rule_matches.find((m) => m.rule === "session_worst_verdict")!.contribution).toBeCloseTo(Math.min(DEEP_WEIGHTS.session_worst_max, full) - already, 3);
  });
});

describe("preflightVerdict", () => {
  const zero = { accounts_sharing_session: 0, accounts_sharing_fingerprint: 0, accounts_sharing_ip: 0, linked_emails: 0 };
  const quiet = { sessionUnknown: false, ua: null, emailReasons: null };

  it("with no evidence of its own, equals the resolve's verdict for the same counts", () => {
    const edge = { score: 0.05, reasons: [], source: "session" as const };
    const counts = { ...zero, accounts_sharing_session: 2, linked_emails: 2 };
    expect(preflightVerdict(edge, counts, false, quiet)).toEqual(verdictOf(edge, counts, false));
    const add = RESOLVE_WEIGHTS.shared_session + RESOLVE_WEIGHTS.shared_session_each + RESOLVE_WEIGHTS.many_emails;
    expect(verdictOf(edge, counts, false).score).toBeCloseTo(1 / (1 + Math.exp(-(logit(0.05) + add))), 4);
  });

  it("adds the unknown session, the user agent and the e-mail, with their reasons in order", () => {
    const edge = ipVerdict(null);
    const v = preflightVerdict(edge, zero, false, { sessionUnknown: true, ua: { present: true, automation: true, bot: true }, emailReasons: ["disposable_domain", "no_mx", "free_provider"] });
    expect(v.reasons).toEqual(["session_unknown", "ua_automation", "email_disposable", "email_no_mx"]);
    const add = PREFLIGHT_WEIGHTS.session_unknown + PREFLIGHT_WEIGHTS.ua_automation + PREFLIGHT_WEIGHTS.email_disposable + PREFLIGHT_WEIGHTS.email_no_mx;
    expect(v.score).toBeCloseTo(1 / (1 + Math.exp(-(logit(edge.score) + add))), 4);
    expect(v.decision).toBe("block");
  });
});
