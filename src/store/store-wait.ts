/**
 * Thrown on a front thread of a cluster node when a call needs something of PostgreSQL first (a
 * record not cached yet, more credits of a lease): the request is asked again once `ready`
 * settles, and the event loop goes on meanwhile (src/http/router.ts). Thrown only where nothing
 * was done yet, so that trying again is safe: inside `mayWait` for a record, and by the quota's
 * hold and charge, which only the router calls. `ready` never rejects: what went wrong shows when
 * the call is tried again.
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

/** Whether a StoreWait may be thrown now (inside mayWait). */
export function canWait(): boolean {
  return waitable > 0;
}
