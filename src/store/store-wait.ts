/**
 * Thrown on a front thread of a cluster node when a call needs something of PostgreSQL first (a
 * record not cached yet, more credits of a lease): the request is asked again once `ready`
 * settles, and the event loop goes on meanwhile (src/http/router.ts, withStore below). A record
 * is looked up where nothing was done yet, so that trying again is safe: the router's checks
 * before a call and the Idempotency-Key's lookup, the quota's hold and charge (only the router
 * calls them), and a route's own lookups through withStore. Met anywhere else it answers
 * NOT_READY (errors.ts) while the record is read for the retry. `ready` never rejects: what went
 * wrong shows when the call is tried again.
 */
export class StoreWait extends Error {
  constructor(readonly ready: Promise<void>) {
    super("waiting for the store");
    this.name = "StoreWait";
  }
}

let waitable = 0;

/**
 * Runs `action` at a point of a call that can be run again (before the call did anything): a
 * record it needs that is not at hand throws StoreWait there, instead of being read at once.
 */
export function mayWait<T>(action: () => T): T {
  waitable++;
  try {
    return action();
  } finally {
    waitable--;
  }
}

/**
 * mayWait without a closure, for the request path: `beginWait()`, then the action, then
 * `endWait()` in a `finally`.
 */
export function beginWait(): void {
  waitable++;
}

export function endWait(): void {
  waitable--;
}

/** Whether a StoreWait may be thrown now (inside mayWait). */
export function canWait(): boolean {
  return waitable > 0;
}

/** Waits `withStore` allows one action (a record or two, each read once). */
const MAX_STORE_WAITS = 8;

/**
 * Runs `action` (it reads cached records: keys, projects, orgs) where it may wait: on a cluster
 * node, a record not cached yet is read over the pool while the event loop goes on, and `action`
 * runs again then. Answers at once (no promise) when nothing had to be read: always on LMDB.
 * A read that failed throws when `action` runs again (PgError: NOT_READY).
 */
export function withStore<T>(action: () => T): T | Promise<T> {
  try {
    return mayWait(action);
  } catch (err) {
    if (!(err instanceof StoreWait)) throw err;
    return waitThenRun(err, action);
  }
}

async function waitThenRun<T>(wait: StoreWait, action: () => T): Promise<T> {
  for (let n = 1; ; n++) {
    await wait.ready;
    try {
      return mayWait(action);
    } catch (err) {
      if (!(err instanceof StoreWait) || n >= MAX_STORE_WAITS) throw err;
      wait = err;
    }
  }
}
