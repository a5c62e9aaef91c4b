import type { AppDeps } from "../../deps.js";
import { defineRoute } from "../../route.js";
import { ackOrThrow } from "../ack.js";
import { keyResponse, patchKeyBody } from "../../schemas/admin.js";
import { keyIdParam } from "../../schemas/params.js";
import { KEY_EXAMPLE, publicKey } from "./keys.post.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "peers" | "store">;

/** PATCH /v1/admin/keys/{keyId} {name}: names (or unnames) a key. */
export function adminKeyPatch(deps: Deps) {
  return defineRoute({
    method: "patch",
    pattern: "/v1/admin/keys/:keyId",
    auth: { kind: "admin" },
    body: patchKeyBody,
    params: { keyId: keyIdParam },
    docs: {
      summary: "Rename an API key",
      description: "Sets the key's name (null removes it). The name is only for people: it changes nothing the key may do.",
      tag: "admin",
      response: keyResponse,
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "NOT_READY"],
      example: {
        params: { keyId: "key_Zk3pQ9xL2mT7" },
        body: { name: "checkout backend (eu)" },
        response: { ...KEY_EXAMPLE, name: "checkout backend (eu)" },
      },
    },
    async handle({ body, params }) {
      const ack = ackOrThrow(await deps.store.send({ op: "key.rename", keyId: params.keyId, name: body.name }));
      deps.peers.key(ack.key);
      return { data: publicKey(ack.key) };
    },
  });
}
