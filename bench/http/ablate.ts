/**
 * Ablated builds, for measuring what a required part of a request costs (bench/README.md,
 * "Reading the results"): a temporary copy of dist/ with parts cut out of the compiled request
 * path, served instead of the real build by `node dist/bench/run.js --only http --ablate ...`.
 *
 * Never the product: an ablated build answers wrongly on purpose (resolve's counts are all 0,
 * collect stores nothing, check's content analysis is fixed). Each cut is a textual edit of the
 * compiled JavaScript that must match exactly once, so a change to the code makes the cut fail
 * loudly (and its unit test) instead of silently measuring something else.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/config/index.js";

/** One edit of a compiled file under dist/src: `find` must occur exactly once. */
interface Edit {
  file: string;
  find: string;
  replace: string;
}

const ZERO_COUNTS =
  "{ ok: true, value: { accounts_sharing_session: 0, accounts_sharing_fingerprint: 0, accounts_sharing_ip: 0, accounts_sharing_prefix: 0, linked_emails: 0, linked_accounts: 0, new_account: false } }";
const ALLOWED = '{ ok: true, value: { allowed: true, count: 1, linked_identities: 0, budget: "account", retry_at: null } }';
const FIXED_CONTENT = 'Promise.resolve({ spam_probability: 0.05, fraud: 0.01, cold_email: 0.02, language: "en", flags: [] })';

/** What each cut removes, as edits. */
export const CUTS = {
  /** zod validation of the body: the parsed JSON is used as it is. */
  zod: [{ file: "http/validate.js", find: "export function validate(schema, value, root) {", replace: "export function validate(schema, value, root) {\n    return value;" }],
  /** Charging the credits: the hold is released and the answer written at once. */
  charge: [
    {
      file: "http/pipeline.js",
      find: "deps.quota.charge(orgId,",
      replace: "if (hold) deps.quota.release(hold);\n            writeData(res, state, status, result.data, metadata, metadataJson, headers);\n            return;\n            deps.quota.charge(orgId,",
    },
  ],
  /**
   * The single writer and the observation journal on the hot paths: resolve answers zero counts
   * and meter an allow without the round trip (the identifiers are not hashed either), and a
   * beacon hit is answered without being journaled.
   */
  writer: [
    { file: "http/routes/sessions-resolve.post.js", find: "const ack = ackOrThrow(await deps.store.send({", replace: `const ack = ${ZERO_COUNTS} ?? ackOrThrow(await deps.store.send({` },
    { file: "http/routes/meter.post.js", find: "const ack = ackOrThrow(await deps.store.send({", replace: `const ack = ${ALLOWED} ?? ackOrThrow(await deps.store.send({` },
    {
      file: "front/beacon/hits.js",
      find: "services.journal.appendOwned(rec, (err) => {",
      replace: "resolve({ data: hitAnswerJson(rec.id, sessionId), credits: 0, neverBlock: true });\n                return;\n                services.journal.appendOwned(rec, (err) => {",
    },
  ],
  /** The RateLimit-Policy and RateLimit headers of metered answers (added after efaf249). */
  ratelimit: [{ file: "http/pipeline.js", find: "function withRateLimit(c, headers, orgId) {", replace: "function withRateLimit(c, headers, orgId) {\n    return headers;" }],
  /** Metrics: no histogram observation and no access-log sampling per answer (GET /metrics stays). */
  metrics: [{ file: "front/metrics.js", find: "export function recordAnswer(state, status) {", replace: "export function recordAnswer(state, status) {\n    return;" }],
  /** Credits counted per route and plan for GET /metrics (added after efaf249). */
  counters: [{ file: "front/counters.js", find: "export function countCredits(route, plan, credits) {", replace: "export function countCredits(route, plan, credits) {\n    return;" }],
  /** The beacon's server-side tells (added after efaf249): no client hints or header order read, no tells scored. */
  tells: [
    { file: "http/request.js", find: "const order = client && readsHeaderOrder(userAgent) ? [] : null;", replace: "const order = null;" },
    { file: "http/request.js", find: "client: client ? clientHeaders(req, order ?? NO_ORDER) : null,", replace: "client: null," },
  ],
  /** The content model in POST /v1/check: a fixed analysis instead of the pool's. */
  content: [{ file: "http/routes/check.post.js", find: "deps.content.analyze(text.text)", replace: FIXED_CONTENT }],
} satisfies Record<string, Edit[]>;

export type CutName = keyof typeof CUTS;

/** The cut names in `list`, or an error naming the unknown one. */
export function parseCuts(list: string[]): CutName[] {
  for (const name of list) if (!(name in CUTS)) throw new Error(`unknown cut '${name}'; known: ${Object.keys(CUTS).join(", ")}`);
  return list as CutName[];
}

/** Applies one edit to a file's text; throws unless `find` occurs exactly once. */
export function applyEdit(text: string, edit: Edit): string {
  const at = text.indexOf(edit.find);
  if (at < 0 || text.indexOf(edit.find, at + 1) >= 0) {
    throw new Error(`cut does not apply to dist/src/${edit.file}: ${at < 0 ? "not found" : "found more than once"}: ${edit.find}`);
  }
  return text.slice(0, at) + edit.replace + text.slice(at + edit.find.length);
}

/**
 * A copy of `from`'s dist/ (default this checkout's) with `cuts` applied, beside links to its
 * node_modules, data and beacon.
 */
export function ablatedBuild(cuts: CutName[], from: string = REPO_ROOT): { root: string; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), "fs-ablated-"));
  const cleanup = (): void => rmSync(root, { recursive: true, force: true });
  try {
    cpSync(join(from, "dist"), join(root, "dist"), { recursive: true });
    for (const name of ["node_modules", "data", "beacon", "package.json"]) symlinkSync(join(from, name), join(root, name));
    for (const cut of cuts) {
      for (const edit of CUTS[cut]) {
        const path = join(root, "dist/src", edit.file);
        writeFileSync(path, applyEdit(readFileSync(path, "utf8"), edit));
      }
    }
    return { root, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}
