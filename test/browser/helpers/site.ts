import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A form POST the site's backend received. */
export interface SitePost {
  path: string;
  form: URLSearchParams;
}

/**
 * "The customer's site": a plain node:http server on its own port, so the beacon's calls to the
 * service are cross-origin. Serves registered HTML pages and records every form POST.
 */
export interface Site {
  url: string;
  /** Registers the HTML served at `path` (GET). */
  page(path: string, html: string): string;
  /** Resolves with the next form POST received. */
  nextPost(): Promise<SitePost>;
  /** Serves a static file at `path` (GET). */
  asset(path: string, body: string | Buffer, contentType: string): void;
  /** Resolves with the body of the first POST to `/report/<name>` (a page reporting a result). */
  report(name: string): Promise<string>;
  close(): Promise<void>;
}

export async function startSite(): Promise<Site> {
  const pages = new Map<string, string>();
  const assets = new Map<string, { body: string | Buffer; type: string }>();
  const reports = new Map<string, string>();
  const reportWaiters = new Map<string, ((body: string) => void)[]>();
  const waiting: ((p: SitePost) => void)[] = [];
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://site").pathname;
    if (req.method === "POST") {
      let body = "";
      req.setEncoding("utf8").on("data", (d: string) => (body += d));
      req.on("end", () => {
        if (path.startsWith("/report/")) {
          const name = path.slice("/report/".length);
          res.writeHead(204).end();
          if (!reports.has(name)) reports.set(name, body);
          for (const w of reportWaiters.get(name)?.splice(0) ?? []) w(body);
          return;
        }
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><p>thanks</p>");
        const post = { path, form: new URLSearchParams(body) };
        for (const w of waiting.splice(0)) w(post);
      });
      return;
    }
    const asset = assets.get(path);
    if (asset) return void res.writeHead(200, { "content-type": asset.type }).end(asset.body);
    const html = pages.get(path);
    if (html === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    page(path, html) {
      pages.set(path, html);
      return url + path;
    },
    nextPost: () => new Promise((resolve) => waiting.push(resolve)),
    asset(path, body, type) {
      assets.set(path, { body, type });
    },
    report(name) {
      const seen = reports.get(name);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => reportWaiters.set(name, [...(reportWaiters.get(name) ?? []), resolve]));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const escapeAttr = (v: string): string => v.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** The beacon's script tag; `attrs` are data-fs-* attributes (pass none to leave the key out). */
export function scriptTag(src: string, attrs: Record<string, string>): string {
  const list = Object.entries(attrs).map(([k, v]) => ` ${k}="${escapeAttr(v)}"`);
  return `<script async src="${escapeAttr(src)}"${list.join("")}></script>`;
}

/** A page with `body` and, at the end, the given script tag. Forms post into a named iframe, so the page stays. */
export function html(body: string, script = ""): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>site</title></head><body>${body}<iframe name="sink"></iframe>${script}</body></html>`;
}
