import { chmodSync, fchmodSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Modes of everything under DATA_DIR/state (LMDB environments, their lock files, the journals,
 * the meter windows' marker files): readable by the service's own user only, whatever the umask
 * (docs/operations.md, "Secrets and state files"). A mode given at creation is masked by the
 * umask, so each helper also sets it explicitly; that also tightens files an older version left
 * with looser modes.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** `mkdir -p dir`, then mode 0700 on `dir` (directories created on the way get 0700 less the umask). */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/** openSync with mode 0600, also for a file that existed already. */
export function openPrivate(path: string, flags: string): number {
  const fd = openSync(path, flags, PRIVATE_FILE_MODE);
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE);
  } catch (err) {
    // Not ours to change (another owner): leave it, the directory's 0700 still guards it.
    if ((err as NodeJS.ErrnoException).code !== "EPERM") throw err;
  }
  return fd;
}

/**
 * Mode 0600 on every regular file directly in `dir`: an LMDB environment's data and lock files,
 * which LMDB creates itself (with `permissionsMode`, masked by the umask).
 */
export function restrictFiles(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile()) chmodSync(join(dir, entry.name), PRIVATE_FILE_MODE);
  }
}
