import { lookup as dnsLookup } from "node:dns";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Webhook } from "standardwebhooks";
import { firstNonPublic } from "../../shared/public-address.js";
import type { WebhookSettings } from "../protocol.js";
import type { WebhookEndpointRecord } from "../records.js";
import type { WebhookClaim, WebhookResult } from "./webhooks.js";

/** The `webhook-signature` header: one `v1,` signature per secret in force (Standard Webhooks). */
export function signatures(endpoint: WebhookEndpointRecord, msgId: string, at: Date, payload: string): string {
  const secrets = [endpoint.secret, ...endpoint.previous_secrets.filter((p) => p.expires_at > at.getTime()).map((p) => p.secret)];
  return secrets.map((s) => new Webhook(s).sign(msgId, at, payload)).join(" ");
}

/** A connection refused because its address is not public; the message is what the delivery log shows. */
class NotPublicError extends Error {
  constructor(address: string) {
    super(`address ${address} is not public (webhooks go to public addresses only: FS_WEBHOOK_ALLOW_PRIVATE)`);
  }
}

/**
 * net's `lookup` for webhook connections: resolves every address of the name and fails when any
 * of them is not public (shared/public-address.ts). The socket connects to the addresses judged
 * here, with no lookup of its own, so a name that resolves to a public address for the check and
 * to a private one for the connection (DNS rebinding) cannot get through.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, "");
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), "");
    const refused = firstNonPublic(addresses.map((a) => a.address));
    if (refused !== null) return callback(new NotPublicError(refused), "");
    if (options.all) callback(null, addresses);
    else callback(null, first.address, first.family);
  });
};

/**
 * One attempt: POST the entry's payload, signed, within `timeoutMs`; redirects are not followed,
 * and unless `allowPrivate` only public addresses are reached (an IP literal is judged here, a
 * name by publicOnlyLookup at connection time). Never throws: a failure is a result with `error`.
 */
export function sendWebhook(claim: WebhookClaim, settings: Pick<WebhookSettings, "timeoutMs" | "allowPrivate">): Promise<WebhookResult> {
  const { endpoint, entry } = claim;
  const at = new Date();
  const started = performance.now();
  const result = (status: number | null, error: string | null): WebhookResult => ({ status, error, durationMs: performance.now() - started });
  const signal = AbortSignal.timeout(settings.timeoutMs);
  return new Promise((resolve) => {
    try {
      const url = new URL(endpoint.url);
      const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
      // net connects to an IP literal without a lookup: judge it here.
      const refused = settings.allowPrivate || isIP(host) === 0 ? null : firstNonPublic([host]);
      if (refused !== null) return resolve(result(null, new NotPublicError(refused).message));
      const send = url.protocol === "https:" ? httpsRequest : httpRequest;
      const req = send(
        url,
        {
          method: "POST",
          signal,
          // A connection of its own per attempt, made through publicOnlyLookup.
          agent: false,
          lookup: settings.allowPrivate ? undefined : publicOnlyLookup,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(entry.payload),
            "user-agent": "fraudscore-webhooks/1",
            "webhook-id": entry.msg_id,
            "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
            "webhook-signature": signatures(endpoint, entry.msg_id, at, entry.payload),
          },
        },
        (res) => {
          // The answer's body is not read: release the connection.
          res.destroy();
          resolve(result(res.statusCode ?? null, null));
        },
      );
      req.on("error", (err: NodeJS.ErrnoException) => {
        const error = signal.aborted ? `no answer within ${settings.timeoutMs} ms` : err instanceof NotPublicError ? err.message : (err.code ?? err.message);
        resolve(result(null, error));
      });
      req.end(entry.payload);
    } catch (err) {
      // A URL or header the request refuses: a failed attempt like any other.
      resolve(result(null, (err as Error).message));
    }
  });
}
