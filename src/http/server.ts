import { App, us_listen_socket_close, us_socket_local_port } from "uWebSockets.js";
import type { AppDeps } from "./deps.js";
import { mountDashboard } from "./dashboard/index.js";
import { mountRoutes } from "./router.js";
import { allRoutes } from "./routes/index.js";
import { mountStatic, type BeaconAsset } from "./static.js";

export interface RunningServer {
  port: number;
  close(): void;
}

/** Creates the one uWS app, mounts the routing table and listens. */
export function listen(deps: AppDeps, beaconAsset: BeaconAsset | null): Promise<RunningServer> {
  const app = App();
  mountStatic(app, deps, beaconAsset);
  mountDashboard(app, deps);
  mountRoutes(app, allRoutes(deps), {
    auth: deps.auth,
    bodies: deps.bodies,
    quota: deps.quota,
    idempotency: deps.idempotency,
    log: deps.log,
    maxBodyBytes: deps.config.FS_MAX_BODY_BYTES,
    testClock: deps.config.FS_TEST_CLOCK,
  });
  return new Promise((resolve, reject) => {
    app.listen(deps.config.HOST, deps.config.PORT, (socket) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${deps.config.HOST}:${deps.config.PORT}`));
        return;
      }
      resolve({
        port: us_socket_local_port(socket),
        close: () => us_listen_socket_close(socket),
      });
    });
  });
}
