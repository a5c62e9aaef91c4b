import { randomBase62, newId } from "../../shared/ids.js";
import { generateKey, hashKey } from "../../shared/api-keys.js";
import type { StoreClient } from "./client.js";
import type { KeyRecord, OrgRecord, ProjectRecord } from "../records.js";

export interface BootstrapResult {
  /** SHA-256 of the admin token the service accepts. */
  adminTokenHash: string;
  /** Set only on the first start: what to print once. */
  firstStart: null | {
    adminToken: string | null;
    orgId: string;
    projectId: string;
    secretKey: string;
    publishableKey: string;
  };
}

/**
 * On first start with an empty state, creates the demo org (plan free) with one project, one
 * secret key (scopes sessions, billing) and one publishable key, and records the admin token's
 * hash (FS_ADMIN_TOKEN, or a generated token when unset). Later starts change nothing, except
 * that a token set in the environment replaces the stored one (so the generated token, once
 * printed in a log, stops working as soon as an operator configures their own).
 */
export async function bootstrap(store: StoreClient, envAdminToken: string | undefined): Promise<BootstrapResult> {
  const now = new Date().toISOString();
  const adminToken = envAdminToken ?? `fs_admin_${randomBase62(40)}`;
  const org: OrgRecord = { id: newId("org"), name: "Demo org", plan: "free", subscription_status: "active", trial_end: null, created_at: now };
  const project: ProjectRecord = { id: newId("prj"), org_id: org.id, name: "Demo project", created_at: now };
  const secret = generateKey("secret");
  const pub = generateKey("publishable");
  const keys: KeyRecord[] = [
    { id: secret.id, org_id: org.id, project_id: null, type: "secret", scopes: ["sessions", "billing"], hash: secret.hash, created_at: now, expires_at: null, disabled_at: null },
    { id: pub.id, org_id: org.id, project_id: project.id, type: "publishable", scopes: [], hash: pub.hash, created_at: now, expires_at: null, disabled_at: null },
  ];
  const demo = { org_id: org.id, project_id: project.id, publishable_key: pub.plain };
  const ack = await store.send({ op: "init", adminTokenHash: hashKey(adminToken), adminTokenFromEnv: envAdminToken !== undefined, org, project, keys, demo });
  if (!ack.ok) throw new Error(`bootstrap failed: ${ack.message}`);
  const adminTokenHash = ack.adminTokenHash!;
  if (!ack.created) return { adminTokenHash, firstStart: null };
  return {
    adminTokenHash,
    firstStart: {
      adminToken: envAdminToken ? null : adminToken,
      orgId: org.id,
      projectId: project.id,
      secretKey: secret.plain,
      publishableKey: pub.plain,
    },
  };
}
