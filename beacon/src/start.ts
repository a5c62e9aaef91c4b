/**
 * The beacon's work once configured: handshake, probes and collect after window load, and the
 * form field on submit. Shared by the script tag (index.ts) and the npm package (packages/beacon).
 */
import { buildHit, fieldValue, type BeaconConfig, type BeaconState, type Signals } from "./core.js";
import { loadSession, saveSession } from "./session.js";
import { collectSignals, readSlowFacts } from "./signals.js";

/** What `window.fsBeacon` offers sites and tests. */
export interface FsBeacon {
  /** Resolves after the handshake (and the page's collect, where the mode sends one); rejects when they fail. */
  ready: Promise<{ session_id: string; observation_id?: string }>;
  /** The client signals as they would be sent now. */
  signals(): Signals;
}

declare global {
  interface Window {
    fsBeacon?: FsBeacon;
  }
}

/** One beacon call; resolves with the envelope's `data`, rejects on any failure. */
async function call<T>(cfg: BeaconConfig, url: string, body?: unknown, keepalive?: boolean): Promise<T> {
  const headers: Record<string, string> = { authorization: "Bearer " + cfg.key };
  if (body) headers["content-type"] = "application/json";
  const res = await fetch(url, {
    method: body ? "POST" : "GET",
    headers,
    body: body ? JSON.stringify(body) : undefined,
    // The service needs no cookies of its own; the site's `_fs` id travels in the body.
    credentials: "omit",
    keepalive,
  });
  const json = await res.json();
  if (!res.ok || !json.data) throw new Error("fs: " + res.status);
  return json.data as T;
}

/** Resolves after window load, in idle time (never competes with the page's own start-up). */
function afterLoad(): Promise<void> {
  return new Promise((resolve) => {
    const idle = (): void => {
      if ("requestIdleCallback" in window) requestIdleCallback(() => resolve(), { timeout: 2000 });
      else setTimeout(resolve, 1);
    };
    if (document.readyState === "complete") idle();
    else addEventListener("load", idle, { once: true });
  });
}

/** Starts the beacon with `cfg` (readConfig); call once per page. */
export function startBeacon(cfg: BeaconConfig): FsBeacon {
  // Read here, not at module load: the npm package may be imported where there is no DOM (SSR).
  const EL = Element.prototype;
  const saved = loadSession();
  const state: BeaconState = { session_id: saved.session_id };
  let rtt: number | undefined;
  const signals = (): Signals => collectSignals(rtt);
  const page = (): string => location.pathname;

  const run = async (): Promise<{ session_id: string; observation_id?: string }> => {
    await afterLoad();
    const facts = readSlowFacts(); // while the handshake and probes run
    // The saved token proves the session is this browser's; without it the service starts a new one.
    const hs = await call<{ token: string; session_id: string }>(cfg, cfg.initUrl, { session_id: state.session_id, token: saved.token });
    state.token = hs.token;
    state.session_id = hs.session_id;
    // Two probes, the faster one counts: the first may also pay for the CORS preflight.
    for (let i = 0; i < 2; i++) {
      const t0 = performance.now();
      const ok = await call(cfg, cfg.probeUrl).then(
        () => true,
        () => false, // A failed probe only costs the rtt signal.
      );
      if (!ok) break;
      rtt = Math.min(rtt === undefined ? 1e9 : rtt, Math.round(performance.now() - t0));
    }
    if (!cfg.pageload) {
      // forms mode sends no collect; keep the handshake's id so the next page reuses it.
      saveSession(hs.session_id, hs.token);
      return { session_id: hs.session_id };
    }
    await facts;
    const hit = buildHit("page.view", cfg.action, state, page(), signals());
    const res = await call<{ observation_id: string; session_id: string }>(cfg, cfg.collectUrl, hit);
    // The answer names the session the hit was filed in; the token goes with it only if it is that session's.
    state.session_id = res.session_id;
    state.observation_id = res.observation_id;
    if (res.session_id !== hs.session_id) state.token = undefined;
    saveSession(res.session_id, state.token);
    return { session_id: res.session_id, observation_id: res.observation_id };
  };

  if (cfg.forms) {
    // Delegated, capture phase: also catches forms added later, and runs before the form data is built.
    document.addEventListener(
      "submit",
      (event) => {
        const form = event.target;
        if (!(form instanceof HTMLFormElement) || !matches(form, cfg.formSelector)) return;
        try {
          // Prototype methods: a field named "action" or "matches" shadows the form's own members.
          const action = EL.getAttribute.call(form, "data-fs-action") || cfg.action;
          const sig = signals();
          let input = EL.querySelector.call(form, `input[name="${CSS.escape(cfg.field)}"]`) as HTMLInputElement | null;
          if (!input) {
            input = document.createElement("input");
            input.type = "hidden";
            input.name = cfg.field;
            EL.appendChild.call(form, input);
          }
          input.value = fieldValue(action, state, sig);
          // keepalive: the hit survives the navigation the submit starts; never awaited.
          call(cfg, cfg.reportUrl, buildHit("form.submit", action, state, page(), sig), true).catch(() => undefined);
        } catch {
          // Never let the beacon break a site's form.
        }
      },
      true,
    );
  }

  const ready = run();
  ready.catch(() => undefined); // No unhandled-rejection noise on sites that ignore `ready`.
  return { ready, signals };
}

function matches(form: HTMLFormElement, selector: string): boolean {
  try {
    return Element.prototype.matches.call(form, selector);
  } catch {
    return false; // An invalid selector attaches to nothing.
  }
}
