import { z } from "zod";
import { MAX_TOKEN_LENGTH } from "../../challenge/pow.js";

/**
 * POST /v1/challenge/verify. `token` is the widget's form field value (base64 JSON); a string
 * that is not a well-formed token is still a valid request, answered `valid: false, malformed`.
 */
export const challengeVerifyBody = z.object({
  token: z.string().min(1).max(MAX_TOKEN_LENGTH),
});

export type ChallengeVerifyBody = z.infer<typeof challengeVerifyBody>;
