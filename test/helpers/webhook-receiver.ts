import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One request the receiver got: its Standard Webhooks headers, body, and whether a secret verified it. */
export interface Received {
  /** The request's path (the endpoint's URL is `url` plus a suffix of the test's choosing). */
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  /** Every header of the request, by lower-case name (a repeated one joined by ", "). */
  headers: Record<string, string>;
  body: string;
  /** The parsed payload ({type, timestamp, data}) when `secret` verified the signature; null otherwise. */
  verified: { type: string; data: Record<string, unknown> } | null;
  /** The status the receiver answered. */
  status: number;
}

/**
 * A local webhook receiver (node:http on 127.0.0.1, port 0) that verifies each request with
 * `standardwebhooks` against `secret` and answers what `answer` says (200 by default; `"hang"`
 * never answers). Every request is kept in `received`, in arrival order.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  secret = "";
  answer: (r: Omit<Received, "status">) => number | "hang" = () => 200;
  private server: Server | null = null;
  private readonly hanging = new Set<IncomingMessage>();

  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const headers = {
          "webhook-id": String(req.headers["webhook-id"]),
          "webhook-timestamp": String(req.headers["webhook-timestamp"]),
          "webhook-signature": String(req.headers["webhook-signature"]),
        };
        let verified: Received["verified"] = null;
        try {
          verified = new Webhook(this.secret).verify(body, headers) as Received["verified"];
        } catch {
          verified = null;
        }
        const all = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : String(v)]));
        const r = {
          path: req.url ?? "",
          id: headers["webhook-id"],
          timestamp: headers["webhook-timestamp"],
          signature: headers["webhook-signature"],
          headers: all,
          body,
          verified,
        };
        const status = this.answer(r);
        if (status === "hang") {
          this.hanging.add(req);
          this.received.push({ ...r, status: 0 });
          return;
        }
        this.received.push({ ...r, status });
        res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "no");
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    return this.url;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** The 2xx-answered requests with message id `id`. */
  delivered(id: string): Received[] {
    return this.received.filter((r) => r.id === id && r.status >= 200 && r.status < 300);
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    for (const req of this.hanging) req.socket.destroy();
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
