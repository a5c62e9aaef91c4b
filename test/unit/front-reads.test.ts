import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OrgLearningCache } from "../../src/front/feedback/org-learning.js";
import { localReader, type StoreReader } from "../../src/store/reader.js";
import { emptyLearning } from "../../src/store/records.js";
import { openState, type LmdbStateDbs } from "../../src/store/state-env.js";
import { StoreWait, withStore } from "../../src/store/store-wait.js";

/**
 * Reads of the front (issue 26): at once where a read costs nothing (LMDB), a promise only where
 * it costs a round trip (a cluster node) and only when nothing is cached.
 */
let dir: string;
let dbs: LmdbStateDbs;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "fs-front-reads-"));
  dbs = openState(dir, false);
});
afterEach(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The same view read as a cluster node reads it (each read a promise). */
const pooled = (): StoreReader => ({ ...localReader(dbs), local: null });

describe("OrgLearningCache", () => {
  it("on LMDB answers at once; on a cluster node a miss is a promise (one read for concurrent checks), a hit is at once", async () => {
    dbs.orgLearning.putSync("org_a", { ...emptyLearning("org_a"), history: { mode: "features", days: 7 } });
    const onError = (): void => undefined;

    const local = new OrgLearningCache(localReader(dbs), onError).get("org_a");
    expect(local).not.toBeInstanceOf(Promise);

    const cache = new OrgLearningCache(pooled(), onError);
    const first = cache.get("org_a");
    const second = cache.get("org_a");
    expect(first).toBeInstanceOf(Promise);
    expect(second).toBe(first);
    const read = await first;
    expect(read.history).toEqual({ mode: "features", days: 7 });
    expect(read).toEqual(local);
    expect(cache.get("org_a")).toBe(read);
    expect(await cache.get("org_none")).toMatchObject({ record: null, scorer: null });
  });
});

describe("withStore", () => {
  it("answers at once when nothing had to be read; otherwise waits for each read and runs the action again", async () => {
    expect(withStore(() => 7)).toBe(7);
    let loaded = 0;
    const action = (): number => {
      if (loaded < 2) throw new StoreWait(Promise.resolve().then(() => void loaded++));
      return loaded;
    };
    const waited = withStore(action);
    expect(waited).toBeInstanceOf(Promise);
    expect(await waited).toBe(2);
    // Errors are not waits: thrown at once.
    expect(() =>
      withStore(() => {
        throw new Error("bug");
      }),
    ).toThrow("bug");
  });
});
