/**
 * Entry of the browser beacon (docs/api.md, "The beacon script"; wire protocol in beacon/README.md). Auto-initialises
 * from its own script tag; every network call happens after window load, at idle time.
 */
import { readConfig } from "./core.js";
import { countInteractions } from "./signals.js";
import { startBeacon } from "./start.js";

function init(): void {
  if (window.fsBeacon) return; // Included twice: the first copy wins.
  const script = (document.currentScript as HTMLScriptElement | null) || document.querySelector<HTMLScriptElement>("script[data-fs-project-key]");
  const origin = script && script.src ? new URL(script.src, location.href).origin : location.origin;
  const cfg = script && readConfig((name) => script.getAttribute(name), origin);
  if (!cfg) {
    console.warn("fs beacon: data-fs-project-key is missing on the script tag; nothing is collected.");
    return;
  }
  countInteractions();
  window.fsBeacon = startBeacon(cfg);
}

try {
  init();
} catch {
  // The beacon must never break the page.
}
