import type { AddressInfo } from "node:net";
import { createApp } from "../../../examples/express-signup/app.js";
import { describeMiddleware } from "../../../test/helpers/protect-suite.js";

describeMiddleware("express", async (options, trustProxy) => {
  const server = createApp(options, trustProxy).listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
});
