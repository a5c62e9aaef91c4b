/**
 * Docs that run: every request/answer example of README.md, docs/api.md and docs/integrations.md
 * (also each webhook event's delivery) sits in a generated block,
 *
 *   <!-- example: name -->
 *   ...the requests (curl) and the answer (JSON), written by this module...
 *   <!-- /example -->
 *
 * and `renderDocs` makes each of them again against a fresh server: it creates what the example
 * needs by real calls, sends the example's requests, and writes the service's answers into the
 * blocks. Values that change from run to run (ids, keys, request ids, timings, timestamps) are
 * replaced by placeholders (`normalise`); everything else is the service's answer. The webhook
 * examples are deliveries a local receiver got: each event is caused by real calls (a Stripe event
 * signed with the server's STRIPE_WEBHOOK_SECRET, as Stripe would sign it, for the subscription).
 *
 * Run by test/integration/docs.examples.test.ts on the real server (started as every integration
 * test starts one, with the run's dataset build): it fails when a block differs from what the
 * service answers. From the command line (after `npm run build`), that test is run:
 *
 *   npm run docs:examples                  # rewrite the blocks (FS_DOCS_EXAMPLES=write)
 *   node dist/scripts/docs-examples.js --check   # compare only, as `npm test` does
 *
 * Prose outside the blocks is hand-written.
 */
import { spawnSync } from "node:child_process";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import Stripe from "stripe";
import { REPO_ROOT } from "../src/config/index.js";
import { WEBHOOK_EVENTS, type WebhookEventType } from "../src/store/records.js";

/** The server the examples run against. */
export interface DocsServer {
  url: string;
  adminToken: string;
  /** Where the webhook examples' endpoint points (the server must accept its http URL: FS_WEBHOOK_ALLOW_HTTP, and its address on loopback: FS_WEBHOOK_ALLOW_PRIVATE). */
  receiver: DocsReceiver;
  /** The server's STRIPE_WEBHOOK_SECRET, to sign the Stripe event that changes a subscription. */
  stripeWebhookSecret: string;
}

/** A local webhook receiver (test/helpers/webhook-receiver.ts), answering 2xx. */
export interface DocsReceiver {
  url: string;
  /** Every request it got, in arrival order: headers by lower-case name, the raw body, the status it answered. */
  readonly received: ReadonlyArray<{ headers: Record<string, string>; body: string; status: number }>;
}

/** A file with example blocks, relative to the repository root. */
export const DOC_FILES = ["README.md", "docs/api.md", "docs/integrations.md"] as const;

/** The host the examples show: `npm start`'s. */
const SHOWN_BASE = "http://127.0.0.1:8080";
/** What curl sends unless told otherwise. */
const CURL_DEFAULTS: Record<string, string> = { "user-agent": "curl/8.14.1", accept: "*/*" };
const BROWSER_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const GOOGLEBOT_UA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

interface Call {
  method: "GET" | "POST" | "PUT";
  path: string;
  /** Bearer credential, by its shell variable's name (`KEY`, `PUB`, `ADMIN`). */
  auth?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent, never shown: the test clock (epoch ms) that pins `now` for a call whose answer depends on it. */
  hiddenHeaders?: Record<string, string>;
}

interface Answer {
  status: number;
  /** By lower-case name, as node reads them. */
  headers: Record<string, string | string[] | undefined>;
  // Envelopes are the service's, read as JSON.
  body: any;
}

/** Runs the calls of the examples, records what each block shows, and names values by shell variable. */
class Session {
  /** Real value -> its shell variable's name, for the requests shown. */
  private readonly vars = new Map<string, string>();
  private readonly credentials = new Map<string, string>();

  constructor(private readonly server: DocsServer) {
    this.credentials.set("ADMIN", server.adminToken);
  }

  /** Names `value` `$name` in the requests shown (and, for credentials, sends it as `auth: name`). */
  define(name: string, value: string, credential = false): void {
    this.vars.set(value, name);
    if (credential) this.credentials.set(name, value);
  }

  /** Sends one call as curl would (no headers but curl's own and the call's) and parses the envelope. */
  async send(call: Call): Promise<Answer> {
    const headers: Record<string, string> = { ...CURL_DEFAULTS, ...lower(call.headers), ...lower(call.hiddenHeaders) };
    if (call.auth) headers.authorization = `Bearer ${this.credential(call.auth)}`;
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(body));
    }
    const { status, headers: answerHeaders, text } = await rawRequest(this.server.url + call.path, call.method, headers, body);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`${call.method} ${call.path}: non-JSON answer ${status}: ${text.slice(0, 200)}`);
    }
    return { status, headers: answerHeaders, body: parsed };
  }

  /** Sends `call`, requiring `status`; returns `data`. */
  async data(call: Call, status = 200): Promise<any> {
    const a = await this.send(call);
    if (a.status !== status) throw new Error(`${call.method} ${call.path}: expected ${status}, got ${a.status}: ${JSON.stringify(a.body)}`);
    return a.body.data;
  }

  /** The call as a curl command, with the defined values as shell variables. */
  curl(call: Call): string {
    const parts = ["curl -s"];
    if (call.method !== "GET" && !(call.method === "POST" && call.body !== undefined)) parts.push(`-X ${call.method}`);
    if (call.auth) parts.push(`-H "Authorization: Bearer $${call.auth}"`);
    for (const [k, v] of Object.entries(call.headers ?? {})) parts.push(`-H '${this.shell(`${k}: ${v}`)}'`);
    if (call.body !== undefined) parts.push(`-H 'Content-Type: application/json'`);
    parts.push(`"${SHOWN_BASE}${this.vared(call.path)}"`);
    let line = parts.join(" ");
    if (call.body !== undefined) line += ` -d '${this.shell(formatJson(call.body, 0, 40))}'`;
    return line;
  }

  private credential(name: string): string {
    const v = this.credentials.get(name);
    if (v === undefined) throw new Error(`no credential ${name}`);
    return v;
  }

  /** Inside double quotes: values as `$NAME`. */
  private vared(s: string): string {
    for (const [value, name] of this.byLength()) s = s.split(value).join(`$${name}`);
    return s;
  }

  /** Longest values first, so that a value containing another (a token names its session) is named whole. */
  private byLength(): Array<[string, string]> {
    return [...this.vars].sort((a, b) => b[0].length - a[0].length);
  }

  /** Inside single quotes: a value leaves the quotes for its variable (`'…"'$SESSION'"…'`). */
  private shell(s: string): string {
    for (const [value, name] of this.byLength()) s = s.split(value).join(`'$${name}'`);
    return s;
  }
}

function lower(h: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ status: number; headers: Answer["headers"]; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Placeholders for values that differ from run to run, by key: what `normalise` writes. */
const VOLATILE_KEYS: Record<string, string> = {
  request_id: "req_…",
  processing_time_ms: "<ms>",
  first_seen: "<epoch ms>",
  last_seen: "<epoch ms>",
  expires_at: "<epoch ms>",
  age_seconds: "<s>",
  created_at: "<time>",
  built_at: "<time>",
  period: "<YYYYMM>",
  period_end: "<time>",
  token: "<token>",
  rss_bytes: "<bytes>",
  reset: "<epoch ms>",
  reset_in_seconds: "<s>",
  "webhook-timestamp": "<epoch s>",
};

/** Id-like strings (by their prefix) and timestamps inside other values. */
const VOLATILE_PATTERNS: Array<[RegExp, string]> = [
  [/\borg_[0-9A-Za-z]{16}\b/g, "org_…"],
  [/\bprj_[0-9A-Za-z]{16}\b/g, "prj_…"],
  [/\bobs_[0-9A-Za-z]+\b/g, "obs_…"],
  [/\bs_[0-9A-Za-z]{22}\b/g, "s_…"],
  [/\bkey_[0-9A-Za-z]+\b/g, "key_…"],
  [/\bwe_[0-9A-Za-z]{16}\b/g, "we_…"],
  [/\bwhsec_[0-9A-Za-z+/]+=*/g, "whsec_…"],
  [/\bmsg_[0-9A-Za-z]+\b/g, "msg_…"],
  // A webhook signature (Standard Webhooks: `v1,` and base64), one per secret in force.
  [/\bv1,[0-9A-Za-z+/]{20,}=*/g, "v1,<signature>"],
  // A local receiver's port.
  [/\/\/127\.0\.0\.1:\d+\//g, "//127.0.0.1:<port>/"],
  [/\bfs_(pub_)?(live|test)_[0-9A-Za-z_-]+/g, "fs_$1$2_…"],
  [/\bip-\d{8}T\d{6}Z-[0-9a-f]{8}\b/g, "ip-<build>"],
  [/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b/g, "<time>"],
];

/**
 * The answer with every run-dependent value replaced by a placeholder: ids and keys keep their
 * prefix (`org_…`), timings and timestamps become `<ms>`, `<time>`, `<epoch ms>`. Source dates
 * (`data_date`, coverage's family dates) are the dataset's inputs' and stay.
 */
export function normalise(value: unknown, key = ""): unknown {
  if (key === "data_date") return value;
  if (key in VOLATILE_KEYS && value !== null && !(key === "period" && typeof value !== "string")) return VOLATILE_KEYS[key];
  if (typeof value === "string") return VOLATILE_PATTERNS.reduce((s, [re, to]) => s.replace(re, to), value);
  if (Array.isArray(value)) return value.map((v) => normalise(v));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalise(v, k)]));
  return value;
}

/**
 * JSON laid out for reading: a value that fits on its line (`width` columns) stays on one line,
 * others open one line per member, indented by two. Always valid JSON.
 * @param indent the line's indentation; `used`: columns already taken on the first line.
 */
export function formatJson(value: unknown, indent = 0, used = indent, width = 110): string {
  const flat = flatJson(value);
  if (used + flat.length <= width || value === null || typeof value !== "object") return flat;
  const pad = " ".repeat(indent + 2);
  const end = `\n${" ".repeat(indent)}`;
  if (Array.isArray(value)) return `[\n${value.map((v) => pad + formatJson(v, indent + 2, indent + 2, width)).join(",\n")}${end}]`;
  const members = Object.entries(value).map(([k, v]) => `${pad}${JSON.stringify(k)}: ${formatJson(v, indent + 2, indent + k.length + 6, width)}`);
  return `{\n${members.join(",\n")}${end}}`;
}

/** JSON on one line, with a space after each comma and colon and inside braces. */
function flatJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(flatJson).join(", ")}]`;
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const members = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${flatJson(v)}`);
  return members.length ? `{ ${members.join(", ")} }` : "{}";
}

/** One block: the requests shown, then the answer's headers shown (if any), then the answers shown. */
interface Shown {
  calls: Call[];
  answers: unknown[];
  headers?: string[];
}

/** The rate-limit headers an example shows, by the lower-case name node reads them under. */
const SHOWN_HEADERS: Record<string, string> = { "retry-after": "Retry-After", "ratelimit-policy": "RateLimit-Policy", ratelimit: "RateLimit" };

/**
 * A rate-limit header without what depends on the clock: the seconds left (`t=`) become `<s>`, and
 * the monthly window's length (`w=`, 28 to 31 days of seconds) becomes `<period s>`, so that an
 * example reads the same in every month.
 */
function calendarFree(value: string): string {
  return value.replace(/\bt=\d+/g, "t=<s>").replace(/("monthly";[^,]*?\bw=)\d+/g, "$1<period s>");
}

/** The rate-limit headers of an answer, as `Name: value` lines with the seconds left as `<s>`. */
function rateLimitHeaders(a: Answer): string[] {
  const lines: string[] = [];
  for (const [name, shown] of Object.entries(SHOWN_HEADERS)) {
    const v = a.headers[name];
    if (v === undefined) continue;
    const value = String(v);
    lines.push(`${shown}: ${name === "retry-after" ? "<s>" : calendarFree(value)}`);
  }
  return lines;
}

function block(s: Session, shown: Shown): string {
  const parts: string[] = [];
  if (shown.calls.length) parts.push(["```sh", ...shown.calls.map((c) => s.curl(c)), "```"].join("\n"));
  if (shown.headers?.length) parts.push(["```", ...shown.headers, "```"].join("\n"));
  for (const a of shown.answers) parts.push(["```json", formatJson(normalise(a)), "```"].join("\n"));
  return parts.join("\n\n");
}

/** Sends `call` and shows it with its whole envelope. */
async function envelope(s: Session, call: Call, status = 200): Promise<Shown> {
  const a = await s.send(call);
  if (a.status !== status) throw new Error(`${call.method} ${call.path}: expected ${status}, got ${a.status}: ${JSON.stringify(a.body)}`);
  return { calls: [call], answers: [a.body] };
}

/** Sends `call` and shows its `data`. */
async function dataOf(s: Session, call: Call, status = 200): Promise<Shown> {
  return { calls: [call], answers: [await s.data(call, status)] };
}

/** Answer only, no request shown (the reference's field listings). */
async function answerOnly(shown: Promise<Shown>): Promise<Shown> {
  return { calls: [], answers: (await shown).answers };
}

const SPAM_MESSAGE = "We can increase your website traffic and Google ranking with our SEO services. Reply to get a free quote today!";
const PRIZE_TEXT = "Congratulations!!! You have WON $5,000,000 in our lottery. Claim your prize now at http://bit.ly/claim-now before it expires.";
const BENIGN_MESSAGE = "Hello, my order 20931 from last week has not arrived yet. Could you tell me when it will ship? Thanks, Maria";

/** A contact form's check, sent at `now` (the test clock) and loaded `loadedAgoMs` before. */
function contactCheck(now: number, loadedAgoMs: number, message: string, metadata: Record<string, string>): Call {
  return {
    method: "POST",
    path: "/v1/check",
    auth: "KEY",
    hiddenHeaders: { "x-fs-test-now": String(now) },
    body: { form_id: "contact", form_data: { message }, metadata: { ...metadata, form_loaded_at: now - loadedAgoMs } },
  };
}

/**
 * The examples, in the order they run (later ones may count on earlier ones: the usage example
 * counts every credit charged before it). Names are the blocks' names.
 */
async function runExamples(s: Session, server: DocsServer): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const add = (name: string, shown: Shown): void => void out.set(name, block(s, shown));

  // What each example needs, by real calls: an org with a secret key (sessions scope) and a project with a publishable key.
  const org = await s.data({ method: "POST", path: "/v1/admin/orgs", auth: "ADMIN", body: { name: "Docs", plan: "free" } }, 201);
  s.define("ORG", org.id);
  const key = await s.data({ method: "POST", path: `/v1/admin/orgs/${org.id}/keys`, auth: "ADMIN", body: { type: "secret", scopes: ["sessions"] } }, 201);
  s.define("KEY", key.key, true);
  const project = await s.data({ method: "POST", path: `/v1/admin/orgs/${org.id}/projects`, auth: "ADMIN", body: { name: "site" } }, 201);
  s.define("PROJECT", project.id);
  const pub = await s.data(
    { method: "POST", path: `/v1/admin/orgs/${org.id}/keys`, auth: "ADMIN", body: { type: "publishable", project_id: project.id } },
    201,
  );
  s.define("PUB", pub.key, true);

  const ip = await envelope(s, { method: "GET", path: "/v1/ip/52.95.110.1?include=region,company", auth: "KEY" });
  add("readme-ip", ip);
  const ipAnswer = ip.answers[0] as { data: unknown; metadata: unknown };
  add("api-ip-record", { calls: [], answers: [ipAnswer.data] });
  add("api-ip-metadata", { calls: [], answers: [{ metadata: ipAnswer.metadata }] });
  add(
    "api-ip-batch",
    await answerOnly(dataOf(s, { method: "POST", path: "/v1/ip/batch", auth: "KEY", body: { ips: ["8.8.8.8", "10.0.0.1"], include: ["company"] } })),
  );
  add("api-org", await answerOnly(dataOf(s, { method: "GET", path: "/v1/orgs/me", auth: "KEY" })));
  add("api-readyz", await answerOnly(dataOf(s, { method: "GET", path: "/readyz", auth: "ADMIN" })));
  const invalid = await s.send({ method: "POST", path: "/v1/admin/orgs", auth: "ADMIN", body: { name: 1, plan: "gold" } });
  add("api-validation-error", { calls: [], answers: [invalid.body.error] });

  // The check's clock is pinned (test clock header, not shown) so that "0.8 s after load" reads the same every run.
  const now = Date.now();
  s.define("LOADED", String(now - 800));
  const spamCheck = contactCheck(now, 800, SPAM_MESSAGE, {
    email: "seo.expert@mailinator.com",
    ip: "52.95.110.1",
    user_agent: "python-requests/2.31",
    honeypot_field: "http://x",
  });
  const spam = await envelope(s, spamCheck);
  const spamAnswer = spam.answers[0] as { data: unknown; metadata: { request_id: string } };
  add("readme-check-spam", { calls: [spamCheck], answers: [spamAnswer.data] });
  s.define("LOADED", String(now - 45_000));
  const benign = await dataOf(
    s,
    contactCheck(now, 45_000, BENIGN_MESSAGE, { email: "maria.b@gmail.com", ip: "73.15.20.30", user_agent: BROWSER_UA, honeypot_field: "" }),
  );
  add("readme-check-benign", benign);
  add("api-check", { calls: [], answers: benign.answers });

  add("readme-email", await dataOf(s, { method: "POST", path: "/v1/email", auth: "KEY", body: { email: "info@gmsil.com" } }));
  add("api-email", await answerOnly(dataOf(s, { method: "POST", path: "/v1/email", auth: "KEY", body: { email: "J.Ane+shop@GoogleMail.com" } })));
  add("api-content", await answerOnly(dataOf(s, { method: "POST", path: "/v1/content", auth: "KEY", body: { text: PRIZE_TEXT } })));

  // A browser session as the beacon script opens it (handshake, then a page view), and a hit that claims to be Googlebot.
  const hs = await s.data({ method: "POST", path: "/v1/handshake", auth: "PUB", headers: { "User-Agent": BROWSER_UA }, body: {} });
  s.define("SESSION", hs.session_id);
  s.define("TOKEN", hs.token);
  const handshake: Call = { method: "POST", path: "/v1/handshake", auth: "PUB", headers: { "User-Agent": BROWSER_UA }, body: {} };
  const pageView: Call = {
    method: "POST",
    path: "/v1/collect",
    auth: "PUB",
    headers: { "User-Agent": BROWSER_UA },
    body: { token: hs.token, session_id: hs.session_id, action: "signup", page: "/signup" },
  };
  const collected = await s.data(pageView);
  const spoofed: Call = {
    method: "POST",
    path: "/v1/collect",
    auth: "PUB",
    headers: { "User-Agent": GOOGLEBOT_UA },
    body: { action: "pageview", page: "/pricing" },
  };
  await s.data(spoofed);
  add("readme-beacon", { calls: [handshake, pageView], answers: [hs, collected] });
  add("readme-googlebot", { calls: [spoofed], answers: [] });
  const observations = await dataOf(s, { method: "GET", path: `/v1/projects/${project.id}/observations?limit=10`, auth: "KEY" });
  add("readme-observations", observations);
  add("api-observation", { calls: [], answers: [(observations.answers[0] as { items: unknown[] }).items[0]] });
  // Today's hits (UTC), by day: one bucket, whatever the hour of the run.
  const today = new Date(now).toISOString().slice(0, 10);
  const tomorrow = new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10);
  s.define("FROM", today);
  s.define("TO", tomorrow);
  add("api-traffic", await dataOf(s, { method: "GET", path: `/v1/projects/${project.id}/traffic?from=${today}&to=${tomorrow}&bucket=day`, auth: "KEY" }));

  // Two accounts signing up from the one browser session: the second is the example.
  const signup = (user: string, email: string): Call => ({
    method: "POST",
    path: "/v1/sessions/resolve",
    auth: "KEY",
    body: { external_user_id: user, observation_type: "auth.signup", session_id: hs.session_id, fingerprint: "3fa9c2d1e07b44", ip: "73.15.20.30", email },
  });
  const first = signup("user-1842", "maria.b@gmail.com");
  await s.data(first);
  const second = signup("user-1843", "m.b.2026@gmail.com");
  const resolved = await s.data(second);
  add("readme-resolve", { calls: [first, second], answers: [resolved] });
  add("api-resolve", { calls: [], answers: [resolved] });
  // The pre-flight of a third signup from that session, with a disposable address.
  const preflight = await s.data({
    method: "POST",
    path: "/v1/auth/check",
    auth: "KEY",
    body: { observation_type: "auth.signup", session_id: hs.session_id, ip: "73.15.20.30", user_agent: BROWSER_UA, email: "maria.b@mailinator.com" },
  });
  add("api-auth-check", { calls: [], answers: [preflight] });
  // The deep analysis of a form sent from that browser session.
  const deep = await s.send({
    method: "POST",
    path: "/v1/check/deep",
    auth: "KEY",
    body: {
      form_id: "contact",
      form_data: { message: BENIGN_MESSAGE },
      metadata: { email: "maria.b@gmail.com", ip: "73.15.20.30", user_agent: BROWSER_UA },
      session_id: hs.session_id,
    },
  });
  if (deep.status !== 200) throw new Error(`POST /v1/check/deep: ${deep.status} ${JSON.stringify(deep.body)}`);
  add("api-check-deep", { calls: [], answers: [deep.body.data, { metadata: { deep: deep.body.metadata.deep, credits: deep.body.metadata.credits } }] });

  add("readme-usage", await envelope(s, { method: "GET", path: `/v1/orgs/${org.id}/usage`, auth: "KEY" }));
  add("api-usage", await answerOnly(dataOf(s, { method: "GET", path: `/v1/orgs/${org.id}/usage`, auth: "KEY" })));
  // Last: feedback teaches the org's model, which would move the checks above.
  const feedback = await s.data({ method: "POST", path: "/v1/feedback", auth: "KEY", body: { label: "spam", request_id: spamAnswer.metadata.request_id } });
  add("api-feedback", { calls: [], answers: [feedback] });
  const policy = await dataOf(s, {
    method: "PUT",
    path: `/v1/projects/${project.id}/bot-policy`,
    auth: "KEY",
    body: { bots: { gptbot: "block", uptimerobot: "allow" }, kinds: { ai_search: "allow", seo: "block" }, spoofed: "block", allow_unverified: false },
  });
  add("api-bot-policy", policy);
  // A policy that would let the spoofed Googlebot in, and thresholds that would send the benign checks to review.
  add(
    "api-bot-policy-replay",
    await dataOf(s, {
      method: "POST",
      path: `/v1/projects/${project.id}/bot-policy/replay`,
      auth: "KEY",
      body: { policy: { spoofed: "score", kinds: { search_crawler: "allow" } }, thresholds: { review: 0.2, block: 0.9 }, days: 7 },
    }),
  );
  // The meter (the docs' server enables it): a budget kept under the account cluster of the two signups above.
  add(
    "api-meter",
    await dataOf(s, {
      method: "POST",
      path: "/v1/meter",
      auth: "KEY",
      body: {
        resource: "api/export",
        identity: { user_id: "user-1843", session: hs.session_id, ip: "73.15.20.30" },
        limit: { max: 100, window: "1h" },
        cost: 1,
      },
    }),
  );
  // A webhook endpoint, registered last: no event of the org follows to be delivered.
  add(
    "api-webhook-create",
    await dataOf(
      s,
      {
        method: "POST",
        path: `/v1/orgs/${org.id}/webhooks`,
        auth: "KEY",
        body: { url: "https://hooks.example.com/fraudscore", events: ["session.blocked", "account.blocked", "quota.80_percent"] },
      },
      201,
    ),
  );
  await rateLimitExamples(s, add);
  await webhookExamples(s, server, add);
  return out;
}

/**
 * The quota's headers and refusal, on orgs of their own (so that the other examples' usage stays
 * theirs): a fresh org's charged call, then an org the admin API's usage correction brought to its
 * quota before its first call (in a cluster a node's lease, once granted, would admit calls past a
 * later correction).
 */
async function rateLimitExamples(s: Session, add: (name: string, shown: Shown) => void): Promise<void> {
  const charged: Call = { method: "GET", path: "/v1/ip/8.8.8.8", auth: "KEY" };
  await quotaOrg(s, "Quota", 0);
  const first = await s.send(charged);
  if (first.status !== 200) throw new Error(`GET /v1/ip/8.8.8.8: expected 200, got ${first.status}`);
  add("api-ratelimit-headers", { calls: [charged], answers: [], headers: rateLimitHeaders(first) });
  await quotaOrg(s, "Quota spent", 10_000);
  const refused = await s.send(charged);
  if (refused.status !== 429) throw new Error(`GET /v1/ip/8.8.8.8 at the quota: expected 429, got ${refused.status}`);
  add("api-quota-exceeded", { calls: [charged], answers: [refused.body], headers: [`HTTP/1.1 429`, ...rateLimitHeaders(refused)] });
}

/** A free org with `used` credits of its period used, whose secret key is `$KEY` from now on. */
async function quotaOrg(s: Session, name: string, used: number): Promise<void> {
  const org = await s.data({ method: "POST", path: "/v1/admin/orgs", auth: "ADMIN", body: { name, plan: "free" } }, 201);
  const key = await s.data({ method: "POST", path: `/v1/admin/orgs/${org.id}/keys`, auth: "ADMIN", body: { type: "secret" } }, 201);
  s.define("KEY", key.key, true);
  if (used) await s.data({ method: "POST", path: `/v1/admin/orgs/${org.id}/usage/adjust`, auth: "ADMIN", body: { credits: used, reason: "docs example" } });
}

/** The headers a webhook example shows, as the receiver got them: Standard Webhooks' three and what they come with. */
const WEBHOOK_HEADERS = ["content-type", "user-agent", "webhook-id", "webhook-timestamp", "webhook-signature"];

/** A beacon hit's client: an HTTP library, which scores `block` (automation). */
const SCRIPT_UA = "python-requests/2.31";

/**
 * The webhook examples, on an org of their own: its endpoint's registration (pointing at the
 * local receiver), then one real delivery of each event type, caused in an order the free plan
 * allows (the quota last but the subscription, whose Pro plan lifts it). Every event type must
 * be delivered, so a new one cannot go without its example.
 */
async function webhookExamples(s: Session, server: DocsServer, add: (name: string, shown: Shown) => void): Promise<void> {
  const admin = (method: Call["method"], path: string, body?: unknown, status = 200): Promise<any> =>
    s.data({ method, path, auth: "ADMIN", ...(body === undefined ? {} : { body }) }, status);
  const org = await admin("POST", "/v1/admin/orgs", { name: "Hooks", plan: "free" }, 201);
  s.define("KEY", (await admin("POST", `/v1/admin/orgs/${org.id}/keys`, { type: "secret", scopes: ["sessions"] }, 201)).key, true);
  const project = await admin("POST", `/v1/admin/orgs/${org.id}/projects`, { name: "shop" }, 201);
  s.define("HOOKS_PUB", (await admin("POST", `/v1/admin/orgs/${org.id}/keys`, { type: "publishable", project_id: project.id }, 201)).key, true);

  s.define("HOOK_URL", server.receiver.url);
  const register: Call = { method: "POST", path: "/v1/orgs/me/webhooks", auth: "KEY", body: { url: server.receiver.url, events: [...WEBHOOK_EVENTS] } };
  add("integrations-webhook-register", await dataOf(s, register, 201));

  // key.created, key.disabled: a key made and disabled by the operator.
  const key = await admin("POST", `/v1/admin/orgs/${org.id}/keys`, { type: "secret", name: "checkout backend" }, 201);
  await admin("POST", `/v1/admin/keys/${key.id}/disable`);
  // session.blocked: a script's beacon hit in a browser's session (scored block: automation).
  const hs = await s.data({ method: "POST", path: "/v1/handshake", auth: "HOOKS_PUB", headers: { "User-Agent": BROWSER_UA }, body: {} });
  await s.data({
    method: "POST",
    path: "/v1/collect",
    auth: "HOOKS_PUB",
    headers: { "User-Agent": SCRIPT_UA },
    body: { token: hs.token, session_id: hs.session_id, action: "pageview", page: "/checkout" },
  });
  // account.blocked: the sign-in pre-flight of an account from that session.
  const preflight = await s.data({
    method: "POST",
    path: "/v1/auth/check",
    auth: "KEY",
    body: { observation_type: "auth.login", external_user_id: "user-2051", session_id: hs.session_id, user_agent: SCRIPT_UA },
  });
  if (preflight.verdict.decision !== "block") throw new Error(`the pre-flight was not judged block: ${JSON.stringify(preflight.verdict)}`);
  // quota.80_percent, quota.100_percent: the operator's corrections bring the usage to 8,000 and then 10,000 credits.
  const { used } = await admin("GET", `/v1/admin/orgs/${org.id}/usage`);
  await admin("POST", `/v1/admin/orgs/${org.id}/usage/adjust`, { credits: 8_000 - used, reason: "docs example" });
  await admin("POST", `/v1/admin/orgs/${org.id}/usage/adjust`, { credits: 2_000, reason: "docs example" });
  // Corrections are journaled like charges and reach the writer after their answer: the plan changes
  // (and with it the quota) only once they are delivered, or they would count against Pro's quota.
  await deliveries(server.receiver, ["quota.80_percent", "quota.100_percent"]);
  // plan.changed, subscription.changed: Stripe announces the org's Pro trial.
  await stripeEvent(s, server.stripeWebhookSecret, {
    id: "evt_1QxY2zDocsTrial",
    object: "event",
    type: "customer.subscription.created",
    created: Math.floor(Date.now() / 1000),
    data: {
      object: { id: "sub_1QxY2zDocsTrial", object: "subscription", status: "trialing", customer: "cus_QxY2zDocs", metadata: { org_id: org.id, plan: "pro" } },
    },
  });

  // observations.dropped needs a day's observation budget used up: its payload is in the events table only.
  const shown = WEBHOOK_EVENTS.filter((t) => t !== "observations.dropped");
  const delivered = await deliveries(server.receiver, shown);
  for (const type of shown) {
    const d = delivered.get(type)!;
    const headers = normalise(Object.fromEntries(WEBHOOK_HEADERS.map((h) => [h, d.headers[h]]))) as Record<string, string>;
    add(`integrations-webhook-${type.replace(/[._]/g, "-")}`, {
      calls: [],
      headers: Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      answers: [JSON.parse(d.body)],
    });
  }
}

/** Sends `event` to POST /webhooks/stripe signed with `secret`, as Stripe sends it; requires that it was applied. */
async function stripeEvent(s: Session, secret: string, event: Record<string, unknown>): Promise<void> {
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: JSON.stringify(event), secret });
  const receipt = await s.data({ method: "POST", path: "/webhooks/stripe", body: event, hiddenHeaders: { "stripe-signature": signature } });
  if (!receipt.applied) throw new Error(`Stripe event ${String(event.type)} not applied: ${JSON.stringify(receipt)}`);
}

/** Waits (up to `timeoutMs`) until the receiver has answered 2xx to one delivery of each of `types`; the first of each. */
async function deliveries(
  receiver: DocsReceiver,
  types: readonly WebhookEventType[],
  timeoutMs = 30_000,
): Promise<Map<string, DocsReceiver["received"][number]>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = new Map<string, DocsReceiver["received"][number]>();
    for (const r of receiver.received) {
      const type = (JSON.parse(r.body) as { type: string }).type;
      if (r.status >= 200 && r.status < 300 && !got.has(type)) got.set(type, r);
    }
    const missing = types.filter((t) => !got.has(t));
    if (!missing.length) return got;
    if (Date.now() > deadline) throw new Error(`webhook events not delivered within ${timeoutMs} ms: ${missing.join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A block, at any indentation (inside a list item): its lines are written at the same indentation. */
const BLOCK = /^( *)<!-- example: ([a-z0-9-]+) -->\n[\s\S]*?^\1<!-- \/example -->/gm;

/**
 * Makes every example against `server` and returns each file's text with its blocks rewritten.
 * Throws on a block no example fills, and on an example no block shows.
 */
export async function renderDocs(server: DocsServer, files: Record<string, string>): Promise<Record<string, string>> {
  const rendered = await runExamples(new Session(server), server);
  const used = new Set<string>();
  const out: Record<string, string> = {};
  for (const [file, text] of Object.entries(files)) {
    out[file] = text.replace(BLOCK, (_whole, indent: string, name: string) => {
      const body = rendered.get(name);
      if (body === undefined) throw new Error(`${file}: no example named ${name}`);
      if (used.has(name)) throw new Error(`${file}: example ${name} shown twice`);
      used.add(name);
      const lines = [`<!-- example: ${name} -->`, ...body.split("\n"), "<!-- /example -->"];
      return lines.map((l) => (l ? indent + l : l)).join("\n");
    });
  }
  const unused = [...rendered.keys()].filter((n) => !used.has(n));
  if (unused.length) throw new Error(`examples shown in no file: ${unused.join(", ")}`);
  return out;
}

const USAGE = "usage: node dist/scripts/docs-examples.js [--check]";

/** Runs the docs test (integration project): in write mode unless `--check`. */
function main(argv: string[]): number {
  let check: boolean;
  try {
    check = parseArgs({ args: argv, strict: true, options: { check: { type: "boolean", default: false } } }).values.check;
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const env = { ...process.env, FS_DOCS_EXAMPLES: check ? "check" : "write" };
  const vitest = join(REPO_ROOT, "node_modules", ".bin", "vitest");
  const run = spawnSync(vitest, ["run", "--project", "integration", "test/integration/docs.examples.test.ts"], { cwd: REPO_ROOT, env, stdio: "inherit" });
  return run.status ?? 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exit(main(process.argv.slice(2)));
