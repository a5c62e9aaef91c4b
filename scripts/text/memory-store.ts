/**
 * The store's named databases in memory (KvDatabase, src/store/state-env.ts), ordered like LMDB's
 * by the same key encoding: lets scripts run the writer's own appliers (e.g. the feedback of the
 * few-shot evaluation) without an environment on disk.
 */
import { fromBufferKey, toBufferKey } from "ordered-binary";
import type { KvDatabase, RangeOptions } from "../../src/store/state-env.js";

export class MemoryDb<V, K> implements KvDatabase<V, K> {
  private readonly rows = new Map<string, V>();

  get(key: K): V | undefined {
    return this.rows.get(hex(key));
  }

  putSync(key: K, value: V): void {
    this.rows.set(hex(key), value);
  }

  removeSync(key: K): void {
    this.rows.delete(hex(key));
  }

  *getRange(o: RangeOptions = {}): Iterable<{ key: K; value: V }> {
    const lo = o.reverse ? o.end : o.start;
    const hi = o.reverse ? o.start : o.end;
    let keys = [...this.rows.keys()].sort();
    if (lo !== undefined) keys = keys.filter((k) => (o.reverse ? k > hex(lo) : k >= hex(lo)));
    if (hi !== undefined) keys = keys.filter((k) => (o.reverse ? k <= hex(hi) : k < hex(hi)));
    if (o.reverse) keys.reverse();
    if (o.limit !== undefined) keys = keys.slice(0, o.limit);
    for (const k of keys) yield { key: fromBufferKey(Buffer.from(k, "hex")) as K, value: this.rows.get(k)! };
  }

  *getKeys(o: RangeOptions = {}): Iterable<K> {
    for (const { key } of this.getRange(o)) yield key;
  }
}

function hex(key: unknown): string {
  return toBufferKey(key as Parameters<typeof toBufferKey>[0]).toString("hex");
}
