import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { ackOrThrow } from "../ack.js";
import { deletedKeyResponse } from "../../schemas/admin.js";
import { keyIdParam } from "../../schemas/params.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "peers" | "store">;

/** DELETE /v1/admin/keys/{keyId}: the key is refused as unknown from the next request on and listed nowhere. */
export function adminKeyDelete(deps: Deps) {
  return defineRoute({
    method: "del",
    pattern: "/v1/admin/keys/:keyId",
    auth: { kind: "admin" },
    params: { keyId: keyIdParam },
    docs: {
      summary: "Delete an API key",
      description:
        "From the next request on the key is answered 401 INVALID_KEY, exactly as a key that never existed, and it leaves the key lists; it cannot be enabled again (create a new key). Deleting a deleted key answers the same. What the key was used for (usage, observations, checks) stays with its org.",
      tag: "admin",
      response: deletedKeyResponse,
      errors: ["NOT_FOUND", "NOT_READY"],
      example: { params: { keyId: "key_Zk3pQ9xL2mT7" }, response: { id: "key_Zk3pQ9xL2mT7", deleted: true } },
    },
    async handle({ params, nowMs }) {
      const ack = ackOrThrow(await deps.store.send({ op: "key.delete", keyId: params.keyId, nowMs }));
      deps.peers.key(ack.key);
      return { data: { id: ack.key.id, deleted: true as const } };
    },
  });
}
