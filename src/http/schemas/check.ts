import { z } from "zod";

/** A form field value as sites send them: text, numbers, booleans, lists of those. */
const fieldValue = z.union([z.string().max(20_000), z.number(), z.boolean(), z.null(), z.array(z.union([z.string().max(5_000), z.number(), z.boolean()])).max(100)]);

/** POST /v1/check. Unknown metadata keys are dropped, not refused. */
export const checkBody = z.strictObject({
  form_id: z.string().min(1).max(200),
  form_data: z
    .record(z.string().max(200), fieldValue)
    .refine((o) => Object.keys(o).length <= 200, { message: "at most 200 fields" })
    .optional(),
  metadata: z
    .object({
      email: z.string().max(320).optional(),
      ip: z.string().max(64).optional(),
      user_agent: z.string().max(2048).optional(),
      honeypot_field: z.string().max(5_000).optional(),
      /** Epoch milliseconds (values below 1e11 are taken as seconds). */
      form_loaded_at: z.number().min(0).max(1e14).optional(),
      captcha_token: z.string().max(10_000).optional(),
    })
    .optional(),
});

export type CheckBody = z.infer<typeof checkBody>;
