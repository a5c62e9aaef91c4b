/**
 * What POST /v1/check's and POST /v1/meter's answers cost on the front thread (issue 19). Check,
 * once its signals are in: the
 * fusion (scoring/check.ts fuseCheck), the answer built from it (check.post.ts answerOf) and the
 * envelope's text as the router renders it with the credits (respond.ts renderData): the answer
 * written by checkAnswerJson (RawJson, the credits as metadataJson), against JSON.stringify of the
 * answer object (before). For the bench scenario's submissions (bench/http/scenarios/check.ts:
 * text, a free-mail address, a residential and a datacenter IP, a browser UA, timing, an empty
 * honeypot), and for 1,000 varied answers in turn (numbers that differ from call to call). Meter:
 * the envelope of an allow (the bench scenario's) through JSON.stringify (its hand-written
 * meterAnswerJson was retired in issue 27).
 *
 *   node dist/bench/micro/answers.bench.js
 *
 * It first prints a digest of the fusion's and the answer's JSON for 20,000 varied inputs (every
 * signal present or not, every rule on or off), which a change meant only to be cheaper must leave
 * as it was, and checks that checkAnswerJson writes exactly JSON.stringify's text for each.
 */
import { createHash } from "node:crypto";
import { Bench } from "tinybench";
import type { IpFacts } from "../../src/datasets/ip-dataset.js";
import type { AppDeps } from "../../src/http/deps.js";
import { RawJson, renderData, type ResponseState } from "../../src/http/respond.js";
import { answerOf, checkAnswerJson } from "../../src/http/routes/check.post.js";
import type { MeterAnswer } from "../../src/http/routes/meter.post.js";
import type { ContentAnalysis } from "../../src/scoring/content/index.js";
import { fuseCheck, type CheckInput } from "../../src/scoring/check.js";
import type { CheckEmailSignals, EmailReason } from "../../src/scoring/email.js";
import { machineLine, microRow } from "../lib/context.js";

const deps = { content: { version: "content-2.0748b140a864" } } as unknown as AppDeps;

function factsOf(country: string, datacenter: boolean, vpn: boolean): IpFacts {
  return {
    country,
    type: { datacenter, hosting: false, cloud: false },
    risk: { vpn, proxy: false, tor: false, residential_proxy: false, scanner: false },
  } as unknown as IpFacts;
}

/** One submission's gathered signals, as checkSubmission hands them to the fusion and the answer. */
interface Case {
  input: CheckInput;
  facts: IpFacts | null;
  email: CheckEmailSignals | null;
  content: ContentAnalysis | null;
  fields: string[];
  fieldFlags: string[];
}

function benchCase(datacenter: boolean, reasons: EmailReason[]): Case {
  const facts = factsOf(datacenter ? "US" : "DE", datacenter, false);
  const content: ContentAnalysis = { spam_probability: 0.0402, language: "en", flags: [], cold_email: 0.0412, fraud: 0.0121 };
  const email: CheckEmailSignals = { risk: 0.0759, disposable: false, domain: "example-shop.com", reasons };
  const input: CheckInput = {
    content: { spam_probability: content.spam_probability, fraud: content.fraud, cold_email: content.cold_email, chars: 307 },
    email: { reasons: email.reasons },
    ip: { datacenter, vpn: false, proxy: false, scanner: false },
    honeypotFilled: false,
    elapsedMs: 30_000,
    ua: { present: true, automation: false, bot: false, client: null },
    challenge: null,
    beacon: null,
  };
  return { input, facts, email, content, fields: ["message", "name"], fieldFlags: [] };
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

/** A random case: each signal present or not, each of its flags on or off. */
function randomCase(r: () => number): Case {
  const on = (p = 0.5): boolean => r() < p;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const REASONS: EmailReason[] = ["invalid_syntax", "disposable_domain", "no_mx", "possible_typo", "role_account", "free_provider"] as EmailReason[];
  const FLAGS = ["links", "money", "urgency", "link_only", "email_only"];
  const content: ContentAnalysis | null = on(0.8)
    ? { spam_probability: Math.round(r() * 10_000) / 10_000, language: pick(["en", "de", null]), flags: FLAGS.filter(() => on(0.2)).filter((f) => !f.endsWith("_only")), cold_email: r(), fraud: r() }
    : null;
  const email: CheckEmailSignals | null = on(0.7) ? { risk: r(), disposable: on(0.2), domain: "example.com", reasons: REASONS.filter(() => on(0.25)) } : null;
  const facts = on(0.7) ? factsOf(pick(["DE", "US", "FR"]), on(0.3), on(0.2)) : null;
  const input: CheckInput = {
    content: content ? { spam_probability: content.spam_probability, fraud: content.fraud, cold_email: content.cold_email, chars: Math.floor(r() * 400) } : null,
    email: email ? { reasons: email.reasons } : null,
    ip: facts ? { datacenter: facts.type.datacenter, vpn: facts.risk.vpn, proxy: on(0.2), scanner: on(0.1) } : null,
    honeypotFilled: pick([null, false, true]),
    elapsedMs: on(0.7) ? pick([-120_000, -1000, 500, 2000, 30_000, 100_000_000]) * (0.5 + r()) : null,
    ua: on(0.8) ? { present: on(0.9), automation: on(0.2), bot: on(0.2), client: pick([null, null, "scalaj-http"]) } : null,
    challenge: on(0.3) ? { valid: on(), reason: pick([null, "already_used", "expired"]) } : null,
    beacon: on(0.3) ? { tokenValid: on(), strongTells: on(0.2), verdictScore: pick([null, 0.01, 0.5, 0.99]) } : null,
  };
  return { input, facts, email, content, fields: ["message"], fieldFlags: ["link_only", "email_only"].filter(() => on(0.2)) };
}

function answer(c: Case) {
  const fused = fuseCheck(c.input);
  return answerOf(deps, fused, c.input, c.facts, c.email, c.content, c.fields, c.fieldFlags);
}

/** sha256 of the fusion's and the answer's JSON over 20,000 random cases. */
function digest(): string {
  const r = rng(19);
  const h = createHash("sha256");
  for (let i = 0; i < 20_000; i++) {
    const c = randomCase(r);
    h.update(JSON.stringify(fuseCheck(c.input)));
    const a = answer(c);
    const json = JSON.stringify(a);
    if (checkAnswerJson(a) !== json) throw new Error(`checkAnswerJson differs from JSON.stringify for ${json}`);
    h.update(json);
  }
  return h.digest("hex").slice(0, 16);
}

/** An allow of the meter bench scenario (bench/http/scenarios/sessions.ts), `n` units used. */
function meterAnswer(n: number): MeterAnswer {
  const count = n % 10_000;
  return { action: "allow", verdict: "ok", confidence: 1, usage: { count, limit: 10_000, window: "1s", remaining: 10_000 - count, retry_after_seconds: null }, linked_identities: 0, budget: "account" };
}

/**
 * The envelope's UTF-8 length: flattens a concatenated string and reads it as uWS's res.end does
 * when it copies the text out, so both ways are charged that.
 */
function sent(text: string): number {
  return Buffer.byteLength(text);
}

async function main(): Promise<void> {
  console.log(`answers digest ${digest()}`);
  const cases = [benchCase(false, ["free_provider"] as EmailReason[]), benchCase(true, [] as EmailReason[])];
  const state: ResponseState = { aborted: false, requestId: "req_4mQx9TbV2kLr8ZpW3nYc0A", startedAt: performance.now() };
  const data = answer(cases[1]!);
  const r = rng(7);
  const varied = Array.from({ length: 1000 }, () => answer(randomCase(r)));
  let i = 0;
  const bench = new Bench({ time: 1000, warmupTime: 250 });
  bench
    .add("fuseCheck", () => fuseCheck(cases[i++ & 1]!.input))
    .add("fuseCheck + answerOf", () => answer(cases[i++ & 1]!))
    .add("envelope, bench answer: checkAnswerJson", () => sent(renderData(state, new RawJson(checkAnswerJson(data)), undefined, '"credits":2')))
    .add("envelope, bench answer: JSON.stringify (before)", () => sent(renderData(state, data, { credits: 2 })))
    .add("envelope, varied answers: checkAnswerJson", () => sent(renderData(state, new RawJson(checkAnswerJson(varied[i++ % 1000]!)), undefined, '"credits":2')))
    .add("envelope, varied answers: JSON.stringify (before)", () => sent(renderData(state, varied[i++ % 1000]!, { credits: 2 })))
    .add("meter envelope: JSON.stringify", () => sent(renderData(state, meterAnswer(i++), { credits: 2 })));
  await bench.run();
  console.log(machineLine());
  console.table(bench.tasks.map(microRow));
}

void main();
