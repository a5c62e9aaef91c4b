import type { ProjectRecord } from "../store/records.js";
import type { StateDbs } from "../store/state-env.js";

/**
 * Project settings the beacon routes need on every hit (allowed origins, bot policy), read from
 * the state environment and cached. Project changes go through admin and owner routes on this
 * same thread, which hand the writer's committed record to `remember`, so the cache stays exact.
 */
export class ProjectDirectory {
  private readonly cache = new Map<string, ProjectRecord>();

  constructor(private readonly dbs: { projects: Pick<StateDbs["projects"], "get"> }) {}

  get(id: string): ProjectRecord | undefined {
    let p = this.cache.get(id);
    if (!p) {
      p = this.dbs.projects.get(id);
      if (p) this.cache.set(id, p);
    }
    return p;
  }

  remember(project: ProjectRecord): void {
    this.cache.set(project.id, project);
  }

  /** Ids of the cached projects (a cluster re-reads them: pg/refresh.ts). */
  cachedIds(): string[] {
    return [...this.cache.keys()];
  }

  forget(id: string): void {
    this.cache.delete(id);
  }
}

/**
 * Whether a page at `origin` may use the project's publishable key. No Origin header (a server
 * or a tool, not a browser page): allowed, CORS only protects browsers. No list, or an empty
 * one: any origin. Entries are exact origins (`https://shop.example.com`, `http://localhost:3000`),
 * `*`, or a subdomain wildcard (`https://*.example.com`, which does not match the apex).
 */
export function originAllowed(project: ProjectRecord, origin: string): boolean {
  const list = project.allowed_origins;
  if (!origin || !list || list.length === 0) return true;
  const o = origin.toLowerCase();
  for (const entry of list) {
    if (entry === "*" || entry === o) return true;
    const star = entry.indexOf("://*.");
    if (star > 0) {
      const scheme = entry.slice(0, star + 3);
      const suffix = entry.slice(star + 4); // ".example.com[:port]"
      if (o.startsWith(scheme) && o.endsWith(suffix) && o.length > scheme.length + suffix.length) return true;
    }
  }
  return false;
}
