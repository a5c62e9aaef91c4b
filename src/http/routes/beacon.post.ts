import type { AppDeps } from "../deps.js";
import { dataScope } from "../../front/auth.js";
import { admitBeaconWrite, beaconProject, provenSession, recordHit } from "../../front/beacon/hits.js";
import { newSessionId } from "../../front/beacon/token.js";
import { defineRoute, type RouteDocs } from "../route.js";
import { handshakeBody, handshakeResponse, hitBody, hitResponse, probeResponse } from "../schemas/beacon.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "beacon">;

/**
 * The beacon's endpoints (publishable key, 0 credits, never refused for quota, CORS per project).
 * Wire protocol: beacon/README.md.
 */

/** POST /v1/handshake {session_id?} -> {token, session_id, expires_at} */
export function handshakePost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/handshake",
    auth: { kind: "publishable" },
    beacon: true,
    body: handshakeBody,
    admit: (snap, principal, nowMs) => admitBeaconWrite(deps.beacon, principal!, snap, nowMs),
    docs: {
      summary: "Beacon handshake",
      description:
        "Issues the signed token the beacon sends with its hits, for the publishable key's project and the browser session. The session named by `session_id` (the `_fs` cookie) is continued only when `token` is a token issued for it (expired ones count, up to FS_OBSERVATION_RETENTION_DAYS); otherwise a new session is started and named in the answer. Never refused for quota; rate limited per client address and per project (429 RATE_LIMITED).",
      tag: "beacon",
      response: handshakeResponse,
      credits: [0],
      errors: BEACON_WRITE_ERRORS,
      example: {
        body: { session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A", token: "v1.prj_8Hq2LmT7aZ3kXw9B.s_4mQx9TbV2kLr8ZpW3nYc0A.mhz1v8k0.Qm7pT2xL9aZ3kW4b" },
        response: { token: "v1.prj_8Hq2LmT7aZ3kXw9B.s_4mQx9TbV2kLr8ZpW3nYc0A.mhz3k2p0.Zk3pQ9xL2mT7aW4b", session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A", expires_at: 1_763_680_800_000 },
      },
    },
    handle({ principal, snap, body, nowMs }) {
      const project = beaconProject(deps.beacon, principal!, snap.origin, true);
      // A test key's tokens are issued for the project's test scope: its sessions stay apart.
      const scope = dataScope(principal!, project.id);
      const sessionId = provenSession(deps.beacon, scope, body.token, body.session_id, nowMs) ?? newSessionId();
      const { token, expiresAt } = deps.beacon.tokens.issue(scope, sessionId, nowMs);
      return { data: { token, session_id: sessionId, expires_at: expiresAt }, credits: 0, neverBlock: true };
    },
  });
}

/** GET /v1/probe -> {now}: a cheap round trip the beacon times (timing.rtt_ms). */
export function probeGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/probe",
    auth: { kind: "publishable" },
    beacon: true,
    docs: {
      summary: "Beacon round trip",
      description: "A cheap answer the beacon times for `signals.timing.rtt_ms`. Never refused for quota.",
      tag: "beacon",
      response: probeResponse,
      credits: [0],
      errors: BEACON_ERRORS,
      example: { response: { now: 1_763_677_200_000 } },
    },
    handle({ principal, snap, nowMs }) {
      beaconProject(deps.beacon, principal!, snap.origin);
      return { data: { now: nowMs }, credits: 0, neverBlock: true };
    },
  });
}

/** POST /v1/collect: a page.view hit -> {observation_id, session_id} */
export function collectPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/collect",
    auth: { kind: "publishable" },
    beacon: true,
    body: hitBody,
    admit: (snap, principal, nowMs) => admitBeaconWrite(deps.beacon, principal!, snap, nowMs),
    docs: hitDocs("page.view", "Record a page view", "A page view from the beacon, scored (user agent, bot registry, IP, token, client tells) and recorded as an observation of the project, then subject to its bot policy. Answered once the observation is journaled."),
    handle: ({ principal, snap, body, nowMs }) => recordHit(deps.beacon, principal!, snap, body, "page.view", nowMs),
  });
}

/** POST /v1/report: a form.submit hit -> {observation_id, session_id} */
export function reportPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/report",
    auth: { kind: "publishable" },
    beacon: true,
    body: hitBody,
    admit: (snap, principal, nowMs) => admitBeaconWrite(deps.beacon, principal!, snap, nowMs),
    docs: hitDocs("form.submit", "Record a form submission", "A form submission from the beacon, scored and recorded like a page view (POST /v1/collect). Answered once the observation is journaled."),
    handle: ({ principal, snap, body, nowMs }) => recordHit(deps.beacon, principal!, snap, body, "form.submit", nowMs),
  });
}

/** What the beacon routes can refuse: a key without a project, a page origin the project does not allow. */
const BEACON_ERRORS = ["FORBIDDEN", "ORIGIN_NOT_ALLOWED"] as const;
/** And the writes (handshake, collect, report): their rate limits too. */
const BEACON_WRITE_ERRORS = [...BEACON_ERRORS, "RATE_LIMITED"] as const;

/** The docs of POST /v1/collect and /v1/report, which differ in the kind of hit. */
function hitDocs(kind: "page.view" | "form.submit", summary: string, description: string): RouteDocs {
  return {
    summary,
    description: `${description} \`kind\`, when given, must be ${kind}. The hit is filed in the session its \`token\` was issued for; without a token for the \`session_id\` it names, in a new session, which the answer names. Past the org's daily observation budget the hit is answered the same way and not recorded. A journal that cannot be written answers 503 NOT_READY. Never refused for quota; rate limited per client address and per project (429 RATE_LIMITED).`,
    tag: "beacon",
    response: hitResponse,
    credits: [0],
    errors: [...BEACON_WRITE_ERRORS, "VALIDATION_ERROR", "NOT_READY"],
    example: {
      body: {
        kind,
        action: kind === "page.view" ? "pageview" : "signup",
        token: "v1.prj_8Hq2LmT7aZ3kXw9B.s_4mQx9TbV2kLr8ZpW3nYc0A.mhz3k2p0.Zk3pQ9xL2mT7aW4b",
        session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A",
        page: "/signup",
        signals: { tells: [], fp: "9f2c4e1ab37d5c80", timing: { elapsed_ms: 5400, interactions: 12, rtt_ms: 38 } },
      },
      response: { observation_id: "obs_Xk3Lm9Qa2b1f", session_id: "s_4mQx9TbV2kLr8ZpW3nYc0A" },
    },
  };
}
