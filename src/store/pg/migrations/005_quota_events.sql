-- Issue 29: quota events (quota.80_percent, quota.100_percent) on PostgreSQL, where debits are
-- shipped by fs_ship_charges rather than through the writer's applier (src/store/pg/writer-ship.ts).
--
-- fs_ship_charges of 002 with two more arguments: `p_quotas`, plan -> included quota for every
-- plan that has one, and `p_emit`. It also returns the quota thresholds the batch crossed:
-- `events`, [{org_id, period, used, quota, percent}] (usage ops carry o and p, the org and period). Each threshold of an org's period is
-- announced once: a marker in fs_meta (`webhook_quota:<org>:<period>:<percent>`, the key the
-- embedded store uses), written in the transaction of the debit that crossed it. Until a
-- threshold is crossed the cost is two compares per usage row. A crossing without its marker
-- when `p_emit` is false raises SQLSTATE FSQ01 (the transaction rolls back, nothing is applied):
-- the writer ships the batch again with `p_emit`, in a transaction that also appends the events
-- to the webhook outbox (src/store/writer/webhooks.ts) before its commit. The 6-argument function
-- stays for nodes of the previous version during a rolling upgrade.
CREATE FUNCTION fs_ship_charges(p_node text, p_cursor bytea, p_after bigint, p_upto bigint, p_ops json, p_plans json, p_quotas json, p_emit boolean)
RETURNS TABLE (shipped_to bigint, events json) LANGUAGE plpgsql AS $$
DECLARE
  applied bigint;
  op json;
  plan text;
  q bigint;
  quota bigint;
  c bigint;
  after_ bigint;
  at_ bigint;
  pct int;
  marker bytea;
  found_ json := '[]'::json;
BEGIN
  SELECT (v #>> '{}')::bigint INTO applied FROM fs_meta WHERE k = p_cursor FOR UPDATE;
  applied := coalesce(applied, 0);
  IF p_upto <= applied OR p_after <> applied THEN
    RETURN QUERY SELECT applied, found_;
    RETURN;
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
    SELECT v->>'plan' INTO plan FROM fs_orgs WHERE k = decode(op->>'org', 'hex');
    q := (p_plans ->> plan)::bigint;
    c := (op->>'c')::bigint;
    INSERT INTO fs_usage AS u (k, v) VALUES (decode(op->>'k', 'hex'), fs_usage_value(c, q))
      ON CONFLICT (k) DO UPDATE SET v = fs_usage_value((u.v->>'used')::bigint + c, q)
      RETURNING (u.v->>'used')::bigint INTO after_;
    quota := (p_quotas ->> plan)::bigint;
    -- Only a debit can cross a threshold upwards: used went from after_ - c to after_.
    CONTINUE WHEN quota IS NULL OR c <= 0 OR after_ < ceil(quota * 0.8) OR after_ - c >= quota;
    FOREACH pct IN ARRAY ARRAY[80, 100] LOOP
      at_ := ceil(quota * pct / 100.0);
      CONTINUE WHEN after_ - c >= at_ OR after_ < at_;
      marker := convert_to('webhook_quota:' || (op->>'o') || ':' || (op->>'p') || ':' || pct, 'UTF8');
      CONTINUE WHEN EXISTS (SELECT 1 FROM fs_meta WHERE k = marker);
      IF NOT p_emit THEN
        RAISE EXCEPTION 'quota threshold crossed: ship again with p_emit' USING ERRCODE = 'FSQ01';
      END IF;
      INSERT INTO fs_meta (k, v) VALUES (marker, to_json((extract(epoch FROM clock_timestamp()) * 1000)::bigint)) ON CONFLICT (k) DO NOTHING;
      CONTINUE WHEN NOT FOUND;
      found_ := (found_::jsonb || jsonb_build_array(jsonb_build_object('org_id', op->>'o', 'period', op->>'p', 'used', after_, 'quota', quota, 'percent', pct)))::json;
    END LOOP;
  END LOOP;
  FOR op IN SELECT * FROM json_array_elements(p_ops->'daily') LOOP
    INSERT INTO fs_usage_daily AS d (k, v) VALUES (decode(op->>'k', 'hex'), to_json(greatest((op->>'c')::bigint, 0)))
      ON CONFLICT (k) DO UPDATE SET v = to_json(greatest((d.v #>> '{}')::bigint + (op->>'c')::bigint, 0));
  END LOOP;
  FOR op IN SELECT * FROM json_array_elements(p_ops->'idem') LOOP
    INSERT INTO fs_idempotency (k, v) VALUES (decode(op->>'k', 'hex'), op->'v') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
  END LOOP;
  INSERT INTO fs_meta (k, v) VALUES (p_cursor, to_json(p_upto)) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
  RETURN QUERY SELECT p_upto, found_;
END $$;
