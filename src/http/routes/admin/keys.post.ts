import { generateKey, redactKey } from "../../../shared/api-keys.js";
import type { KeyRecord } from "../../../store/records.js";
import type { AppDeps } from "../../deps.js";
import { ApiError } from "../../../shared/errors.js";
import { defineRoute } from "../../route.js";
import type { z } from "zod";
import { createKeyBody, createdKeyResponse, type keyResponse } from "../../schemas/admin.js";
import { orgIdParam } from "../../schemas/params.js";
import { ackOrThrow, COMMITTED } from "../ack.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "peers" | "store">;

/**
 * POST /v1/admin/orgs/{orgId}/keys {type, project_id?, scopes?, expires_at?, mode?, name?}
 * -> {id, key, key_redacted, key_already_shown, type, scopes, ...}. The plain key is in this
 * answer only; the store keeps its hash, and a replay (Idempotency-Key) has `key: null`.
 */
export function adminKeysPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/orgs/:orgId/keys",
    auth: { kind: "admin" },
    body: createKeyBody,
    params: { orgId: orgIdParam },
    docs: {
      summary: "Create an API key",
      description: "A secret key (server-side; optional scopes `sessions`, `billing`) or a publishable key bound to one of the org's projects (for the beacon; no scopes). The plain key (`key`) is in this answer only: the service keeps its hash. A replay of this call (same `Idempotency-Key`) answers the same key with `key: null` and `key_already_shown: true`: the plain key was shown once and is stored nowhere; `key_redacted` (prefix and last 4 characters) tells which key it was. An org has at most FS_MAX_KEYS_PER_ORG keys that are not deleted (1000 by default; live and test, secret and publishable, disabled and expired ones count): past it 409 LIMIT_EXCEEDED, and nothing is created.",
      tag: "admin",
      status: 201,
      response: createdKeyResponse,
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "LIMIT_EXCEEDED", "NOT_READY"],
      example: {
        params: { orgId: "org_3kT9xQ2mLbVfZ8aW" },
        body: { type: "secret", scopes: ["sessions"], name: "checkout backend" },
        response: { id: "key_Zk3pQ9xL2mT7", type: "secret", org_id: "org_3kT9xQ2mLbVfZ8aW", project_id: null, scopes: ["sessions"], created_at: "2026-11-20T22:15:00.000Z", expires_at: null, disabled: false, mode: "live", name: "checkout backend", last_used_at: null, rolled_from: null, key_redacted: "fs_live_…Uv2X", key: "fs_live_Zk3pQ9xL2mT7aW4bR8nC1dE6fG0hJ5kL9mN3pQ7sTUv2X", key_already_shown: false },
      },
    },
    async handle({ body, params, nowMs, recordAnswer }) {
      const expiresAt = body.expires_at === undefined ? null : Date.parse(body.expires_at);
      if (expiresAt !== null && expiresAt <= nowMs) throw new ApiError("VALIDATION_ERROR", "body.expires_at: must be in the future.");
      const { id, plain, hash } = generateKey(body.type, body.mode ?? "live");
      const key: KeyRecord = {
        id,
        org_id: params.orgId,
        project_id: body.project_id ?? null,
        type: body.type,
        scopes: body.scopes ?? [],
        hash,
        created_at: new Date(nowMs).toISOString(),
        expires_at: expiresAt,
        disabled_at: null,
        ...(body.mode === "test" ? { mode: "test" as const } : {}),
        ...(body.name !== undefined ? { name: body.name } : {}),
      };
      const shown = { ...publicKey(key), key_redacted: redactKey(plain) };
      const data = { ...shown, key: plain, key_already_shown: false };
      // The answer kept for a replay never holds the plain key (the store keeps only its hash).
      const answer = recordAnswer?.(201, data, { ...shown, key: null, key_already_shown: true });
      ackOrThrow(await deps.store.send({ op: "key.create", key, answer }));
      deps.peers.key(key);
      return { status: 201, data, recorded: answer && COMMITTED };
    },
  });
}

/** The key the OpenAPI document's examples show (the key routes' answers are variations of it). */
export const KEY_EXAMPLE: z.infer<typeof keyResponse> = {
  id: "key_Zk3pQ9xL2mT7",
  type: "secret",
  org_id: "org_3kT9xQ2mLbVfZ8aW",
  project_id: null,
  scopes: ["sessions"],
  created_at: "2026-11-20T22:15:00.000Z",
  expires_at: null,
  disabled: false,
  mode: "live",
  name: "checkout backend",
  last_used_at: "2026-11-21T09:42:00.000Z",
  rolled_from: null,
};

/** Key fields an operator may see: never the hash. */
export function publicKey(key: KeyRecord) {
  return {
    id: key.id,
    type: key.type,
    org_id: key.org_id,
    project_id: key.project_id,
    scopes: key.scopes,
    created_at: key.created_at,
    expires_at: key.expires_at === null ? null : new Date(key.expires_at).toISOString(),
    disabled: key.disabled_at !== null,
    mode: key.mode ?? "live",
    name: key.name ?? null,
    last_used_at: key.last_used_at === undefined ? null : new Date(key.last_used_at).toISOString(),
    rolled_from: key.rolled_from ?? null,
  };
}
