import { z } from "zod";

/*
 * Path parameters and the query parameters listings share. The router reads them with these
 * schemas (src/http/inputs.ts: percent-decoded, validated, handed to the handler by name) and GET
 * /openapi.json documents them. An id of the right shape that names nothing (or what the key may
 * not see) is a 404 from the handler's lookup.
 */

/** `{orgId}`. */
export const orgIdParam = z.string().max(64).describe("The org's id (org_...). With a secret key, `me` names the key's own org.");
/** `{projectId}`. */
export const projectIdParam = z.string().max(64).describe("The project's id (prj_...).");
/** `{keyId}`. */
export const keyIdParam = z.string().max(64).describe("The key's id (key_...), as POST /v1/admin/orgs/{orgId}/keys answered it.");

/** `limit` of a listing: records per page, 1 to 100, 50 when absent. */
export function pageLimit(what: string) {
  return z.coerce.number().int().min(1).max(100).default(50).describe(`${what} per page.`);
}

/** The message of a `cursor` that no page of the listing returned. */
export const NOT_A_CURSOR = "not a cursor this listing returned";
