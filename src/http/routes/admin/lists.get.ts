import type { AppDeps } from "../../deps.js";
import { ApiError } from "../../../shared/errors.js";
import { defineRoute, type InputsOf } from "../../route.js";
import { adminListQuery, keyListResponse, orgListResponse, projectListResponse } from "../../schemas/admin.js";
import { orgIdParam } from "../../schemas/params.js";
import type { ValueOf } from "../../../store/reader.js";
import { ackOrThrow } from "../ack.js";
import { KEY_EXAMPLE, publicKey } from "./keys.post.js";
import { publicOrg } from "./orgs.post.js";

/** The services this file's routes use (of AppDeps): a route's dependencies are in its signature. */
type Deps = Pick<AppDeps, "reads" | "store">;

/**
 * The admin API's listings: orgs, an org's projects, an org's keys (never their secrets), in id
 * order with cursor pagination (`next_cursor`: the last id of the page; null at the end). They
 * read the state after every write answered so far is committed.
 */

/** Most records examined for one page of an org's projects or keys (they are filtered by org). */
const SCAN_LIMIT = 10_000;

interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** `limit` and `cursor` of a listing in id order (adminListQuery). */
export type ListQuery = InputsOf<typeof adminListQuery>;

/**
 * One page of `db` in key order after the cursor, keeping the records `keep` accepts. A page ends at
 * `limit` items or after SCAN_LIMIT records examined; either way `next_cursor` continues it.
 */
export async function pageOf<D extends "orgs" | "projects" | "keys", T>(
  deps: Deps,
  db: D,
  q: ListQuery,
  keep: (r: ValueOf<D>) => boolean,
  show: (r: ValueOf<D>) => T,
): Promise<Page<T>> {
  const items: T[] = [];
  let scanned = 0;
  let last: string | null = null;
  let full = false;
  for await (const { key, value } of deps.reads.range(db, q.cursor === undefined ? {} : { start: q.cursor })) {
    if (key === q.cursor || key === "__init__") continue; // the cursor itself; the writer's marker
    // A record after a full page: there is more to list.
    if (full) return { items, next_cursor: last };
    last = key as string;
    scanned++;
    if (keep(value)) items.push(show(value));
    full = items.length === q.limit || scanned === SCAN_LIMIT;
  }
  return { items, next_cursor: null };
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
      return { data: await pageOf(deps, "orgs", query, () => true, publicOrg) };
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
      description: `The org's projects with their allowed origins, in id order, \`limit\` per page; \`next_cursor\` continues (null at the end). A page examines at most ${SCAN_LIMIT} projects of all orgs, so it may hold fewer items than \`limit\` and still have a cursor.`,
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
      return { data: await pageOf(deps, "projects", query, (p) => p.org_id === orgId, publicProject) };
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
      description: `The org's keys (secret and publishable, disabled and expired ones included, deleted ones not) without their secrets, in id order, \`limit\` per page; \`next_cursor\` continues (null at the end). A page examines at most ${SCAN_LIMIT} keys of all orgs.`,
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
      return { data: await pageOf(deps, "keys", query, (k) => k.org_id === orgId && k.deleted_at === undefined, publicKey) };
    },
  });
}
