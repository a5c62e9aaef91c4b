/** Checks shared by the service's scenarios: the envelope around every answer (docs/api.md, "Envelope"). */

/** A parsed envelope, loosely typed: scenarios check the fields they care about. */
export interface LooseEnvelope {
  version?: unknown;
  data?: any;
  error?: { code?: unknown } | null;
  metadata?: { request_id?: unknown };
}

/** The problem with an envelope (wrong version, no request id, error where data was due), or null. */
export function envelopeProblem(body: unknown, want: "data" | "error"): string | null {
  if (typeof body !== "object" || body === null) return "body is not a JSON object";
  const e = body as LooseEnvelope;
  if (e.version !== "1") return `envelope version ${JSON.stringify(e.version)}, expected "1"`;
  if (typeof e.metadata?.request_id !== "string") return "metadata.request_id missing";
  if (want === "data" && (e.error !== null || e.data === null || e.data === undefined)) return `expected data, got error ${JSON.stringify(e.error)}`;
  if (want === "error" && (e.data !== null || !e.error)) return "expected an error envelope";
  return null;
}
