import { z } from "zod";

/**
 * Beacon request bodies. Objects are not strict: a newer beacon may send fields an older service
 * does not know, and those are dropped, while every known field is checked.
 */

/** POST /v1/handshake */
export const handshakeBody = z.object({
  /** The `_fs` cookie's id; a malformed one is replaced by a new id, not refused. */
  session_id: z.string().max(64).optional(),
});

const signals = z.object({
  tells: z.array(z.string().regex(/^[a-z0-9_]{1,40}$/, "tell names are [a-z0-9_]{1,40}")).max(32).optional(),
  fp: z.string().regex(/^[0-9a-f]{8,64}$/, "a hex hash of 8-64 characters").optional(),
  timing: z
    .object({
      elapsed_ms: z.number().min(0).max(1e10).optional(),
      interactions: z.number().int().min(0).max(1e9).optional(),
      rtt_ms: z.number().min(0).max(600_000).optional(),
    })
    .optional(),
  ua: z.string().max(1024).optional(),
});

/** POST /v1/collect and POST /v1/report: one hit. */
export const hitBody = z.object({
  kind: z.enum(["page.view", "form.submit"]).optional(),
  action: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[^\u0000-\u001f\u007f]+$/, "no control characters")
    .optional(),
  token: z.string().max(200).optional(),
  session_id: z.string().max(64).optional(),
  page: z.string().max(2048).optional(),
  signals: signals.optional(),
});

export type HitBody = z.infer<typeof hitBody>;
