-- The store's named databases (src/store/state-env.ts), one table each: key in the
-- order-preserving encoding the embedded store uses (ordered-binary), value as JSON, or bytes
-- for the meter windows' logs.
CREATE TABLE fs_orgs (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_projects (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_keys (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_usage (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_usage_daily (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_meta (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_observation_pages (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_sessions (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_challenges (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_bindings (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_binding_keys (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_clusters (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_meters (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_session_projects (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_stripe_events (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_stripe_customers (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_overage (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_idempotency (k bytea PRIMARY KEY, v json, b bytea);

-- Credit leases of hard-stop plans (docs/cluster.md): what each node was granted of an org's
-- quota in a usage period, and how much of it its shipped charges used. A node admits only
-- against granted - (its unshipped charges + used), so the quota is never exceeded across nodes.
CREATE TABLE fs_leases (
  org_id text NOT NULL,
  period text NOT NULL,
  node_id text NOT NULL,
  granted bigint NOT NULL DEFAULT 0,
  used bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, period, node_id)
);

-- The nodes that ran against this database, and when each was last seen (GET /metrics, docs).
-- `idx` (0-63) makes each node's observation sequence numbers distinct (src/store/pg/cluster.ts).
CREATE TABLE fs_nodes (
  node_id text PRIMARY KEY,
  idx int NOT NULL UNIQUE CHECK (idx >= 0 AND idx < 64),
  started_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz NOT NULL DEFAULT now()
);

-- Grants node `p_node` up to `p_want` more credits of the org's quota for `p_period` (at least
-- `p_need` or nothing): the quota less the shipped usage (fs_usage, key `p_usage_key`) and every
-- node's outstanding lease (granted - used). Serialised per org and period by an advisory lock,
-- which the writer also takes when it ships charges (src/store/pg/cluster.ts). Returns the grant.
CREATE FUNCTION fs_lease_grant(p_org text, p_period text, p_node text, p_usage_key bytea, p_quota bigint, p_need bigint, p_want bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  shipped bigint;
  outstanding bigint;
  free bigint;
  grant_ bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('fs_lease'), hashtext(p_org || ':' || p_period));
  SELECT coalesce((v->>'used')::bigint, 0) INTO shipped FROM fs_usage WHERE k = p_usage_key;
  shipped := coalesce(shipped, 0);
  SELECT coalesce(sum(greatest(granted - used, 0)), 0) INTO outstanding FROM fs_leases WHERE org_id = p_org AND period = p_period;
  free := p_quota - shipped - outstanding;
  IF free < p_need THEN
    RETURN 0;
  END IF;
  -- Leases shrink as the quota runs out: at most a quarter of what is left, never below the call.
  grant_ := least(free, greatest(p_need, least(p_want, free / 4)));
  INSERT INTO fs_leases (org_id, period, node_id, granted) VALUES (p_org, p_period, p_node, grant_)
    ON CONFLICT (org_id, period, node_id) DO UPDATE SET granted = fs_leases.granted + grant_, updated_at = now();
  RETURN grant_;
END $$;
