import { z } from "zod";
import { MAX_TOKEN_LENGTH } from "../../front/challenge/pow.js";

/**
 * POST /v1/challenge/verify. `token` is the widget's form field value (base64 JSON); a string
 * that is not a well-formed token is still a valid request, answered `valid: false, malformed`.
 */
export const challengeVerifyBody = z.object({
  token: z.string().min(1).max(MAX_TOKEN_LENGTH),
});

export type ChallengeVerifyBody = z.infer<typeof challengeVerifyBody>;

/*
 * Response schemas of the challenge routes: documentation and tests only (GET /openapi.json and
 * the integration tests' contract check), never parsed on the request path.
 */

/** `data` of GET /v1/challenge. `challenge` is altcha-lib's format, so unknown fields are allowed. */
export const challengeResponse = z.object({
  challenge: z
    .looseObject({
      parameters: z.looseObject({
        algorithm: z.string(),
        nonce: z.string(),
        salt: z.string(),
        cost: z.number().int(),
        keyLength: z.number().int(),
        keyPrefix: z.string(),
        expiresAt: z.number().int().optional(),
        data: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
      }),
      signature: z.string().optional(),
    })
    .describe("The ALTCHA challenge for the widget."),
  expires_at: z.number().int().describe("Epoch ms."),
  difficulty: z.object({ algorithm: z.string(), cost: z.number().int().min(1), max_counter: z.number().int().min(0) }),
});

/** `data` of POST /v1/challenge/verify. */
export const challengeVerifyResponse = z.object({
  valid: z.boolean(),
  reason: z.enum(["malformed", "bad_signature", "expired", "wrong_project", "already_used", "wrong_solution"]).nullable().describe("Why it is not valid; null when it is."),
  project_id: z.string().nullable().describe("The challenge's project, once its signature checked out."),
  expires_at: z.number().int().nullable().describe("Epoch ms, once its signature checked out."),
});
