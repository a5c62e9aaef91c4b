/**
 * Several variants of the service in one HTTP run (bench/README.md, "Running"): each variant is a
 * service process of its own, measured in the same interleaved rounds against the same hello
 * world, its rows named `<scenario>@<variant>`.
 *
 * - `--compare-ref [name=]<git-ref>` builds that commit in a temporary git worktree (node_modules
 *   linked from this checkout when the lockfiles are identical, else `npm ci --prefer-offline`;
 *   then `npm run build`) and serves it beside the current build (named `HEAD`).
 * - `--variant name[:ENV=value,ENV2=value]` serves the current build with extra environment.
 *
 * Without either flag the runner serves the current build alone, with unsuffixed row names.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/config/index.js";
import { parseCuts, type CutName } from "./ablate.js";

/** A variant as the flags describe it, before anything is built. */
export interface VariantSpec {
  /** Suffix of its rows: `check@<name>`. */
  name: string;
  /** A git ref to build in a temporary worktree; absent = the current build (this checkout's dist/). */
  ref?: string;
  /** Extra environment for its service process (overrides the runner's own settings). */
  env: Record<string, string>;
  /** Parts cut out of its build (`ablate=a+b` in --variant; ablate.ts), instead of the run's --ablate. */
  cuts?: CutName[];
}

/** Name of the current build's variant when --compare-ref adds another and no --variant is given. */
export const CURRENT = "HEAD";

const NAME = /^[A-Za-z0-9][A-Za-z0-9._~^-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `name` or `name:ENV=value,ENV2=value` (one --variant flag). A value may not hold a comma; an
 * empty value is allowed (`FS_X=`).
 */
export function parseVariant(spec: string): VariantSpec {
  const colon = spec.indexOf(":");
  const name = (colon < 0 ? spec : spec.slice(0, colon)).trim();
  if (!NAME.test(name)) throw new Error(`--variant ${spec}: the name must be letters, digits, '.', '_', '-' (got '${name}')`);
  const env: Record<string, string> = {};
  const rest = colon < 0 ? "" : spec.slice(colon + 1).trim();
  for (const pair of rest ? rest.split(",") : []) {
    const eq = pair.indexOf("=");
    const key = (eq < 0 ? pair : pair.slice(0, eq)).trim();
    if (eq < 0 || !ENV_NAME.test(key)) throw new Error(`--variant ${spec}: expected ENV=value, got '${pair}'`);
    if (key in env) throw new Error(`--variant ${spec}: ${key} given twice`);
    env[key] = pair.slice(eq + 1).trim();
  }
  // `ablate=metrics+ratelimit`: this variant's build with those parts cut (one run compares them).
  if ("ablate" in env) {
    const cuts = parseCuts(env.ablate!.split("+").filter(Boolean));
    delete env.ablate;
    return { name, env, cuts };
  }
  return { name, env };
}

/** `[name=]<git-ref>` (one --compare-ref flag); the name defaults to `fallbackName`. */
export function parseCompareRef(spec: string, fallbackName: string): VariantSpec {
  const eq = spec.indexOf("=");
  const name = eq < 0 ? fallbackName : spec.slice(0, eq).trim();
  const ref = (eq < 0 ? spec : spec.slice(eq + 1)).trim();
  if (!NAME.test(name)) throw new Error(`--compare-ref ${spec}: the name must be letters, digits, '.', '_', '-' (got '${name}')`);
  if (!ref || ref.startsWith("-") || /\s/.test(ref)) throw new Error(`--compare-ref ${spec}: not a git ref: '${ref}'`);
  return { name, ref, env: {} };
}

/**
 * The variants the flags ask for, or [] for a plain run. With --compare-ref alone, the current
 * build is added as `HEAD` after the refs; with --variant, the variants are exactly those listed
 * (a bare `--variant HEAD` is the current build as it is). A single --compare-ref is named `base`
 * unless named, several are named after their refs. Names must be unique.
 */
export function parseVariantFlags(compareRefs: string[], variants: string[]): VariantSpec[] {
  if (compareRefs.length === 0 && variants.length === 0) return [];
  const refs = compareRefs.map((spec) => parseCompareRef(spec, compareRefs.length === 1 ? "base" : spec.slice(spec.indexOf("=") + 1).trim()));
  const current = variants.length ? variants.map(parseVariant) : [{ name: CURRENT, env: {} }];
  const all = [...refs, ...current];
  const seen = new Set<string>();
  for (const v of all) {
    if (seen.has(v.name)) throw new Error(`variant name '${v.name}' used twice; name them (--compare-ref name=ref, --variant name:...)`);
    seen.add(v.name);
  }
  return all;
}

/** A row's scenario name: `check@base`, or plain `check` in a run without variants (and for hello world). */
export function variantScenarioName(scenario: string, variant: string | undefined): string {
  return variant === undefined ? scenario : `${scenario}@${variant}`;
}

/**
 * The order of the variants in round `round` (1-based): as given on odd rounds, reversed on even
 * ones, so a drift of the machine's speed within a round does not favour the variant measured first.
 */
export function variantOrder<T>(variants: readonly T[], round: number): T[] {
  return round % 2 === 1 ? [...variants] : [...variants].reverse();
}

/** A built checkout of another commit, ready to serve (its dist/ and node_modules). */
export interface RefBuild {
  root: string;
  commit: string;
  /** How node_modules was provided: `linked` (identical lockfile) or `npm ci`. */
  modules: "linked" | "npm ci";
  cleanup(): void;
}

function git(args: string[], cwd = REPO_ROOT): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/**
 * Builds `ref` in a temporary detached git worktree of this repository: node_modules is a link to
 * this checkout's when package-lock.json is identical (else `npm ci --prefer-offline`), then
 * `npm run build`. `cleanup` removes the worktree (and its registration).
 */
export function buildRef(ref: string, log: (line: string) => void = () => {}): RefBuild {
  const commit = git(["rev-parse", "--verify", `${ref}^{commit}`]);
  const root = mkdtempSync(join(tmpdir(), `fs-ref-${commit.slice(0, 7)}-`));
  rmSync(root, { recursive: true, force: true }); // git worktree add wants to create it
  let added = false;
  const cleanup = (): void => {
    if (added) {
      try {
        git(["worktree", "remove", "--force", root]);
      } catch {
        /* removed below */
      }
    }
    rmSync(root, { recursive: true, force: true });
    try {
      git(["worktree", "prune"]);
    } catch {
      /* nothing to prune */
    }
  };
  try {
    git(["worktree", "add", "--detach", root, commit]);
    added = true;
    const lockHere = join(REPO_ROOT, "package-lock.json");
    const sameLock = existsSync(lockHere) && existsSync(join(REPO_ROOT, "node_modules")) && readFileSync(lockHere, "utf8") === readFileSync(join(root, "package-lock.json"), "utf8");
    let modules: RefBuild["modules"];
    if (sameLock) {
      symlinkSync(join(REPO_ROOT, "node_modules"), join(root, "node_modules"));
      modules = "linked";
    } else {
      log(`${ref} (${commit.slice(0, 7)}): lockfile differs, npm ci --prefer-offline`);
      execFileSync("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
      modules = "npm ci";
    }
    log(`${ref} (${commit.slice(0, 7)}): npm run build in ${root}`);
    execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    writeFileSync(join(root, ".fs-bench-ref"), `${commit}\n`);
    return { root, commit, modules, cleanup };
  } catch (err) {
    cleanup();
    const e = err as Error & { stderr?: Buffer | string; stdout?: Buffer | string };
    const detail = [e.stdout, e.stderr].map((b) => (b ? String(b).trim() : "")).filter(Boolean).join("\n");
    throw new Error(`could not build ${ref}: ${e.message}${detail ? `\n${detail.slice(-2000)}` : ""}`);
  }
}
