/**
 * A signup route protected by @fraudscore/next. Run it against a fraudscore service:
 *   cd examples/next-signup && npx next build && FS_URL=http://localhost:8080 FS_KEY=fs_test_… npx next start
 * packages/next/test starts it against the real service, in each mode, through the variables below.
 */
import { protect, type NextProtectOptions } from "@fraudscore/next";

const env = process.env;
const options: NextProtectOptions = {
  baseUrl: env.FS_URL ?? "http://localhost:8080",
  apiKey: env.FS_KEY,
  fields: ["name", "about"],
  kind: env.FS_KIND === "signup" || env.FS_KIND === "login" ? env.FS_KIND : "check",
  mode: env.FS_MODE === "dry_run" ? "dry_run" : "live",
  onError: env.FS_ON_ERROR === "closed" ? "closed" : "open",
  timeoutMs: env.FS_TIMEOUT_MS ? Number(env.FS_TIMEOUT_MS) : undefined,
  // Behind one reverse proxy (or on a platform that sets X-Forwarded-For): TRUST_PROXY=1.
  trustProxy: Number(env.TRUST_PROXY ?? 0),
};

export const POST = protect(options, async (request, verdict) => {
  if (verdict.decision === "block") return Response.json({ ok: false, verdict }, { status: 403 });
  // The body is still there to read: create the account here; hold a `review` for moderation if you like.
  const form = await request.formData();
  return Response.json({ ok: true, verdict, name: form.get("name") }, { status: 201 });
});
