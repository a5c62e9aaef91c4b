import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVICE_NODE_FLAGS } from "../../bench/http/servers.js";
import { REPO_ROOT } from "../../src/config/index.js";

describe("node flags of the service", () => {
  it("are the same in `npm start` and in the benchmark's service launch", () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: { start: string } };
    const launch = /node ((?:--\S+ )*)dist\/src\/main\.js/.exec(pkg.scripts.start);
    expect(launch).not.toBeNull();
    expect(launch![1]!.trim().split(/\s+/).filter(Boolean)).toEqual(SERVICE_NODE_FLAGS);
  });
});
