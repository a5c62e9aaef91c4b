import { generateKey, redactKey } from "../../../shared/api-keys.js";
import type { KeyRecord } from "../../../store/records.js";
import type { AppDeps } from "../../deps.js";
import { ApiError } from "../../../shared/errors.js";
import { defineRoute } from "../../route.js";
import { ROLL_GRACE_DEFAULT_SECONDS, rollKeyBody, rolledKeyResponse } from "../../schemas/admin.js";
import { keyIdParam } from "../../schemas/params.js";
import { ackOrThrow, COMMITTED } from "../ack.js";
import { KEY_EXAMPLE, publicKey } from "./keys.post.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "peers" | "reads" | "store">;

/**
 * POST /v1/admin/keys/{keyId}/roll {grace_seconds?}: a new secret for the same org, project, type,
 * scopes, mode and name; the old key keeps working for the grace period, then expires. The new
 * plain key is in this answer only (a replay has `key: null`, as key creation's).
 */
export function adminKeyRollPost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/keys/:keyId/roll",
    auth: { kind: "admin" },
    body: rollKeyBody,
    params: { keyId: keyIdParam },
    docs: {
      summary: "Roll an API key",
      description:
        "Creates a new key with the old one's org, project, type, scopes, mode and name, and makes the old key expire at the end of the grace period (`grace_seconds`, default a day; 0 ends it at once; an earlier expiry of its own is kept). Both keys work until then, so a deployment can switch without an outage. The new plain key (`key`) is in this answer only. A disabled or expired key cannot be rolled (400); a deleted one is 404. The old key counts towards FS_MAX_KEYS_PER_ORG until it is deleted, and the new one is counted as its replacement: a roll passes at the cap, and leaves the org one key over it, so the next roll or create answers 409 LIMIT_EXCEEDED until a key is deleted.",
      tag: "admin",
      status: 201,
      response: rolledKeyResponse,
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "LIMIT_EXCEEDED", "NOT_READY"],
      example: {
        params: { keyId: "key_Zk3pQ9xL2mT7" },
        body: { grace_seconds: 3600 },
        response: {
          id: "key_Hq8vN2cR5wLp",
          type: "secret",
          org_id: "org_3kT9xQ2mLbVfZ8aW",
          project_id: null,
          scopes: ["sessions"],
          created_at: "2026-11-21T10:00:00.000Z",
          expires_at: null,
          disabled: false,
          mode: "live",
          name: "checkout backend",
          last_used_at: null,
          rolled_from: "key_Zk3pQ9xL2mT7",
          key_redacted: "fs_live_…8cQe",
          key: "fs_live_Hq8vN2cR5wLpT4bX9mZ1aK6dF3gJ7sV0nP2rW5yU8cQe",
          key_already_shown: false,
          previous: { ...KEY_EXAMPLE, expires_at: "2026-11-21T11:00:00.000Z" },
        },
      },
    },
    async handle({ body, params, nowMs, recordAnswer }) {
      const old = await deps.reads.get("keys", params.keyId);
      if (!old || old.deleted_at !== undefined) throw new ApiError("NOT_FOUND", `No key with id ${params.keyId}.`);
      const graceEnd = nowMs + (body.grace_seconds ?? ROLL_GRACE_DEFAULT_SECONDS) * 1000;
      const { id, plain, hash } = generateKey(old.type, old.mode ?? "live");
      const key: KeyRecord = {
        id,
        org_id: old.org_id,
        project_id: old.project_id,
        type: old.type,
        scopes: old.scopes,
        hash,
        created_at: new Date(nowMs).toISOString(),
        expires_at: null,
        disabled_at: null,
        ...(old.mode === "test" ? { mode: "test" as const } : {}),
        ...(old.name !== undefined ? { name: old.name } : {}),
        rolled_from: old.id,
      };
      const previous = publicKey({ ...old, expires_at: old.expires_at === null ? graceEnd : Math.min(old.expires_at, graceEnd) });
      const shown = { ...publicKey(key), key_redacted: redactKey(plain), previous };
      const data = { ...shown, key: plain, key_already_shown: false };
      // The answer kept for a replay never holds the plain key (the store keeps only its hash).
      const answer = recordAnswer?.(201, data, { ...shown, key: null, key_already_shown: true });
      const ack = ackOrThrow(await deps.store.send({ op: "key.roll", keyId: old.id, key, oldExpiresAt: graceEnd, nowMs, answer }), "path.keyId");
      deps.peers.key(ack.key);
      deps.peers.key(ack.old);
      return { status: 201, data: { ...data, previous: publicKey(ack.old) }, recorded: answer && COMMITTED };
    },
  });
}
