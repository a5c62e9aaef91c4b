import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreClient } from "../../src/store/front/client.js";
import { journalDirOf } from "../../src/store/charge-journal.js";
import type { Ack, Intent } from "../../src/store/protocol.js";
import { periodOf } from "../../src/shared/period.js";

/**
 * The real writer thread on a temporary LMDB state: one intent that cannot be applied fails
 * alone, every other intent of its batch commits, and the writer goes on serving.
 */
let dir: string;
let store: StoreClient;
const NOW = Date.UTC(2026, 10, 24);
const PERIOD = periodOf(NOW);
const ORGS = ["org_iso_a", "org_iso_b", "org_iso_c"];

/** An intent LMDB refuses: a key past its 1,978-byte limit (the edge would refuse such an id). */
const tooLongKey = (): Intent => ({ op: "org.create", org: { id: "o".repeat(4000), name: "x", plan: "free", subscription_status: "active", trial_end: null, created_at: new Date(NOW).toISOString() } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "writer-iso-"));
  const stateDir = join(dir, "state");
  store = await StoreClient.start(stateDir, journalDirOf(stateDir), { logLevel: "error" });
  for (const id of ORGS) {
    const org = await store.send({ op: "org.create", org: { id, name: id, plan: "pro", subscription_status: "active", trial_end: null, created_at: new Date(NOW).toISOString() } });
    expect(org.ok).toBe(true);
    const project = await store.send({ op: "project.create", project: { id: `proj_${id}`, org_id: id, name: "p", created_at: new Date(NOW).toISOString() } });
    expect(project.ok).toBe(true);
  }
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const used = async (orgId: string): Promise<number> => {
  const ack = await store.send({ op: "usage.get", orgId, nowMs: NOW });
  if (!ack.ok) throw new Error(ack.message);
  return ack.usage.used;
};

describe("store writer: one bad write", () => {
  it("fails alone: the charges and the policy update of the same batch commit", async () => {
    // Sent in one event-loop turn, so the writer applies them in one batch.
    const sent = [
      store.send({ op: "charges.apply", records: [{ seq: 1, orgId: ORGS[0]!, credits: 7, period: PERIOD }], upToSeq: 1 }),
      store.send({ op: "project.update", orgId: ORGS[1]!, projectId: `proj_${ORGS[1]}`, patch: { bot_policy: { spoofed: "block" } } }),
      store.send(tooLongKey()),
      store.send({ op: "project.update", orgId: ORGS[2]!, projectId: `proj_${ORGS[2]}`, patch: { bot_policy: { spoofed: "score" } } }),
    ];
    const [charges, policy, bad, policy2] = await Promise.all(sent);
    expect(charges).toMatchObject({ ok: true });
    expect(policy).toMatchObject({ ok: true, project: { bot_policy: { spoofed: "block" } } });
    expect(bad).toMatchObject({ ok: false, error: "STORE_FAILED", message: expect.stringMatching(/^store write failed: .*key size/i) });
    expect(policy2).toMatchObject({ ok: true });
    expect(await used(ORGS[0]!)).toBe(7);
    expect(await store.send({ op: "ping" })).toEqual({ ok: true });
  });

  it("under load: every charge and update commits whatever bad intents share their batches", async () => {
    let seq = 1;
    const rounds = 200;
    const sends: Array<Promise<Ack>> = [];
    const bad: Array<Promise<Ack>> = [];
    for (let r = 0; r < rounds; r++) {
      seq++;
      sends.push(store.send({ op: "charges.apply", records: [{ seq, orgId: ORGS[r % 3]!, credits: 1, period: PERIOD }], upToSeq: seq }));
      sends.push(store.send({ op: "project.update", orgId: ORGS[r % 3]!, projectId: `proj_${ORGS[r % 3]}`, patch: { bot_policy: { bots: { [`bot${r}`]: "block" } } } }));
      if (r % 7 === 0) bad.push(store.send(tooLongKey()));
      // Let some batches close between sends, so the bad intents land in many different batches.
      if (r % 25 === 0) await new Promise((ok) => setImmediate(ok));
    }
    const acks = await Promise.all(sends);
    expect(acks.filter((a) => !a.ok)).toEqual([]);
    expect((await Promise.all(bad)).every((a) => !a.ok && a.error === "STORE_FAILED")).toBe(true);
    const total = (await used(ORGS[0]!)) + (await used(ORGS[1]!)) + (await used(ORGS[2]!));
    expect(total).toBe(7 + rounds);
    expect(await store.send({ op: "ping" })).toEqual({ ok: true });
  });
});
