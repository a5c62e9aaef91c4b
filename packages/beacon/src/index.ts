/**
 * @fraudscore/beacon: the fraudscore browser beacon for bundlers, the same code as the script tag
 * (`GET /js/fs.js`; docs/api.md, "The beacon script"), started by a call instead of a tag.
 *
 * @example
 * import { init } from "@fraudscore/beacon";
 * const beacon = init({ projectKey: "fs_pub_live_…", endpoint: "https://fraudscore.example.com" });
 * beacon.ready.then(({ session_id }) => console.log(session_id));
 */
import { readConfig } from "../../../beacon/src/core.js";
import { countInteractions } from "../../../beacon/src/signals.js";
import { startBeacon, type FsBeacon } from "../../../beacon/src/start.js";

export type { FsBeacon } from "../../../beacon/src/start.js";
export type { Signals } from "../../../beacon/src/core.js";

/** The script tag's `data-fs-*` attributes, as options. */
export interface InitOptions {
  /** The project's publishable key (`fs_pub_live_…` or `fs_pub_test_…`); the page's origin must be one the project allows. */
  projectKey: string;
  /** The service's base URL, e.g. `https://fraudscore.example.com` (a path prefix is kept). */
  endpoint: string;
  /** `auto` (default): a page view and form submits; `pageload`: page views only; `forms`: form submits only. */
  mode?: "auto" | "pageload" | "forms";
  /** The page view's action (default `pageview`). */
  action?: string;
  /** Forms whose submits carry the signals field (default `form`). */
  formSelector?: string;
  /** The hidden field's name (default `_fs_signals`). */
  field?: string;
}

/**
 * Starts the beacon on this page and returns it (also `window.fsBeacon`). A second call, or a
 * script tag already on the page, returns the beacon already running.
 * @throws Error without `projectKey` or `endpoint`
 */
export function init(options: InitOptions): FsBeacon {
  if (window.fsBeacon) return window.fsBeacon;
  if (!options.projectKey || !options.endpoint) throw new Error("@fraudscore/beacon: init() needs projectKey and endpoint");
  const attrs: Record<string, string | undefined> = {
    "data-fs-project-key": options.projectKey,
    "data-fs-mode": options.mode,
    "data-fs-action": options.action,
    "data-fs-form-selector": options.formSelector,
    "data-fs-field": options.field,
  };
  const base = new URL(options.endpoint, location.href).href.replace(/\/+$/, "");
  const cfg = readConfig((name) => attrs[name] ?? null, base)!;
  countInteractions();
  window.fsBeacon = startBeacon(cfg);
  return window.fsBeacon;
}
