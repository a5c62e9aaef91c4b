import { request } from "node:http";
import { connect, type Socket } from "node:net";

/**
 * HTTP at the socket level, for what fetch cannot do: pipelined requests, bodies sent a byte at a
 * time, and requests from another loopback address (Linux accepts the whole 127/8 on `lo`).
 */

/** One parsed response. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Complete responses at the start of `buf` (each framed by Content-Length, as uWebSockets.js
 * writes them), and the bytes after them.
 */
export function parseResponses(buf: Buffer): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const end = buf.indexOf("\r\n\r\n", at, "latin1");
    if (end < 0) break;
    const [statusLine, ...lines] = buf.toString("latin1", at, end).split("\r\n");
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const colon = l.indexOf(":");
      headers[l.slice(0, colon).trim().toLowerCase()] = l.slice(colon + 1).trim();
    }
    const length = Number(headers["content-length"] ?? 0);
    if (buf.length < end + 4 + length) break;
    responses.push({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]), headers, body: buf.toString("utf8", end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return { responses, rest: buf.subarray(at) };
}

/**
 * Opens a connection, writes `text` in one write and collects the answers until the server closes
 * the connection, or until `count` answers came (then the client closes it).
 */
export function exchange(port: number, text: string, opts: { count?: number; localAddress?: string } = {}): Promise<{ responses: RawResponse[]; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let done = false;
    const s = connect({ port, host: "127.0.0.1", localAddress: opts.localAddress }, () => s.write(text));
    const finish = (closedByServer: boolean): void => {
      if (done) return;
      done = true;
      s.destroy();
      resolve({ responses: parseResponses(buf).responses, closedByServer });
    };
    s.on("data", (d) => {
      buf = Buffer.concat([buf, d]);
      if (opts.count !== undefined && parseResponses(buf).responses.length >= opts.count) finish(false);
    });
    s.on("close", () => finish(true));
    s.on("error", (err) => (done ? undefined : reject(err)));
  });
}

/**
 * A request whose body comes slowly: the head (and `first` bytes of the body) at once, then a
 * byte each time `trickle()` is called. It records the answer the server gives and whether the
 * server closed the connection.
 */
export class SlowBody {
  readonly socket: Socket;
  response: RawResponse | null = null;
  closed = false;
  private buf = Buffer.alloc(0);
  private readonly ready: Promise<void>;

  constructor(port: number, head: string, first: Buffer = Buffer.alloc(0), localAddress = "127.0.0.1") {
    this.socket = connect({ port, host: "127.0.0.1", localAddress });
    this.ready = new Promise((resolve) => {
      this.socket.once("connect", () => this.socket.write(Buffer.concat([Buffer.from(head, "latin1"), first]), () => resolve()));
      this.socket.once("close", () => resolve());
    });
    this.socket.on("data", (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.response ??= parseResponses(this.buf).responses[0] ?? null;
    });
    this.socket.on("error", () => {});
    this.socket.on("close", () => (this.closed = true));
  }

  /** Resolves once the head is written (or the connection failed). */
  opened(): Promise<void> {
    return this.ready;
  }

  /** Sends one more byte of the body, if the connection is still open. */
  trickle(): void {
    if (!this.closed && this.socket.writable) this.socket.write("x");
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The answer to one request made with node:http from `localAddress`, with how long it took (ms). */
export function timedRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? "GET", headers: opts.headers, localAddress: opts.localAddress, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** The `q` quantile (0..1) of `values`, nearest rank. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}
