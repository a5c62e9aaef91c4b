/**
 * @fraudscore/fastify: protect a form or signup route of a Fastify app. As a `preHandler` it reads
 * the parsed body (register @fastify/formbody for HTML forms), the client address as Fastify gives
 * it (`request.ip`, which honours the `trustProxy` option) and the User-Agent, asks fraudscore,
 * and puts the verdict on `request.fraudscore`; the handler decides what to do with it.
 *
 * @example
 * app.post("/signup", { preHandler: protect({ baseUrl, apiKey, fields: ["name"] }) }, async (request, reply) => {
 *   if (request.fraudscore.decision === "block") return reply.code(403).send("Refused");
 *   // ... create the account
 * });
 */
import { createProtector, type ProtectOptions, type Verdict } from "@fraudscore/client";
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from "fastify";

export type { ProtectOptions, Verdict } from "@fraudscore/client";

declare module "fastify" {
  interface FastifyRequest {
    /** The verdict of @fraudscore/fastify's `protect` on this request. */
    fraudscore: Verdict;
  }
}

/**
 * A preHandler that scores the submission and sets `request.fraudscore`. It never answers by
 * itself and never fails the request: when the service cannot decide, `onError` chooses the verdict.
 * @param options the service, the key and what to read (ProtectOptions)
 */
export function protect(options: ProtectOptions): preHandlerAsyncHookHandler {
  const judge = createProtector(options);
  return async function fraudscorePreHandler(request: FastifyRequest, _reply: FastifyReply) {
    request.fraudscore = await judge({ body: request.body as Record<string, unknown> | undefined, ip: request.ip, userAgent: request.headers["user-agent"] });
  };
}
