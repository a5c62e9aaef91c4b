/**
 * Getting the bytes of each manifest file source: from the repository's snapshot (data/snapshot/,
 * ./snapshot.ts), from a local directory of the sources layout (`--sources DIR`), from each
 * source's upstream address (`--fetch`), or from a mirror that serves the same layout
 * (`--fetch --fetch-mirror URL`: `${URL}/${path}`). The first of download, directory and snapshot
 * that the run asked for is tried first; the others follow in that order as fallbacks, and the
 * answer's note says which one was used. A source that cannot be had is reported as missing or
 * failed, never thrown: the build goes on without it.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { FileSource } from "./manifest.js";
import { readSnapshot, type Snapshot } from "./snapshot.js";

/** What acquiring needs of a source: range sources and the bot registry files both have it. */
export type AcquirableSource = Pick<FileSource, "path" | "upstream" | "upstream_format" | "format">;

/** Where the builder looks for file sources. */
export interface AcquireOptions {
  /** A directory of the sources layout. With `fetch`, the fallback when a download fails. */
  sourcesDir?: string;
  /** The repository's snapshot: read when neither `fetch` nor `sourcesDir` has the source. */
  snapshot?: Snapshot;
  /** Download instead of reading the directory. */
  fetch?: boolean;
  /** With `fetch`: a base URL serving the snapshot layout, used instead of each upstream address. */
  fetchMirror?: string;
  /** Per-download limit; default 60 s. */
  timeoutMs?: number;
  /** Parallel downloads; default 8. */
  concurrency?: number;
  /** Progress lines. */
  log?: (line: string) => void;
  /** What the sources are, for the progress lines (default "sources"). */
  what?: string;
}

/** The outcome for one source: bytes and the format they are in, or why there are none. */
export type Acquired =
  | {
      status: "ok";
      bytes: Buffer;
      origin: string;
      format: string;
      note: string | null;
      /** When these bytes were taken from upstream (snapshot: its date; download: now); null when unknown. */
      taken: string | null;
    }
  | { status: "missing" | "failed"; reason: string; origin: string | null };

/** Files larger than this are refused (the biggest source is ~2 MB). */
export const MAX_SOURCE_BYTES = 64 * 1024 * 1024;

/** Reads one source from a sources directory. */
export async function readLocal(source: AcquirableSource, dir: string): Promise<Acquired> {
  const path = join(dir, source.path);
  try {
    const bytes = await readFile(path);
    if (bytes.length > MAX_SOURCE_BYTES) return { status: "failed", reason: `larger than ${MAX_SOURCE_BYTES} bytes`, origin: path };
    return { status: "ok", bytes, origin: path, format: source.format, note: null, taken: null };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { status: "missing", reason: `not in ${dir}`, origin: path };
    return { status: "failed", reason: `cannot read: ${code ?? (err as Error).message}`, origin: path };
  }
}

/** The address and format `--fetch` uses for a source. */
export function fetchTarget(source: AcquirableSource, mirror?: string): { url: string; format: string } {
  if (mirror) return { url: `${mirror.replace(/\/+$/, "")}/${source.path.split("/").map(encodeURIComponent).join("/")}`, format: source.format };
  return { url: source.upstream, format: source.upstream_format ?? source.format };
}

/**
 * Downloads one source. 404/410 are "missing"; other statuses, timeouts and network errors are
 * "failed". A host that is unreachable (no DNS answer, refused, unreachable network, timed out)
 * is remembered in `down`, and later downloads from it fail at once instead of waiting again.
 * Other network errors (a reset connection, a socket closed mid-answer) are retried once and do
 * not condemn the host: one bad connection must not turn a whole rebuild into local fallbacks.
 */
export async function download(source: AcquirableSource, opts: AcquireOptions, down: Map<string, string> = new Map()): Promise<Acquired> {
  const { url, format } = fetchTarget(source, opts.fetchMirror);
  const host = new URL(url).host;
  for (let attempt = 1; ; attempt++) {
    const known = down.get(host);
    if (known) return { status: "failed", reason: `${known} (earlier download from ${host})`, origin: url };
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000), redirect: "follow" });
      if (res.status === 404 || res.status === 410) {
        await res.body?.cancel();
        return { status: "missing", reason: `HTTP ${res.status}`, origin: url };
      }
      if (!res.ok) {
        await res.body?.cancel();
        return { status: "failed", reason: `HTTP ${res.status}`, origin: url };
      }
      const length = Number(res.headers.get("content-length") ?? 0);
      if (length > MAX_SOURCE_BYTES) {
        await res.body?.cancel();
        return { status: "failed", reason: `larger than ${MAX_SOURCE_BYTES} bytes`, origin: url };
      }
      const bytes = Buffer.from(await res.arrayBuffer());
      if (bytes.length > MAX_SOURCE_BYTES) return { status: "failed", reason: `larger than ${MAX_SOURCE_BYTES} bytes`, origin: url };
      return { status: "ok", bytes, origin: url, format, note: null, taken: new Date().toISOString() };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const timedOut = e.name === "TimeoutError";
      const code = e.cause?.code ?? "";
      const why = timedOut ? `timed out after ${opts.timeoutMs ?? 60_000} ms` : code || e.cause?.message || e.message;
      const reason = `fetch failed: ${why}`;
      if (timedOut || UNREACHABLE.has(code)) {
        down.set(host, reason);
        return { status: "failed", reason, origin: url };
      }
      if (attempt >= 2) return { status: "failed", reason, origin: url };
    }
  }
}

/** Error codes that say the host cannot be reached at all (so later downloads from it would wait in vain). */
const UNREACHABLE = new Set(["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT"]);

/**
 * Checks bytes before they are accepted: null when they are usable, else why not (a drifted
 * format). A rejected download or file falls back like a missing one.
 */
export type AcceptBytes<S extends AcquirableSource> = (source: S, bytes: Buffer, format: string) => string | null;

/**
 * Gets every source, at most `concurrency` downloads at a time, in manifest order: downloaded
 * (`fetch`), else read from `sourcesDir`, else from `snapshot`, each later one a fallback of the
 * earlier. Bytes that `accept` rejects (a drifted upstream) fall back the same way; when every
 * step fails that way, the answer is "failed" with the rejection as reason. With none of the
 * three, every source is "missing" (not requested).
 */
export async function acquireSources<S extends AcquirableSource>(sources: readonly S[], opts: AcquireOptions, accept?: AcceptBytes<S>): Promise<Acquired[]> {
  const log = opts.log ?? (() => {});
  if (!opts.fetch && !opts.sourcesDir && !opts.snapshot) {
    return sources.map(() => ({ status: "missing", reason: "not requested (no snapshot, --sources or --fetch)", origin: null }));
  }
  const results: Acquired[] = new Array(sources.length);
  const down = new Map<string, string>();
  let nextIndex = 0;
  const tally = { tried: 0, fetched: 0, fallback: 0, failed: 0 };
  const worker = async () => {
    while (nextIndex < sources.length) {
      const i = nextIndex++;
      const source = sources[i]!;
      const got = (results[i] = await acquireOne(source, opts, down, accept));
      if (!opts.fetch) continue;
      // With --fetch the download is the first step: ok without a note is a download.
      tally[got.status !== "ok" ? "failed" : got.note === null ? "fetched" : "fallback"]++;
      if (++tally.tried % 25 === 0 || tally.tried === sources.length) log(`  ${progressLine(tally, sources.length, opts.what ?? "sources")}`);
    }
  };
  const threads = opts.fetch ? Math.max(1, opts.concurrency ?? 8) : 16;
  await Promise.all(Array.from({ length: Math.min(threads, sources.length) }, worker));
  return results;
}

/** A --fetch progress line: how many were tried, and what came of them. */
export function progressLine(t: { tried: number; fetched: number; fallback: number; failed: number }, total: number, what: string): string {
  return `${what}: tried ${t.tried}/${total} (${t.fetched} fetched, ${t.fallback} from a fallback, ${t.failed} failed)`;
}

/** One source through the chain download -> directory -> snapshot; a fallback's note names what failed. */
async function acquireOne<S extends AcquirableSource>(source: S, opts: AcquireOptions, down: Map<string, string>, accept?: AcceptBytes<S>): Promise<Acquired> {
  const steps: Array<() => Acquired | Promise<Acquired>> = [];
  if (opts.fetch) steps.push(() => download(source, opts, down));
  if (opts.sourcesDir) steps.push(() => readLocal(source, opts.sourcesDir!));
  if (opts.snapshot) steps.push(() => readSnapshot(source, opts.snapshot!));
  let first: Extract<Acquired, { status: "missing" | "failed" }> | undefined;
  const failures: string[] = [];
  for (const step of steps) {
    let got = await step();
    if (got.status === "ok" && accept) {
      const rejected = accept(source, got.bytes, got.format);
      if (rejected !== null) got = { status: "failed", reason: rejected, origin: got.origin };
    }
    if (got.status === "ok") {
      if (failures.length === 0) return got;
      const used = got.taken && opts.snapshot && got.origin.startsWith(opts.snapshot.dir) ? `the snapshot taken ${got.taken}` : got.origin;
      return { ...got, note: `${failures.join("; ")}; used ${used}` };
    }
    first ??= got;
    // A failed download is named as such once something else is tried after it.
    failures.push(opts.fetch && failures.length === 0 ? `download failed (${got.reason})` : got.reason);
  }
  // Every step failed: the first one's status and origin, with every reason (one step: its own).
  return steps.length === 1 ? first! : { ...first!, reason: failures.join("; ") };
}
