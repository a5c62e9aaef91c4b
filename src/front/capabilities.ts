import type { KeyMode, KeyType } from "../shared/api-keys.js";
import { ApiError } from "../shared/errors.js";
import type { KeyRecord } from "../store/records.js";

/**
 * What a key principal (an API key, or a dashboard session signed in with one) may do to the
 * org's keys and live settings, decided here and nowhere else (docs/api.md, "Who may manage a key"):
 *
 * - A caller is a secret key; a publishable key manages nothing.
 * - Managing a key (roll, disable, enable, delete) needs every scope of the key managed and its
 *   mode: a caller never acts on a key stronger than its own. A test-mode caller manages test keys
 *   only; a live caller manages both. A publishable key has no scopes, so any secret key of its
 *   org may manage it (a test caller only a test one). A key may manage itself (roll, disable or
 *   delete the key signed in with): it is no stronger than itself.
 * - Creating a key (live or test alike) needs the same: the new key's scopes among the caller's,
 *   and a test caller creates test keys only.
 * - A test-mode caller changes no live setting (bot policy, projects and their origins, webhook
 *   endpoints, the check history setting, billing): those act on live traffic.
 *
 * Each check returns null when allowed, else the reason, worded for the person signed in; `refuse`
 * turns a reason into the 403 INSUFFICIENT_SCOPE answer.
 */

/** A key's mode (a record without `mode` is a live key). */
export function modeOf(key: { mode?: string | undefined }): KeyMode {
  return key.mode === "test" ? "test" : "live";
}

/** The scopes of `needed` that `caller` lacks, in the order of `needed`. */
function lacking(caller: KeyRecord, needed: readonly string[]): string[] {
  return needed.filter((s) => !(caller.scopes as readonly string[]).includes(s));
}

const list = (scopes: readonly string[]): string => scopes.map((s) => `'${s}'`).join(", ");

function notSecret(caller: KeyRecord): string | null {
  return caller.type === "secret" ? null : "A publishable key manages nothing; sign in with a secret key.";
}

/**
 * Whether `caller` may roll, disable, enable or delete `target`.
 * @example mayManageKey(scopeless, billingKey) // "Key key_… carries the 'billing' scope, which the key you signed in with lacks: …"
 */
export function mayManageKey(caller: KeyRecord, target: { id: string; org_id: string; scopes: readonly string[]; mode?: string | undefined }): string | null {
  const kind = notSecret(caller);
  if (kind) return kind;
  if (caller.org_id !== target.org_id) return `Key ${target.id} belongs to another org.`;
  if (modeOf(caller) === "test" && modeOf(target) === "live") {
    return `Key ${target.id} is a live key, and you signed in with a test key (fs_test_…), which manages test keys only. Sign in with a live key that has ${target.scopes.length ? `the ${list(target.scopes)} scope${target.scopes.length > 1 ? "s" : ""}` : "no fewer scopes"} to manage it.`;
  }
  const missing = lacking(caller, target.scopes);
  if (missing.length) {
    return `Key ${target.id} carries the ${list(missing)} scope${missing.length > 1 ? "s" : ""}, which the key you signed in with lacks: a key manages only keys with no scope it does not hold itself. Sign in with a key that has ${missing.length > 1 ? "them" : "it"}.`;
  }
  return null;
}

/** Whether `caller` may create a key of this mode, type and scopes (the same rule for a test key as for a live one). */
export function mayCreateKey(caller: KeyRecord, requested: { mode: KeyMode; type: KeyType; scopes: readonly string[] }): string | null {
  const kind = notSecret(caller);
  if (kind) return kind;
  if (modeOf(caller) === "test" && requested.mode !== "test") {
    return "You signed in with a test key (fs_test_…), which creates test keys only; sign in with a live key to create a live one.";
  }
  const missing = lacking(caller, requested.type === "secret" ? requested.scopes : []);
  if (missing.length) return `A new key can carry only scopes of the key you signed in with; this one lacks ${missing.join(", ")}.`;
  return null;
}

/** Whether `caller` may change `what`, a setting live traffic uses: a test-mode key never does. */
export function mayChangeLive(caller: KeyRecord, what: string): string | null {
  const kind = notSecret(caller);
  if (kind) return kind;
  if (modeOf(caller) === "test")
    return `You signed in with a test key (fs_test_…), which cannot change ${what}: live traffic uses it. Sign in with a live key to change it.`;
  return null;
}

/** Throws the 403 INSUFFICIENT_SCOPE of a refusal (a null reason: allowed, nothing thrown). */
export function refuse(reason: string | null): void {
  if (reason !== null) throw new ApiError("INSUFFICIENT_SCOPE", reason);
}
