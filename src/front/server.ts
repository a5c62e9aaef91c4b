import * as uws from "uWebSockets.js";
import { App, us_listen_socket_close, us_socket_local_port, type TemplatedApp } from "uWebSockets.js";
import type { AppDeps } from "../http/deps.js";
import { mountDashboard } from "../dashboard/index.js";
import { mountRoutes } from "../http/router.js";
import { wrapHandlers, type HandlerWrap } from "../http/pipeline.js";
import { allRoutes } from "../http/routes/index.js";
import { mountStatic, type BeaconAsset } from "../http/static.js";

export interface RunningServer {
  port: number;
  /** Stops accepting connections; open ones are still answered. */
  close(): void;
  /** Closes every connection too (a front thread's last step: a worker must end with no socket open). */
  closeAll(): void;
}

/** Starts serving the routes: `listen`, or in tests an app without a socket (test/helpers/app.ts). */
export type Listener = (deps: AppDeps, beaconAsset: BeaconAsset | null, port: number) => Promise<RunningServer>;

/**
 * Creates this front thread's uWS app, mounts the routing table and listens on `port` (default
 * PORT). Several threads listen on one port (uWS sets SO_REUSEPORT on Linux).
 */
export function listen(deps: AppDeps, beaconAsset: BeaconAsset | null, port = deps.config.PORT): Promise<RunningServer> {
  silenceVersionHeader();
  const app = App();
  mountApp(app, deps, beaconAsset);
  return new Promise((resolve, reject) => {
    app.listen(deps.config.HOST, port, (socket) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${deps.config.HOST}:${port}`));
        return;
      }
      resolve({
        port: us_socket_local_port(socket),
        close: () => us_listen_socket_close(socket),
        closeAll: () => app.close(),
      });
    });
  });
}

/**
 * Stops uWS from adding `uWebSockets: 20` to every answer (it tells a scanner which server and
 * major version answers, and is bytes on every response). uWebSockets.js has no App option for
 * it: its undocumented `_cfg("silent")` sets the flag on this thread's event loop (one loop per
 * thread, so each front thread calls it before creating its app). Untyped in uws-pack's .d.mts.
 */
function silenceVersionHeader(): void {
  (uws as unknown as { _cfg(key: string): void })._cfg("silent");
}

/**
 * Mounts the static files, the dashboard and the routing table on `app`. `opts.wrap` (tests)
 * replaces every route's handler and every dashboard page's and action's function (HandlerWrap).
 */
export function mountApp(app: TemplatedApp, deps: AppDeps, beaconAsset: BeaconAsset | null, opts: { wrap?: HandlerWrap } = {}): void {
  mountStatic(app, deps, beaconAsset);
  mountDashboard(app, deps, opts);
  const routes = allRoutes(deps);
  mountRoutes(app, opts.wrap ? wrapHandlers(routes, opts.wrap) : routes, {
    auth: deps.auth,
    bodies: deps.bodies,
    quota: deps.quota,
    testMode: deps.testMode,
    idempotency: deps.idempotency,
    log: deps.log,
    maxBodyBytes: deps.config.FS_MAX_BODY_BYTES,
    testClock: deps.config.FS_TEST_CLOCK,
    trusted: deps.beacon.trusted,
  });
}
