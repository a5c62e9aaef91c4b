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

/*
 * Response schemas of the billing routes: documentation and tests only (GET /openapi.json and
 * the integration tests' contract check), never parsed on the request path.
 */

/** `data` of POST /v1/orgs/{orgId}/billing/checkout. */
export const checkoutResponse = z.object({
  url: z.string().describe("Stripe Checkout page to send the customer to."),
  session_id: z.string().describe("Stripe Checkout Session id (cs_...)."),
});

/** `data` of POST /v1/orgs/{orgId}/billing/portal. */
export const portalResponse = z.object({ url: z.string().describe("Stripe billing portal page for the org's customer.") });

/**
 * The body of POST /webhooks/stripe: a Stripe event, read raw (the signature covers its exact
 * bytes). Documentation only; Stripe's own reference describes every field.
 */
export const stripeEventBody = z.looseObject({
  id: z.string(),
  object: z.literal("event"),
  type: z.string(),
  created: z.number().int().describe("Epoch seconds. This date and the others the service reads (trial end, billing period bounds) must lie between 2000-01-01 and 10 years from now, else 400 VALIDATION_ERROR."),
  data: z.looseObject({ object: z.looseObject({}) }),
});

/** `data` of POST /webhooks/stripe: the receipt Stripe's delivery log shows. */
export const stripeWebhookResponse = z.object({
  received: z.literal(true),
  id: z.string().describe("The event id."),
  type: z.string().describe("The event type."),
  duplicate: z.boolean().describe("The event was applied before; nothing changed now."),
  applied: z.boolean().describe("The event changed the org (false for stale or informational events)."),
});
