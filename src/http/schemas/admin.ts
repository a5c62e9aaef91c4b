import { z } from "zod";
import { SCOPES } from "../../shared/api-keys.js";
import { PLANS } from "../../shared/plans.js";

const name = z.string().trim().min(1).max(200);

/** POST /v1/admin/orgs */
export const createOrgBody = z.strictObject({ name, plan: z.enum(PLANS).default("free") });

/** PATCH /v1/admin/orgs/{orgId} */
export const patchOrgBody = z
  .strictObject({ plan: z.enum(PLANS).optional(), name: name.optional() })
  .refine((b) => b.plan !== undefined || b.name !== undefined, { message: "give at least one of plan, name" });

/** POST /v1/admin/orgs/{orgId}/projects */
export const createProjectBody = z.strictObject({ name });

/** POST /v1/admin/orgs/{orgId}/keys */
export const createKeyBody = z
  .strictObject({
    type: z.enum(["secret", "publishable"]),
    project_id: z.string().min(1).max(64).optional(),
    scopes: z.array(z.enum(SCOPES)).max(SCOPES.length).optional(),
    expires_at: z.iso.datetime({ offset: true }).optional(),
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
  reason: z.string().trim().min(1).max(500),
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
