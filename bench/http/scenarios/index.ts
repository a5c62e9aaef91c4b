import { check, checkAdapted, checkNoHistory } from "./check.js";
import { collect } from "./collect.js";
import { meter, resolve } from "./sessions.js";
import { healthz } from "./healthz.js";
import { hello } from "./hello.js";
import { floorPost } from "./floor-post.js";
import { ipInvalidKey } from "./ip-invalid-key.js";
import { ipEnriched, ipLookup } from "./ip-lookup.js";
import type { Scenario } from "./types.js";

/** Every scenario, in the order each round runs them; the baseline first. */
export const scenarios: readonly Scenario[] = [hello, floorPost, ipLookup, ipEnriched, ipInvalidKey, healthz, collect, check, checkNoHistory, checkAdapted, resolve, meter];
