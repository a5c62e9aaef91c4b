import { z } from "zod";

/*
 * Path parameters as GET /openapi.json documents them. Handlers read them from the snapshot
 * (an unknown id is a 404 from the lookup), so these are documentation only.
 */

/** `{orgId}`. */
export const orgIdParam = z.string().max(64).describe("The org's id (org_...). With a secret key, `me` names the key's own org.");
/** `{projectId}`. */
export const projectIdParam = z.string().max(64).describe("The project's id (prj_...).");
/** `{keyId}`. */
export const keyIdParam = z.string().max(64).describe("The key's id (key_...), as POST /v1/admin/orgs/{orgId}/keys answered it.");
