import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const LOG_MODULE = pathToFileURL(resolve(import.meta.dirname, "../../dist/src/shared/log.js")).href;

/** What a process that logs one info and one error line in `format` prints on stdout and stderr. */
function printed(format: string): { stdout: string; stderr: string } {
  const script = `import { createLogger, setLogFormat } from ${JSON.stringify(LOG_MODULE)};
setLogFormat(${JSON.stringify(format)});
const log = createLogger("info", "test");
log.info("hello", { org_id: "org_a", n: 2 });
log.error("broken", { reason: "disk full" });`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return { stdout: r.stdout, stderr: r.stderr };
}

describe("log format", () => {
  it("json: one JSON object per line, errors on stderr only", () => {
    const { stdout, stderr } = printed("json");
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "info", component: "test", msg: "hello", org_id: "org_a", n: 2, time: expect.any(String) });
    expect(JSON.parse(stderr.trim())).toMatchObject({ level: "error", msg: "broken", reason: "disk full" });
  });

  it("pretty: the same records as readable lines (pino-pretty), no JSON", () => {
    const { stdout, stderr } = printed("pretty");
    expect(stdout).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: hello\n {4}component: "test"\n {4}org_id: "org_a"\n {4}n: 2\n$/);
    expect(stderr).toMatch(/ERROR: broken\n[^]*reason: "disk full"/);
    expect(() => JSON.parse(stdout.trim())).toThrow();
  });

  it("auto: json when stdout is not a terminal", () => {
    expect(JSON.parse(printed("auto").stdout.trim()).msg).toBe("hello");
  });
});
