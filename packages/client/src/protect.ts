/**
 * The framework-neutral part of the middleware (@fraudscore/express, @fraudscore/fastify): from a
 * submitted form and its request, one call to POST /v1/check (forms) or POST /v1/auth/check
 * (signups and logins), and a verdict the route acts on. The adapters only read their framework's
 * request (fields, client IP as the framework's trusted-proxy setting gives it, User-Agent).
 */
import { createClient, type ClientOptions } from "./client.js";
import type { FraudscoreError } from "./errors.js";

/** The beacon's form field (the script tag's `data-field`, default `_fs_signals`). */
export const DEFAULT_SIGNALS_FIELD = "_fs_signals";

/** How the middleware protects a route. */
export interface ProtectOptions extends Pick<ClientOptions, "baseUrl" | "apiKey" | "fetch"> {
  /** `check` (default): POST /v1/check with the form. `signup` / `login`: the pre-flight POST /v1/auth/check (key scope `sessions`). */
  kind?: "check" | "signup" | "login";
  /** The form's id, as /v1/check's `form_id` (default "form"). */
  formId?: string;
  /** Form fields sent for content scoring (default: none; the e-mail field is sent as metadata.email). */
  fields?: string[];
  /** The field holding the e-mail address (default "email"). */
  emailField?: string;
  /** The beacon's field (default `_fs_signals`). */
  signalsField?: string;
  /** The honeypot field, if the form has one. */
  honeypotField?: string;
  /** `live` (default): the verdict is the service's. `dry_run`: logged, and the route is told `allow`. */
  mode?: "live" | "dry_run";
  /**
   * When the service cannot be reached or answers an error within `timeoutMs`: `open` (default)
   * lets the submission through (`allow`), `closed` refuses it (`block`). Either way the verdict
   * says so (`source`) and carries the error.
   */
  onError?: "open" | "closed";
  /** Milliseconds to wait for the service (default 2000); no retry, a form should not wait. */
  timeoutMs?: number;
  /** Where dry-run verdicts and failures are logged (default console.warn). */
  log?: (message: string, verdict: Verdict) => void;
}

/** What the middleware puts on the request. */
export interface Verdict {
  /** What the route should do: the service's decision, `allow` in a dry run, or the onError choice. */
  decision: "allow" | "review" | "block";
  /** `service`: decided by the service; `fail_open` / `fail_closed`: the service could not decide. */
  source: "service" | "fail_open" | "fail_closed";
  /** The service's score (0-1); null when it could not decide. */
  score: number | null;
  /** The service's decision even in a dry run; null when it could not decide. */
  observed: "allow" | "review" | "block" | null;
  isDryRun: boolean;
  /** The service's request id, for support and logs; null when no answer came. */
  requestId: string | null;
  /** Why the service could not decide. */
  error: FraudscoreError | null;
}

/** What an adapter read from its framework's request. */
export interface Submission {
  /** The parsed form (urlencoded or JSON body). */
  body: Record<string, unknown> | undefined | null;
  /** The client address as the framework gives it (honouring its trusted-proxy setting). */
  ip: string | undefined;
  userAgent: string | undefined;
}

/**
 * A function that judges one submission. Build it once per route.
 * @example const judge = createProtector({ baseUrl, apiKey, fields: ["message"] }); const v = await judge({ body, ip, userAgent });
 */
export function createProtector(options: ProtectOptions): (submission: Submission) => Promise<Verdict> {
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, fetch: options.fetch, timeoutMs: options.timeoutMs ?? 2000, retry: { maxRetries: 0 } });
  const isDryRun = options.mode === "dry_run";
  const log = options.log ?? ((message: string) => console.warn(message));
  return async (submission) => {
    const kind = options.kind ?? "check";
    const result =
      kind === "check"
        ? await client.post("/v1/check", { body: checkBody(options, submission) }).then((r) => (r.ok ? { ok: true as const, score: r.data.score, decision: r.data.decision, requestId: r.requestId } : r))
        : await client.post("/v1/auth/check", { body: authBody(options, submission, kind) }).then((r) => (r.ok ? { ok: true as const, score: r.data.verdict.score, decision: r.data.verdict.decision, requestId: r.requestId } : r));
    if (!result.ok) {
      const closed = options.onError === "closed";
      const verdict: Verdict = { decision: closed ? "block" : "allow", source: closed ? "fail_closed" : "fail_open", score: null, observed: null, isDryRun, requestId: result.error.requestId, error: result.error };
      log(`fraudscore: no verdict (${result.error.code}: ${result.error.message}); ${closed ? "refusing" : "letting through"} (onError: ${closed ? "closed" : "open"})`, verdict);
      return verdict;
    }
    const verdict: Verdict = { decision: isDryRun ? "allow" : result.decision, source: "service", score: result.score, observed: result.decision, isDryRun, requestId: result.requestId, error: null };
    if (isDryRun) log(`fraudscore dry run: ${result.decision} (score ${result.score}, request ${result.requestId})`, verdict);
    return verdict;
  };
}

function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && typeof value[0] === "string") return value[0];
  return undefined;
}

function checkBody(options: ProtectOptions, s: Submission) {
  const body = s.body ?? {};
  const formData: Record<string, string> = {};
  for (const name of options.fields ?? []) {
    const value = text(body[name]);
    if (value !== undefined) formData[name] = value;
  }
  const signals = text(body[options.signalsField ?? DEFAULT_SIGNALS_FIELD]);
  // The service reads the beacon's field under its default name.
  if (signals !== undefined) formData[DEFAULT_SIGNALS_FIELD] = signals;
  const email = text(body[options.emailField ?? "email"]);
  const honeypot = options.honeypotField === undefined ? undefined : (text(body[options.honeypotField]) ?? "");
  return {
    form_id: options.formId ?? "form",
    ...(Object.keys(formData).length > 0 ? { form_data: formData } : {}),
    metadata: { ...(email ? { email } : {}), ...(s.ip ? { ip: s.ip } : {}), ...(s.userAgent ? { user_agent: s.userAgent } : {}), ...(honeypot !== undefined ? { honeypot_field: honeypot } : {}) },
  };
}

function authBody(options: ProtectOptions, s: Submission, kind: "signup" | "login") {
  const body = s.body ?? {};
  const email = text(body[options.emailField ?? "email"]);
  const sessionId = sessionOf(text(body[options.signalsField ?? DEFAULT_SIGNALS_FIELD]));
  return {
    observation_type: kind === "signup" ? ("auth.signup" as const) : ("auth.login" as const),
    ...(email ? { email } : {}),
    ...(s.ip ? { ip: s.ip } : {}),
    ...(s.userAgent ? { user_agent: s.userAgent } : {}),
    ...(sessionId ? { session_id: sessionId } : {}),
  };
}

/** The beacon session id in its field (`{"v":1,"session_id":…}`), if the field holds one. */
function sessionOf(field: string | undefined): string | undefined {
  if (field === undefined) return undefined;
  try {
    const parsed = JSON.parse(field) as { session_id?: unknown };
    return typeof parsed.session_id === "string" && parsed.session_id.length <= 128 ? parsed.session_id : undefined;
  } catch {
    return undefined;
  }
}
