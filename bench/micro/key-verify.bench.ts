/**
 * API-key verification on the front thread: the real `Authenticator` for a valid key, a
 * well-formed unknown key and a malformed header, with a bare SHA-256 of a key for contrast.
 *
 *   node dist/bench/micro/key-verify.bench.js
 *
 * The key store is a Map behind `keys.get`, so these figures leave out the LMDB read. A valid key
 * is cached by the Authenticator after its first use (as in the service); an unknown key reaches
 * `keys.get` on every call, which in the service is an LMDB get. The failure paths include
 * building the thrown ApiError. Each contender's answer is checked before anything is timed.
 */
import { createHash } from "node:crypto";
import { Bench } from "tinybench";
import { Authenticator } from "../../src/front/auth.js";
import { ApiError } from "../../src/shared/errors.js";
import { SECRET_PREFIX, generateKey, hashKey } from "../../src/shared/api-keys.js";
import type { KeyRecord } from "../../src/store/records.js";
import type { StateDbs } from "../../src/store/state-env.js";
import { machineLine, microRow } from "../lib/context.js";

const TIME_MS = 1000;
const WARMUP_MS = 250;
const NEED = { kind: "secret" } as const;

/** A read-only key store over a Map: all the Authenticator reads is `keys.get(id)`. */
function mapKeyStore(records: KeyRecord[]): Pick<StateDbs, "keys"> {
  const byId = new Map(records.map((r) => [r.id, r]));
  const keys = { get: (id: string): KeyRecord | undefined => byId.get(id) };
  return { keys } as unknown as Pick<StateDbs, "keys">;
}

function secretKeyRecord(id: string, hash: string): KeyRecord {
  return {
    id,
    org_id: "org_bench0000000000",
    project_id: null,
    type: "secret",
    scopes: [],
    hash,
    created_at: new Date().toISOString(),
    expires_at: null,
    disabled_at: null,
  };
}

/** The error code a call throws, or "ok" when it returns. */
function outcome(call: () => unknown): string {
  try {
    call();
    return "ok";
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
}


async function main(): Promise<void> {
  const valid = generateKey("secret");
  const unknown = generateKey("secret"); // well-formed, never stored
  const auth = new Authenticator(mapKeyStore([secretKeyRecord(valid.id, valid.hash)]), hashKey("bench-admin-token"));
  const headers = {
    valid: `Bearer ${valid.plain}`,
    unknown: `Bearer ${unknown.plain}`,
    malformed: `Bearer ${SECRET_PREFIX}not-a-key`,
  };
  const now = Date.now();

  const expected: Array<[string, string]> = [
    [outcome(() => auth.verifyKey(headers.valid, NEED, now)), "ok"],
    [outcome(() => auth.verifyKey(headers.unknown, NEED, now)), "INVALID_KEY"],
    [outcome(() => auth.verifyKey(headers.malformed, NEED, now)), "INVALID_KEY"],
  ];
  for (const [got, want] of expected) if (got !== want) throw new Error(`key-verify check: expected ${want}, got ${got}`);

  let sink = 0;
  const bench = new Bench({ time: TIME_MS, warmupTime: WARMUP_MS });
  bench
    .add("verifyKey: valid key (cached record)", () => {
      sink += auth.verifyKey(headers.valid, NEED, now).orgId.length;
    })
    .add("verifyKey: unknown key (401)", () => {
      sink += outcome(() => auth.verifyKey(headers.unknown, NEED, now)).length;
    })
    .add("verifyKey: malformed key (401)", () => {
      sink += outcome(() => auth.verifyKey(headers.malformed, NEED, now)).length;
    })
    .add("raw sha256 hex of a key", () => {
      sink += createHash("sha256").update(valid.plain).digest("hex").length;
    });
  await bench.run();

  console.log(`key-verify (${sink > 0 ? "ok" : "?"}): ${machineLine()}`);
  console.log(`tinybench: ${TIME_MS} ms per task after ${WARMUP_MS} ms warm-up; key store is a Map (no LMDB read)`);
  console.table(bench.table(microRow));
}

await main();
