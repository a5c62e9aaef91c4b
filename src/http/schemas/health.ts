import { z } from "zod";

/*
 * Response schemas of the health routes: documentation and tests only (GET /openapi.json and
 * the integration tests' contract check), never parsed on the request path.
 */

/** `data` of GET /healthz. */
export const healthzResponse = z.object({ status: z.literal("ok") });

/** The parts of GET /readyz's answer shown only to the admin token. */
const readyzDetails = z.object({
  datasets: z.object({ ip: z.string().describe("Version of the IP dataset build in service.") }),
  writer: z.literal("alive"),
  pool: z.object({
    threads: z.number().int().min(1),
    ip_dataset: z.string().describe("Version of the IP dataset build the answering pool thread has open."),
  }),
  front: z
    .object({
      thread: z.number().int().min(0).describe("The front thread that answered (0 is the main thread's)."),
      threads: z.number().int().min(1).describe("Front threads serving the port (FS_FRONT_THREADS)."),
    })
    .describe("Which front thread answered: several share the port, the kernel spreading connections over them."),
  memory: z.object({ rss_bytes: z.number().int().min(0) }),
});

/** `data` of GET /readyz: `status` alone without the admin token, every field with it. */
export const readyzResponse = z.object({ status: z.literal("ready") }).extend(readyzDetails.partial().shape);
