import type { AppDeps } from "../../deps.js";
import { ApiError } from "../../../shared/errors.js";
import { defineRoute, type InputsOf } from "../../route.js";
import { adminListQuery, keyListResponse, orgListResponse, projectListResponse } from "../../schemas/admin.js";
import { orgIdParam } from "../../schemas/params.js";
import type { KeyOf, ValueOf } from "../../../store/reader.js";
import { ackOrThrow } from "../ack.js";
import { KEY_EXAMPLE, publicKey } from "./keys.post.js";
import { publicOrg } from "./orgs.post.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "reads" | "store">;

/**
 * The admin API's listings: orgs, an org's projects, an org's keys (never their secrets), in id
 * order with cursor pagination (`next_cursor`: the last id of the page; null at the end). They
 * read the state after every write answered so far is committed. An org's projects and keys are
 * read from its own range of the org indexes (state-env.ts orgProjects, orgKeys), so a page
 * costs the same whatever other orgs hold.
 */

/** Above every id: the end of an org's range in an index keyed [org_id, id]. */
const END = "\uffff";

interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** `limit` and `cursor` of a listing in id order (adminListQuery). */
export type ListQuery = InputsOf<typeof adminListQuery>;

/** One page of the orgs in id order after the cursor; `next_cursor` continues it. */
async function orgsPage<T>(deps: Deps, q: ListQuery, show: (r: ValueOf<"orgs">) => T): Promise<Page<T>> {
  const items: T[] = [];
  let last: string | null = null;
  for await (const { key, value } of deps.reads.range("orgs", q.cursor === undefined ? {} : { start: q.cursor })) {
    if (key === q.cursor || key === "__init__") continue; // the cursor itself; the writer's marker
    // A record after a full page: there is more to list.
    if (items.length === q.limit) return { items, next_cursor: last };
    last = key;
    items.push(show(value));
  }
  return { items, next_cursor: null };
}

/**
 * One page of an org's projects or keys, in id order after the cursor (an id of the org's): the
 * ids from the org's range of its index (`index`), then their records in one read. `next_cursor`
 * is the page's last id when the org has more.
 */
export async function orgPageOf<D extends "projects" | "keys", T>(deps: Deps, db: D, orgId: string, q: ListQuery, show: (r: ValueOf<D>) => T): Promise<Page<T>> {
  const index = db === "projects" ? "orgProjects" : "orgKeys";
  const ids: string[] = [];
  let more = false;
  // One past the page (and the cursor itself, which the range starts at): whether there is more.
  for await (const { key } of deps.reads.range(index, { start: [orgId, q.cursor ?? ""], end: [orgId, END], limit: q.limit + 2 })) {
    const id = key[1];
    if (id === q.cursor) continue;
    if (ids.length === q.limit) {
      more = true;
      break;
    }
    ids.push(id);
  }
  const records = await deps.reads.getMany(db, ids as Array<KeyOf<D>>);
  const items: T[] = [];
  for (const r of records) if (r !== undefined) items.push(show(r));
  return { items, next_cursor: more ? ids[ids.length - 1]! : null };
}

async function orgOrThrow(deps: Deps, orgId: string): Promise<void> {
  if (!(await deps.reads.get("orgs", orgId))) throw new ApiError("NOT_FOUND", `No org with id ${orgId}.`);
}

/** The writer has committed everything answered so far (reads of the state see it). */
export async function synced(deps: Deps): Promise<void> {
  ackOrThrow(await deps.store.send({ op: "ping" }));
}

/** A project as the listings show it. */
export function publicProject(p: ValueOf<"projects">) {
  return { id: p.id, org_id: p.org_id, name: p.name, created_at: p.created_at, allowed_origins: p.allowed_origins ?? [] };
}

const ORG = { id: "org_3kT9xQ2mLbVfZ8aW", name: "Acme Shop", plan: "pro", subscription_status: "active", created_at: "2026-11-20T22:15:00.000Z" } as const;

/** GET /v1/admin/orgs?limit=&cursor= */
export function adminOrgsGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/admin/orgs",
    auth: { kind: "admin" },
    query: adminListQuery,
    docs: {
      summary: "List orgs",
      description: "Every org, in id order, `limit` per page (default 50, at most 100); pass `next_cursor` as `cursor` for the next page (null at the end).",
      tag: "admin",
      response: orgListResponse,
      errors: ["VALIDATION_ERROR", "NOT_READY"],
      example: { query: { limit: "1" }, response: { items: [ORG], next_cursor: ORG.id } },
    },
    async handle({ query }) {
      await synced(deps);
      return { data: await orgsPage(deps, query, publicOrg) };
    },
  });
}

/** GET /v1/admin/orgs/{orgId}/projects?limit=&cursor= */
export function adminProjectsGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/admin/orgs/:orgId/projects",
    auth: { kind: "admin" },
    params: { orgId: orgIdParam },
    query: adminListQuery,
    docs: {
      summary: "List an org's projects",
      description: `The org's projects with their allowed origins, in id order, \`limit\` per page; \`next_cursor\` continues (null at the end). At most FS_MAX_PROJECTS_PER_ORG projects (1000 by default).`,
      tag: "admin",
      response: projectListResponse,
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: ORG.id },
        response: { items: [{ id: "prj_8Hq2LmT7aZ3kXw9B", org_id: ORG.id, name: "Storefront", created_at: "2026-11-20T22:16:00.000Z", allowed_origins: ["https://shop.example.com"] }], next_cursor: null },
      },
    },
    async handle({ params, query }) {
      const orgId = params.orgId;
      await synced(deps);
      await orgOrThrow(deps, orgId);
      return { data: await orgPageOf(deps, "projects", orgId, query, publicProject) };
    },
  });
}

/** GET /v1/admin/orgs/{orgId}/keys?limit=&cursor= */
export function adminKeysGet(deps: Deps) {
  return defineRoute({
    method: "get",
    pattern: "/v1/admin/orgs/:orgId/keys",
    auth: { kind: "admin" },
    params: { orgId: orgIdParam },
    query: adminListQuery,
    docs: {
      summary: "List an org's API keys",
      description: `The org's keys (secret and publishable, disabled and expired ones included, deleted ones not) without their secrets, in id order, \`limit\` per page; \`next_cursor\` continues (null at the end). At most FS_MAX_KEYS_PER_ORG keys that are not deleted (1000 by default).`,
      tag: "admin",
      response: keyListResponse,
      errors: ["VALIDATION_ERROR", "NOT_FOUND", "NOT_READY"],
      example: {
        params: { orgId: ORG.id },
        response: {
          items: [{ ...KEY_EXAMPLE, org_id: ORG.id }],
          next_cursor: null,
        },
      },
    },
    async handle({ params, query }) {
      const orgId = params.orgId;
      await synced(deps);
      await orgOrThrow(deps, orgId);
      return { data: await orgPageOf(deps, "keys", orgId, query, publicKey) };
    },
  });
}
