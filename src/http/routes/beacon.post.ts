import type { AppDeps } from "../deps.js";
import { beaconProject, recordHit } from "../beacon/hits.js";
import { SESSION_ID, newSessionId } from "../beacon/token.js";
import { defineRoute } from "../route.js";
import { handshakeBody, hitBody } from "../schemas/beacon.js";

/**
 * The beacon's endpoints (publishable key, 0 credits, never refused for quota, CORS per project).
 * Wire protocol: beacon/README.md.
 */

/** POST /v1/handshake {session_id?} -> {token, session_id, expires_at} */
export function handshakePost(deps: AppDeps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/handshake",
    auth: { kind: "publishable" },
    beacon: true,
    body: handshakeBody,
    handle({ principal, snap, body, nowMs }) {
      const project = beaconProject(deps.beacon, principal!, snap.origin);
      const sessionId = body.session_id !== undefined && SESSION_ID.test(body.session_id) ? body.session_id : newSessionId();
      const { token, expiresAt } = deps.beacon.tokens.issue(project.id, sessionId, nowMs);
      return { data: { token, session_id: sessionId, expires_at: expiresAt }, credits: 0, neverBlock: true };
    },
  });
}

/** GET /v1/probe -> {now}: a cheap round trip the beacon times (timing.rtt_ms). */
export function probeGet(deps: AppDeps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/probe",
    auth: { kind: "publishable" },
    beacon: true,
    handle({ principal, snap, nowMs }) {
      beaconProject(deps.beacon, principal!, snap.origin);
      return { data: { now: nowMs }, credits: 0, neverBlock: true };
    },
  });
}

/** POST /v1/collect: a page.view hit -> {observation_id, session_id} */
export function collectPost(deps: AppDeps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/collect",
    auth: { kind: "publishable" },
    beacon: true,
    body: hitBody,
    handle: ({ principal, snap, body, nowMs }) => recordHit(deps.beacon, principal!, snap, body, "page.view", nowMs),
  });
}

/** POST /v1/report: a form.submit hit -> {observation_id, session_id} */
export function reportPost(deps: AppDeps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/report",
    auth: { kind: "publishable" },
    beacon: true,
    body: hitBody,
    handle: ({ principal, snap, body, nowMs }) => recordHit(deps.beacon, principal!, snap, body, "form.submit", nowMs),
  });
}
