import { z } from "zod";
import { PLANS, SUBSCRIPTION_STATUSES } from "../../shared/plans.js";

/*
 * Response schema of GET /v1/orgs/{orgId}/usage: documentation and tests only (GET
 * /openapi.json and the integration tests' contract check), never parsed on the request path.
 */

/** `data` of GET /v1/orgs/{orgId}/usage: the usage record. */
export const usageResponse = z.object({
  plan: z.enum(PLANS),
  monthly_quota: z.number().int().nullable().describe("Included credits per period; null for unmetered plans."),
  used: z.number().int().describe("Credits used in this period."),
  remaining: z.number().int().min(0).nullable().describe("Included credits left; null for unmetered plans."),
  period: z.string().regex(/^\d{6}$/).describe("YYYYMM of the period's start."),
  period_end: z.iso.datetime().describe("When usage resets."),
  overage: z.number().int().min(0).describe("Credits beyond the quota this period."),
  overage_reported: z.number().int().min(0).describe("Of the overage: acknowledged by Stripe's meter."),
  overage_pending: z.number().int().min(0).describe("Of the overage: sent or still to be sent to Stripe."),
  subscription_status: z.enum(SUBSCRIPTION_STATUSES),
  trial_end: z.iso.datetime().nullable().describe("End of a Stripe trial; null without one."),
  behind: z
    .object({
      records: z.number().int().min(0).describe("Debits answered by the node that answered this call and not in the shared ledger yet."),
      seconds: z.number().min(0).describe("Age of the oldest of them, in seconds."),
    })
    .nullable()
    .describe("In a cluster, when this node's debits take a second or more to reach PostgreSQL (slow or away): how far `used` is behind what it answered. Null otherwise."),
});
