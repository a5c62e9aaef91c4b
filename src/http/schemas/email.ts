import { z } from "zod";
import type { EmailReason, EmailSyntaxError } from "../../scoring/email.js";

/**
 * Longest `email` value accepted at all. Beyond it the request is malformed (400); up to it, an
 * address that breaks the syntax rules (e.g. over 254 octets) is an answer: 200, invalid_syntax.
 */
export const EMAIL_FIELD_MAX = 1024;

/**
 * POST /v1/email. Strict: an unknown field is a 400 naming it, so a misspelt field name (`mail`)
 * is not silently scored as nothing.
 * @example { "email": "jane.doe+news@gmail.com" }
 */
export const emailBody = z.strictObject({
  email: z
    .string({ error: (issue) => (issue.input === undefined ? "required: the address to check, as a string" : "must be a string") })
    .max(EMAIL_FIELD_MAX, `at most ${EMAIL_FIELD_MAX} characters`),
});

export type EmailBody = z.infer<typeof emailBody>;

/*
 * Response schema of POST /v1/email: documentation and tests only (GET /openapi.json and the
 * integration tests' contract check), never parsed on the request path.
 */

const REASONS = [
  "invalid_syntax",
  "disposable_domain",
  "no_mx",
  "mx_unresolved",
  "implicit_mx",
  "possible_typo",
  "role_account",
  "plus_address",
  "free_provider",
] as const satisfies readonly EmailReason[];
const SYNTAX_ERRORS = [
  "empty",
  "too_long",
  "missing_at",
  "multiple_at",
  "local_empty",
  "local_too_long",
  "local_invalid",
  "domain_empty",
  "domain_literal",
  "domain_too_long",
  "domain_invalid",
  "domain_single_label",
  "tld_invalid",
] as const satisfies readonly EmailSyntaxError[];
// Fail to compile when scoring/email.ts gains a reason or syntax error these lists lack.
const listsAreExhaustive: [[EmailReason] extends [(typeof REASONS)[number]] ? true : never, [EmailSyntaxError] extends [(typeof SYNTAX_ERRORS)[number]] ? true : never] = [true, true];
void listsAreExhaustive;

/** `data` of POST /v1/email: scoring/email.ts's EmailAnalysis. */
export const emailResponse = z.object({
  email: z.string().describe("The address as received, trimmed."),
  normalized: z.string().nullable().describe("Lower case, +tag removed, provider-ignored dots removed; null when invalid."),
  domain: z.string().nullable().describe("ASCII (A-label) domain, lower case; null when the syntax is invalid."),
  score: z.number().min(0).max(1),
  decision: z.enum(["allow", "review", "block"]),
  reasons: z.array(z.enum(REASONS)).describe("Most serious first."),
  signals: z.object({
    valid_syntax: z.boolean(),
    syntax_error: z.enum(SYNTAX_ERRORS).nullable(),
    disposable: z.boolean(),
    free_provider: z.boolean(),
    role_account: z.boolean(),
    role_category: z.enum(["marketing", "notification", "meeting", "other"]).nullable(),
    plus_address: z.boolean(),
    typo_suggestion: z.string().nullable(),
    mx: z.object({
      found: z.boolean().nullable().describe("null: not known (DNS failed, or no lookup)."),
      outcome: z.enum(["found", "none", "unresolved", "skipped"]),
      hosts: z.array(z.string()),
      implicit: z.boolean(),
      null_mx: z.boolean(),
    }),
  }),
});

/** Metadata of POST /v1/check and /v1/auth/check: present only when a test-mode key's MX lookup was skipped. */
export const testDnsMetadata = {
  mx_cache: z
    .literal("test_budget")
    .optional()
    .describe("Only with a test-mode key whose org spent its DNS lookups (docs/api.md, Test mode): the e-mail's domain was not cached and not looked up (reason mx_unresolved)."),
};

/** Metadata fields of POST /v1/email. */
export const emailMetadata = {
  mx_cache: z
    .enum(["hit", "miss", "skipped", "test_budget"])
    .describe("Whether DNS was queried (miss), answered from cache (hit), not asked (skipped: invalid syntax), or not asked as a test-mode key's org spent its DNS lookups (test_budget; the domain was not cached)."),
};
