import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { ackOrThrow, COMMITTED } from "../ack.js";
import { keyResponse } from "../../schemas/admin.js";
import { keyIdParam } from "../../schemas/params.js";
import { KEY_EXAMPLE, publicKey } from "./keys.post.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "peers" | "reads" | "store">;

/** POST /v1/admin/keys/{keyId}/disable: takes effect on the next request; idempotent. */
export function adminKeyDisablePost(deps: Deps) {
  return defineRoute({
    method: "post",
    pattern: "/v1/admin/keys/:keyId/disable",
    auth: { kind: "admin" },
    params: { keyId: keyIdParam },
    docs: {
      summary: "Disable an API key",
      description: "The key is refused (403 KEY_DISABLED) from the next request on. Disabling a disabled key changes nothing.",
      tag: "admin",
      response: keyResponse,
      errors: ["NOT_FOUND", "NOT_READY"],
      example: { params: { keyId: "key_Zk3pQ9xL2mT7" }, response: { ...KEY_EXAMPLE, disabled: true } },
    },
    async handle({ params, nowMs, recordAnswer }) {
      const keyId = params.keyId;
      // Keys change only by being disabled: the answer is known before the write, and stored with it.
      const current = recordAnswer && (await deps.reads.get("keys", keyId));
      const answer = current ? recordAnswer!(200, publicKey({ ...current, disabled_at: current.disabled_at ?? nowMs })) : undefined;
      const ack = ackOrThrow(await deps.store.send({ op: "key.disable", keyId, nowMs, answer }));
      deps.peers.key(ack.key);
      return { data: publicKey(ack.key), recorded: answer && COMMITTED };
    },
  });
}
