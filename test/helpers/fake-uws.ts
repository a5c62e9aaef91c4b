import type { HttpRequest, HttpResponse, TemplatedApp } from "uWebSockets.js";

/**
 * The part of uWebSockets.js's App the service uses, in process and without a socket: routes are
 * registered on it as on a real App (mountApp), and `request()` runs the handler uWS would pick,
 * with a request and a response that behave like uWS's (a request valid until the handler first
 * returns, the body delivered to onData after that in detached chunks, writes refused after the
 * answer ended or the client left). Tests about an answer's content call the app through it,
 * like fastify's `inject` or hono's `app.request`; see test/helpers/app.ts.
 */
export class FakeUwsApp {
  private readonly routes: RouteEntry[] = [];
  private order = 0;

  /** The App, as mountApp and the router see it. */
  get app(): TemplatedApp {
    const on =
      (method: string) =>
      (pattern: string, handler: Handler): TemplatedApp => {
        this.routes.push({ method, pattern, segments: pattern.split("/"), handler, order: this.order++ });
        return this.app;
      };
    const app = {
      get: on("get"),
      post: on("post"),
      patch: on("patch"),
      put: on("put"),
      del: on("delete"),
      options: on("options"),
      head: on("head"),
      any: on("*"),
      close: () => app,
    };
    return app as unknown as TemplatedApp;
  }

  /** Runs one request through the routes and resolves with the answer once it has ended. */
  request(req: FakeRequest): Promise<FakeAnswer> {
    const method = req.method.toLowerCase();
    const route = this.match(method, req.path);
    if (!route) return Promise.resolve({ status: 404, headers: [], body: Buffer.alloc(0), closed: false });
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(req, route.params, resolve);
      req.signal?.addEventListener("abort", () => {
        exchange.abort();
        reject(req.signal!.reason ?? new Error("aborted"));
      });
      try {
        route.entry.handler(exchange.response as unknown as HttpResponse, exchange.request as unknown as HttpRequest);
      } catch (err) {
        reject(err);
        return;
      } finally {
        exchange.request.expire(); // uWS: the request is valid until the handler returns
      }
      exchange.deliverBody();
    });
  }

  /**
   * The handler uWS would run: per segment, a literal beats a parameter, which beats a wildcard;
   * a handler of the request's method beats `any`; among equals, the first registered.
   */
  private match(method: string, path: string): { entry: RouteEntry; params: string[] } | null {
    const segments = path.split("/");
    let best: { entry: RouteEntry; params: string[]; rank: number[] } | null = null;
    for (const entry of this.routes) {
      if (entry.method !== method && entry.method !== "*") continue;
      const m = matchSegments(entry.segments, segments);
      if (!m) continue;
      const rank = [...m.rank, entry.method === "*" ? 1 : 0, entry.order];
      if (!best || compareRanks(rank, best.rank) < 0) best = { entry, params: m.params, rank };
    }
    return best && { entry: best.entry, params: best.params };
  }
}

/** One request as the test sends it. Header names in any case; the path without the query. */
export interface FakeRequest {
  method: string;
  path: string;
  /** Without the leading "?"; undefined when the URL has none. */
  query?: string;
  headers: Array<[string, string]>;
  body?: Uint8Array;
  /** The connection's peer address (default 127.0.0.1). */
  peer?: string;
  /** Size of the pieces the body arrives in (default: one piece). */
  chunkBytes?: number;
  signal?: AbortSignal;
}

/** What the handler wrote. Header names as written (lower-case in this service). */
export interface FakeAnswer {
  status: number;
  headers: Array<[string, string]>;
  body: Buffer;
  /** The answer asked for the connection to be closed (end(body, true)). */
  closed: boolean;
}

type Handler = (res: HttpResponse, req: HttpRequest) => void;

interface RouteEntry {
  method: string;
  pattern: string;
  segments: string[];
  handler: Handler;
  order: number;
}

/** Ranks per segment: 0 literal, 1 parameter, 2 wildcard (the rest of the path). */
function matchSegments(pattern: string[], path: string[]): { params: string[]; rank: number[] } | null {
  const params: string[] = [];
  const rank: number[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p === "*" && i === pattern.length - 1) {
      rank.push(2);
      return { params, rank };
    }
    const s = path[i];
    if (s === undefined) return null;
    if (p.startsWith(":")) {
      if (s === "") return null;
      params.push(s);
      rank.push(1);
    } else if (p === s) rank.push(0);
    else return null;
  }
  return pattern.length === path.length ? { params, rank } : null;
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? -1) - (b[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

/** A request and its response, as uWS hands them to a handler. */
class Exchange {
  readonly request: FakeHttpRequest;
  readonly response: FakeHttpResponse;

  constructor(
    private readonly req: FakeRequest,
    params: string[],
    done: (answer: FakeAnswer) => void,
  ) {
    this.request = new FakeHttpRequest(req, params);
    this.response = new FakeHttpResponse(req.peer ?? "127.0.0.1", done);
  }

  /** After the handler returned: the body in pieces, each on a later turn, as uWS reads it. */
  deliverBody(): void {
    const body = this.req.body ?? new Uint8Array(0);
    const step = this.req.chunkBytes ?? Math.max(1, body.length);
    let at = 0;
    const next = (): void => {
      const onData = this.response.dataHandler;
      // uWS hands data only to a reader the handler registered; without one the body is dropped.
      if (this.response.isDone || !onData) return;
      const end = Math.min(body.length, at + step);
      const chunk = new ArrayBuffer(end - at);
      new Uint8Array(chunk).set(body.subarray(at, end));
      at = end;
      onData(chunk, at >= body.length);
      // uWS detaches the chunk once the callback returned.
      structuredClone(chunk, { transfer: [chunk] });
      if (at < body.length) setImmediate(next);
    };
    if (this.req.method.toLowerCase() !== "get" && this.req.method.toLowerCase() !== "head") setImmediate(next);
  }

  abort(): void {
    this.response.abort();
  }
}

class FakeHttpRequest {
  private valid = true;
  private readonly headers: Array<[string, string]>;

  constructor(
    private readonly req: FakeRequest,
    private readonly params: string[],
  ) {
    this.headers = req.headers.map(([k, v]) => [k.toLowerCase(), v]);
  }

  expire(): void {
    this.valid = false;
  }

  private check(): void {
    if (!this.valid) throw new Error("uWS.HttpRequest must not be accessed after await or route handler return");
  }

  getHeader(name: string): string {
    this.check();
    return this.headers.find(([k]) => k === name)?.[1] ?? "";
  }

  getParameter(i: number): string | undefined {
    this.check();
    return this.params[i];
  }

  getQuery(): string | undefined {
    this.check();
    return this.req.query;
  }

  getUrl(): string {
    this.check();
    return this.req.path;
  }

  getMethod(): string {
    this.check();
    return this.req.method.toLowerCase();
  }

  getCaseSensitiveMethod(): string {
    this.check();
    return this.req.method;
  }

  forEach(cb: (name: string, value: string) => void): void {
    this.check();
    for (const [k, v] of this.headers) cb(k, v);
  }

  setYield(): this {
    return this;
  }
}

class FakeHttpResponse {
  private status = "200 OK";
  private readonly headers: Array<[string, string]> = [];
  private ended = false;
  private aborted = false;
  private abortHandler: (() => void) | undefined;
  dataHandler: ((chunk: ArrayBuffer, isLast: boolean) => void) | undefined;

  constructor(
    private readonly peer: string,
    private readonly done: (answer: FakeAnswer) => void,
  ) {}

  get isEnded(): boolean {
    return this.ended;
  }

  get isDone(): boolean {
    return this.ended || this.aborted;
  }

  private check(): void {
    if (this.aborted || this.ended) throw new Error("Invalid access of discarded or aborted uWS.HttpResponse!");
  }

  abort(): void {
    if (this.isDone) return;
    this.aborted = true;
    this.abortHandler?.();
  }

  onAborted(cb: () => void): this {
    this.abortHandler = cb;
    return this;
  }

  onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void): this {
    this.dataHandler = cb;
    return this;
  }

  cork(cb: () => void): this {
    cb();
    return this;
  }

  writeStatus(status: string): this {
    this.check();
    this.status = status;
    return this;
  }

  writeHeader(name: string, value: string): this {
    this.check();
    this.headers.push([name, value]);
    return this;
  }

  end(body?: string | Uint8Array, closeConnection = false): this {
    this.check();
    this.finish(body === undefined ? Buffer.alloc(0) : Buffer.from(body as string), closeConnection);
    return this;
  }

  endWithoutBody(reportedContentLength?: number): this {
    this.check();
    // uWS states the length a GET would have sent (HEAD answers) when given one.
    if (reportedContentLength !== undefined) this.headers.push(["content-length", String(reportedContentLength)]);
    this.finish(Buffer.alloc(0), false);
    return this;
  }

  close(): this {
    if (!this.isDone) this.abort();
    return this;
  }

  getRemoteAddressAsText(): ArrayBuffer {
    return new TextEncoder().encode(this.peer).buffer as ArrayBuffer;
  }

  private finish(body: Buffer, closed: boolean): void {
    this.ended = true;
    this.done({ status: Number(this.status.split(" ")[0]), headers: this.headers, body, closed });
  }
}
