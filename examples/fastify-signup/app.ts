/**
 * A signup form protected by @fraudscore/fastify. Run it against a fraudscore service:
 *   FS_URL=http://localhost:8080 FS_KEY=fs_test_… node dist/examples/fastify-signup/app.js
 * packages/fastify/test starts it against the real service.
 */
import { pathToFileURL } from "node:url";
import formbody from "@fastify/formbody";
import Fastify from "fastify";
import { protect, type ProtectOptions } from "@fraudscore/fastify";

/** The app; `fraudscore` says which service and key, and how to protect the form. */
export async function createApp(fraudscore: ProtectOptions, trustProxy: boolean | string = false) {
  // request.ip, which the middleware sends, takes X-Forwarded-For only from trusted proxies.
  const app = Fastify({ trustProxy });
  await app.register(formbody);
  app.post("/signup", { preHandler: protect({ fields: ["name", "about"], ...fraudscore }) }, async (request, reply) => {
    if (request.fraudscore.decision === "block") return reply.code(403).send({ ok: false, verdict: request.fraudscore });
    // ... create the account here; hold a `review` for moderation if you like.
    return reply.code(201).send({ ok: true, verdict: request.fraudscore });
  });
  return app;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const app = await createApp({ baseUrl: process.env.FS_URL ?? "http://localhost:8080", apiKey: process.env.FS_KEY });
  await app.listen({ port: Number(process.env.PORT ?? 3000) });
}
