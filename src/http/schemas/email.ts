import { z } from "zod";

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
