import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { ackOrThrow, COMMITTED } from "../ack.js";
import { keyResponse } from "../../schemas/admin.js";
import { keyIdParam } from "../../schemas/params.js";
import { KEY_EXAMPLE, publicKey } from "./keys.post.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "peers" | "reads" | "store">;

/** POST /v1/admin/keys/{keyId}/enable: a disabled key works again from the next request on; idempotent. */
export function adminKeyEnablePost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/keys/:keyId/enable",
    auth: { kind: "admin" },
    params: { keyId: keyIdParam },
    docs: {
      summary: "Re-enable an API key",
      description: "A disabled key is accepted again from the next request on (unless it has expired). Enabling an enabled key changes nothing; a deleted key is 404.",
      tag: "admin",
      response: keyResponse,
      errors: ["NOT_FOUND", "NOT_READY"],
      example: {
        params: { keyId: "key_Zk3pQ9xL2mT7" },
        response: KEY_EXAMPLE,
      },
    },
    async handle({ params, recordAnswer }) {
      const keyId = params.keyId;
      // The answer is known before the write (the key with no disabled time), and stored with it.
      const current = recordAnswer && (await deps.reads.get("keys", keyId));
      const answer = current && current.deleted_at === undefined ? recordAnswer!(200, publicKey({ ...current, disabled_at: null })) : undefined;
      const ack = ackOrThrow(await deps.store.send({ op: "key.enable", keyId, answer }));
      deps.peers.key(ack.key);
      return { data: publicKey(ack.key), recorded: answer && COMMITTED };
    },
  });
}
