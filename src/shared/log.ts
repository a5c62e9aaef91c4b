import { pino, type DestinationStream, type Logger as PinoLogger } from "pino";
import { PinoPretty } from "pino-pretty";

/**
 * Structured logs through pino: one JSON object per line, `level` as a name, `time` in ISO 8601,
 * `component` (main, writer, access) and `msg`. Errors go to stderr, everything else to stdout.
 * Lines go through process.stdout and process.stderr, which write synchronously to files and
 * pipes, so a line logged just before the process exits is not lost. In the format `pretty`
 * (setLogFormat; FS_LOG_FORMAT, by default on a terminal) the same records are printed by
 * pino-pretty, one readable line each with their fields below it.
 */
export type LogLevel = "error" | "warn" | "info" | "debug";

/** `json`: one JSON object per line (files, pipes, log collectors); `pretty`: pino-pretty, for a person at a terminal. */
export type LogFormat = "json" | "pretty";

let format: LogFormat = "json";

/** `auto` (FS_LOG_FORMAT's default) decided: `pretty` when stdout is a terminal, `json` otherwise. */
export function resolveLogFormat(chosen: LogFormat | "auto"): LogFormat {
  return chosen === "auto" ? (process.stdout.isTTY ? "pretty" : "json") : chosen;
}

/** Chooses how every logger of this thread prints (before its first line: the root logger is built once). */
export function setLogFormat(chosen: LogFormat | "auto"): void {
  format = resolveLogFormat(chosen);
}

/** Where lines at and above one level go: the stream itself, or pino-pretty writing to it synchronously. */
function sink(stream: NodeJS.WriteStream): DestinationStream {
  return format === "pretty" ? PinoPretty({ destination: stream, sync: true, colorize: stream.isTTY === true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" }) : stream;
}

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
      { level: "debug", stream: sink(process.stdout) },
      { level: "error", stream: sink(process.stderr) },
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
