import { generateKey } from "../../../shared/api-keys.js";
import type { KeyRecord } from "../../../store/messages.js";
import type { AppDeps } from "../../deps.js";
import { ApiError } from "../../errors.js";
import { defineRoute } from "../../route.js";
import { createKeyBody } from "../../schemas/admin.js";
import { ackOrThrow } from "../ack.js";

/**
 * POST /v1/admin/orgs/{orgId}/keys {type, project_id?, scopes?, expires_at?}
 * -> {id, key, type, scopes, ...}. The plain key is in this answer only; the store keeps its hash.
 */
export function adminKeysPost(deps: AppDeps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/orgs/:orgId/keys",
    auth: { kind: "admin" },
    body: createKeyBody,
    async handle({ body, snap, nowMs }) {
      const expiresAt = body.expires_at === undefined ? null : Date.parse(body.expires_at);
      if (expiresAt !== null && expiresAt <= nowMs) throw new ApiError("VALIDATION_ERROR", "body.expires_at: must be in the future.");
      const { id, plain, hash } = generateKey(body.type);
      const key: KeyRecord = {
        id,
        org_id: snap.params[0]!,
        project_id: body.project_id ?? null,
        type: body.type,
        scopes: body.scopes ?? [],
        hash,
        created_at: new Date(nowMs).toISOString(),
        expires_at: expiresAt,
        disabled_at: null,
      };
      ackOrThrow(await deps.store.send({ op: "key.create", key }));
      deps.auth.rememberKey(key);
      return { status: 201, data: { ...publicKey(key), key: plain } };
    },
  });
}

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
  };
}
