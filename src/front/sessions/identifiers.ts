import { parseEmail } from "../../scoring/email.js";
import type { Pseudonymizer } from "../../shared/pseudonym.js";
import { formatIp, type ParsedIp } from "../../shared/ip.js";
import type { PeekKeys } from "../../store/front/bindings-view.js";

/**
 * The join keys of an account event as the store keeps them: each identifier normalised, then
 * hashed with the install's secret (src/shared/pseudonym.ts). POST /v1/sessions/resolve binds
 * with these keys and POST /v1/auth/check reads the same keys without binding, so both count the
 * same accounts for the same identifiers.
 */
export type JoinKeys = PeekKeys;

/** The identifiers of a request, raw (the IP already parsed and validated). */
export interface RawIdentifiers {
  externalUserId?: string | undefined;
  sessionId?: string | undefined;
  fingerprint?: string | number | undefined;
  ip?: ParsedIp | null | undefined;
  email?: string | undefined;
}

/**
 * Hashes the identifiers given; absent ones stay absent.
 * @example joinKeysOf(deps.pseudonyms, { sessionId: "s_…", ip: parseIp("73.15.20.30") }) // { session, ip, prefix }
 */
export function joinKeysOf(h: Pseudonymizer, r: RawIdentifiers): JoinKeys {
  const keys: JoinKeys = {};
  if (r.externalUserId !== undefined) keys.user = h.hash("user", r.externalUserId);
  if (r.sessionId !== undefined) keys.session = h.hash("session", r.sessionId);
  if (r.fingerprint !== undefined) keys.fingerprint = h.hash("fingerprint", String(r.fingerprint));
  if (r.ip) {
    keys.ip = h.hash("ip", formatIp(r.ip));
    keys.prefix = h.hash("prefix", prefixOf(r.ip));
  }
  if (r.email !== undefined) keys.email = h.hash("email", normalEmail(r.email));
  return keys;
}

/** Carrier-grade NAT space (RFC 6598, 100.64.0.0/10): many subscribers behind one address. */
export function isCgnat(ip: ParsedIp): boolean {
  return ip.version === 4 && ip.v4 >>> 22 === (100 << 2) + 1;
}

/** The /24 (IPv4) or /48 (IPv6) network of an address, as text. */
export function prefixOf(ip: ParsedIp): string {
  if (ip.version === 4) return `${ip.v4 >>> 8}/24`;
  return `${ip.words[0]}:${ip.words[1]! >>> 16}/48`;
}

/** The address as one mailbox: lower case, +tag and provider-ignored dots removed. */
export function normalEmail(email: string): string {
  const p = parseEmail(email);
  return p.ok ? `${p.value.normalizedLocal}@${p.value.normalizedDomain}` : email.trim().toLowerCase();
}
