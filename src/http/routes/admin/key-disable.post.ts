import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { ackOrThrow } from "../ack.js";
import { publicKey } from "./keys.post.js";

/** POST /v1/admin/keys/{keyId}/disable: takes effect on the next request; idempotent. */
export function adminKeyDisablePost(deps: AppDeps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/keys/:keyId/disable",
    auth: { kind: "admin" },
    async handle({ snap, nowMs }) {
      const keyId = snap.params[0]!;
      const ack = ackOrThrow(await deps.store.send({ op: "key.disable", keyId, nowMs }));
      deps.auth.rememberKey(ack.key!);
      return { data: publicKey(ack.key!) };
    },
  });
}
