-- Issue 26: leases that expire unless their node renews them, and debits shipped by cursor, as
-- increments, in one statement (docs/cluster.md).

-- A lease counts against the quota until it expires; its node renews it (fs_lease_renew) while it
-- runs. `chain` names the node's run of unbroken renewals the lease was granted in: a node that
-- could not renew in time stops admitting against its leases, and a later grant starts its lease
-- afresh rather than adding to one it no longer counts. Rows of nodes that ran before this
-- migration never expire, as before.
ALTER TABLE fs_leases ADD COLUMN expires_at timestamptz NOT NULL DEFAULT 'infinity';
ALTER TABLE fs_leases ADD COLUMN chain bigint NOT NULL DEFAULT 0;

-- fs_lease_grant of 001, with a time limit: expired leases hold nothing of the quota, and a grant
-- to a node whose lease expired (or was granted in an earlier chain of the node) starts again from
-- what that node shipped. The lease lives `p_ttl_ms` unless renewed.
CREATE FUNCTION fs_lease_grant(p_org text, p_period text, p_node text, p_usage_key bytea, p_quota bigint, p_need bigint, p_want bigint, p_ttl_ms bigint, p_chain bigint)
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
  SELECT coalesce(sum(greatest(granted - used, 0)), 0) INTO outstanding FROM fs_leases
    WHERE org_id = p_org AND period = p_period AND expires_at > now();
  free := p_quota - shipped - outstanding;
  IF free < p_need THEN
    RETURN 0;
  END IF;
  -- Leases shrink as the quota runs out: at most a quarter of what is left, never below the call.
  grant_ := least(free, greatest(p_need, least(p_want, free / 4)));
  INSERT INTO fs_leases AS l (org_id, period, node_id, granted, expires_at, chain)
    VALUES (p_org, p_period, p_node, grant_, now() + p_ttl_ms * interval '1 millisecond', p_chain)
    ON CONFLICT (org_id, period, node_id) DO UPDATE SET
      granted = CASE WHEN l.expires_at > now() AND l.chain = p_chain THEN l.granted ELSE greatest(l.used, 0) END + grant_,
      expires_at = now() + p_ttl_ms * interval '1 millisecond',
      chain = p_chain,
      updated_at = now();
  RETURN grant_;
END $$;

-- The heartbeat: the node's leases of chain `p_chain` that have not expired live `p_ttl_ms` more.
-- Returns how many.
CREATE FUNCTION fs_lease_renew(p_node text, p_chain bigint, p_ttl_ms bigint) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  n integer;
BEGIN
  UPDATE fs_leases SET expires_at = now() + p_ttl_ms * interval '1 millisecond'
    WHERE node_id = p_node AND chain = p_chain AND expires_at > now();
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;

-- A usage row's value ({used, overage}, as the writer stores it) for `used` credits (never below
-- zero) and the plan's overage quota `q` (null: no overage).
CREATE FUNCTION fs_usage_value(used bigint, q bigint) RETURNS json LANGUAGE sql IMMUTABLE AS $$
  SELECT json_build_object('used', greatest(used, 0), 'overage', CASE WHEN q IS NULL THEN 0 ELSE greatest(0, greatest(used, 0) - q) END)
$$;

-- Applies a node's journaled debits (src/store/pg/writer-ship.ts) if they continue its cursor: the
-- applied sequence number of that journal, kept in fs_meta under `p_cursor`. Returns the cursor
-- after the call: `p_upto` when applied now or before; anything else means the batch does not
-- continue it (the node ships again from its journal). `p_ops`:
--   leases: [{o, p, c}]  credits admitted against the node's lease of org o in period p, in (o, p) order
--   usage:  [{k, org, c}] credits for the usage row k (of org `org`, keys hex), in journal order
--   daily:  [{k, c}]      credits per day row, in key order
--   idem:   [{k, v}]      stored Idempotency-Key answers
-- `p_plans`: plan -> quota for the plans that bill overage past their quota.
CREATE FUNCTION fs_ship_charges(p_node text, p_cursor bytea, p_after bigint, p_upto bigint, p_ops json, p_plans json)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  applied bigint;
  op json;
  q bigint;
BEGIN
  SELECT (v #>> '{}')::bigint INTO applied FROM fs_meta WHERE k = p_cursor FOR UPDATE;
  applied := coalesce(applied, 0);
  IF p_upto <= applied OR p_after <> applied THEN
    RETURN applied;
  END IF;
  -- Under the lock lease grants take, so a grant never counts these credits twice or not at all.
  FOR op IN SELECT * FROM json_array_elements(p_ops->'leases') LOOP
    PERFORM pg_advisory_xact_lock(hashtext('fs_lease'), hashtext((op->>'o') || ':' || (op->>'p')));
    UPDATE fs_leases SET used = greatest(used + (op->>'c')::bigint, 0), updated_at = now()
      WHERE org_id = op->>'o' AND period = op->>'p' AND node_id = p_node;
  END LOOP;
  -- The usage rows, locked in key order (other nodes ship to the same rows), then moved by increments.
  PERFORM 1 FROM fs_usage WHERE k IN (SELECT decode(x->>'k', 'hex') FROM json_array_elements(p_ops->'usage') AS x) ORDER BY k FOR UPDATE;
  FOR op IN SELECT * FROM json_array_elements(p_ops->'usage') LOOP
    q := (p_plans ->> (SELECT v->>'plan' FROM fs_orgs WHERE k = decode(op->>'org', 'hex')))::bigint;
    INSERT INTO fs_usage AS u (k, v) VALUES (decode(op->>'k', 'hex'), fs_usage_value((op->>'c')::bigint, q))
      ON CONFLICT (k) DO UPDATE SET v = fs_usage_value((u.v->>'used')::bigint + (op->>'c')::bigint, q);
  END LOOP;
  FOR op IN SELECT * FROM json_array_elements(p_ops->'daily') LOOP
    INSERT INTO fs_usage_daily AS d (k, v) VALUES (decode(op->>'k', 'hex'), to_json(greatest((op->>'c')::bigint, 0)))
      ON CONFLICT (k) DO UPDATE SET v = to_json(greatest((d.v #>> '{}')::bigint + (op->>'c')::bigint, 0));
  END LOOP;
  FOR op IN SELECT * FROM json_array_elements(p_ops->'idem') LOOP
    INSERT INTO fs_idempotency (k, v) VALUES (decode(op->>'k', 'hex'), op->'v') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
  END LOOP;
  INSERT INTO fs_meta (k, v) VALUES (p_cursor, to_json(p_upto)) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
  RETURN p_upto;
END $$;
