import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SECRET_KEYS, envSchema, type Env } from "./schema.js";

/** Repository root, derived from this file's location (works from src/ under vitest and from dist/src/). */
export const REPO_ROOT = findRepoRoot(fileURLToPath(import.meta.url));

function findRepoRoot(file: string): string {
  // src/config/index.ts -> ../..; dist/src/config/index.js -> ../../..
  const parts = file.split(/[\\/]/);
  const srcAt = parts.lastIndexOf("src");
  const root = parts.slice(0, srcAt).join("/");
  return root.endsWith("/dist") ? root.slice(0, -"/dist".length) : root || "/";
}

/** Default DATA_DIR: a gitignored folder under data/. */
export const DEFAULT_DATA_DIR = resolve(REPO_ROOT, "data/local");

/** Parsed, frozen service configuration. */
export interface Config extends Readonly<Omit<Env, "DATA_DIR" | "FS_DEMO">> {
  /** Absolute path of DATA_DIR. */
  readonly DATA_DIR: string;
  /** FS_DEMO as given, else whether HOST is a loopback address. */
  readonly FS_DEMO: boolean;
}

/** Loopback host names and addresses: a service bound there is not reachable from other machines. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/**
 * Parses the environment once. Pure: pass any env-like object.
 * Reports every problem at once so an operator fixes them in one go.
 *
 * @example loadConfig({ PORT: "8081" }) // { ok: true, config: { PORT: 8081, ... } }
 */
export function loadConfig(env: Record<string, string | undefined>): ConfigResult {
  // An empty value means unset (PORT= would otherwise coerce to 0, a random port).
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) => `${i.path.join(".") || "(env)"}: ${i.message}${describeValue(env, i.path)}`,
    );
    return { ok: false, problems };
  }
  const data = parsed.data;
  if (data.FS_STORE === "postgres" && !data.DATABASE_URL) return { ok: false, problems: ["DATABASE_URL: required when FS_STORE=postgres"] };
  const config: Config = Object.freeze({
    ...data,
    DATA_DIR: resolve(data.DATA_DIR ?? DEFAULT_DATA_DIR),
    FS_DEMO: data.FS_DEMO ?? isLoopbackHost(data.HOST),
  });
  return { ok: true, config };
}

function describeValue(env: Record<string, string | undefined>, path: PropertyKey[]): string {
  const key = String(path[0] ?? "");
  if (!(key in env) || SECRET_KEYS.has(key)) return "";
  return ` (got ${JSON.stringify(env[key])})`;
}

/** The data directory from an environment, for scripts that need nothing else. */
export function dataDirFromEnv(env: Record<string, string | undefined>): string {
  return resolve(env.DATA_DIR || DEFAULT_DATA_DIR);
}

/** The config with secrets redacted, for the startup log. */
export function redactConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) out[k] = SECRET_KEYS.has(k) && v ? "[redacted]" : v;
  return out;
}

/** Reads process.env; the only place in src/ that does. */
export function loadConfigFromProcess(): ConfigResult {
  return loadConfig(process.env);
}
