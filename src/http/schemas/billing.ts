import { z } from "zod";

const url = z.string().url().max(2048);

/** POST /v1/orgs/{orgId}/billing/checkout */
export const checkoutBody = z.strictObject({
  plan: z.enum(["pro", "business"]),
  success_url: url.optional(),
  cancel_url: url.optional(),
});

/** POST /v1/orgs/{orgId}/billing/portal */
export const portalBody = z.strictObject({ return_url: url.optional() });
