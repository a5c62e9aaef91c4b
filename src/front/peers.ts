import { BroadcastChannel } from "node:worker_threads";
import type { Plan } from "../shared/plans.js";
import type { KeyRecord, OrgRecord, ProjectRecord } from "../store/records.js";
import type { StateDbs } from "../store/state-env.js";
import type { IpDatasetHolder } from "../datasets/holder.js";
import type { Authenticator } from "./auth.js";
import type { ProjectDirectory } from "./projects.js";
import type { QuotaGate } from "./quota.js";
import type { OrgLearningCache } from "./feedback/org-learning.js";
import type { ServiceMetrics } from "./metrics.js";
import type { DashboardSession, LoginLink, SessionLink } from "../dashboard/sessions.js";

/** A change one front thread made that the others' caches must take. */
export type PeerMessage =
  | { kind: "key"; key: KeyRecord }
  | { kind: "project"; project: ProjectRecord }
  | { kind: "plan"; orgId: string; plan: Plan }
  | { kind: "billing"; org: OrgRecord }
  | { kind: "learning"; orgId: string }
  | { kind: "datasets" }
  | { kind: "dashboard"; digest: string; session: DashboardSession | null }
  | { kind: "login"; address: string; keyId: string; nowMs: number }
  | { kind: "metrics?"; id: string }
  | { kind: "metrics!"; id: string; metrics: MetricsJson };

type MetricsJson = Awaited<ReturnType<ServiceMetrics["registry"]["getMetricsAsJSON"]>>;

/** The caches a front thread keeps of records the store holds. */
export interface PeerCaches {
  auth: Pick<Authenticator, "rememberKey">;
  projects: Pick<ProjectDirectory, "remember">;
  quota: Pick<QuotaGate, "setPlan" | "setBilling">;
  learning: Pick<OrgLearningCache, "forget">;
  readDbs: { root: Pick<StateDbs["root"], "resetReadTxn"> };
  ipDatasets: Pick<IpDatasetHolder, "reload">;
  metrics: ServiceMetrics;
}

/** How long GET /metrics waits for the other threads' metrics before answering with what came. */
const GATHER_MS = 1000;

/** The channel every front thread of the process listens on. */
const CHANNEL = "fraudscore-front-peers";

/**
 * Keeps the front threads' caches in step (FS_FRONT_THREADS > 1). A route that changes a key,
 * a project or an org's plan applies the committed record to its own thread's caches, as with
 * one thread, and announces it on a BroadcastChannel; every other thread applies it on receipt,
 * which happens within its next event-loop turn. With one thread nothing is sent.
 */
export class FrontPeers {
  private readonly channel: BroadcastChannel | null;
  private readonly waiting = new Map<string, (m: MetricsJson) => void>();
  private dashboard: ((digest: string, session: DashboardSession | null) => void) | null = null;
  private login: ((address: string, keyId: string, nowMs: number) => void) | null = null;
  private nextId = 0;

  /** `threads`: the front threads of the process; with one, nothing is sent. */
  constructor(
    private readonly threads: number,
    private readonly caches: PeerCaches,
  ) {
    this.channel = threads > 1 ? new BroadcastChannel(CHANNEL) : null;
    if (this.channel) {
      this.channel.onmessage = (event) => this.receive((event as { data: PeerMessage }).data);
      this.channel.unref();
      // GET /metrics on any thread answers for all of them.
      caches.metrics.gather = (own) => this.gatherMetrics(own);
    }
  }

  /** This thread's metrics and every other thread's (those that answer within GATHER_MS). */
  private gatherMetrics(own: MetricsJson): Promise<MetricsJson[]> {
    const id = `${process.pid}:${Math.random().toString(36).slice(2)}:${this.nextId++}`;
    const all: MetricsJson[] = [own];
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(all);
      };
      const timer = setTimeout(done, GATHER_MS);
      this.waiting.set(id, (m) => {
        all.push(m);
        if (all.length === this.threads) done();
      });
      this.channel!.postMessage({ kind: "metrics?", id } satisfies PeerMessage);
    });
  }

  /** Dashboard sessions shared with the other threads; null with one thread. */
  sessionLink(): SessionLink | null {
    if (!this.channel) return null;
    return {
      publish: (digest, session) => this.channel?.postMessage({ kind: "dashboard", digest, session } satisfies PeerMessage),
      subscribe: (take) => {
        this.dashboard = take;
      },
    };
  }

  /** Wrong dashboard sign-in keys shared with the other threads (the sign-in limit); null with one thread. */
  loginLink(): LoginLink | null {
    if (!this.channel) return null;
    return {
      publish: (address, keyId, nowMs) => this.channel?.postMessage({ kind: "login", address, keyId, nowMs } satisfies PeerMessage),
      subscribe: (take) => {
        this.login = take;
      },
    };
  }

  private receive(msg: PeerMessage): void {
    if (msg.kind === "dashboard") {
      this.dashboard?.(msg.digest, msg.session);
      return;
    }
    if (msg.kind === "login") {
      this.login?.(msg.address, msg.keyId, msg.nowMs);
      return;
    }
    if (msg.kind === "metrics?") {
      void this.caches.metrics.registry.getMetricsAsJSON().then((metrics) => this.channel?.postMessage({ kind: "metrics!", id: msg.id, metrics } satisfies PeerMessage));
      return;
    }
    if (msg.kind === "metrics!") {
      this.waiting.get(msg.id)?.(msg.metrics);
      return;
    }
    this.apply(msg);
  }

  /** A key was created or changed (disabled): every thread serves the committed record. */
  key(key: KeyRecord): void {
    this.announce({ kind: "key", key });
  }

  project(project: ProjectRecord): void {
    this.announce({ kind: "project", project });
  }

  plan(orgId: string, plan: Plan): void {
    this.announce({ kind: "plan", orgId, plan });
  }

  billing(org: OrgRecord): void {
    this.announce({ kind: "billing", org });
  }

  /** An org's learning state changed (feedback, history setting): the other threads read it again. This thread took it already. */
  learning(orgId: string): void {
    this.channel?.postMessage({ kind: "learning", orgId } satisfies PeerMessage);
  }

  /** Every thread loads the IP dataset build `current` names (SIGHUP, or the admin reload). */
  datasets(): void {
    this.channel?.postMessage({ kind: "datasets" } satisfies PeerMessage);
  }

  close(): void {
    this.channel?.close();
  }

  private announce(msg: Exclude<PeerMessage, { kind: "metrics?" | "metrics!" | "dashboard" | "login" }>): void {
    this.apply(msg);
    this.channel?.postMessage(msg);
  }

  private apply(msg: Exclude<PeerMessage, { kind: "metrics?" | "metrics!" | "dashboard" | "login" }>): void {
    const c = this.caches;
    // A record another thread had committed: read snapshots older than its commit go.
    c.readDbs.root.resetReadTxn();
    switch (msg.kind) {
      case "key":
        return c.auth.rememberKey(msg.key);
      case "project":
        return c.projects.remember(msg.project);
      case "plan":
        return c.quota.setPlan(msg.orgId, msg.plan);
      case "billing":
        return c.quota.setBilling(msg.org.id, msg.org.plan, msg.org);
      case "learning":
        return c.learning.forget(msg.orgId);
      case "datasets":
        try {
          c.ipDatasets.reload();
        } catch {
          // The thread that was asked logs the failure; this one keeps serving the old build.
        }
        return;
    }
  }
}
