/** Minimal structured logger: one JSON object per line on stdout (errors on stderr). */
export type LogLevel = "error" | "warn" | "info" | "debug";
const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
}

/** A logger that drops lines above `level`. */
export function createLogger(level: LogLevel, component: string): Logger {
  const max = RANK[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[lvl] > max) return;
    const line = JSON.stringify({ t: new Date().toISOString(), level: lvl, component, msg, ...fields });
    (lvl === "error" ? process.stderr : process.stdout).write(line + "\n");
  };
  return {
    error: (m, f) => emit("error", m, f),
    warn: (m, f) => emit("warn", m, f),
    info: (m, f) => emit("info", m, f),
    debug: (m, f) => emit("debug", m, f),
  };
}
