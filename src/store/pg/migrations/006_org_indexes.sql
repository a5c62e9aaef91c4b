-- Issue 38: an org's projects and keys by org (src/store/state-env.ts orgProjects, orgKeys), in the
-- key/value layout of the other named databases: key [org_id, id], so an org's listing and its cap
-- (FS_MAX_PROJECTS_PER_ORG, FS_MAX_KEYS_PER_ORG) read one range of the primary key, never a page
-- of every org's records. The writer fills them from fs_projects and fs_keys at its first start
-- after this migration (apply.ts backfillOrgIndexes, with the embedded store's key encoding), in
-- one transaction with the marker `org_indexes` in fs_meta, and keeps them in each later commit.
CREATE TABLE fs_org_projects (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_org_keys (k bytea PRIMARY KEY, v json, b bytea);
