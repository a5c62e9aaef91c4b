import { z } from "zod";
import { FLAGS } from "../../scoring/content/flags.js";

/** POST /v1/content */
export const contentBody = z.strictObject({
  text: z.string().min(1, "give the text to score").max(50_000),
});

/*
 * Response schema of POST /v1/content: documentation and tests only (GET /openapi.json and the
 * integration tests' contract check), never parsed on the request path.
 */

const probability = z.number().min(0).max(1);

/** `data` of POST /v1/content. */
export const contentResponse = z.object({
  score: probability.describe("The calibrated spam probability."),
  decision: z.enum(["allow", "review", "block"]),
  spam_probability: probability,
  language: z.string().nullable().describe("ISO 639-1 language; null when the text is too short to tell."),
  flags: z.array(z.enum(FLAGS)),
  categories: z.object({ spam: probability, fraud: probability, cold_email: probability }),
  model_version: z.string(),
});
