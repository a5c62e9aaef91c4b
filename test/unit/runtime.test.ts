import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/config/index.js";

/**
 * The Node versions the project runs on: package.json says >=20, while uws-pack (uWebSockets.js)
 * declares >=22 in its own package.json (npm ci warns EBADENGINE). It ships a binary per Node ABI;
 * this test loads the one of the Node running it, so an unusable Node fails here.
 */
describe("runtime", () => {
  it("runs on the Node the project declares", () => {
    const engines = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
    expect(engines).toBe(">=20");
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(20);
  });

  it("loads uWebSockets.js's native binary for this Node and can start an app", async () => {
    const uws = await import("uWebSockets.js");
    const app = uws.App();
    const port = await new Promise<number>((resolve, reject) =>
      app.listen("127.0.0.1", 0, (socket) => (socket ? resolve(uws.us_socket_local_port(socket)) : reject(new Error("listen failed")))),
    );
    expect(port).toBeGreaterThan(0);
    app.close();
  });
});
