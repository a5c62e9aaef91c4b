import { z } from "zod";

/** POST /v1/content */
export const contentBody = z.strictObject({
  text: z.string().min(1, "give the text to score").max(50_000),
});
