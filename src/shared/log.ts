import { pino, type Logger as PinoLogger } from "pino";

/**
 * Structured logs through pino: one JSON object per line, `level` as a name, `time` in ISO 8601,
 * `component` (main, writer, access) and `msg`. Errors go to stderr, everything else to stdout.
 * Lines go through process.stdout and process.stderr, which write synchronously to files and
 * pipes, so a line logged just before the process exits is not lost.
 */
export type LogLevel = "error" | "warn" | "info" | "debug";

export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
}

let root: PinoLogger | null = null;

function rootLogger(): PinoLogger {
  if (root) return root;
  const streams = pino.multistream(
    [
      { level: "debug", stream: process.stdout },
      { level: "error", stream: process.stderr },
    ],
    { dedupe: true },
  );
  root = pino(
    {
      level: "debug",
      base: undefined,
      messageKey: "msg",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    streams,
  );
  return root;
}

/** A logger for one component that drops lines above `level`. */
export function createLogger(level: LogLevel, component: string): Logger {
  const log = rootLogger().child({ component }, { level });
  return {
    error: (m, f) => (f ? log.error(f, m) : log.error(m)),
    warn: (m, f) => (f ? log.warn(f, m) : log.warn(m)),
    info: (m, f) => (f ? log.info(f, m) : log.info(m)),
    debug: (m, f) => (f ? log.debug(f, m) : log.debug(m)),
  };
}
