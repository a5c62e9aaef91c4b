/**
 * The front's cache of each org's learning state (check history setting, org model), read on
 * every check of the org: one Map lookup for an org seen before. An org without feedback has no
 * model, and its checks run exactly as before (the global model alone).
 *
 * Kept in step: the thread that applies a feedback or a setting takes the committed record from
 * the writer's acknowledgement and tells the other front threads (FrontPeers), which read it
 * again at the org's next check; in a cluster, every FS_CLUSTER_CACHE_MS (pg/refresh.ts), a
 * record another node changed is read again, its model with it.
 *
 * Read at once from LMDB; on a cluster node an org not cached is read over the front's pool
 * (StoreReader), off the event loop: `get` answers a promise then, and only then.
 */
import { decodeOrgModel } from "../../scoring/org-model/codec.js";
import { compileOrgModel, type OrgScorer } from "../../scoring/org-model/scorer.js";
import { DEFAULT_CHECK_HISTORY, type CheckHistorySetting, type OrgLearningRecord } from "../../store/records.js";
import type { StoreReader } from "../../store/reader.js";

/** What a check needs to know about its org. */
export interface OrgLearning {
  /** null until the org changed a setting or gave feedback. */
  record: OrgLearningRecord | null;
  /** What the org keeps of each check. */
  history: CheckHistorySetting;
  /** The org's model; null while it has learned nothing. */
  scorer: OrgScorer | null;
}

const NONE: OrgLearning = Object.freeze({ record: null, history: DEFAULT_CHECK_HISTORY, scorer: null });

export class OrgLearningCache {
  private readonly orgs = new Map<string, OrgLearning>();
  /** Orgs being read over the pool (a cluster node), so that concurrent checks share one read. */
  private readonly loading = new Map<string, Promise<OrgLearning>>();

  constructor(
    private readonly reads: StoreReader,
    private readonly onError: (orgId: string, err: Error) => void,
  ) {}

  /** The org's learning state: cached (at once), or read once from the store (a promise on a cluster node). */
  get(orgId: string): OrgLearning | Promise<OrgLearning> {
    const l = this.orgs.get(orgId);
    if (l !== undefined) return l;
    const local = this.reads.local;
    if (!local) return this.load(orgId);
    const record = local.orgLearning.get(orgId);
    const read = this.read(orgId, record, record && record.model_version !== 0 ? local.orgModels.get(orgId) : undefined);
    this.orgs.set(orgId, read);
    return read;
  }

  /** A record committed by this thread's writer acknowledgement, with the model as stored (when it changed). */
  take(record: OrgLearningRecord, model: Uint8Array | null): void {
    const prev = this.orgs.get(record.id);
    if (model) this.orgs.set(record.id, { record, history: record.history ?? DEFAULT_CHECK_HISTORY, scorer: this.compile(record.id, model) });
    // Versions start again from 0 at a reset: the same version after one is another model.
    else if (prev && prev.scorer?.version === record.model_version && (prev.record?.model_reset_at ?? null) === (record.model_reset_at ?? null)) this.orgs.set(record.id, { ...prev, record, history: record.history ?? DEFAULT_CHECK_HISTORY });
    else if (record.model_version === 0) this.orgs.set(record.id, this.read(record.id, record, undefined));
    else if (this.reads.local) this.orgs.set(record.id, this.read(record.id, record, this.reads.local.orgModels.get(record.id)));
    else this.orgs.delete(record.id); // its model is read (over the pool) at the org's next check
  }

  /** Another thread changed the org: read it again at its next check. */
  forget(orgId: string): void {
    this.orgs.delete(orgId);
  }

  /** Ids of the orgs cached (a cluster re-reads them, pg/refresh.ts). */
  orgIds(): string[] {
    return [...this.orgs.keys()];
  }

  /** The record as stored now (cluster refresh): the model is read again only when its version moved. */
  refreshed(orgId: string, record: OrgLearningRecord | undefined): void {
    const prev = this.orgs.get(orgId);
    if (!prev) return;
    if (!record) {
      if (prev.record !== null) this.orgs.set(orgId, NONE);
      return;
    }
    this.take(record, null);
  }

  /** Reads the org's record and model over the pool; kept unless a newer record came meanwhile (take). */
  private load(orgId: string): Promise<OrgLearning> {
    let p = this.loading.get(orgId);
    if (p) return p;
    p = Promise.all([this.reads.get("orgLearning", orgId), this.reads.get("orgModels", orgId)])
      .then(([record, bytes]) => {
        const known = this.orgs.get(orgId);
        if (known) return known;
        const read = this.read(orgId, record, bytes);
        this.orgs.set(orgId, read);
        return read;
      })
      .finally(() => this.loading.delete(orgId));
    this.loading.set(orgId, p);
    return p;
  }

  private read(orgId: string, record: OrgLearningRecord | undefined, bytes: Uint8Array | undefined): OrgLearning {
    if (!record) return NONE;
    const history = record.history ?? DEFAULT_CHECK_HISTORY;
    if (record.model_version === 0) return { record, history, scorer: null };
    return { record, history, scorer: bytes ? this.compile(orgId, bytes) : null };
  }

  /** A stored model that does not decode leaves the org on the global model (logged), never a failed check. */
  private compile(orgId: string, bytes: Uint8Array): OrgScorer | null {
    try {
      return compileOrgModel(decodeOrgModel(bytes));
    } catch (err) {
      this.onError(orgId, err as Error);
      return null;
    }
  }
}
