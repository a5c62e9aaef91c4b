import { z } from "zod";
import { SCOPES } from "../../shared/api-keys.js";
import { PLANS, SUBSCRIPTION_STATUSES } from "../../shared/plans.js";
import { NOT_A_CURSOR, pageLimit } from "./params.js";
import { textBlock, textLine } from "./text.js";

const name = textLine(200);

/** POST /v1/admin/orgs */
export const createOrgBody = z.strictObject({ name, plan: z.enum(PLANS).default("free") });

/** PATCH /v1/admin/orgs/{orgId} */
export const patchOrgBody = z
  .strictObject({ plan: z.enum(PLANS).optional(), name: name.optional() })
  .refine((b) => b.plan !== undefined || b.name !== undefined, { message: "give at least one of plan, name" });

/** POST /v1/admin/orgs/{orgId}/projects */
export const createProjectBody = z.strictObject({ name });

/** A key's name: what the operator calls it. */
const keyName = textLine(80).describe("A name to tell keys apart (\"checkout backend\"), at most 80 characters on one line.");

/** PATCH /v1/admin/keys/{keyId} */
export const patchKeyBody = z.strictObject({ name: keyName.nullable().describe("The key's new name; null removes it.") });

/** Most and default seconds the old key of a roll keeps working. */
export const ROLL_GRACE_MAX_SECONDS = 30 * 86_400;
export const ROLL_GRACE_DEFAULT_SECONDS = 86_400;

/** POST /v1/admin/keys/{keyId}/roll */
export const rollKeyBody = z.strictObject({
  grace_seconds: z
    .number()
    .int()
    .min(0)
    .max(ROLL_GRACE_MAX_SECONDS)
    .optional()
    .describe(`How long the old key keeps working, in seconds (0: it stops at once; at most ${ROLL_GRACE_MAX_SECONDS}, 30 days). Default ${ROLL_GRACE_DEFAULT_SECONDS} (a day).`),
});

/** POST /v1/admin/orgs/{orgId}/keys */
export const createKeyBody = z
  .strictObject({
    type: z.enum(["secret", "publishable"]),
    project_id: z.string().min(1).max(64).optional(),
    scopes: z.array(z.enum(SCOPES)).max(SCOPES.length).optional(),
    expires_at: z.iso.datetime({ offset: true }).optional(),
    mode: z.enum(["live", "test"]).optional().describe("`test` for a test-mode key (fs_test_…, fs_pub_test_…): charges nothing, touches no quota, real scoring and the magic inputs. Default `live`."),
    name: keyName.optional(),
  })
  .refine((b) => b.type !== "publishable" || b.project_id !== undefined, {
    message: "a publishable key is bound to a project: give project_id",
    path: ["project_id"],
  })
  .refine((b) => b.type !== "publishable" || b.scopes === undefined || b.scopes.length === 0, {
    message: "publishable keys carry no scopes",
    path: ["scopes"],
  });

/** POST /v1/admin/orgs/{orgId}/usage/adjust: an operator's credit correction. */
export const adjustUsageBody = z.strictObject({
  credits: z.number().int().min(-1_000_000_000).max(1_000_000_000),
  reason: textBlock(500),
});

/** POST /v1/admin/datasets/activate */
export const activateDatasetBody = z.strictObject({ version: z.string().regex(/^ip-[0-9A-Za-z-]{1,80}$/, "a build version name such as ip-20261120T221129Z-a7a70652") });

/** An origin as browsers send it (`scheme://host[:port]`), `*`, or `scheme://*.domain[:port]`. */
const origin = z
  .string()
  .trim()
  .toLowerCase()
  .transform((o) => o.replace(/\/+$/, ""))
  .pipe(
    z.union([
      z.literal("*"),
      z.string().regex(/^https?:\/\/(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/, "an origin such as https://shop.example.com, https://*.example.com or *"),
      z.string().regex(/^https?:\/\/\[[0-9a-f:.]+\](:\d{1,5})?$/, "an origin such as https://shop.example.com, https://*.example.com or *"),
    ]),
  );

/** PATCH /v1/admin/orgs/{orgId}/projects/{projectId} */
export const patchProjectBody = z.strictObject({ allowed_origins: z.array(origin).max(100) });

/*
 * Response schemas of the admin routes: documentation and tests only (GET /openapi.json and the
 * integration tests' contract check), never parsed on the request path.
 */

/** `data` of POST /v1/admin/orgs and PATCH /v1/admin/orgs/{orgId}. */
export const orgResponse = z.object({
  id: z.string(),
  name: z.string(),
  plan: z.enum(PLANS),
  subscription_status: z.enum(SUBSCRIPTION_STATUSES),
  created_at: z.iso.datetime(),
});

/** `data` of POST /v1/admin/orgs/{orgId}/projects. */
export const projectResponse = z.object({ id: z.string(), name: z.string(), org_id: z.string() });

/** `data` of PATCH /v1/admin/orgs/{orgId}/projects/{projectId}. */
export const projectPatchResponse = z.object({ id: z.string(), org_id: z.string(), name: z.string(), allowed_origins: z.array(z.string()) });

const keyFields = {
  id: z.string(),
  type: z.enum(["secret", "publishable"]),
  org_id: z.string(),
  project_id: z.string().nullable(),
  scopes: z.array(z.enum(SCOPES)),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime().nullable(),
  disabled: z.boolean(),
  mode: z.enum(["live", "test"]).describe("`test`: a test-mode key, which charges nothing."),
  name: z.string().nullable().describe("The key's name, null when it has none."),
  last_used_at: z.iso.datetime().nullable().describe("A recent call with the key (recorded at most once a minute per front thread, so up to a minute behind); null if never used."),
  rolled_from: z.string().nullable().describe("The id of the key this one replaced by a roll, or null."),
};

/** `data` of POST /v1/admin/keys/{keyId}/disable: a key without its secret. */
export const keyResponse = z.object(keyFields);

/** Query parameters of the listings in id order (the admin listings, GET /v1/projects). */
export const adminListQuery = {
  limit: pageLimit("Records"),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, NOT_A_CURSOR)
    .optional()
    .describe("`next_cursor` of the previous page."),
};

const nextCursor = z.string().nullable().describe("Pass as `cursor` for the next page; null at the end.");

/** `data` of GET /v1/admin/orgs. */
export const orgListResponse = z.object({ items: z.array(orgResponse), next_cursor: nextCursor });

/** `data` of GET /v1/admin/orgs/{orgId}/projects. */
export const projectListResponse = z.object({
  items: z.array(z.object({ id: z.string(), org_id: z.string(), name: z.string(), created_at: z.iso.datetime(), allowed_origins: z.array(z.string()) })),
  next_cursor: nextCursor,
});

/** `data` of GET /v1/admin/orgs/{orgId}/keys: keys without their secrets. */
export const keyListResponse = z.object({ items: z.array(keyResponse), next_cursor: nextCursor });

/** `data` of DELETE /v1/admin/keys/{keyId}. */
export const deletedKeyResponse = z.object({ id: z.string(), deleted: z.literal(true) });

/** `data` of POST /v1/admin/orgs/{orgId}/keys: the key, with the plain key shown this once. */
export const createdKeyResponse = z.object({
  ...keyFields,
  key_redacted: z.string().describe("The key's prefix and last 4 characters (fs_live_…Uv2X), to tell keys apart; kept for replays."),
  key: z.string().nullable().describe("The plain key (fs_live_... or fs_pub_live_...), only in the first answer; null in a replay (Idempotency-Key): it was shown once and is stored nowhere."),
  key_already_shown: z.boolean().describe("true in a replay of this call: the plain key was shown in the first answer and cannot be shown again; create a new key if it was lost."),
});

/** `data` of POST /v1/admin/keys/{keyId}/roll: the new key (its secret shown this once) and the old one, now expiring. */
export const rolledKeyResponse = createdKeyResponse.extend({ previous: keyResponse.describe("The rolled key, with its new `expires_at` (the end of the grace period).") });

/** `data` of POST /v1/admin/orgs/{orgId}/usage/adjust. */
export const usageAdjustResponse = z.object({
  org_id: z.string(),
  period: z.string().regex(/^(\d{6}|b\d{1,12})$/).describe("Ledger period: YYYYMM, or b<start in epoch s> for a Stripe billing period."),
  used: z.number().int().min(0),
  quota: z.number().int().nullable(),
});

const sourceStatus = z.enum(["ok", "missing", "failed"]);

/** `data` of GET /v1/admin/datasets. */
export const datasetsResponse = z.object({
  ip: z.object({
    loaded: z.string().describe("Version of the build in service."),
    source: z.string(),
    built_at: z.string(),
    sources: z.array(
      z.object({
        id: z.string(),
        kind: z.string(),
        status: sourceStatus,
        reason: z.string().nullable(),
        rows: z.number().int(),
        bad_rows: z.number().int(),
        sha256: z.string().nullable(),
        data_date: z.string().nullable(),
        taken: z.string().nullable().optional(),
        upstream: z.string(),
        licence: z.string(),
        note: z.string().nullable().optional(),
      }),
    ),
    builds: z.array(z.object({ version: z.string(), built_at: z.string().nullable(), source: z.string().nullable() })).describe("Every build on disk, newest first."),
  }),
});

/** `data` of POST /v1/admin/datasets/reload and /activate. */
export const datasetSwitchResponse = z.object({
  loaded: z.string().describe("Version now in service."),
  previous: z.string(),
  changed: z.boolean(),
});
