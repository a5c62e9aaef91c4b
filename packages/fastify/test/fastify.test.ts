import { createApp } from "../../../examples/fastify-signup/app.js";
import { describeMiddleware } from "../../../test/helpers/protect-suite.js";

describeMiddleware("fastify", async (options, trustProxy) => {
  const app = await createApp(options, trustProxy);
  const url = await app.listen({ port: 0, host: "127.0.0.1" });
  return { url, close: () => app.close() };
});
