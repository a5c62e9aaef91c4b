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
  close(): Promise<void>;
}

export async function startSite(): Promise<Site> {
  const pages = new Map<string, string>();
  const waiting: ((p: SitePost) => void)[] = [];
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://site").pathname;
    if (req.method === "POST") {
      let body = "";
      req.setEncoding("utf8").on("data", (d: string) => (body += d));
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><p>thanks</p>");
        const post = { path, form: new URLSearchParams(body) };
        for (const w of waiting.splice(0)) w(post);
      });
      return;
    }
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
