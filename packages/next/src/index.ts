/**
 * @fraudscore/next: protect a form or signup of a Next.js app (App Router). `protect` wraps a route
 * handler: it reads the submitted form (urlencoded, multipart or JSON, from a clone of the
 * request, so the handler can still read the body), the client address (from X-Forwarded-For or
 * X-Real-IP, only with `trustProxy`: Next has no trusted-proxy setting of its own) and the
 * User-Agent, asks fraudscore, and hands the verdict to the handler, which decides.
 * `createFormJudge` does the same for a Server Action's FormData.
 *
 * @example
 * export const POST = protect({ baseUrl, apiKey, kind: "signup", trustProxy: 1 }, async (request, verdict) => {
 *   if (verdict.decision === "block") return new Response("Refused", { status: 403 });
 *   // ... create the account
 * });
 */
import { createProtector, type ProtectOptions, type Verdict } from "@fraudscore/client";

export type { ProtectOptions, Verdict } from "@fraudscore/client";

/** What `protect` and `createFormJudge` take: the middleware's options and the app's proxies. */
export interface NextProtectOptions extends ProtectOptions {
  /**
   * Which proxies in front of the app to believe about the client's address. `false` (default):
   * none, and no address is sent (`next start` fills X-Forwarded-For itself only when a request
   * has none, so a client can write it). A number: that many proxies each append the address they
   * saw to X-Forwarded-For, and the client is the entry that many from its end (1: one reverse
   * proxy, or a platform such as Vercel). `true`: every proxy is trusted, the first entry is taken.
   * X-Real-IP is read when X-Forwarded-For is absent.
   */
  trustProxy?: boolean | number;
}

/** The headers of a request, or what `headers()` of next/headers gives a Server Action. */
export interface HeadersLike {
  get(name: string): string | null;
}

/**
 * Wraps an App Router route handler: the handler runs with the verdict (never refused by the
 * wrapper itself: when the service cannot decide, `onError` chooses the verdict).
 * @param options the service, the key, what to read, and `trustProxy`
 * @param handler the route, given the request (its body unread), the verdict and Next's context
 */
export function protect<R extends Request, C>(
  options: NextProtectOptions,
  handler: (request: R, verdict: Verdict, context: C) => Response | Promise<Response>,
): (request: R, context: C) => Promise<Response> {
  const judge = createRequestJudge(options);
  return async (request, context) => handler(request, await judge(request), context);
}

/**
 * A function that judges one request of a route handler, for routes that want to call it
 * themselves (or only on some requests). Build it once per route.
 */
export function createRequestJudge(options: NextProtectOptions): (request: Request) => Promise<Verdict> {
  const judge = createFormJudge(options);
  return async (request) => judge(await fieldsOf(request), request.headers);
}

/**
 * For a Server Action: a function that judges a submitted FormData with the request's headers.
 * @example
 * const judge = createFormJudge({ baseUrl, apiKey, kind: "signup" });
 * export async function signup(form: FormData) {
 *   "use server";
 *   const verdict = await judge(form, await headers()); // headers from next/headers
 * }
 */
export function createFormJudge(options: NextProtectOptions): (form: FormData | Record<string, unknown> | undefined, headers: HeadersLike) => Promise<Verdict> {
  const judge = createProtector(options);
  const trustProxy = options.trustProxy ?? false;
  return (form, headers) =>
    judge({
      body: isFormData(form) ? recordOf(form) : form,
      ip: clientAddress(headers, trustProxy),
      userAgent: headers.get("user-agent") ?? undefined,
    });
}

/**
 * The client's address as the trusted proxies give it (see `trustProxy`), or undefined.
 * @example clientAddress(new Headers({ "x-forwarded-for": "203.0.113.9, 10.0.0.2" }), 2) // "203.0.113.9"
 */
export function clientAddress(headers: HeadersLike, trustProxy: boolean | number): string | undefined {
  if (trustProxy === false || trustProxy === 0) return undefined;
  const forwarded = headers.get("x-forwarded-for");
  if (forwarded === null) return headers.get("x-real-ip")?.trim() || undefined;
  const hops = forwarded.split(",");
  const index = trustProxy === true ? 0 : Math.max(0, hops.length - trustProxy);
  return hops[index]?.trim() || undefined;
}

function isFormData(value: unknown): value is FormData {
  return typeof FormData !== "undefined" && value instanceof FormData;
}

/** The body's fields from a clone of the request: a form or a JSON object; undefined otherwise or when it does not parse. */
async function fieldsOf(request: Request): Promise<FormData | Record<string, unknown> | undefined> {
  const type = request.headers.get("content-type") ?? "";
  try {
    if (type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data")) return await request.clone().formData();
    if (/^application\/(.+\+)?json/.test(type)) {
      const parsed: unknown = await request.clone().json();
      return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
    }
  } catch {
    // A body that does not parse has no fields to send; the route answers it as it would.
  }
  return undefined;
}

/** A form's text fields (files left out), a repeated field as an array, as the other adapters' body parsers give them. */
function recordOf(form: FormData): Record<string, unknown> {
  const record: Record<string, string | string[]> = {};
  form.forEach((value, name) => {
    if (typeof value !== "string") return;
    const seen = record[name];
    if (seen === undefined) record[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else record[name] = [seen, value];
  });
  return record;
}
