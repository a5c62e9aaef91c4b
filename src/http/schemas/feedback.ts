import { z } from "zod";
import { FLAGS } from "../../scoring/content/flags.js";
import { checkShape } from "./check.js";
import { NOT_A_CURSOR, pageLimit } from "./params.js";

const label = z.enum(["spam", "ham"]);
const probability = z.number().min(0).max(1);

/**
 * POST /v1/feedback: a label for an earlier check named by its request id, or for content sent
 * again in the shape of POST /v1/check (its form_data is read as that call reads it).
 */
export const feedbackBody = z
  .strictObject({
    label: label.describe("`spam`: the check let abuse through or should have; `ham`: a legitimate submission."),
    request_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, "a request id as checks answer it (metadata.request_id)").optional().describe("The request id of a check of your org (its answer's metadata.request_id)."),
    form_id: checkShape.form_id.optional(),
    form_data: checkShape.form_data,
    metadata: checkShape.metadata,
  })
  .refine((b) => (b.request_id === undefined) !== (b.form_data === undefined), { message: "give either request_id or form_data (the check's content), not both" });

export type FeedbackBody = z.infer<typeof feedbackBody>;

/** The org's feedback figures (part of several answers). */
const feedbackCounts = z.object({
  spam: z.number().int().min(0).describe("Examples the org model counts as spam."),
  ham: z.number().int().min(0).describe("Examples the org model counts as ham."),
  relabelled: z.number().int().min(0).describe("Feedback that changed an earlier label."),
  repeated: z.number().int().min(0).describe("Feedback that repeated an earlier label (counted once)."),
});

export const feedbackResponse = z.object({
  label,
  target: z.enum(["request", "content"]),
  request_id: z.string().nullable().describe("The check the label is for; null for content sent again."),
  outcome: z.enum(["recorded", "relabelled", "repeated"]).describe("`recorded`: a new label; `relabelled`: it replaced another label for the same check or content; `repeated`: the same label again, counted once."),
  model_version: z.number().int().min(0).describe("The org model's version now: how many labels it has learned (0: none, checks use the global model)."),
  feedback: feedbackCounts,
});

const historySetting = z.strictObject({
  mode: z.enum(["none", "features", "text"]).describe("`none`: nothing is kept; `features`: the verdict and the text's hashed features (enough to learn from feedback, no text); `text`: the verdict and the text."),
  days: z.number().int().min(1).max(365).describe("Days each check is kept."),
});

/** PUT /v1/orgs/{orgId}/check-history. */
export const checkHistoryBody = historySetting;

export const checkHistoryResponse = historySetting.extend({
  default: z.boolean().describe("True while the org has not chosen a setting (the default: features for 30 days)."),
});

/** GET /v1/orgs/{orgId}/checks query. `cursor` is read as [ts, request_id] of the check it names. */
export const checksQuery = {
  limit: pageLimit("Checks"),
  cursor: z
    .string()
    .regex(/^[0-9a-z]{1,11}\.[A-Za-z0-9._:-]{1,128}$/, NOT_A_CURSOR)
    .transform((text, ctx): [number, string] => {
      const dot = text.indexOf(".");
      const ts = parseInt(text.slice(0, dot), 36);
      if (Number.isSafeInteger(ts)) return [ts, text.slice(dot + 1)];
      ctx.addIssue({ code: "custom", message: NOT_A_CURSOR });
      return z.NEVER;
    })
    .optional()
    .describe("`next_cursor` of the previous page."),
  decision: z.enum(["allow", "review", "block"]).optional().describe("Only checks with this decision."),
  label: z.enum(["spam", "ham", "none"]).optional().describe("Only checks with this feedback (`none`: without feedback)."),
  form_id: z.string().max(200).optional().describe("Only checks of this form."),
};

export const checkItem = z.object({
  request_id: z.string(),
  created_at: z.string().describe("ISO 8601 time of the check."),
  form_id: z.string(),
  score: probability,
  decision: z.enum(["allow", "review", "block"]),
  spam_probability: probability.nullable().describe("The content's spam probability as answered; null without text."),
  language: z.string().nullable(),
  flags: z.array(z.enum(FLAGS)),
  org_model: z.number().int().min(0).describe("Version of the org model that scored the content; 0: the global model."),
  email_domain: z.string().nullable(),
  learnable: z.boolean().describe("The check kept its text's features: feedback on it teaches the org model."),
  text: z.string().nullable().describe("The text read, when the org keeps text (mode `text`)."),
  label: label.nullable().describe("The latest feedback on the check."),
});

export const checksResponse = z.object({
  items: z.array(checkItem),
  next_cursor: z.string().nullable(),
});

export const orgFeedbackResponse = z.object({
  model_version: z.number().int().min(0),
  feedback: feedbackCounts,
  history: checkHistoryResponse,
  agreement: z
    .array(
      z.object({
        day: z.string().describe("YYYY-MM-DD (UTC)."),
        feedback: z.number().int().min(1),
        org_model: z.number().min(0).max(1).describe("Share of that day's labels the org model agreed with before learning them."),
        global_model: z.number().min(0).max(1).describe("Share of that day's labels the global model agreed with."),
      }),
    )
    .describe("Per UTC day with feedback (the latest 90), oldest first."),
  updated_at: z.string().nullable(),
});

/** POST /v1/orgs/{orgId}/model/reset's answer: the org model as a fresh org's. */
export const orgModelResetResponse = z.object({
  model_version: z.literal(0).describe("0: the org's checks are scored by the global model alone until its next feedback."),
  feedback: feedbackCounts,
  reset_at: z.string().describe("When the model was reset (ISO 8601); labels given before it no longer count."),
});
