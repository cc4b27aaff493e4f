-- dp_agg 0.1.0 -> 0.2.0. Brings a 0.1.0 installation to exactly the catalog
-- state of a fresh 0.2.0 install (test/upgrade/run_upgrade_test.sh compares
-- the two). Budgets, the ledger and security labels are kept: no table is
-- rewritten.
--
-- 0.2.0 changes of the SQL objects:
--  * budgets and ledger rows are keyed by the role's OID (see below);
--  * the ledger is append-only and chained by SHA-256, with dp_agg.ledger_head
--    and dp_agg.verify_ledger(); dp_agg.spend_by_query (see below);
--  * set_budget keeps the delta total when delta is omitted; remaining
--    budgets are never shown negative;
--  * COMMENT ON every object of the extension;
--  * privileges in schema dp_agg decided in one place: everything is revoked
--    from PUBLIC and the public entry points are granted back by name (the
--    state types' input/output functions are no longer executable by PUBLIC);
--  * public column bounds: dp_agg.set_column_bounds, unset_column_bounds and the
--    view dp_agg.column_bounds (src/sql/72_column_bounds.sql);
--  * public key sets: dp_agg.set_public_keys, unset_public_keys, the view
--    dp_agg.public_keys and its table dp_agg.public_key_set
--    (src/sql/74_public_keys.sql);
--  * dp_agg on Citus: dp_agg.citus_count, dp_agg.citus_count_interval and
--    dp_agg.citus_group_key (src/sql/65_citus.sql).
-- (The SQLSTATEs of budget refusals moved from DP001/DP002 to ZP001/ZP002 and
-- DROP EXTENSION needs dp_agg.allow_drop_extension; both live in the library.)
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.2.0'" to load this file. \quit

-- ---- Budgets follow roles, not names (role OIDs).
-- role_budget and ledger_entry get the role's OID (the new last column of
-- each, as in a fresh install), filled in from the role that has the name
-- today. A budget row whose role no longer exists cannot be given an OID: it
-- is removed (a dropped role's budget must never pass to a new role of the
-- same name) and its removal is recorded in the ledger as a revoke_budget
-- row. Ledger rows of such roles keep their name and get no OID: they stay
-- for the audit (administrators see them) and no new role ever sees them.
-- (A ledger row of a name that was dropped and created again before this
-- upgrade is given today's role: the old rows cannot tell the two apart.)
ALTER TABLE dp_agg.role_budget ADD COLUMN role_oid oid;
UPDATE dp_agg.role_budget b SET role_oid = r.oid FROM pg_catalog.pg_roles r
 WHERE r.rolname = b.role_name;
INSERT INTO dp_agg.ledger_entry (kind, role_name, session_user_name, current_user_name,
                                 epsilon, delta)
SELECT 'revoke_budget', b.role_name, session_user, current_user, 0, 0
  FROM dp_agg.role_budget b WHERE b.role_oid IS NULL ORDER BY b.role_name;
DELETE FROM dp_agg.role_budget b WHERE b.role_oid IS NULL;
ALTER TABLE dp_agg.role_budget ALTER COLUMN role_oid SET NOT NULL;
ALTER TABLE dp_agg.role_budget DROP CONSTRAINT role_budget_pkey;
ALTER TABLE dp_agg.role_budget ADD CONSTRAINT role_budget_pkey PRIMARY KEY (role_oid);
ALTER TABLE dp_agg.ledger_entry ADD COLUMN role_oid oid;
UPDATE dp_agg.ledger_entry e SET role_oid = r.oid FROM pg_catalog.pg_roles r
 WHERE r.rolname = e.role_name;

DROP FUNCTION dp_agg.apply_charge(name, name, numeric, numeric, bigint, text, text);
-- Applied by the ledger writer (never by users): the charge, atomically
-- against the limit, under the row lock of the role's budget, found by the
-- role's OID (role_name: its name at charge time, kept for the audit).
CREATE FUNCTION dp_agg.apply_charge(role_oid oid, role name, session_role name, epsilon numeric,
                                    delta numeric, query_id bigint, aggregates text, query text,
                                    OUT status text, OUT epsilon_total numeric,
                                    OUT epsilon_spent numeric, OUT delta_total numeric,
                                    OUT delta_spent numeric)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE dp_agg.role_budget b
     SET epsilon_spent = b.epsilon_spent + apply_charge.epsilon,
         delta_spent = b.delta_spent + apply_charge.delta,
         role_name = apply_charge.role
   WHERE b.role_oid = apply_charge.role_oid
     AND b.epsilon_spent + apply_charge.epsilon <= b.epsilon_total
     AND b.delta_spent + apply_charge.delta <= b.delta_total
  RETURNING b.epsilon_total, b.epsilon_spent, b.delta_total, b.delta_spent
       INTO epsilon_total, epsilon_spent, delta_total, delta_spent;
  IF FOUND THEN
    INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                     current_user_name, epsilon, delta, query_id, aggregates,
                                     query)
    VALUES ('charge', apply_charge.role_oid, role, role, session_role, apply_charge.epsilon,
            apply_charge.delta, apply_charge.query_id, apply_charge.aggregates,
            left(apply_charge.query, 1000));
    status := 'charged';
    RETURN;
  END IF;
  SELECT b.epsilon_total, b.epsilon_spent, b.delta_total, b.delta_spent
    INTO epsilon_total, epsilon_spent, delta_total, delta_spent
    FROM dp_agg.role_budget b WHERE b.role_oid = apply_charge.role_oid;
  status := CASE WHEN FOUND THEN 'exhausted' ELSE 'no_budget' END;
END $$;


-- Sets a role's totals (spent amounts are kept). delta NULL (the default)
-- keeps the role's delta total (0 for a new budget), so that
-- set_budget('alice', 5.0) never silently takes away a delta budget.
-- A total below what was already spent is accepted: it stops the role's
-- private queries (remaining is shown as 0, never negative), which is what an
-- administrator lowering a budget means; a NOTICE says so.
CREATE OR REPLACE FUNCTION dp_agg.set_budget(role regrole, epsilon float8, delta float8 DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  kept_delta numeric;
  now_set dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('set privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  kept_delta := coalesce(delta::numeric,
                         (SELECT b.delta_total FROM dp_agg.role_budget b WHERE b.role_oid = role),
                         0);
  PERFORM dp_agg.check_amounts(epsilon, kept_delta::float8);
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total)
  VALUES (role, name_of_role, epsilon::numeric, kept_delta)
  ON CONFLICT (role_oid) DO UPDATE
    SET role_name = excluded.role_name, epsilon_total = excluded.epsilon_total,
        delta_total = excluded.delta_total, updated_at = now()
  RETURNING * INTO now_set;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('set_budget', role, name_of_role, session_user, current_user, epsilon::numeric,
          kept_delta);
  IF now_set.epsilon_spent > now_set.epsilon_total OR now_set.delta_spent > now_set.delta_total
  THEN
    IF now_set.epsilon_spent > now_set.epsilon_total OR now_set.delta_spent > now_set.delta_total
    THEN
      RAISE NOTICE 'role "%" has already spent more than the new total (epsilon % of %, delta % of %): its remaining budget is 0',
        name_of_role, now_set.epsilon_spent, now_set.epsilon_total, now_set.delta_spent,
        now_set.delta_total;
    ELSE
      -- Only the earlier zCDP certificate, which still binds, is exceeded.
      RAISE NOTICE 'role "%" has already spent more than its earlier zCDP budget, which still binds (rho % of %, delta % of %): its remaining budget is 0 until dp_agg.reset_spent',
        name_of_role, now_set.rho_spent, now_set.rho_total, now_set.zcdp_delta_spent,
        now_set.zcdp_delta_total;
    END IF;
  END IF;
END $$;

-- Adds to a role's totals (creating a budget if it has none).
CREATE OR REPLACE FUNCTION dp_agg.add_budget(role regrole, epsilon float8, delta float8 DEFAULT 0)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
BEGIN
  PERFORM dp_agg.require_admin('add to privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.check_amounts(epsilon, delta);
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total)
  VALUES (role, name_of_role, epsilon::numeric, delta::numeric)
  ON CONFLICT (role_oid) DO UPDATE
    SET role_name = excluded.role_name, epsilon_total = b.epsilon_total + excluded.epsilon_total,
        delta_total = b.delta_total + excluded.delta_total, updated_at = now();
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('add_budget', role, name_of_role, session_user, current_user, epsilon::numeric,
          delta::numeric);
END $$;

-- Sets a role's spent amounts back to zero. This gives privacy budget back,
-- so it is an administrator's decision and leaves an audit row.
CREATE OR REPLACE FUNCTION dp_agg.reset_spent(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  previous dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('reset privacy budgets');
  UPDATE dp_agg.role_budget b SET epsilon_spent = 0, delta_spent = 0, updated_at = now(),
                                  role_name = coalesce(name_of_role, b.role_name)
  WHERE b.role_oid = role
  RETURNING * INTO previous;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'role "%" has no privacy budget', coalesce(name_of_role, role::text)
      USING ERRCODE = 'undefined_object';
  END IF;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('reset_spent', role, previous.role_name, session_user, current_user, 0, 0);
END $$;

-- Removes a role's budget: its private queries are refused again.
CREATE OR REPLACE FUNCTION dp_agg.revoke_budget(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  previous dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('revoke privacy budgets');
  DELETE FROM dp_agg.role_budget b WHERE b.role_oid = role RETURNING * INTO previous;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('revoke_budget', role, coalesce(name_of_role, previous.role_name, role::text),
          session_user, current_user, 0, 0);
END $$;

-- Budgets: administrators see every role, everyone else their own (by OID,
-- so a role keeps its row through a rename). role is the role's current
-- name, or the last name it had if it was dropped (role_dropped). A total
-- set below what was spent shows 0 remaining, never a negative amount.
CREATE OR REPLACE VIEW dp_agg.budgets WITH (security_barrier) AS
  SELECT coalesce(r.rolname, b.role_name) AS role, b.epsilon_total, b.epsilon_spent,
         greatest(b.epsilon_total - b.epsilon_spent, 0) AS epsilon_remaining,
         b.delta_total, b.delta_spent,
         greatest(b.delta_total - b.delta_spent, 0) AS delta_remaining, b.updated_at,
         r.oid IS NULL AS role_dropped
  FROM dp_agg.role_budget b LEFT JOIN pg_catalog.pg_roles r ON r.oid = b.role_oid
  WHERE b.role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s WHERE s.rolname = session_user)
     OR dp_agg.is_admin();

-- The ledger, filtered the same way: a new role that takes a dropped role's
-- name does not see the dropped role's rows.
CREATE OR REPLACE VIEW dp_agg.ledger WITH (security_barrier) AS
  SELECT id, recorded_at, kind, role_name AS role, session_user_name, current_user_name,
         epsilon, delta, query_id, aggregates, query
  FROM dp_agg.ledger_entry
  WHERE role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s WHERE s.rolname = session_user)
     OR dp_agg.is_admin();

-- What the session user has left (0, never negative).
CREATE OR REPLACE FUNCTION dp_agg.remaining_budget(OUT epsilon numeric, OUT delta numeric)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT greatest(epsilon_total - epsilon_spent, 0), greatest(delta_total - delta_spent, 0)
  FROM dp_agg.role_budget
  WHERE role_oid = (SELECT s.oid FROM pg_roles s WHERE s.rolname = session_user)
$$;


-- What a query would cost, without running it (src/sql/40_budgets_ledger.sql).
CREATE FUNCTION dp_agg.query_cost(query text, OUT epsilon numeric, OUT delta numeric,
                                  OUT aggregates text, OUT rho numeric,
                                  OUT zcdp_delta numeric)
  AS 'MODULE_PATHNAME', 'dp_agg_query_cost' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dp_agg.query_cost(text) IS
  'query_cost(query): what a SELECT would be charged, in (epsilon, delta) and in zCDP (rho, zcdp_delta), and for which aggregates, without running or charging it';

COMMENT ON SCHEMA dp_agg IS
  'dp_agg internals, budgets, the privacy ledger and the administration functions';
COMMENT ON TYPE dp_agg.aggregate_state IS
  'Transition state of dp_count, dp_sum, dp_avg and their interval forms (exact partial sums: never shown to analysts)';
COMMENT ON AGGREGATE dp_count(anyelement, float8) IS
  'dp_count(value, epsilon): epsilon-DP noisy count of non-NULL values, charged to the session user''s budget';
COMMENT ON AGGREGATE dp_count(anyelement, float8, float8) IS
  'dp_count(value, epsilon, delta): (epsilon, delta)-DP count of non-NULL values (discrete Gaussian noise)';
COMMENT ON AGGREGATE dp_sum(smallint, smallint, smallint, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(integer, integer, integer, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(bigint, bigint, bigint, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(real, real, real, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(float8, float8, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(numeric, numeric, numeric, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(smallint, smallint, smallint, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(integer, integer, integer, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(bigint, bigint, bigint, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(real, real, real, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(float8, float8, float8, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(numeric, numeric, numeric, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(smallint, smallint, smallint, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(integer, integer, integer, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(bigint, bigint, bigint, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(real, real, real, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(float8, float8, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(numeric, numeric, numeric, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(smallint, smallint, smallint, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(integer, integer, integer, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(bigint, bigint, bigint, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(real, real, real, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(float8, float8, float8, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(numeric, numeric, numeric, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON TYPE dp_agg.estimate IS
  'A noisy release with its confidence interval: value, low, high, confidence';
COMMENT ON FUNCTION dp_count_margin(float8, float8, float8) IS
  'dp_count_margin(epsilon, delta, confidence): half-width of the confidence interval of dp_count, from public parameters only (no privacy cost)';
COMMENT ON FUNCTION dp_sum_margin(float8, float8, float8, float8, float8) IS
  'dp_sum_margin(lower, upper, epsilon, delta, confidence): half-width of the confidence interval of dp_sum, from public parameters only (no privacy cost)';
COMMENT ON AGGREGATE dp_count_interval(anyelement, float8, float8) IS
  'dp_count_interval(value, epsilon, confidence): dp_count with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_count_interval(anyelement, float8, float8, float8) IS
  'dp_count_interval(value, epsilon, delta, confidence): dp_count with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_sum_interval(float8, float8, float8, float8, float8) IS
  'dp_sum_interval(value, lower, upper, epsilon, confidence): dp_sum with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_sum_interval(float8, float8, float8, float8, float8, float8) IS
  'dp_sum_interval(value, lower, upper, epsilon, delta, confidence): dp_sum with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_avg_interval(float8, float8, float8, float8, float8) IS
  'dp_avg_interval(value, lower, upper, epsilon, confidence): dp_avg with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_avg_interval(float8, float8, float8, float8, float8, float8) IS
  'dp_avg_interval(value, lower, upper, epsilon, delta, confidence): dp_avg with its confidence interval (same single release and cost)';
COMMENT ON TABLE dp_agg.role_budget IS
  'Privacy budget of each login role (totals and exact spent amounts); read it through dp_agg.budgets';
COMMENT ON TABLE dp_agg.ledger_entry IS
  'The privacy ledger: one row per charge and per budget change, never updated or deleted by dp_agg; read it through dp_agg.ledger';
COMMENT ON FUNCTION dp_agg.is_admin() IS
  'True when the session user is a superuser or a member of the role named by dp_agg.admin_role';
COMMENT ON FUNCTION dp_agg.require_admin(text) IS
  'Raises insufficient_privilege unless dp_agg.is_admin() (internal)';
COMMENT ON FUNCTION dp_agg.check_amounts(float8, float8) IS
  'Validates a budget amount: finite epsilon >= 0, delta in [0, 1) (internal)';
COMMENT ON FUNCTION dp_agg.set_budget(regrole, float8, float8) IS
  'set_budget(role, epsilon[, delta]): sets a role''s budget totals, keeping what it spent and, when delta is omitted, its delta total (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.add_budget(regrole, float8, float8) IS
  'add_budget(role, epsilon, delta): adds to a role''s budget totals (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.reset_spent(regrole) IS
  'reset_spent(role): sets a role''s spent amounts back to zero, giving budget back (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.revoke_budget(regrole) IS
  'revoke_budget(role): removes a role''s budget, so its private queries are refused (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.apply_charge(oid, name, name, numeric, numeric, bigint, text, text) IS
  'Records one charge atomically against the limit (called by the ledger writer only)';
COMMENT ON VIEW dp_agg.budgets IS
  'Privacy budgets: administrators see every role, everyone else their own';
COMMENT ON VIEW dp_agg.ledger IS
  'The privacy ledger: administrators see every row, everyone else the rows of their own budget';
COMMENT ON FUNCTION dp_agg.remaining_budget() IS
  'The epsilon and delta the session user has left';
COMMENT ON TYPE dp_agg.quantile_state IS
  'Transition state of dp_percentile and dp_median (every row''s exact value: never shown to analysts)';
COMMENT ON AGGREGATE dp_percentile(float8, float8, float8, float8, float8) IS
  'dp_percentile(value, fraction, lower, upper, epsilon): epsilon-DP quantile by Smith''s exponential mechanism over [lower, upper] (no grid floor; keeps the group''s rows)';
COMMENT ON AGGREGATE dp_median(float8, float8, float8, float8) IS
  'dp_median(value, lower, upper, epsilon): epsilon-DP median by Smith''s exponential mechanism over [lower, upper] (no grid floor; keeps the group''s rows)';
COMMENT ON TYPE dp_agg.selection_state IS
  'Transition state of dp_select (exact candidate scores: never shown to analysts)';
COMMENT ON AGGREGATE dp_select(anyelement, anyarray, float8) IS
  'dp_select(value, candidates, epsilon): epsilon-DP most frequent value among the candidates given in the query';
COMMENT ON AGGREGATE dp_select(anyelement, float8, float8, float8, anyarray, float8) IS
  'dp_select(value, weight, lower, upper, candidates, epsilon): epsilon-DP candidate with the largest total of weights clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_agg.group_selection(float8, float8) IS
  'True for a group whose noisy row count passes the (epsilon, delta) partition-selection threshold; dp_agg adds it to HAVING for restricted roles';
COMMENT ON FUNCTION dp_agg.set_label(text, text, text) IS
  'Sets or removes the dp_agg security label of a table or role (internal; use the four functions beside it)';
COMMENT ON FUNCTION dp_agg.protect_table(regclass) IS
  'protect_table(table): labels a table protected, so restricted roles reach it only through private aggregates (administrators)';
COMMENT ON FUNCTION dp_agg.unprotect_table(regclass) IS
  'unprotect_table(table): removes the protected label of a table (administrators)';
COMMENT ON FUNCTION dp_agg.restrict_role(regrole) IS
  'restrict_role(role): labels a role restricted, so it reads protected tables only through private aggregates (administrators)';
COMMENT ON FUNCTION dp_agg.unrestrict_role(regrole) IS
  'unrestrict_role(role): removes the restricted label of a role (administrators)';
COMMENT ON VIEW dp_agg.protected_tables IS
  'Tables labelled protected';
COMMENT ON VIEW dp_agg.restricted_roles IS
  'Roles labelled restricted';

-- Privacy units (README "Privacy units"): column labels 'privacy_unit'.
CREATE OR REPLACE FUNCTION dp_agg.set_label(object_kind text, object_name text, new_label text)
RETURNS void LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF object_kind NOT IN ('TABLE', 'ROLE', 'COLUMN') THEN
    RAISE EXCEPTION 'dp_agg labels only tables, columns and roles' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  EXECUTE format('SECURITY LABEL FOR dp_agg ON %s %s IS %s', object_kind, object_name,
                 coalesce(quote_literal(new_label), 'NULL'));
END $$;
CREATE FUNCTION dp_agg.set_privacy_unit(target regclass, unit_column name) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('COLUMN', format('%s.%I', target, unit_column), 'privacy_unit') $$;
CREATE FUNCTION dp_agg.unset_privacy_unit(target regclass, unit_column name) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('COLUMN', format('%s.%I', target, unit_column), NULL) $$;
CREATE FUNCTION dp_agg.unit_group_sample(integer) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_unit_group_sample'
  LANGUAGE C WINDOW VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION dp_agg.set_privacy_unit(regclass, name) IS
  'set_privacy_unit(table, column): labels the column privacy_unit, so private aggregates protect all rows of one unit value together (administrators)';
COMMENT ON FUNCTION dp_agg.unset_privacy_unit(regclass, name) IS
  'unset_privacy_unit(table, column): removes the privacy_unit label of a column (administrators)';
COMMENT ON FUNCTION dp_agg.unit_group_sample(integer) IS
  'Window function: true for max_groups rows of the partition chosen uniformly at random from the CSPRNG, by which dp_agg keeps max_groups random groups per privacy unit (internal: used by the privacy-unit rewrite)';

-- dp_agg on Citus (src/pg/citus/; README, "Scaling out with Citus").
--
-- dp_count over a distributed table: Citus checks the ROW it passes to
-- worker_partial_agg against pg_proc.proargtypes literally, so the
-- polymorphic dp_count never takes Citus's partial-aggregation path. The
-- planner hook rewrites dp_count(v, ...) over a distributed table into these,
-- with the argument CASE WHEN v IS NOT NULL THEN true END: NULL exactly when
-- v is, so the count is the same.
CREATE AGGREGATE dp_agg.citus_count(boolean, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_count(boolean, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_count_interval(boolean, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_count_interval(boolean, float8, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

-- The identity, for GROUP BY on a distribution column: Citus would otherwise
-- push the whole aggregate, noise included, down to the workers. Not STRICT:
-- a NULL key stays a NULL group.
CREATE FUNCTION dp_agg.citus_group_key(anyelement) RETURNS anyelement
  AS 'MODULE_PATHNAME', 'dp_citus_group_key' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON AGGREGATE dp_agg.citus_count(boolean, float8) IS
  'dp_count(value, epsilon) as dp_agg runs it on a Citus distributed table (written by the planner hook, not by analysts)';
COMMENT ON AGGREGATE dp_agg.citus_count(boolean, float8, float8) IS
  'dp_count(value, epsilon, delta) as dp_agg runs it on a Citus distributed table (written by the planner hook, not by analysts)';
COMMENT ON AGGREGATE dp_agg.citus_count_interval(boolean, float8, float8) IS
  'dp_count_interval(value, epsilon, confidence) as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON AGGREGATE dp_agg.citus_count_interval(boolean, float8, float8, float8) IS
  'dp_count_interval(value, epsilon, delta, confidence) as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON FUNCTION dp_agg.citus_group_key(anyelement) IS
  'The identity: dp_agg groups by a Citus distribution column through it so that noise is added on the coordinator';

-- dp_count(epsilon): noisy number of rows, read like count(*). dp_agg's
-- planner hook writes every call as dp_count(true, epsilon) before it judges
-- or plans the query (row_count.cpp), so this aggregate is charged, bounded
-- and rewritten (privacy units, Citus) exactly as dp_count(1, epsilon); its
-- own support function only refuses, in case a call ever reached it.
CREATE FUNCTION dp_agg.count_rows_transfn(dp_agg.aggregate_state, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_count_rows_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE AGGREGATE dp_count(float8) (
  SFUNC = dp_agg.count_rows_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
COMMENT ON AGGREGATE dp_count(float8) IS
  'dp_count(epsilon): noisy number of rows, like count(*); run as dp_count(true, epsilon)';
-- dp_select over a distributed table: Citus checks worker_partial_agg's ROW
-- against pg_proc.proargtypes literally and the final function's result type
-- against the column it fills, so the polymorphic dp_select never takes its
-- partial-aggregation path. The planner hook rewrites dp_select of text,
-- integer and bigint values into these (same transition, combine and final
-- code; the final function takes the element type from the state).
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, text, text[], float8)
  RETURNS text AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, text, float8, float8, float8,
                                          text[], float8)
  RETURNS text AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE dp_agg.citus_select(text, text[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_select(text, float8, float8, float8, text[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, integer, integer[], float8)
  RETURNS integer AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, integer, float8, float8, float8,
                                          integer[], float8)
  RETURNS integer AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE dp_agg.citus_select(integer, integer[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_select(integer, float8, float8, float8, integer[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, bigint, bigint[], float8)
  RETURNS bigint AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, bigint, float8, float8, float8,
                                          bigint[], float8)
  RETURNS bigint AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE dp_agg.citus_select(bigint, bigint[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_select(bigint, float8, float8, float8, bigint[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, text, text[], float8) IS
  'Final function of dp_agg.citus_select over text (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, text, float8, float8, float8, text[], float8) IS
  'Final function of weighted dp_agg.citus_select over text (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON AGGREGATE dp_agg.citus_select(text, text[], float8) IS
  'dp_select(value, candidates, epsilon) over text as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON AGGREGATE dp_agg.citus_select(text, float8, float8, float8, text[], float8) IS
  'dp_select(value, weight, lower, upper, candidates, epsilon) over text as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, integer, integer[], float8) IS
  'Final function of dp_agg.citus_select over integer (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, integer, float8, float8, float8, integer[], float8) IS
  'Final function of weighted dp_agg.citus_select over integer (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON AGGREGATE dp_agg.citus_select(integer, integer[], float8) IS
  'dp_select(value, candidates, epsilon) over integer as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON AGGREGATE dp_agg.citus_select(integer, float8, float8, float8, integer[], float8) IS
  'dp_select(value, weight, lower, upper, candidates, epsilon) over integer as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, bigint, bigint[], float8) IS
  'Final function of dp_agg.citus_select over bigint (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, bigint, float8, float8, float8, bigint[], float8) IS
  'Final function of weighted dp_agg.citus_select over bigint (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON AGGREGATE dp_agg.citus_select(bigint, bigint[], float8) IS
  'dp_select(value, candidates, epsilon) over bigint as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON AGGREGATE dp_agg.citus_select(bigint, float8, float8, float8, bigint[], float8) IS
  'dp_select(value, weight, lower, upper, candidates, epsilon) over bigint as dp_agg runs it on a Citus distributed table (written by the planner hook)';


-- Total versions of built-in arithmetic (src/pg/total_functions.cpp): for each
-- built-in function F listed there, dp_agg.total_F has F's signature and returns
-- a value (or NULL) where F raises. A restricted role's expressions over
-- protected rows call them instead of F (query_rewrites.cpp, kTotalArithmetic);
-- README "Arithmetic that cannot fail" states what each returns where F raises.

CREATE FUNCTION dp_agg.total_int2pl(int2, int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2mi(int2, int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2mul(int2, int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2div(int2, int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4pl(int4, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4mi(int4, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4mul(int4, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4div(int4, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8pl(int8, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8mi(int8, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8mul(int8, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8div(int8, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int24pl(int2, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int24pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int24mi(int2, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int24mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int24mul(int2, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int24mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int24div(int2, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int24div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int42pl(int4, int2) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int42pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int42mi(int4, int2) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int42mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int42mul(int4, int2) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int42mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int42div(int4, int2) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int42div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int28pl(int2, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int28pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int28mi(int2, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int28mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int28mul(int2, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int28mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int28div(int2, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int28div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int82pl(int8, int2) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int82pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int82mi(int8, int2) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int82mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int82mul(int8, int2) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int82mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int82div(int8, int2) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int82div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int48pl(int4, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int48pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int48mi(int4, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int48mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int48mul(int4, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int48mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int48div(int4, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int48div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int84pl(int8, int4) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int84pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int84mi(int8, int4) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int84mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int84mul(int8, int4) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int84mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int84div(int8, int4) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int84div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2mod(int2, int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2um(int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2um' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4mod(int4, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4um(int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4um' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8mod(int8, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8um(int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8um' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float4pl(float4, float4) RETURNS float4
  AS 'MODULE_PATHNAME', 'dp_total_float4pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float4mi(float4, float4) RETURNS float4
  AS 'MODULE_PATHNAME', 'dp_total_float4mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float4mul(float4, float4) RETURNS float4
  AS 'MODULE_PATHNAME', 'dp_total_float4mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float4div(float4, float4) RETURNS float4
  AS 'MODULE_PATHNAME', 'dp_total_float4div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float8pl(float8, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float8pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float8mi(float8, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float8mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float8mul(float8, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float8mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float8div(float8, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float8div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float48pl(float4, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float48pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float48mi(float4, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float48mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float48mul(float4, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float48mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float48div(float4, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float48div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float84pl(float8, float4) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float84pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float84mi(float8, float4) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float84mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float84mul(float8, float4) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float84mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float84div(float8, float4) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float84div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_numeric_add(numeric, numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_add' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_numeric_sub(numeric, numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_sub' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_numeric_mul(numeric, numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_numeric_div(numeric, numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_numeric_mod(numeric, numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float8(numeric) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float8_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_date_pli(date, int4) RETURNS date
  AS 'MODULE_PATHNAME', 'dp_total_date_pli' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_date_mii(date, int4) RETURNS date
  AS 'MODULE_PATHNAME', 'dp_total_date_mii' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamp_pl_interval(timestamp, interval) RETURNS timestamp
  AS 'MODULE_PATHNAME', 'dp_total_timestamp_pl_interval' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamp_mi_interval(timestamp, interval) RETURNS timestamp
  AS 'MODULE_PATHNAME', 'dp_total_timestamp_mi_interval' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamptz_pl_interval(timestamptz, interval) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_timestamptz_pl_interval' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamptz_mi_interval(timestamptz, interval) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_timestamptz_mi_interval' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION dp_agg.total_int2pl(int2, int2) IS
  'total version of int2pl(int2, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int2mi(int2, int2) IS
  'total version of int2mi(int2, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int2mul(int2, int2) IS
  'total version of int2mul(int2, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int2div(int2, int2) IS
  'total version of int2div(int2, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4pl(int4, int4) IS
  'total version of int4pl(int4, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4mi(int4, int4) IS
  'total version of int4mi(int4, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4mul(int4, int4) IS
  'total version of int4mul(int4, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4div(int4, int4) IS
  'total version of int4div(int4, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8pl(int8, int8) IS
  'total version of int8pl(int8, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8mi(int8, int8) IS
  'total version of int8mi(int8, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8mul(int8, int8) IS
  'total version of int8mul(int8, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8div(int8, int8) IS
  'total version of int8div(int8, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int24pl(int2, int4) IS
  'total version of int24pl(int2, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int24mi(int2, int4) IS
  'total version of int24mi(int2, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int24mul(int2, int4) IS
  'total version of int24mul(int2, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int24div(int2, int4) IS
  'total version of int24div(int2, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int42pl(int4, int2) IS
  'total version of int42pl(int4, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int42mi(int4, int2) IS
  'total version of int42mi(int4, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int42mul(int4, int2) IS
  'total version of int42mul(int4, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int42div(int4, int2) IS
  'total version of int42div(int4, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int28pl(int2, int8) IS
  'total version of int28pl(int2, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int28mi(int2, int8) IS
  'total version of int28mi(int2, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int28mul(int2, int8) IS
  'total version of int28mul(int2, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int28div(int2, int8) IS
  'total version of int28div(int2, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int82pl(int8, int2) IS
  'total version of int82pl(int8, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int82mi(int8, int2) IS
  'total version of int82mi(int8, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int82mul(int8, int2) IS
  'total version of int82mul(int8, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int82div(int8, int2) IS
  'total version of int82div(int8, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int48pl(int4, int8) IS
  'total version of int48pl(int4, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int48mi(int4, int8) IS
  'total version of int48mi(int4, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int48mul(int4, int8) IS
  'total version of int48mul(int4, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int48div(int4, int8) IS
  'total version of int48div(int4, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int84pl(int8, int4) IS
  'total version of int84pl(int8, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int84mi(int8, int4) IS
  'total version of int84mi(int8, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int84mul(int8, int4) IS
  'total version of int84mul(int8, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int84div(int8, int4) IS
  'total version of int84div(int8, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int2mod(int2, int2) IS
  'total version of int2mod(int2, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int2um(int2) IS
  'total version of int2um(int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4mod(int4, int4) IS
  'total version of int4mod(int4, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4um(int4) IS
  'total version of int4um(int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8mod(int8, int8) IS
  'total version of int8mod(int8, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8um(int8) IS
  'total version of int8um(int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float4pl(float4, float4) IS
  'total version of float4pl(float4, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float4mi(float4, float4) IS
  'total version of float4mi(float4, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float4mul(float4, float4) IS
  'total version of float4mul(float4, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float4div(float4, float4) IS
  'total version of float4div(float4, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float8pl(float8, float8) IS
  'total version of float8pl(float8, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float8mi(float8, float8) IS
  'total version of float8mi(float8, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float8mul(float8, float8) IS
  'total version of float8mul(float8, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float8div(float8, float8) IS
  'total version of float8div(float8, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float48pl(float4, float8) IS
  'total version of float48pl(float4, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float48mi(float4, float8) IS
  'total version of float48mi(float4, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float48mul(float4, float8) IS
  'total version of float48mul(float4, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float48div(float4, float8) IS
  'total version of float48div(float4, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float84pl(float8, float4) IS
  'total version of float84pl(float8, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float84mi(float8, float4) IS
  'total version of float84mi(float8, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float84mul(float8, float4) IS
  'total version of float84mul(float8, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float84div(float8, float4) IS
  'total version of float84div(float8, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_numeric_add(numeric, numeric) IS
  'total version of numeric_add(numeric, numeric) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_numeric_sub(numeric, numeric) IS
  'total version of numeric_sub(numeric, numeric) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_numeric_mul(numeric, numeric) IS
  'total version of numeric_mul(numeric, numeric) for expressions over protected rows: NULL for an operand of over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_numeric_div(numeric, numeric) IS
  'total version of numeric_div(numeric, numeric) for expressions over protected rows: NULL for an operand of over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_numeric_mod(numeric, numeric) IS
  'total version of numeric_mod(numeric, numeric) for expressions over protected rows: NULL for an operand of over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_float8(numeric) IS
  'total version of float8(numeric) for expressions over protected rows: NULL for an operand of over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_date_pli(date, int4) IS
  'total version of date_pli(date, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_date_mii(date, int4) IS
  'total version of date_mii(date, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_timestamp_pl_interval(timestamp, interval) IS
  'total version of timestamp_pl_interval(timestamp, interval) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_timestamp_mi_interval(timestamp, interval) IS
  'total version of timestamp_mi_interval(timestamp, interval) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_timestamptz_pl_interval(timestamptz, interval) IS
  'total version of timestamptz_pl_interval(timestamptz, interval) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_timestamptz_mi_interval(timestamptz, interval) IS
  'total version of timestamptz_mi_interval(timestamptz, interval) for expressions over protected rows: never raises';

CREATE FUNCTION dp_agg.total_timestamp(date) RETURNS timestamp
  AS 'MODULE_PATHNAME', 'dp_total_timestamp_date' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamptz(date) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_timestamptz_date' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_date_trunc(text, timestamp) RETURNS timestamp
  AS 'MODULE_PATHNAME', 'dp_total_date_trunc_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_date_trunc(text, timestamptz) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_date_trunc_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.total_timestamp(date) IS
  'total version of timestamp(date) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_timestamptz(date) IS
  'total version of timestamptz(date) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_date_trunc(text, timestamp) IS
  'total version of date_trunc(text, timestamp) for expressions over protected rows: never raises for the fields dp_agg accepts';
COMMENT ON FUNCTION dp_agg.total_date_trunc(text, timestamptz) IS
  'total version of date_trunc(text, timestamptz) for expressions over protected rows: never raises for the fields dp_agg accepts';

-- dp_agg.unit_sum(x): the sum of one privacy unit's rows in a group, for the
-- privacy-unit rewrite (src/pg/unit_rewrite.cpp), which clamps it to the
-- call's bounds. PostgreSQL's sum(float4/float8/numeric) raises on overflow,
-- and how many rows a unit has is protected data, so a unit's total is
-- summed with the total additions instead: float overflow gives +-Infinity
-- (clamped to a bound), a numeric total beyond numeric's range gives NULL
-- (the unit adds nothing to that aggregate).
CREATE AGGREGATE dp_agg.unit_sum(float4) (
  SFUNC = dp_agg.total_float4pl, STYPE = float4, COMBINEFUNC = dp_agg.total_float4pl,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_agg.unit_sum(float8) (
  SFUNC = dp_agg.total_float8pl, STYPE = float8, COMBINEFUNC = dp_agg.total_float8pl,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_agg.unit_sum(numeric) (
  SFUNC = dp_agg.total_numeric_add, STYPE = numeric, COMBINEFUNC = dp_agg.total_numeric_add,
  PARALLEL = SAFE);
COMMENT ON AGGREGATE dp_agg.unit_sum(float4) IS
  'sum that never raises (overflow gives +-Infinity), for one privacy unit''s rows (internal: used by the privacy-unit rewrite)';
COMMENT ON AGGREGATE dp_agg.unit_sum(float8) IS
  'sum that never raises (overflow gives +-Infinity), for one privacy unit''s rows (internal: used by the privacy-unit rewrite)';
COMMENT ON AGGREGATE dp_agg.unit_sum(numeric) IS
  'sum that never raises (NULL beyond numeric''s range), for one privacy unit''s rows (internal: used by the privacy-unit rewrite)';
-- Text, rounding and bucketing for restricted roles (issue 13), each total
-- where the built-in can raise (total_functions.cpp says what it returns).
CREATE FUNCTION dp_agg.total_lower(text) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_lower' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_upper(text) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_upper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_texticlike(text, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_texticlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_texticnlike(text, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_texticnlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_bpchariclike(bpchar, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_texticlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_bpcharicnlike(bpchar, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_texticnlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_textlike(text, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_textlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_textnlike(text, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_textnlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_textlen(text) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_textlen' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_length(text) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_textlen' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_char_length(text) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_textlen' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_character_length(text) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_textlen' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_substr(text, int4, int4) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_text_substr' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_substr(text, int4) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_text_substr_no_len' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_substring(text, int4, int4) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_text_substr' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_substring(text, int4) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_text_substr_no_len' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_floor(numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_floor' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_ceil(numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_ceil' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_ceiling(numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_ceil' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_round(numeric, int4) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_round' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_trunc(numeric, int4) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_trunc' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_width_bucket(numeric, numeric, numeric, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_width_bucket_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_width_bucket(float8, float8, float8, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_width_bucket_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.total_lower(text) IS
  'total version of lower(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_upper(text) IS
  'total version of upper(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_texticlike(text, text) IS
  'total version of ILIKE (texticlike) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_texticnlike(text, text) IS
  'total version of NOT ILIKE (texticnlike) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_bpchariclike(bpchar, text) IS
  'total version of ILIKE (bpchariclike) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_bpcharicnlike(bpchar, text) IS
  'total version of NOT ILIKE (bpcharicnlike) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_textlike(text, text) IS
  'total version of LIKE (textlike) for expressions over protected rows: NULL for a text or pattern that is not valid in the database encoding, a text over 64 KiB or text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_textnlike(text, text) IS
  'total version of NOT LIKE (textnlike) for expressions over protected rows: NULL for a text or pattern that is not valid in the database encoding, a text over 64 KiB or text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_textlen(text) IS
  'total version of textlen(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_length(text) IS
  'total version of length(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_char_length(text) IS
  'total version of char_length(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_character_length(text) IS
  'total version of character_length(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_substr(text, int4, int4) IS
  'total version of substr(text, int4, int4) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises for the constant lengths dp_agg accepts';
COMMENT ON FUNCTION dp_agg.total_substr(text, int4) IS
  'total version of substr(text, int4) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_substring(text, int4, int4) IS
  'total version of substring(text, int4, int4) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises for the constant lengths dp_agg accepts';
COMMENT ON FUNCTION dp_agg.total_substring(text, int4) IS
  'total version of substring(text, int4) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_floor(numeric) IS
  'total version of floor(numeric) for expressions over protected rows: NULL beyond 1e130000 or over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_ceil(numeric) IS
  'total version of ceil(numeric) for expressions over protected rows: NULL beyond 1e130000 or over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_ceiling(numeric) IS
  'total version of ceiling(numeric) for expressions over protected rows: NULL beyond 1e130000 or over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_round(numeric, int4) IS
  'total version of round(numeric, int4) for expressions over protected rows: NULL beyond 1e130000 or over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_trunc(numeric, int4) IS
  'total version of trunc(numeric, int4) for expressions over protected rows: NULL beyond 1e130000 or over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_width_bucket(numeric, numeric, numeric, int4) IS
  'total version of width_bucket(numeric, numeric, numeric, int4) for expressions over protected rows: NULL for NaN or an operand of over 1000 base-10000 digits, never raises for the constant bounds dp_agg accepts';
COMMENT ON FUNCTION dp_agg.total_width_bucket(float8, float8, float8, int4) IS
  'total version of width_bucket(float8, float8, float8, int4) for expressions over protected rows: NULL for NaN, never raises for the constant bounds dp_agg accepts';
CREATE FUNCTION dp_agg.total_to_char(timestamp, text) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_to_char_timestamp' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
CREATE FUNCTION dp_agg.total_to_char(timestamptz, text) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_to_char_timestamptz' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION dp_agg.total_to_char(timestamp, text) IS
  'total version of to_char(timestamp, text) for expressions over protected rows: NULL when lc_time changed since the query was judged, never raises for the formats dp_agg accepts';
COMMENT ON FUNCTION dp_agg.total_to_char(timestamptz, text) IS
  'total version of to_char(timestamptz, text) for expressions over protected rows: NULL when lc_time changed since the query was judged, never raises for the formats dp_agg accepts';

-- ---- The accountant (README "Privacy budgets"): every budget has one kind,
-- (epsilon, delta) or zCDP, admitted by that kind's certificate only; every
-- charge is recorded in both currencies. Existing budgets are (epsilon,
-- delta) budgets and keep their meaning exactly. Their past spending gets its
-- zCDP value too, so that a later switch to a zCDP budget counts it: only the
-- sums of 0.1.0's charges are known, and each charge (epsilon_i, delta_i)
-- is delta_i-approximately (epsilon_i^2 / 2)-zCDP (README "Upgrading from
-- 0.1.0"), so rho_spent = epsilon_spent^2 / 2 >= sum epsilon_i^2 / 2 (the
-- square of a sum of non-negative terms is at least the sum of their
-- squares) and zcdp_delta_spent = delta_spent.
-- (Added without a default, filled, then given their defaults: a default
-- given to ADD COLUMN would be kept as the columns' "missing value" for the
-- existing rows, which a fresh install does not have.)
ALTER TABLE dp_agg.role_budget ADD COLUMN budget_kind text
    CHECK (budget_kind IN ('epsilon_delta', 'zcdp'));
ALTER TABLE dp_agg.role_budget ADD COLUMN rho_total numeric CHECK (rho_total >= 0);
ALTER TABLE dp_agg.role_budget ADD COLUMN zcdp_delta_total numeric
    CHECK (zcdp_delta_total >= 0 AND zcdp_delta_total < 1);
ALTER TABLE dp_agg.role_budget ADD COLUMN rho_spent numeric CHECK (rho_spent >= 0);
ALTER TABLE dp_agg.role_budget ADD COLUMN zcdp_delta_spent numeric CHECK (zcdp_delta_spent >= 0);
UPDATE dp_agg.role_budget
   SET budget_kind = 'epsilon_delta', rho_spent = epsilon_spent * epsilon_spent * 0.5,
       zcdp_delta_spent = delta_spent;
ALTER TABLE dp_agg.role_budget
  ALTER COLUMN budget_kind SET DEFAULT 'epsilon_delta', ALTER COLUMN budget_kind SET NOT NULL,
  ALTER COLUMN rho_spent SET DEFAULT 0, ALTER COLUMN rho_spent SET NOT NULL,
  ALTER COLUMN zcdp_delta_spent SET DEFAULT 0, ALTER COLUMN zcdp_delta_spent SET NOT NULL;
ALTER TABLE dp_agg.role_budget ADD COLUMN epsilon_delta_binding boolean;
ALTER TABLE dp_agg.role_budget ADD COLUMN zcdp_binding boolean;
UPDATE dp_agg.role_budget SET epsilon_delta_binding = false, zcdp_binding = false;
ALTER TABLE dp_agg.role_budget
  ALTER COLUMN epsilon_delta_binding SET DEFAULT false,
  ALTER COLUMN epsilon_delta_binding SET NOT NULL,
  ALTER COLUMN zcdp_binding SET DEFAULT false, ALTER COLUMN zcdp_binding SET NOT NULL;
ALTER TABLE dp_agg.role_budget ADD CONSTRAINT role_budget_kind_has_totals
    CHECK ((budget_kind = 'zcdp' OR zcdp_binding) = (rho_total IS NOT NULL)
           AND (rho_total IS NULL) = (zcdp_delta_total IS NULL)
           AND NOT (budget_kind = 'zcdp' AND zcdp_binding)
           AND NOT (budget_kind = 'epsilon_delta' AND epsilon_delta_binding));
ALTER TABLE dp_agg.ledger_entry ADD COLUMN rho numeric;
ALTER TABLE dp_agg.ledger_entry ADD COLUMN zcdp_delta numeric;
ALTER TABLE dp_agg.ledger_entry DROP CONSTRAINT ledger_entry_kind_check;
ALTER TABLE dp_agg.ledger_entry ADD CONSTRAINT ledger_entry_kind_check
  CHECK (kind IN ('charge', 'set_budget', 'add_budget', 'reset_spent', 'revoke_budget',
                  'set_budget_zcdp'));
DROP FUNCTION dp_agg.apply_charge(oid, name, name, numeric, numeric, bigint, text, text);
DROP FUNCTION dp_agg.remaining_budget();
DROP VIEW dp_agg.budgets;
DROP VIEW dp_agg.ledger;
-- Sets a role's budget to an (epsilon, delta) budget (basic composition),
-- whatever its kind was; spent amounts are kept. delta NULL (the default)
-- keeps the role's delta total (0 for a new budget), so that
-- set_budget('alice', 5.0) never silently takes away a delta budget.
-- A total below what was already spent is accepted: it stops the role's
-- private queries (remaining is shown as 0, never negative), which is what an
-- administrator lowering a budget means; a NOTICE says so. A role that was
-- under a zCDP budget keeps every charge in epsilon_spent and delta_spent
-- (each charge is recorded in both currencies), so the new certificate
-- counts all past spending; if it had spent anything, its zCDP certificate
-- (with its rho and zCDP delta totals) keeps binding too, until reset_spent
-- (README "Switching kinds").
CREATE OR REPLACE FUNCTION dp_agg.set_budget(role regrole, epsilon float8, delta float8 DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  kept_delta numeric;
  now_set dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('set privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  kept_delta := coalesce(delta::numeric,
                         (SELECT b.delta_total FROM dp_agg.role_budget b WHERE b.role_oid = role),
                         0);
  PERFORM dp_agg.check_amounts(epsilon, kept_delta::float8);
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total)
  VALUES (role, name_of_role, epsilon::numeric, kept_delta)
  ON CONFLICT (role_oid) DO UPDATE
    SET role_name = excluded.role_name, epsilon_total = excluded.epsilon_total,
        delta_total = excluded.delta_total, budget_kind = 'epsilon_delta',
        epsilon_delta_binding = false,
        -- (the zCDP certificate binds on if it admitted anything since the
        -- last reset_spent: any sum > 0)
        zcdp_binding = b.zcdp_binding
                       OR (b.budget_kind = 'zcdp'
                           AND (b.epsilon_spent > 0 OR b.delta_spent > 0 OR b.rho_spent > 0
                                OR b.zcdp_delta_spent > 0)),
        rho_total = CASE WHEN b.zcdp_binding
                               OR (b.budget_kind = 'zcdp'
                                   AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                        OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0))
                         THEN b.rho_total END,
        zcdp_delta_total = CASE WHEN b.zcdp_binding
                                      OR (b.budget_kind = 'zcdp'
                                          AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                               OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0))
                                THEN b.zcdp_delta_total END,
        updated_at = now()
  RETURNING * INTO now_set;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('set_budget', role, name_of_role, session_user, current_user, epsilon::numeric,
          kept_delta);
  IF now_set.epsilon_spent > now_set.epsilon_total OR now_set.delta_spent > now_set.delta_total
     OR (now_set.zcdp_binding AND (now_set.rho_spent > now_set.rho_total
                                   OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total))
  THEN
    IF now_set.epsilon_spent > now_set.epsilon_total OR now_set.delta_spent > now_set.delta_total
    THEN
      RAISE NOTICE 'role "%" has already spent more than the new total (epsilon % of %, delta % of %): its remaining budget is 0',
        name_of_role, now_set.epsilon_spent, now_set.epsilon_total, now_set.delta_spent,
        now_set.delta_total;
    ELSE
      -- Only the earlier zCDP certificate, which still binds, is exceeded.
      RAISE NOTICE 'role "%" has already spent more than its earlier zCDP budget, which still binds (rho % of %, delta % of %): its remaining budget is 0 until dp_agg.reset_spent',
        name_of_role, now_set.rho_spent, now_set.rho_total, now_set.zcdp_delta_spent,
        now_set.zcdp_delta_total;
    END IF;
  END IF;
END $$;

-- Adds to a role's (epsilon, delta) totals (creating such a budget if it has
-- none). A zCDP budget is refused: adding epsilon to a rho total has no
-- meaning, and silently switching its kind would be a surprise; the
-- administrator sets a new rho total with set_budget_zcdp instead.
CREATE OR REPLACE FUNCTION dp_agg.add_budget(role regrole, epsilon float8, delta float8 DEFAULT 0)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
BEGIN
  PERFORM dp_agg.require_admin('add to privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  IF EXISTS (SELECT 1 FROM dp_agg.role_budget b
             WHERE b.role_oid = role AND b.budget_kind = 'zcdp') THEN
    RAISE EXCEPTION 'the budget of role "%" is a zCDP budget (rho), to which epsilon cannot be added', name_of_role
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Set its new totals with dp_agg.set_budget_zcdp(role, rho, delta) (the rho for an (epsilon, delta) guarantee is dp_agg.zcdp_rho(epsilon, delta)), or make it an (epsilon, delta) budget with dp_agg.set_budget.';
  END IF;
  PERFORM dp_agg.check_amounts(epsilon, delta);
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total)
  VALUES (role, name_of_role, epsilon::numeric, delta::numeric)
  ON CONFLICT (role_oid) DO UPDATE
    SET role_name = excluded.role_name, epsilon_total = b.epsilon_total + excluded.epsilon_total,
        delta_total = b.delta_total + excluded.delta_total, updated_at = now();
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('add_budget', role, name_of_role, session_user, current_user, epsilon::numeric,
          delta::numeric);
END $$;

-- Sets a role's spent amounts (in both currencies) back to zero. This gives
-- privacy budget back, so it is an administrator's decision and leaves an
-- audit row. It also ends the binding of earlier kinds' certificates: from
-- here on only the current kind's admits (README "Switching kinds").
CREATE OR REPLACE FUNCTION dp_agg.reset_spent(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  previous dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('reset privacy budgets');
  UPDATE dp_agg.role_budget b SET epsilon_spent = 0, delta_spent = 0, rho_spent = 0,
                                  zcdp_delta_spent = 0, updated_at = now(),
                                  epsilon_delta_binding = false, zcdp_binding = false,
                                  rho_total = CASE WHEN b.budget_kind = 'zcdp'
                                                   THEN b.rho_total END,
                                  zcdp_delta_total = CASE WHEN b.budget_kind = 'zcdp'
                                                          THEN b.zcdp_delta_total END,
                                  role_name = coalesce(name_of_role, b.role_name)
  WHERE b.role_oid = role
  RETURNING * INTO previous;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'role "%" has no privacy budget', coalesce(name_of_role, role::text)
      USING ERRCODE = 'undefined_object';
  END IF;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('reset_spent', role, previous.role_name, session_user, current_user, 0, 0);
END $$;

-- Removes a role's budget: its private queries are refused again.
CREATE OR REPLACE FUNCTION dp_agg.revoke_budget(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  previous dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('revoke privacy budgets');
  DELETE FROM dp_agg.role_budget b WHERE b.role_oid = role RETURNING * INTO previous;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('revoke_budget', role, coalesce(name_of_role, previous.role_name, role::text),
          session_user, current_user, 0, 0);
END $$;

-- Applied by the ledger writer (never by users): the charge, atomically
-- against the limit, under the row lock of the role's budget, found by the
-- role's OID (role_name: its name at charge time, kept for the audit).
-- A charge comes in both currencies (src/pg/query_cost.cpp): (epsilon,
-- delta) of basic composition and (rho, zcdp_delta) of approximate zCDP.
-- Both are added to the sums whatever the budget's kind; admission needs the
-- certificate of the budget's own kind AND of every earlier kind that still
-- binds (README "Switching kinds"), never the better of two (README "Why
-- admission never picks a certificate"), in exact numeric arithmetic.
CREATE FUNCTION dp_agg.apply_charge(role_oid oid, role name, session_role name, epsilon numeric,
                                    delta numeric, query_id bigint, aggregates text, query text,
                                    rho numeric, zcdp_delta numeric,
                                    OUT status text, OUT budget_kind text,
                                    OUT epsilon_total numeric, OUT epsilon_spent numeric,
                                    OUT delta_total numeric, OUT delta_spent numeric,
                                    OUT rho_total numeric, OUT rho_spent numeric,
                                    OUT zcdp_delta_total numeric, OUT zcdp_delta_spent numeric)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  now_budget dp_agg.role_budget;
BEGIN
  UPDATE dp_agg.role_budget b
     SET epsilon_spent = b.epsilon_spent + apply_charge.epsilon,
         delta_spent = b.delta_spent + apply_charge.delta,
         rho_spent = b.rho_spent + apply_charge.rho,
         zcdp_delta_spent = b.zcdp_delta_spent + apply_charge.zcdp_delta,
         role_name = apply_charge.role
   WHERE b.role_oid = apply_charge.role_oid
     AND b.budget_kind IN ('epsilon_delta', 'zcdp')
     AND CASE WHEN b.budget_kind = 'epsilon_delta' OR b.epsilon_delta_binding THEN
           b.epsilon_spent + apply_charge.epsilon <= b.epsilon_total
           AND b.delta_spent + apply_charge.delta <= b.delta_total
         ELSE true END
     AND CASE WHEN b.budget_kind = 'zcdp' OR b.zcdp_binding THEN
           b.rho_spent + apply_charge.rho <= b.rho_total
           AND b.zcdp_delta_spent + apply_charge.zcdp_delta <= b.zcdp_delta_total
         ELSE true END
  RETURNING b.* INTO now_budget;
  IF FOUND THEN
    INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                     current_user_name, epsilon, delta, query_id, aggregates,
                                     query, rho, zcdp_delta)
    VALUES ('charge', apply_charge.role_oid, role, role, session_role, apply_charge.epsilon,
            apply_charge.delta, apply_charge.query_id, apply_charge.aggregates,
            left(apply_charge.query, 1000), apply_charge.rho, apply_charge.zcdp_delta);
    status := 'charged';
  ELSE
    SELECT * INTO now_budget FROM dp_agg.role_budget b WHERE b.role_oid = apply_charge.role_oid;
    status := CASE WHEN FOUND THEN 'exhausted' ELSE 'no_budget' END;
    IF NOT FOUND THEN
      RETURN;
    END IF;
  END IF;
  budget_kind := now_budget.budget_kind;
  epsilon_total := now_budget.epsilon_total;
  epsilon_spent := now_budget.epsilon_spent;
  delta_total := now_budget.delta_total;
  delta_spent := now_budget.delta_spent;
  rho_total := now_budget.rho_total;
  rho_spent := now_budget.rho_spent;
  zcdp_delta_total := now_budget.zcdp_delta_total;
  zcdp_delta_spent := now_budget.zcdp_delta_spent;
END $$;

-- Sets a role's budget to a zCDP budget, whatever its kind was: approximate
-- zero-concentrated DP (Bun and Steinke 2016, Def. 8.1) with totals rho and
-- delta, admitted while the sums of the charges' rho and zCDP delta stay
-- within them. The role is then (dp_agg.zcdp_epsilon(rho, d), delta + d)-DP
-- for every d in (0, 1) (README "The accountant"); dp_agg.zcdp_rho(epsilon,
-- delta) gives the rho of an (epsilon, delta) guarantee. Spent amounts are
-- kept: every past charge is in rho_spent and zcdp_delta_spent already; if
-- the role was an (epsilon, delta) budget and had spent anything, that
-- certificate (with its totals) keeps binding too, until reset_spent
-- (README "Switching kinds"). rho is at most 1e6 (zcdp_epsilon(1e6, 1e-6)
-- is about 1e6: no protection left) and 0 or at least 1e-300, so that the
-- totals convert to float8 for display.
CREATE FUNCTION dp_agg.set_budget_zcdp(role regrole, rho numeric, delta numeric DEFAULT 0)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  now_set dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('set privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  IF rho IS NULL OR rho = 'NaN' OR rho = 'Infinity' OR rho < 0 OR rho > 1000000
     OR (rho > 0 AND rho < 1e-300) OR delta IS NULL OR delta = 'NaN' OR delta < 0
     OR delta >= 1 OR (delta > 0 AND delta < 1e-300) THEN
    -- (cut: 1e400 has 401 digits)
    RAISE EXCEPTION 'invalid zCDP budget: rho % and delta %',
      CASE WHEN length(rho::text) > 40 THEN left(rho::text, 30) || '...' ELSE rho::text END,
      CASE WHEN length(delta::text) > 40 THEN left(delta::text, 30) || '...'
           ELSE delta::text END
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'rho must be 0 or a number in [1e-300, 1e6] (dp_agg.zcdp_rho(1, 1e-6) is the rho of a (1, 1e-6) guarantee) and delta 0 or a number in [1e-300, 1) (needed by group selection only).';
  END IF;
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total,
                                       budget_kind, rho_total, zcdp_delta_total)
  VALUES (role, name_of_role, 0, 0, 'zcdp', rho, delta)
  ON CONFLICT (role_oid) DO UPDATE
    SET role_name = excluded.role_name, budget_kind = 'zcdp', rho_total = excluded.rho_total,
        zcdp_delta_total = excluded.zcdp_delta_total, zcdp_binding = false,
        epsilon_delta_binding = b.epsilon_delta_binding
                                OR (b.budget_kind = 'epsilon_delta'
                                    AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                         OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0)),
        updated_at = now()
  RETURNING * INTO now_set;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta, rho, zcdp_delta)
  VALUES ('set_budget_zcdp', role, name_of_role, session_user, current_user, 0, 0, rho, delta);
  IF now_set.rho_spent > now_set.rho_total OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total
     OR (now_set.epsilon_delta_binding AND (now_set.epsilon_spent > now_set.epsilon_total
                                            OR now_set.delta_spent > now_set.delta_total))
  THEN
    IF now_set.rho_spent > now_set.rho_total OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total
    THEN
      RAISE NOTICE 'role "%" has already spent more than the new total (rho % of %, delta % of %): its remaining budget is 0',
        name_of_role, now_set.rho_spent, now_set.rho_total, now_set.zcdp_delta_spent,
        now_set.zcdp_delta_total;
    ELSE
      -- Only the earlier (epsilon, delta) certificate, which still binds, is
      -- exceeded.
      RAISE NOTICE 'role "%" has already spent more than its earlier (epsilon, delta) budget, which still binds (epsilon % of %, delta % of %): its remaining budget is 0 until dp_agg.reset_spent',
        name_of_role, now_set.epsilon_spent, now_set.epsilon_total, now_set.delta_spent,
        now_set.delta_total;
    END IF;
  END IF;
END $$;

-- Conversions (src/pg/accountant_functions.cpp, core/privacy_accountant.h).
-- Floating point appears only here, for administrators and analysts to
-- choose amounts and for display, rounded the safe way; never in admission.
CREATE FUNCTION dp_agg.zcdp_epsilon(rho float8, delta float8) RETURNS float8
AS 'MODULE_PATHNAME', 'dp_agg_zcdp_epsilon' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.zcdp_rho(epsilon float8, delta float8) RETURNS numeric
AS 'MODULE_PATHNAME', 'dp_agg_zcdp_rho' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.gaussian_count_epsilon(rho numeric, delta float8) RETURNS float8
AS 'MODULE_PATHNAME', 'dp_agg_gaussian_count_epsilon' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.gaussian_count_rho(epsilon numeric, delta numeric) RETURNS numeric
AS 'MODULE_PATHNAME', 'dp_agg_gaussian_count_rho' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The largest epsilon (12 decimals, rounded down) whose pure release the
-- ledger admits against rho: its charge, epsilon^2 / 2 (Bun and Steinke
-- 2016, Prop. 1.4) of the epsilon charged, rounded up to 17 significant
-- digits, computed by the ledger's own code (src/pg/query_cost.cpp,
-- PureReleaseRho), is <= rho; from trunc(sqrt(2 rho), 12) down in steps of
-- 1e-12 until it fits.
CREATE FUNCTION dp_agg.zcdp_pure_epsilon(rho numeric) RETURNS numeric
AS 'MODULE_PATHNAME', 'dp_agg_zcdp_pure_epsilon' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Budgets: administrators see every role, everyone else their own (by OID,
-- so a role keeps its row through a rename). role is the role's current
-- name, or the last name it had if it was dropped (role_dropped).
-- budget_kind is the kind the administrator chose last; binding_certificates
-- lists every certificate that admission needs: that kind's, and an earlier
-- kind's that still binds after a switch with spending (README "Switching
-- kinds"). Each *_total column is shown when its certificate binds, NULL
-- otherwise; every charge is recorded in both currencies, so all spent sums
-- are shown. The remaining amounts are the least over the binding
-- certificates (what one more release of that kind can still use):
--  - epsilon_remaining: the largest pure epsilon that still fits: the
--    epsilon left of an (epsilon, delta) certificate, and for a zCDP one
--    the largest epsilon whose charged epsilon^2 / 2 fits the rho left
--    (zcdp_pure_epsilon);
--  - delta_remaining: the delta left of an (epsilon, delta) certificate,
--    the zCDP delta left (group selection's) of a zCDP one;
--  - rho_remaining: the rho left of a zCDP certificate, and for an (epsilon,
--    delta) one the rho of the largest Gaussian count (dp_count(v,
--    epsilon_remaining, delta_remaining)) that still fits (NULL when no such
--    count exists).
-- guarantee_epsilon, guarantee_delta: what the whole budget certifies as
-- (epsilon, delta)-DP by the certificate of budget_kind (a binding earlier
-- kind certifies its own guarantee as well): the totals for epsilon_delta
-- budgets; for zcdp ones (zcdp_epsilon(rho_total, 1e-6), zcdp_delta_total +
-- 1e-6), the conversion at d = 1e-6 (dp_agg.zcdp_epsilon gives it at any
-- other d).
CREATE VIEW dp_agg.budgets WITH (security_barrier) AS
  SELECT coalesce(r.rolname, b.role_name) AS role,
         CASE WHEN c.epsilon_delta_binds THEN b.epsilon_total END AS epsilon_total,
         b.epsilon_spent,
         least(CASE WHEN c.epsilon_delta_binds
                    THEN greatest(b.epsilon_total - b.epsilon_spent, 0) END,
               CASE WHEN c.zcdp_binds
                    THEN dp_agg.zcdp_pure_epsilon(greatest(b.rho_total - b.rho_spent, 0))
               END) AS epsilon_remaining,
         CASE WHEN c.epsilon_delta_binds THEN b.delta_total END AS delta_total,
         b.delta_spent,
         least(CASE WHEN c.epsilon_delta_binds
                    THEN greatest(b.delta_total - b.delta_spent, 0) END,
               CASE WHEN c.zcdp_binds
                    THEN greatest(b.zcdp_delta_total - b.zcdp_delta_spent, 0) END)
           AS delta_remaining,
         b.updated_at, r.oid IS NULL AS role_dropped, b.budget_kind, b.rho_total, b.rho_spent,
         CASE WHEN c.epsilon_delta_binds AND g.gaussian_rho IS NULL THEN NULL
              ELSE least(g.gaussian_rho, CASE WHEN c.zcdp_binds
                                              THEN greatest(b.rho_total - b.rho_spent, 0) END)
         END AS rho_remaining,
         b.zcdp_delta_total, b.zcdp_delta_spent,
         -- NULL when what was spent already exceeds the current kind's
         -- totals (a total lowered, or a kind switched, below the spending):
         -- those totals then certify nothing about the history.
         CASE WHEN c.over_totals THEN NULL
              WHEN b.budget_kind = 'zcdp'
              THEN dp_agg.zcdp_epsilon(b.rho_total::float8, 1e-6)::numeric
              ELSE b.epsilon_total END AS guarantee_epsilon,
         CASE WHEN c.over_totals THEN NULL
              WHEN b.budget_kind = 'zcdp' THEN b.zcdp_delta_total + 0.000001
              ELSE b.delta_total END AS guarantee_delta,
         c.binding_certificates
  FROM dp_agg.role_budget b LEFT JOIN pg_catalog.pg_roles r ON r.oid = b.role_oid
  CROSS JOIN LATERAL (
    SELECT b.budget_kind = 'epsilon_delta' OR b.epsilon_delta_binding AS epsilon_delta_binds,
           b.budget_kind = 'zcdp' OR b.zcdp_binding AS zcdp_binds,
           array_remove(ARRAY[b.budget_kind,
                              CASE WHEN b.epsilon_delta_binding THEN 'epsilon_delta' END,
                              CASE WHEN b.zcdp_binding THEN 'zcdp' END], NULL)
             AS binding_certificates,
           CASE WHEN b.budget_kind = 'zcdp'
                THEN b.rho_spent > b.rho_total OR b.zcdp_delta_spent > b.zcdp_delta_total
                ELSE b.epsilon_spent > b.epsilon_total OR b.delta_spent > b.delta_total
           END AS over_totals) c
  -- least(..., 1e300): an epsilon total summed by add_budget may exceed
  -- float8; every epsilon that large has no Gaussian count (NULL) anyway.
  CROSS JOIN LATERAL (
    SELECT CASE WHEN c.epsilon_delta_binds
                THEN dp_agg.gaussian_count_rho(
                       least(greatest(b.epsilon_total - b.epsilon_spent, 0), 1e300),
                       greatest(b.delta_total - b.delta_spent, 0)) END AS gaussian_rho) g
  WHERE b.role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s WHERE s.rolname = session_user)
     OR dp_agg.is_admin();
-- The ledger, filtered the same way: a new role that takes a dropped role's
-- name does not see the dropped role's rows.
CREATE VIEW dp_agg.ledger WITH (security_barrier) AS
  SELECT id, recorded_at, kind, role_name AS role, session_user_name, current_user_name,
         epsilon, delta, query_id, aggregates, query, rho, zcdp_delta
  FROM dp_agg.ledger_entry
  WHERE role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s WHERE s.rolname = session_user)
     OR dp_agg.is_admin();

-- What the session user has left (as in dp_agg.budgets: the least over every
-- binding certificate: epsilon and delta as in 0.1.0 for an (epsilon, delta)
-- certificate; for a zCDP one the largest pure epsilon and the zCDP delta
-- left), never negative, and which certificates bind.
CREATE FUNCTION dp_agg.remaining_budget(OUT epsilon numeric, OUT delta numeric,
                                        OUT rho numeric, OUT budget_kind text,
                                        OUT binding_certificates text[])
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT v.epsilon_remaining, v.delta_remaining, v.rho_remaining, v.budget_kind,
         v.binding_certificates
  FROM dp_agg.budgets v
  WHERE v.role = session_user AND NOT v.role_dropped
$$;

COMMENT ON TABLE dp_agg.role_budget IS
  'Privacy budget of each login role (kind, totals and exact spent amounts in both currencies); read it through dp_agg.budgets';
COMMENT ON TABLE dp_agg.ledger_entry IS
  'The privacy ledger: one row per charge and per budget change, never updated or deleted by dp_agg; read it through dp_agg.ledger';
COMMENT ON FUNCTION dp_agg.is_admin() IS
  'True when the session user is a superuser or a member of the role named by dp_agg.admin_role';
COMMENT ON FUNCTION dp_agg.require_admin(text) IS
  'Raises insufficient_privilege unless dp_agg.is_admin() (internal)';
COMMENT ON FUNCTION dp_agg.check_amounts(float8, float8) IS
  'Validates a budget amount: finite epsilon >= 0, delta in [0, 1) (internal)';
COMMENT ON FUNCTION dp_agg.set_budget(regrole, float8, float8) IS
  'set_budget(role, epsilon[, delta]): makes a role''s budget an (epsilon, delta) budget (basic composition) with these totals, keeping what it spent and, when delta is omitted, its delta total (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.add_budget(regrole, float8, float8) IS
  'add_budget(role, epsilon, delta): adds to a role''s (epsilon, delta) budget totals; refused for zCDP budgets (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.reset_spent(regrole) IS
  'reset_spent(role): sets a role''s spent amounts back to zero, giving budget back (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.revoke_budget(regrole) IS
  'revoke_budget(role): removes a role''s budget, so its private queries are refused (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.apply_charge(oid, name, name, numeric, numeric, bigint, text, text, numeric, numeric) IS
  'Records one charge atomically against the limit of the budget''s own kind (called by the ledger writer only)';
COMMENT ON FUNCTION dp_agg.set_budget_zcdp(regrole, numeric, numeric) IS
  'set_budget_zcdp(role, rho[, delta]): makes a role''s budget a zCDP budget (approximate zCDP: rho and delta add up), keeping what it spent (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.zcdp_epsilon(float8, float8) IS
  'zcdp_epsilon(rho, d): the epsilon at which rho-zCDP is (epsilon, d)-DP (Canonne, Kamath and Steinke 2020), rounded up';
COMMENT ON FUNCTION dp_agg.zcdp_rho(float8, float8) IS
  'zcdp_rho(epsilon, delta): the largest rho (rounded down) whose zCDP guarantee is within (epsilon, delta), for dp_agg.set_budget_zcdp';
COMMENT ON FUNCTION dp_agg.gaussian_count_epsilon(numeric, float8) IS
  'gaussian_count_epsilon(rho, delta): the largest epsilon at which dp_count(value, epsilon, delta) is charged at most rho';
COMMENT ON FUNCTION dp_agg.gaussian_count_rho(numeric, numeric) IS
  'gaussian_count_rho(epsilon, delta): the rho of the noise of dp_count(value, epsilon, delta) (0 without delta)';
COMMENT ON FUNCTION dp_agg.zcdp_pure_epsilon(numeric) IS
  'zcdp_pure_epsilon(rho): the largest epsilon (12 decimals) of a pure release whose charge (epsilon^2 / 2, rounded up as the ledger does) rho pays for';
COMMENT ON VIEW dp_agg.budgets IS
  'Privacy budgets: administrators see every role, everyone else their own';
COMMENT ON VIEW dp_agg.ledger IS
  'The privacy ledger: administrators see every row, everyone else the rows of their own budget';
COMMENT ON FUNCTION dp_agg.remaining_budget() IS
  'What the session user has left (the least over every binding certificate): epsilon, delta, rho, the kind of its budget and the certificates that bind';


-- ---- Public column bounds for plain sum/avg (src/sql/72_column_bounds.sql).
CREATE FUNCTION dp_agg.set_column_bounds(target regclass, column_name name, lower numeric,
                                         upper numeric) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('COLUMN', format('%s.%I', target, column_name),
                              format('bounds [%s, %s]', lower, upper)) $$;
CREATE FUNCTION dp_agg.unset_column_bounds(target regclass, column_name name) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('COLUMN', format('%s.%I', target, column_name), NULL) $$;

CREATE VIEW dp_agg.column_bounds AS
  SELECT l.objoid::regclass AS table_name, a.attname AS column_name,
         pg_catalog.split_part(pg_catalog.substr(l.label, 9), ', ', 1)::numeric AS lower,
         pg_catalog.rtrim(pg_catalog.split_part(l.label, ', ', 2), ']')::numeric AS upper
  FROM pg_catalog.pg_seclabel l
  JOIN pg_catalog.pg_attribute a ON a.attrelid = l.objoid AND a.attnum = l.objsubid
  WHERE l.provider = 'dp_agg' AND l.classoid = 'pg_catalog.pg_class'::regclass
    AND l.objsubid > 0 AND l.label LIKE 'bounds [%';

COMMENT ON FUNCTION dp_agg.set_column_bounds(regclass, name, numeric, numeric) IS
  'set_column_bounds(table, column, lower, upper): declares the public bounds of a numeric column, within which plain sum() and avg() of restricted roles are answered privately (administrators)';
COMMENT ON FUNCTION dp_agg.unset_column_bounds(regclass, name) IS
  'unset_column_bounds(table, column): removes the declared bounds of a column (administrators)';
COMMENT ON VIEW dp_agg.column_bounds IS
  'Declared public bounds of numeric columns (dp_agg.set_column_bounds)';
-- Total versions of the casts and conversions BI tools write into their SQL
-- (issue 27; src/pg/total_casts.cpp, src/pg/verified_calls.cpp). A restricted
-- role's expressions over protected rows call them in place of the built-in
-- (query_rewrites.cpp); README "Restricted analysts" states what each returns
-- where the built-in raises.

CREATE FUNCTION dp_agg.total_int4(numeric) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8(numeric) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2(numeric) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4(float8) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2(float8) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8(float8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4(float4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4_float4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2(float4) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2_float4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8(float4) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8_float4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4(int8) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2(int8) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2(int4) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float4(float8) RETURNS float4
  AS 'MODULE_PATHNAME', 'dp_total_float4_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_date(timestamptz) RETURNS date
  AS 'MODULE_PATHNAME', 'dp_total_date_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamp(timestamptz) RETURNS timestamp
  AS 'MODULE_PATHNAME', 'dp_total_timestamp_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamptz(timestamp) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_timestamptz_timestamp' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_to_timestamp(float8) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_to_timestamp_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_to_timestamp(text, text, timestamptz, text) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_verified_call' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_to_date(text, text, date, text) RETURNS date
  AS 'MODULE_PATHNAME', 'dp_total_verified_call' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION dp_agg.total_int4(numeric) IS
  'total version of int4(numeric) for expressions over protected rows: NULL where the cast raises (NaN, infinity, out of range)';
COMMENT ON FUNCTION dp_agg.total_int8(numeric) IS
  'total version of int8(numeric) for expressions over protected rows: NULL where the cast raises (NaN, infinity, out of range)';
COMMENT ON FUNCTION dp_agg.total_int2(numeric) IS
  'total version of int2(numeric) for expressions over protected rows: NULL where the cast raises (NaN, infinity, out of range)';
COMMENT ON FUNCTION dp_agg.total_int4(float8) IS
  'total version of int4(float8) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int2(float8) IS
  'total version of int2(float8) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int8(float8) IS
  'total version of int8(float8) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int4(float4) IS
  'total version of int4(float4) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int2(float4) IS
  'total version of int2(float4) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int8(float4) IS
  'total version of int8(float4) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int4(int8) IS
  'total version of int4(int8) for expressions over protected rows: NULL where the cast raises (out of range)';
COMMENT ON FUNCTION dp_agg.total_int2(int8) IS
  'total version of int2(int8) for expressions over protected rows: NULL where the cast raises (out of range)';
COMMENT ON FUNCTION dp_agg.total_int2(int4) IS
  'total version of int2(int4) for expressions over protected rows: NULL where the cast raises (out of range)';
COMMENT ON FUNCTION dp_agg.total_float4(float8) IS
  'total version of float4(float8) for expressions over protected rows: the IEEE result where the cast raises (overflow, underflow)';
COMMENT ON FUNCTION dp_agg.total_date(timestamptz) IS
  'total version of date(timestamptz) for expressions over protected rows: -infinity for a local date before the first valid date';
COMMENT ON FUNCTION dp_agg.total_timestamp(timestamptz) IS
  'total version of timestamp(timestamptz) for expressions over protected rows: +-infinity where the local time leaves the range';
COMMENT ON FUNCTION dp_agg.total_timestamptz(timestamp) IS
  'total version of timestamptz(timestamp) for expressions over protected rows: +-infinity where the time zone moves the instant out of the range';
COMMENT ON FUNCTION dp_agg.total_to_timestamp(float8) IS
  'total version of to_timestamp(float8) for expressions over protected rows: NULL for NaN, +-infinity beyond the range';
COMMENT ON FUNCTION dp_agg.total_to_timestamp(text, text, timestamptz, text) IS
  'to_timestamp(text, format) of constants, computed while planning: the recorded result while TimeZone and lc_time are unchanged, NULL otherwise; never raises';
COMMENT ON FUNCTION dp_agg.total_to_date(text, text, date, text) IS
  'to_date(text, format) of constants, computed while planning: the recorded result while TimeZone and lc_time are unchanged, NULL otherwise; never raises';

-- information_schema for restricted roles (issue 27; src/pg/information_schema.h).
-- dp_agg's copies of information_schema.tables and information_schema.columns,
-- made from this server's own definitions with one more reason to list a
-- table: dp_agg.lists_protected_table(oid), true only in a restricted session
-- for a protected table whose schema the role may use. A restricted session's
-- references to the two views are pointed to these at parse analysis, so
-- tools that discover tables through information_schema (dbt, Looker, generic
-- connectors) see the protected tables they can query with private
-- aggregates. No privilege on the tables is granted (REFERENCES would let the
-- analyst probe keys through a foreign key, TRIGGER attach code).

CREATE FUNCTION dp_agg.lists_protected_table(oid) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_lists_protected_table' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.lists_protected_table(oid) IS
  'whether information_schema lists this relation to the session although it holds no privilege on it: a restricted session, a protected table, a schema it may use';

DO $listing$
DECLARE
  view_name text;
  definition text;
  privilege_test constant text := 'AND (pg_has_role(c.relowner, ''USAGE''::text) OR ';
BEGIN
  FOREACH view_name IN ARRAY ARRAY['tables', 'columns'] LOOP
    definition := pg_catalog.pg_get_viewdef(('information_schema.' || view_name)::regclass);
    -- The privilege test of the view's WHERE, once: checked, so that a server
    -- whose definition differs fails here instead of listing nothing.
    IF (length(definition) - length(replace(definition, privilege_test, ''))) / length(privilege_test) <> 1 THEN
      RAISE EXCEPTION 'dp_agg: information_schema.% has an unexpected definition', view_name;
    END IF;
    definition := replace(definition, privilege_test,
                          privilege_test || 'dp_agg.lists_protected_table(c.oid) OR ');
    EXECUTE format('CREATE VIEW dp_agg.%I AS %s', 'information_schema_' || view_name,
                   rtrim(definition, ';'));
    EXECUTE format('COMMENT ON VIEW dp_agg.%I IS %L', 'information_schema_' || view_name,
                   'information_schema.' || view_name || ' that also lists the protected tables a restricted session may query with private aggregates (read in its place by restricted sessions)');
  END LOOP;
END
$listing$;

-- CREATE AGGREGATE has no volatility option and records aggregates as
-- immutable, so the planner would treat two identical calls as one, or copy a
-- call into several places when it flattens a subquery, drawing noise a
-- different number of times than the query says. Every call is a separate
-- noisy release: mark every aggregate of the extension VOLATILE like its
-- support functions. Chosen by membership in the extension, so that an
-- aggregate added later cannot be forgotten (an upgrade script that adds one
-- runs this same statement).
UPDATE pg_catalog.pg_proc SET provolatile = 'v'
WHERE prokind = 'a'
  AND oid IN (SELECT d.objid FROM pg_catalog.pg_depend d
              WHERE d.classid = 'pg_catalog.pg_proc'::regclass
                AND d.refclassid = 'pg_catalog.pg_extension'::regclass
                AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension e
                                  WHERE e.extname = 'dp_agg')
                AND d.deptype = 'e');

-- ---- Budgets restored from another cluster (issue 28, finding 2; README
-- "Backups, restores and copies"): budget and ledger rows record the system
-- identifier of the cluster they were written in (src/sql/40_budgets_ledger.sql),
-- so that a row restored from another cluster's dump, whose role OID may be
-- anybody's here, is found by no role until an administrator re-attaches it
-- (src/sql/42_budget_restores.sql). The rows an installation has are taken to
-- be this cluster's. Also: set_budget and set_budget_zcdp say when they lower
-- a total (issue 28, finding 5).
CREATE FUNCTION dp_agg.system_identifier() RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_agg_system_identifier' LANGUAGE C STABLE STRICT PARALLEL SAFE;
-- (Added without defaults, filled, then given them: as in a fresh install,
-- no "missing value" is kept for the existing rows.)
ALTER TABLE dp_agg.role_budget ADD COLUMN system_identifier bigint;
ALTER TABLE dp_agg.role_budget ADD COLUMN reattached_from text[];
UPDATE dp_agg.role_budget SET system_identifier = dp_agg.system_identifier(),
                              reattached_from = '{}';
ALTER TABLE dp_agg.role_budget
  ALTER COLUMN system_identifier SET NOT NULL,
  ALTER COLUMN system_identifier SET DEFAULT dp_agg.system_identifier(),
  ALTER COLUMN reattached_from SET NOT NULL,
  ALTER COLUMN reattached_from SET DEFAULT '{}';
ALTER TABLE dp_agg.role_budget DROP CONSTRAINT role_budget_pkey;
ALTER TABLE dp_agg.role_budget
  ADD CONSTRAINT role_budget_pkey PRIMARY KEY (role_oid, system_identifier);
ALTER TABLE dp_agg.ledger_entry ADD COLUMN system_identifier bigint;
UPDATE dp_agg.ledger_entry SET system_identifier = dp_agg.system_identifier();
ALTER TABLE dp_agg.ledger_entry
  ALTER COLUMN system_identifier SET NOT NULL,
  ALTER COLUMN system_identifier SET DEFAULT dp_agg.system_identifier();
ALTER TABLE dp_agg.ledger_entry DROP CONSTRAINT ledger_entry_kind_check;
ALTER TABLE dp_agg.ledger_entry
  ADD CONSTRAINT ledger_entry_kind_check
  CHECK (kind IN ('charge', 'set_budget', 'add_budget', 'reset_spent', 'revoke_budget',
                  'set_budget_zcdp', 'reattach_budget'));

CREATE FUNCTION dp_agg.refuse_beside_orphan(role oid, name_of_role name) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  here bigint := dp_agg.system_identifier();
  orphan dp_agg.role_budget;
  orphans bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM dp_agg.role_budget b
             WHERE b.role_oid = role AND b.system_identifier = here) THEN
    RETURN;
  END IF;
  orphans := (SELECT count(*) FROM dp_agg.role_budget b
              WHERE b.system_identifier <> here AND b.role_name = name_of_role);
  SELECT * INTO orphan FROM dp_agg.role_budget b
  WHERE b.system_identifier <> here AND b.role_name = name_of_role
  ORDER BY b.updated_at DESC, b.role_oid DESC LIMIT 1;
  IF orphans > 0 THEN
    RAISE EXCEPTION 'role "%" has a privacy budget restored from another cluster that is not re-attached',
      name_of_role
      USING ERRCODE = 'ZP004',
            DETAIL = format('%s restored budget(s) carry the name %I (the latest: epsilon %s of %s and delta %s of %s spent, role OID %s in the cluster with system identifier %s). Role OIDs differ between clusters, so no role spends it until it is re-attached; a new budget would start from nothing spent.',
                            orphans, name_of_role, orphan.epsilon_spent, orphan.epsilon_total,
                            orphan.delta_spent, orphan.delta_total, orphan.role_oid,
                            orphan.system_identifier),
            HINT = 'Re-attach restored budgets to the roles of their names with SELECT * FROM dp_agg.reattach_budgets(); then change this one.';
  END IF;
END $$;

CREATE OR REPLACE FUNCTION dp_agg.set_budget(role regrole, epsilon float8, delta float8 DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  before dp_agg.role_budget;
  kept_delta numeric;
  now_set dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('set privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.refuse_beside_orphan(role, name_of_role);
  SELECT * INTO before FROM dp_agg.role_budget b
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier();
  kept_delta := coalesce(delta::numeric, before.delta_total, 0);
  PERFORM dp_agg.check_amounts(epsilon, kept_delta::float8);
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total)
  VALUES (role, name_of_role, epsilon::numeric, kept_delta)
  ON CONFLICT (role_oid, system_identifier) DO UPDATE
    SET role_name = excluded.role_name, epsilon_total = excluded.epsilon_total,
        delta_total = excluded.delta_total, budget_kind = 'epsilon_delta',
        epsilon_delta_binding = false,
        -- (the zCDP certificate binds on if it admitted anything since the
        -- last reset_spent: any sum > 0)
        zcdp_binding = b.zcdp_binding
                       OR (b.budget_kind = 'zcdp'
                           AND (b.epsilon_spent > 0 OR b.delta_spent > 0 OR b.rho_spent > 0
                                OR b.zcdp_delta_spent > 0)),
        rho_total = CASE WHEN b.zcdp_binding
                               OR (b.budget_kind = 'zcdp'
                                   AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                        OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0))
                         THEN b.rho_total END,
        zcdp_delta_total = CASE WHEN b.zcdp_binding
                                      OR (b.budget_kind = 'zcdp'
                                          AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                               OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0))
                                THEN b.zcdp_delta_total END,
        updated_at = now()
  RETURNING * INTO now_set;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('set_budget', role, name_of_role, session_user, current_user, epsilon::numeric,
          kept_delta);
  -- An administrator who lowers a total is told, with both numbers: the
  -- call reads the same whether it grants or takes away.
  IF before.budget_kind = 'epsilon_delta'
     AND (now_set.epsilon_total < before.epsilon_total
          OR now_set.delta_total < before.delta_total) THEN
    RAISE NOTICE 'this lowers the budget of role "%": epsilon total % (was %), delta total % (was %)',
      name_of_role, now_set.epsilon_total, before.epsilon_total, now_set.delta_total,
      before.delta_total;
  END IF;
  IF now_set.epsilon_spent > now_set.epsilon_total OR now_set.delta_spent > now_set.delta_total
     OR (now_set.zcdp_binding AND (now_set.rho_spent > now_set.rho_total
                                   OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total))
  THEN
    IF now_set.epsilon_spent > now_set.epsilon_total OR now_set.delta_spent > now_set.delta_total
    THEN
      RAISE NOTICE 'role "%" has already spent more than the new total (epsilon % of %, delta % of %): its remaining budget is 0',
        name_of_role, now_set.epsilon_spent, now_set.epsilon_total, now_set.delta_spent,
        now_set.delta_total;
    ELSE
      -- Only the earlier zCDP certificate, which still binds, is exceeded.
      RAISE NOTICE 'role "%" has already spent more than its earlier zCDP budget, which still binds (rho % of %, delta % of %): its remaining budget is 0 until dp_agg.reset_spent',
        name_of_role, now_set.rho_spent, now_set.rho_total, now_set.zcdp_delta_spent,
        now_set.zcdp_delta_total;
    END IF;
  END IF;
END $$;

CREATE OR REPLACE FUNCTION dp_agg.add_budget(role regrole, epsilon float8, delta float8 DEFAULT 0)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
BEGIN
  PERFORM dp_agg.require_admin('add to privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.refuse_beside_orphan(role, name_of_role);
  IF EXISTS (SELECT 1 FROM dp_agg.role_budget b
             WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
               AND b.budget_kind = 'zcdp') THEN
    RAISE EXCEPTION 'the budget of role "%" is a zCDP budget (rho), to which epsilon cannot be added', name_of_role
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Set its new totals with dp_agg.set_budget_zcdp(role, rho, delta) (the rho for an (epsilon, delta) guarantee is dp_agg.zcdp_rho(epsilon, delta)), or make it an (epsilon, delta) budget with dp_agg.set_budget.';
  END IF;
  PERFORM dp_agg.check_amounts(epsilon, delta);
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total)
  VALUES (role, name_of_role, epsilon::numeric, delta::numeric)
  ON CONFLICT (role_oid, system_identifier) DO UPDATE
    SET role_name = excluded.role_name, epsilon_total = b.epsilon_total + excluded.epsilon_total,
        delta_total = b.delta_total + excluded.delta_total, updated_at = now();
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('add_budget', role, name_of_role, session_user, current_user, epsilon::numeric,
          delta::numeric);
END $$;

CREATE OR REPLACE FUNCTION dp_agg.reset_spent(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  previous dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('reset privacy budgets');
  UPDATE dp_agg.role_budget b SET epsilon_spent = 0, delta_spent = 0, rho_spent = 0,
                                  zcdp_delta_spent = 0, updated_at = now(),
                                  epsilon_delta_binding = false, zcdp_binding = false,
                                  rho_total = CASE WHEN b.budget_kind = 'zcdp'
                                                   THEN b.rho_total END,
                                  zcdp_delta_total = CASE WHEN b.budget_kind = 'zcdp'
                                                          THEN b.zcdp_delta_total END,
                                  role_name = coalesce(name_of_role, b.role_name)
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
  RETURNING * INTO previous;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'role "%" has no privacy budget', coalesce(name_of_role, role::text)
      USING ERRCODE = 'undefined_object';
  END IF;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('reset_spent', role, previous.role_name, session_user, current_user, 0, 0);
END $$;

CREATE OR REPLACE FUNCTION dp_agg.revoke_budget(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  previous dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('revoke privacy budgets');
  DELETE FROM dp_agg.role_budget b
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
  RETURNING * INTO previous;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('revoke_budget', role, coalesce(name_of_role, previous.role_name, role::text),
          session_user, current_user, 0, 0);
END $$;

CREATE OR REPLACE FUNCTION dp_agg.apply_charge(role_oid oid, role name, session_role name, epsilon numeric,
                                    delta numeric, query_id bigint, aggregates text, query text,
                                    rho numeric, zcdp_delta numeric,
                                    OUT status text, OUT budget_kind text,
                                    OUT epsilon_total numeric, OUT epsilon_spent numeric,
                                    OUT delta_total numeric, OUT delta_spent numeric,
                                    OUT rho_total numeric, OUT rho_spent numeric,
                                    OUT zcdp_delta_total numeric, OUT zcdp_delta_spent numeric)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  here bigint := dp_agg.system_identifier();
  now_budget dp_agg.role_budget;
BEGIN
  UPDATE dp_agg.role_budget b
     SET epsilon_spent = b.epsilon_spent + apply_charge.epsilon,
         delta_spent = b.delta_spent + apply_charge.delta,
         rho_spent = b.rho_spent + apply_charge.rho,
         zcdp_delta_spent = b.zcdp_delta_spent + apply_charge.zcdp_delta,
         role_name = apply_charge.role
   WHERE b.role_oid = apply_charge.role_oid AND b.system_identifier = here
     AND b.budget_kind IN ('epsilon_delta', 'zcdp')
     AND CASE WHEN b.budget_kind = 'epsilon_delta' OR b.epsilon_delta_binding THEN
           b.epsilon_spent + apply_charge.epsilon <= b.epsilon_total
           AND b.delta_spent + apply_charge.delta <= b.delta_total
         ELSE true END
     AND CASE WHEN b.budget_kind = 'zcdp' OR b.zcdp_binding THEN
           b.rho_spent + apply_charge.rho <= b.rho_total
           AND b.zcdp_delta_spent + apply_charge.zcdp_delta <= b.zcdp_delta_total
         ELSE true END
  RETURNING b.* INTO now_budget;
  IF FOUND THEN
    INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                     current_user_name, epsilon, delta, query_id, aggregates,
                                     query, rho, zcdp_delta)
    VALUES ('charge', apply_charge.role_oid, role, role, session_role, apply_charge.epsilon,
            apply_charge.delta, apply_charge.query_id, apply_charge.aggregates,
            left(apply_charge.query, 1000), apply_charge.rho, apply_charge.zcdp_delta);
    status := 'charged';
  ELSE
    SELECT * INTO now_budget FROM dp_agg.role_budget b
    WHERE b.role_oid = apply_charge.role_oid AND b.system_identifier = here;
    status := CASE WHEN FOUND THEN 'exhausted' ELSE 'no_budget' END;
    IF NOT FOUND THEN
      -- A budget restored from another cluster under the role's name, not
      -- re-attached: the refusal names it (its latest, and what it spent).
      SELECT * INTO now_budget FROM dp_agg.role_budget b
      WHERE b.system_identifier <> here AND b.role_name = apply_charge.role
      ORDER BY b.updated_at DESC, b.role_oid DESC LIMIT 1;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      status := 'orphaned';
    END IF;
  END IF;
  budget_kind := now_budget.budget_kind;
  epsilon_total := now_budget.epsilon_total;
  epsilon_spent := now_budget.epsilon_spent;
  delta_total := now_budget.delta_total;
  delta_spent := now_budget.delta_spent;
  rho_total := now_budget.rho_total;
  rho_spent := now_budget.rho_spent;
  zcdp_delta_total := now_budget.zcdp_delta_total;
  zcdp_delta_spent := now_budget.zcdp_delta_spent;
END $$;

CREATE OR REPLACE FUNCTION dp_agg.set_budget_zcdp(role regrole, rho numeric, delta numeric DEFAULT 0)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  before dp_agg.role_budget;
  now_set dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('set privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.refuse_beside_orphan(role, name_of_role);
  SELECT * INTO before FROM dp_agg.role_budget b
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier();
  IF rho IS NULL OR rho = 'NaN' OR rho = 'Infinity' OR rho < 0 OR rho > 1000000
     OR (rho > 0 AND rho < 1e-300) OR delta IS NULL OR delta = 'NaN' OR delta < 0
     OR delta >= 1 OR (delta > 0 AND delta < 1e-300) THEN
    -- (cut: 1e400 has 401 digits)
    RAISE EXCEPTION 'invalid zCDP budget: rho % and delta %',
      CASE WHEN length(rho::text) > 40 THEN left(rho::text, 30) || '...' ELSE rho::text END,
      CASE WHEN length(delta::text) > 40 THEN left(delta::text, 30) || '...'
           ELSE delta::text END
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'rho must be 0 or a number in [1e-300, 1e6] (dp_agg.zcdp_rho(1, 1e-6) is the rho of a (1, 1e-6) guarantee) and delta 0 or a number in [1e-300, 1) (needed by group selection only).';
  END IF;
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total,
                                       budget_kind, rho_total, zcdp_delta_total)
  VALUES (role, name_of_role, 0, 0, 'zcdp', rho, delta)
  ON CONFLICT (role_oid, system_identifier) DO UPDATE
    SET role_name = excluded.role_name, budget_kind = 'zcdp', rho_total = excluded.rho_total,
        zcdp_delta_total = excluded.zcdp_delta_total, zcdp_binding = false,
        epsilon_delta_binding = b.epsilon_delta_binding
                                OR (b.budget_kind = 'epsilon_delta'
                                    AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                         OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0)),
        updated_at = now()
  RETURNING * INTO now_set;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta, rho, zcdp_delta)
  VALUES ('set_budget_zcdp', role, name_of_role, session_user, current_user, 0, 0, rho, delta);
  IF before.budget_kind = 'zcdp'
     AND (now_set.rho_total < before.rho_total
          OR now_set.zcdp_delta_total < before.zcdp_delta_total) THEN
    RAISE NOTICE 'this lowers the zCDP budget of role "%": rho total % (was %), delta total % (was %)',
      name_of_role, now_set.rho_total, before.rho_total, now_set.zcdp_delta_total,
      before.zcdp_delta_total;
  END IF;
  IF now_set.rho_spent > now_set.rho_total OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total
     OR (now_set.epsilon_delta_binding AND (now_set.epsilon_spent > now_set.epsilon_total
                                            OR now_set.delta_spent > now_set.delta_total))
  THEN
    IF now_set.rho_spent > now_set.rho_total OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total
    THEN
      RAISE NOTICE 'role "%" has already spent more than the new total (rho % of %, delta % of %): its remaining budget is 0',
        name_of_role, now_set.rho_spent, now_set.rho_total, now_set.zcdp_delta_spent,
        now_set.zcdp_delta_total;
    ELSE
      -- Only the earlier (epsilon, delta) certificate, which still binds, is
      -- exceeded.
      RAISE NOTICE 'role "%" has already spent more than its earlier (epsilon, delta) budget, which still binds (epsilon % of %, delta % of %): its remaining budget is 0 until dp_agg.reset_spent',
        name_of_role, now_set.epsilon_spent, now_set.epsilon_total, now_set.delta_spent,
        now_set.delta_total;
    END IF;
  END IF;
END $$;

CREATE OR REPLACE VIEW dp_agg.budgets WITH (security_barrier) AS
  SELECT coalesce(r.rolname, b.role_name) AS role,
         CASE WHEN c.epsilon_delta_binds THEN b.epsilon_total END AS epsilon_total,
         b.epsilon_spent,
         least(CASE WHEN c.epsilon_delta_binds
                    THEN greatest(b.epsilon_total - b.epsilon_spent, 0) END,
               CASE WHEN c.zcdp_binds
                    THEN dp_agg.zcdp_pure_epsilon(greatest(b.rho_total - b.rho_spent, 0))
               END) AS epsilon_remaining,
         CASE WHEN c.epsilon_delta_binds THEN b.delta_total END AS delta_total,
         b.delta_spent,
         least(CASE WHEN c.epsilon_delta_binds
                    THEN greatest(b.delta_total - b.delta_spent, 0) END,
               CASE WHEN c.zcdp_binds
                    THEN greatest(b.zcdp_delta_total - b.zcdp_delta_spent, 0) END)
           AS delta_remaining,
         b.updated_at, r.oid IS NULL AND NOT o.orphaned AS role_dropped, b.budget_kind,
         b.rho_total, b.rho_spent,
         CASE WHEN c.epsilon_delta_binds AND g.gaussian_rho IS NULL THEN NULL
              ELSE least(g.gaussian_rho, CASE WHEN c.zcdp_binds
                                              THEN greatest(b.rho_total - b.rho_spent, 0) END)
         END AS rho_remaining,
         b.zcdp_delta_total, b.zcdp_delta_spent,
         -- NULL when what was spent already exceeds the current kind's
         -- totals (a total lowered, or a kind switched, below the spending):
         -- those totals then certify nothing about the history.
         CASE WHEN c.over_totals THEN NULL
              WHEN b.budget_kind = 'zcdp'
              THEN dp_agg.zcdp_epsilon(b.rho_total::float8, 1e-6)::numeric
              ELSE b.epsilon_total END AS guarantee_epsilon,
         CASE WHEN c.over_totals THEN NULL
              WHEN b.budget_kind = 'zcdp' THEN b.zcdp_delta_total + 0.000001
              ELSE b.delta_total END AS guarantee_delta,
         c.binding_certificates, o.orphaned
  FROM dp_agg.role_budget b
  CROSS JOIN LATERAL (SELECT b.system_identifier <> dp_agg.system_identifier() AS orphaned) o
  LEFT JOIN pg_catalog.pg_roles r ON r.oid = b.role_oid AND NOT o.orphaned
  CROSS JOIN LATERAL (
    SELECT b.budget_kind = 'epsilon_delta' OR b.epsilon_delta_binding AS epsilon_delta_binds,
           b.budget_kind = 'zcdp' OR b.zcdp_binding AS zcdp_binds,
           array_remove(ARRAY[b.budget_kind,
                              CASE WHEN b.epsilon_delta_binding THEN 'epsilon_delta' END,
                              CASE WHEN b.zcdp_binding THEN 'zcdp' END], NULL)
             AS binding_certificates,
           CASE WHEN b.budget_kind = 'zcdp'
                THEN b.rho_spent > b.rho_total OR b.zcdp_delta_spent > b.zcdp_delta_total
                ELSE b.epsilon_spent > b.epsilon_total OR b.delta_spent > b.delta_total
           END AS over_totals) c
  -- least(..., 1e300): an epsilon total summed by add_budget may exceed
  -- float8; every epsilon that large has no Gaussian count (NULL) anyway.
  CROSS JOIN LATERAL (
    SELECT CASE WHEN c.epsilon_delta_binds
                THEN dp_agg.gaussian_count_rho(
                       least(greatest(b.epsilon_total - b.epsilon_spent, 0), 1e300),
                       greatest(b.delta_total - b.delta_spent, 0)) END AS gaussian_rho) g
  WHERE (b.role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s WHERE s.rolname = session_user)
         AND NOT o.orphaned)
     OR dp_agg.is_admin();
CREATE OR REPLACE VIEW dp_agg.ledger WITH (security_barrier) AS
  SELECT e.id, e.recorded_at, e.kind, e.role_name AS role, e.session_user_name,
         e.current_user_name, e.epsilon, e.delta, e.query_id, e.aggregates, e.query, e.rho,
         e.zcdp_delta
  FROM dp_agg.ledger_entry e
  WHERE (e.role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s WHERE s.rolname = session_user)
         AND e.system_identifier = dp_agg.system_identifier())
     OR (e.role_oid::text || '@' || e.system_identifier) = ANY (
          SELECT unnest(b.reattached_from) FROM dp_agg.role_budget b
          WHERE b.role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s
                              WHERE s.rolname = session_user)
            AND b.system_identifier = dp_agg.system_identifier())
     OR dp_agg.is_admin();
CREATE OR REPLACE FUNCTION dp_agg.remaining_budget(OUT epsilon numeric, OUT delta numeric,
                                        OUT rho numeric, OUT budget_kind text,
                                        OUT binding_certificates text[])
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT v.epsilon_remaining, v.delta_remaining, v.rho_remaining, v.budget_kind,
         v.binding_certificates
  FROM dp_agg.budgets v
  WHERE v.role = session_user AND NOT v.role_dropped AND NOT v.orphaned
$$;

CREATE FUNCTION dp_agg.attach_orphan(previous_role_oid oid, previous_system_identifier bigint,
                                     role oid)
RETURNS void LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  orphan dp_agg.role_budget;
BEGIN
  SELECT * INTO orphan FROM dp_agg.role_budget b
  WHERE b.role_oid = previous_role_oid AND b.system_identifier = previous_system_identifier;
  UPDATE dp_agg.role_budget b
     SET role_oid = role, system_identifier = dp_agg.system_identifier(),
         role_name = name_of_role,
         reattached_from = b.reattached_from
                           || (previous_role_oid::text || '@' || previous_system_identifier),
         updated_at = now()
   WHERE b.role_oid = previous_role_oid AND b.system_identifier = previous_system_identifier;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta, rho, zcdp_delta, query)
  VALUES ('reattach_budget', role, name_of_role, session_user, current_user,
          orphan.epsilon_spent, orphan.delta_spent, orphan.rho_spent, orphan.zcdp_delta_spent,
          format('re-attached the budget restored from role %I (OID %s in the cluster with system identifier %s): %s budget, epsilon %s of %s and delta %s of %s spent',
                 orphan.role_name, previous_role_oid, previous_system_identifier,
                 orphan.budget_kind, orphan.epsilon_spent, orphan.epsilon_total,
                 orphan.delta_spent, orphan.delta_total));
END $$;

-- Re-attaches every orphaned budget whose recorded name is a role of this
-- cluster, unless that is ambiguous: returns one row per orphaned budget with
-- what was done and, where nothing was, why and what to do.
CREATE FUNCTION dp_agg.reattach_budgets(OUT role name, OUT previous_role_oid oid,
                                        OUT previous_system_identifier bigint,
                                        OUT epsilon_spent numeric, OUT delta_spent numeric,
                                        OUT reattached boolean, OUT outcome text)
RETURNS SETOF record LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  here bigint := dp_agg.system_identifier();
  orphan dp_agg.role_budget;
  target oid;
  same_name bigint;
  disagreement text;
BEGIN
  PERFORM dp_agg.require_admin('re-attach privacy budgets');
  -- No charge, set_budget or other re-attachment in between (the ledger
  -- writer does not wait for this lock: it retries).
  LOCK TABLE dp_agg.role_budget IN SHARE ROW EXCLUSIVE MODE;
  FOR orphan IN SELECT * FROM dp_agg.role_budget b WHERE b.system_identifier <> here
                ORDER BY b.role_name, b.updated_at LOOP
    role := orphan.role_name;
    previous_role_oid := orphan.role_oid;
    previous_system_identifier := orphan.system_identifier;
    epsilon_spent := orphan.epsilon_spent;
    delta_spent := orphan.delta_spent;
    reattached := false;
    target := (SELECT r.oid FROM pg_roles r WHERE r.rolname = orphan.role_name);
    same_name := (SELECT count(*) FROM dp_agg.role_budget b
                  WHERE b.system_identifier <> here AND b.role_name = orphan.role_name);
    disagreement := dp_agg.restored_budget_disagreement(orphan);
    IF disagreement IS NOT NULL THEN
      outcome := format('not re-attached: its ledger rows do not vouch for it: %s. SELECT * FROM dp_agg.verify_ledger() shows what differs; restore the budget with its ledger rows from the dump.',
                        disagreement);
    ELSIF target IS NULL THEN
      outcome := format('not re-attached: no role is named %I here. Create it (or rename the role that spent this budget to %I) and run dp_agg.reattach_budgets() again, or attach it to a role of another name with dp_agg.reattach_budget(role, %s, %s).',
                        orphan.role_name, orphan.role_name, orphan.role_oid,
                        orphan.system_identifier);
    ELSIF same_name > 1 THEN
      outcome := format('not re-attached: %s restored budgets carry the name %I (one may be that of a role dropped before the dump, kept for the audit). Compare them in dp_agg.budgets and dp_agg.ledger, then attach the right one with dp_agg.reattach_budget(%L, previous_role_oid, previous_system_identifier).',
                        same_name, orphan.role_name, orphan.role_name);
    ELSIF EXISTS (SELECT 1 FROM dp_agg.role_budget b
                  WHERE b.role_oid = target AND b.system_identifier = here) THEN
      outcome := format('not re-attached: role %I already has a budget in this cluster. If it recorded nothing that must be kept, remove it with dp_agg.revoke_budget(%L) and run dp_agg.reattach_budgets() again.',
                        orphan.role_name, orphan.role_name);
    ELSE
      PERFORM dp_agg.attach_orphan(orphan.role_oid, orphan.system_identifier, target);
      reattached := true;
      outcome := format('re-attached to role %I (OID %s)', orphan.role_name, target);
    END IF;
    RETURN NEXT;
  END LOOP;
END $$;

-- Re-attaches one orphaned budget, chosen by the role OID (and, if several
-- clusters' rows have it, the system identifier) it had where it was
-- written, to `role`, whatever name it was recorded under.
CREATE FUNCTION dp_agg.reattach_budget(role regrole, previous_role_oid oid,
                                       previous_system_identifier bigint DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  here bigint := dp_agg.system_identifier();
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  candidates bigint;
  orphan dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('re-attach privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  LOCK TABLE dp_agg.role_budget IN SHARE ROW EXCLUSIVE MODE;
  candidates := (SELECT count(*) FROM dp_agg.role_budget b
                 WHERE b.system_identifier <> here AND b.role_oid = previous_role_oid
                   AND b.system_identifier = coalesce(reattach_budget.previous_system_identifier,
                                                      b.system_identifier));
  IF candidates = 0 THEN
    RAISE EXCEPTION 'no restored budget of role OID % is waiting to be re-attached',
      previous_role_oid
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'SELECT role, previous_role_oid, previous_system_identifier FROM dp_agg.reattach_budgets() lists them (and re-attaches the unambiguous ones); dp_agg.budgets shows them with orphaned = true.';
  ELSIF candidates > 1 THEN
    RAISE EXCEPTION 'restored budgets of role OID % from % clusters are waiting to be re-attached',
      previous_role_oid, candidates
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Name the cluster: dp_agg.reattach_budget(role, previous_role_oid, previous_system_identifier).';
  END IF;
  IF EXISTS (SELECT 1 FROM dp_agg.role_budget b
             WHERE b.role_oid = role AND b.system_identifier = here) THEN
    RAISE EXCEPTION 'role "%" already has a privacy budget in this cluster', name_of_role
      USING ERRCODE = 'ZP004',
            HINT = format('If it recorded nothing that must be kept, remove it with dp_agg.revoke_budget(%L) first.', name_of_role);
  END IF;
  SELECT * INTO orphan FROM dp_agg.role_budget b
  WHERE b.system_identifier <> here AND b.role_oid = previous_role_oid
    AND b.system_identifier = coalesce(reattach_budget.previous_system_identifier,
                                       b.system_identifier);
  PERFORM dp_agg.attach_orphan(orphan.role_oid, orphan.system_identifier, role);
END $$;

COMMENT ON FUNCTION dp_agg.attach_orphan(oid, bigint, oid) IS
  'Attaches one orphaned budget to a role and records a reattach_budget ledger row (internal)';
COMMENT ON FUNCTION dp_agg.reattach_budgets() IS
  'reattach_budgets(): re-attaches every budget restored from another cluster to the role of its recorded name where that is unambiguous, and says for each what was done or why not (administrators; leaves a ledger row per re-attachment)';
COMMENT ON FUNCTION dp_agg.reattach_budget(regrole, oid, bigint) IS
  'reattach_budget(role, previous_role_oid[, previous_system_identifier]): re-attaches one budget restored from another cluster to a role of the administrator''s choice (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.system_identifier() IS
  'The system identifier of this cluster (as pg_control_system() shows it), recorded with every budget and ledger row: role OIDs mean something only in the cluster that assigned them';
COMMENT ON FUNCTION dp_agg.refuse_beside_orphan(oid, name) IS
  'Raises ZP004 when a role without a budget here has a budget restored from another cluster under its name, not yet re-attached (internal)';

-- ---- The release cache (issue 27, item 3; src/sql/45_release_cache.sql):
-- the same question asked again by the same role in the same period reuses
-- the rows released for it, free; each reuse is a ledger row of kind
-- 'reused'.
ALTER TABLE dp_agg.ledger_entry DROP CONSTRAINT ledger_entry_kind_check;
ALTER TABLE dp_agg.ledger_entry ADD CONSTRAINT ledger_entry_kind_check
  CHECK (kind IN ('charge', 'set_budget', 'add_budget', 'reset_spent', 'revoke_budget',
                  'set_budget_zcdp', 'reused', 'reattach_budget'));
COMMENT ON TABLE dp_agg.ledger_entry IS
  'The privacy ledger: one row per charge, per reuse of a stored release and per budget change, never updated or deleted by dp_agg; read it through dp_agg.ledger';

-- Applied by the ledger writer (never by users): records that the role was
-- served a stored release. Admitted whenever the role has a budget, even an
-- exhausted one (nothing new is released); a role without any budget is
-- refused, as its charge would be.
CREATE FUNCTION dp_agg.apply_reuse(role_oid oid, role name, session_role name, query_id bigint,
                                   aggregates text, query text, OUT status text)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM dp_agg.role_budget b
                 WHERE b.role_oid = apply_reuse.role_oid
                   AND b.system_identifier = dp_agg.system_identifier()) THEN
    status := 'no_budget';
    RETURN;
  END IF;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta, query_id, aggregates,
                                   query, rho, zcdp_delta)
  VALUES ('reused', apply_reuse.role_oid, role, role, session_role, 0, 0, apply_reuse.query_id,
          apply_reuse.aggregates, left(apply_reuse.query, 1000), 0, 0);
  status := 'reused';
END $$;

-- The stored releases of this database whose period is the current one:
-- administrators see every role's, everyone else their own (decided by the
-- session user, as for dp_agg.ledger).
CREATE FUNCTION dp_agg.release_cache_entries(OUT role_oid oid, OUT current_user_oid oid,
                                             OUT query text, OUT period_start timestamptz,
                                             OUT period_end timestamptz,
                                             OUT stored_at timestamptz, OUT rows bigint,
                                             OUT bytes bigint, OUT times_reused bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dp_agg_release_cache_entries' LANGUAGE C VOLATILE STRICT;

CREATE VIEW dp_agg.release_cache AS
  SELECT coalesce(r.rolname::text, e.role_oid::text) AS role,
         pg_catalog.current_database() AS database,
         coalesce(u.rolname::text, e.current_user_oid::text) AS current_user_name,
         e.query, e.period_start, e.period_end, e.stored_at, e.rows, e.bytes, e.times_reused
  FROM dp_agg.release_cache_entries() e
  LEFT JOIN pg_catalog.pg_roles r ON r.oid = e.role_oid
  LEFT JOIN pg_catalog.pg_roles u ON u.oid = e.current_user_oid;

-- Removes the stored releases of this database (of one role, or of every
-- role): the next time each question is asked it is released again, and
-- charged (administrators; checks dp_agg.is_admin() itself). Returns how
-- many were removed.
CREATE FUNCTION dp_agg.clear_release_cache(role regrole DEFAULT NULL) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_agg_clear_release_cache' LANGUAGE C VOLATILE;

COMMENT ON FUNCTION dp_agg.apply_reuse(oid, name, name, bigint, text, text) IS
  'Records one reuse of a stored release in the ledger (kind reused, epsilon 0) for a role with a budget (called by the ledger writer only)';
COMMENT ON FUNCTION dp_agg.release_cache_entries() IS
  'The stored releases of this database in their current period: every role''s for administrators, the session user''s own for everyone else (read them through dp_agg.release_cache)';
COMMENT ON VIEW dp_agg.release_cache IS
  'Stored releases that the same question reuses until the end of their period: administrators see every role''s, everyone else their own';
COMMENT ON FUNCTION dp_agg.clear_release_cache(regrole) IS
  'clear_release_cache([role]): removes the stored releases of this database, of one role or of all, so that those questions are released (and charged) again (administrators)';


-- ---- A tamper-evident ledger (issue 28, finding 3; README "A tamper-evident
-- ledger"), as in src/sql/46_ledger_integrity.sql: ledger rows get seq,
-- budget_digest and entry_hash (the new last columns, as in a fresh
-- install); the rows written so far are chained in the order of their ids
-- (without a budget digest, which they never recorded); dp_agg.ledger_head
-- keeps the head; every ledger write goes through dp_agg.append_ledger_entry
-- (the functions that wrote rows are replaced, as in src/sql/40, 42 and 45);
-- triggers refuse UPDATE, DELETE and TRUNCATE; dp_agg.verify_ledger() checks
-- it all; the database is labelled as holding a ledger (DROP DATABASE
-- guard).
ALTER TABLE dp_agg.ledger_entry ADD COLUMN seq bigint;
ALTER TABLE dp_agg.ledger_entry ADD COLUMN budget_digest bytea;
ALTER TABLE dp_agg.ledger_entry ADD COLUMN entry_hash bytea;
-- The chain head: the seq and entry_hash of the last chained entry (seq 0,
-- no hash, before the first). No row until the first entry, so that a dump
-- restored into a fresh installation brings its own.
CREATE TABLE dp_agg.ledger_head (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  seq bigint NOT NULL CHECK (seq >= 0),
  entry_hash bytea,
  CONSTRAINT ledger_head_hash CHECK ((seq = 0) = (entry_hash IS NULL))
);
SELECT pg_catalog.pg_extension_config_dump('dp_agg.ledger_head', '');

-- SHA-256 of an entry's canonical record and of the previous entry's hash
-- (NULL for the first entry), and of a budget row's canonical record
-- (src/pg/ledger_chain.cpp).
CREATE FUNCTION dp_agg.ledger_entry_hash(previous bytea, entry dp_agg.ledger_entry)
  RETURNS bytea AS 'MODULE_PATHNAME', 'dp_agg_ledger_entry_hash'
  LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dp_agg.budget_digest(budget dp_agg.role_budget)
  RETURNS bytea AS 'MODULE_PATHNAME', 'dp_agg_budget_digest'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- SECURITY LABEL FOR dp_agg ON DATABASE <this one> IS 'ledger', which guards
-- DROP DATABASE (src/pg/drop_guard.h).
CREATE FUNCTION dp_agg.mark_ledger_database() RETURNS void
  AS 'MODULE_PATHNAME', 'dp_agg_mark_ledger_database' LANGUAGE C VOLATILE;

-- The rows written so far, chained in the order of their ids. The last row
-- of each budget records the budget as the upgrade leaves it (its digest),
-- so that a total changed by hand after the upgrade is reported like any
-- other (review 28: without a recorded digest, only the spent amounts of a
-- budget untouched since the upgrade were checked).
UPDATE dp_agg.ledger_entry e SET budget_digest = dp_agg.budget_digest(b)
FROM dp_agg.role_budget b,
     (SELECT DISTINCT ON (l.role_oid, l.system_identifier) l.id
      FROM dp_agg.ledger_entry l WHERE l.role_oid IS NOT NULL
      ORDER BY l.role_oid, l.system_identifier, l.id DESC) last
WHERE e.id = last.id AND e.kind <> 'revoke_budget'
  AND b.role_oid = e.role_oid AND b.system_identifier = e.system_identifier;
DO $$
DECLARE
  entry dp_agg.ledger_entry;
  previous bytea := NULL;
  chained bigint := 0;
BEGIN
  FOR entry IN SELECT * FROM dp_agg.ledger_entry ORDER BY id LOOP
    chained := chained + 1;
    entry.seq := chained;
    entry.entry_hash := dp_agg.ledger_entry_hash(previous, entry);
    UPDATE dp_agg.ledger_entry e SET seq = entry.seq, entry_hash = entry.entry_hash
     WHERE e.id = entry.id;
    previous := entry.entry_hash;
  END LOOP;
  IF chained > 0 THEN
    INSERT INTO dp_agg.ledger_head (seq, entry_hash) VALUES (chained, previous);
  END IF;
END $$;
ALTER TABLE dp_agg.ledger_entry ADD CONSTRAINT ledger_entry_seq_key UNIQUE (seq);
ALTER TABLE dp_agg.ledger_entry ADD CONSTRAINT ledger_entry_chained
  CHECK ((seq IS NULL) = (entry_hash IS NULL) AND seq >= 1);

-- Appends one entry: every write of the ledger goes through here
-- (src/pg/ledger_chain.cpp). `budget` is the role's budget row right after
-- the change (NULL when it has none); its digest is recorded with the
-- entry. The entry gets the next id and recorded_at = now(). The ledger
-- writer's charges are chained at once (chain_now): under the head's row
-- lock the entry gets the next seq and its hash, and the head advances. An
-- administrator's changes are appended without seq and hash and chained when
-- their transaction commits (the deferred trigger below), so that an open
-- administrative transaction never holds the chain head, which every charge
-- of the database needs. system_identifier: the cluster whose role OID
-- role_oid is (NULL: this one).
CREATE FUNCTION dp_agg.append_ledger_entry(kind text, role_oid oid, role_name name,
                                           session_user_name name, current_user_name name,
                                           epsilon numeric, delta numeric, rho numeric,
                                           zcdp_delta numeric, budget dp_agg.role_budget,
                                           chain_now boolean, query_id bigint DEFAULT NULL,
                                           aggregates text DEFAULT NULL, query text DEFAULT NULL,
                                           system_identifier bigint DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dp_agg_append_ledger_entry' LANGUAGE C VOLATILE;

-- At commit: chains the rows this transaction's administrative functions
-- appended. A row without seq that they did not append was inserted outside
-- dp_agg's functions: the commit is refused. SECURITY DEFINER: it runs as
-- whoever commits (an administrator need not be a superuser). Its search
-- path is pinned like every SECURITY DEFINER function's: it runs at commit,
-- outside the administrative function that appended the row, where the
-- committing session's search_path would otherwise resolve the chain's
-- operators (review 28: an administrator's own `=` ran as superuser).
CREATE FUNCTION dp_agg.chain_deferred_entry() RETURNS trigger
  AS 'MODULE_PATHNAME', 'dp_agg_chain_deferred_entry' LANGUAGE C VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp;

-- UPDATE of a ledger row: only the chaining of a row appended in this
-- transaction (seq and entry_hash set once); of the head: only its advance
-- with an entry, by dp_agg's own code. DELETE and TRUNCATE of either table:
-- never.
CREATE FUNCTION dp_agg.guard_ledger_entry() RETURNS trigger
  AS 'MODULE_PATHNAME', 'dp_agg_guard_ledger_entry' LANGUAGE C VOLATILE;
CREATE FUNCTION dp_agg.guard_ledger_head() RETURNS trigger
  AS 'MODULE_PATHNAME', 'dp_agg_guard_ledger_head' LANGUAGE C VOLATILE;
CREATE FUNCTION dp_agg.refuse_ledger_removal() RETURNS trigger
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RAISE EXCEPTION 'the privacy ledger is append-only'
    USING ERRCODE = 'ZP006',
          DETAIL = format('%s of dp_agg.%s is refused: ledger rows are never removed.', TG_OP,
                          TG_TABLE_NAME),
          HINT = 'dp_agg.verify_ledger() checks the ledger. To remove it with its database or extension, see README "Removing dp_agg".';
END $$;

CREATE CONSTRAINT TRIGGER ledger_entry_chain_at_commit AFTER INSERT ON dp_agg.ledger_entry
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.seq IS NULL)
  EXECUTE FUNCTION dp_agg.chain_deferred_entry();
CREATE TRIGGER ledger_entry_append_only BEFORE UPDATE ON dp_agg.ledger_entry
  FOR EACH ROW EXECUTE FUNCTION dp_agg.guard_ledger_entry();
CREATE TRIGGER ledger_entry_no_removal BEFORE DELETE OR TRUNCATE ON dp_agg.ledger_entry
  FOR EACH STATEMENT EXECUTE FUNCTION dp_agg.refuse_ledger_removal();
CREATE TRIGGER ledger_head_advance_only BEFORE UPDATE ON dp_agg.ledger_head
  FOR EACH ROW EXECUTE FUNCTION dp_agg.guard_ledger_head();
CREATE TRIGGER ledger_head_no_removal BEFORE DELETE OR TRUNCATE ON dp_agg.ledger_head
  FOR EACH STATEMENT EXECUTE FUNCTION dp_agg.refuse_ledger_removal();
-- Also with session_replication_role = replica (which skips ordinary triggers).
ALTER TABLE dp_agg.ledger_entry ENABLE ALWAYS TRIGGER ledger_entry_chain_at_commit;
ALTER TABLE dp_agg.ledger_entry ENABLE ALWAYS TRIGGER ledger_entry_append_only;
ALTER TABLE dp_agg.ledger_entry ENABLE ALWAYS TRIGGER ledger_entry_no_removal;
ALTER TABLE dp_agg.ledger_head ENABLE ALWAYS TRIGGER ledger_head_advance_only;
ALTER TABLE dp_agg.ledger_head ENABLE ALWAYS TRIGGER ledger_head_no_removal;

-- A budget changes only from the state its ledger recorded: BEFORE UPDATE
-- of a budget row, refuses (ZP006) if the row is not the one its last ledger
-- entry recorded (changed outside dp_agg's functions), or if no ledger row
-- of its role exists at all (created outside them); else the next charge or
-- administrative change would record the changed row as the budget's new
-- state and verify_ledger would no longer see the change (review 28,
-- src/pg/budget_guard.cpp). The index finds a budget's last record.
CREATE INDEX ledger_entry_budget_records
  ON dp_agg.ledger_entry (role_oid, system_identifier, id);
CREATE FUNCTION dp_agg.guard_budget_record() RETURNS trigger
  AS 'MODULE_PATHNAME', 'dp_agg_guard_budget_record' LANGUAGE C VOLATILE;
CREATE TRIGGER role_budget_changes_recorded_state BEFORE UPDATE ON dp_agg.role_budget
  FOR EACH ROW EXECUTE FUNCTION dp_agg.guard_budget_record();
ALTER TABLE dp_agg.role_budget ENABLE ALWAYS TRIGGER role_budget_changes_recorded_state;


-- What the ledger says the budget of one key ('role OID@system identifier',
-- as in role_budget.reattached_from) had spent before entry before_seq: the
-- amounts of its last reset_spent, renewal or revoke_budget (nothing) or
-- reattach_budget (what that recorded, itself checked by verify_ledger)
-- before it, plus its charges since (0.1.0's, without zCDP amounts, as the
-- upgrade counted them). entries: how many ledger rows the key has before
-- before_seq; recorded_digest: the budget digest of the last one that
-- recorded one (NULL if none did). Re-attachment and verify_ledger check a
-- restored budget against this, so that a budget changed before it was
-- re-attached cannot pass for what it recorded (review 28).
CREATE FUNCTION dp_agg.ledger_spent(entry_key text, before_seq bigint,
                                    OUT entries bigint, OUT epsilon numeric, OUT delta numeric,
                                    OUT rho numeric, OUT zcdp_delta numeric,
                                    OUT recorded_digest bytea)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  WITH keyed AS (
    SELECT e.seq, e.kind, e.epsilon, e.delta, e.rho, e.zcdp_delta, e.budget_digest
    FROM dp_agg.ledger_entry e
    WHERE e.role_oid = split_part(entry_key, '@', 1)::oid
      AND e.system_identifier = split_part(entry_key, '@', 2)::bigint AND e.seq < before_seq),
  checkpoint AS (
    SELECT k.seq,
           CASE WHEN k.kind = 'reattach_budget' THEN k.epsilon ELSE 0 END AS epsilon,
           CASE WHEN k.kind = 'reattach_budget' THEN k.delta ELSE 0 END AS delta,
           CASE WHEN k.kind = 'reattach_budget' THEN k.rho ELSE 0 END AS rho,
           CASE WHEN k.kind = 'reattach_budget' THEN k.zcdp_delta ELSE 0 END AS zcdp_delta
    FROM keyed k WHERE k.kind IN ('reset_spent', 'revoke_budget', 'reattach_budget', 'renewal')
    ORDER BY k.seq DESC LIMIT 1),
  charges AS (
    SELECT coalesce(sum(k.epsilon), 0) AS epsilon, coalesce(sum(k.delta), 0) AS delta,
           coalesce(sum(k.epsilon) FILTER (WHERE k.rho IS NULL), 0) AS old_epsilon,
           coalesce(sum(k.rho), 0) AS rho,
           coalesce(sum(k.delta) FILTER (WHERE k.rho IS NULL), 0)
             + coalesce(sum(k.zcdp_delta), 0) AS zcdp_delta
    FROM keyed k
    WHERE k.kind = 'charge' AND k.seq > coalesce((SELECT z.seq FROM checkpoint z), 0))
  SELECT (SELECT count(*) FROM keyed),
         coalesce((SELECT z.epsilon FROM checkpoint z), 0) + c.epsilon,
         coalesce((SELECT z.delta FROM checkpoint z), 0) + c.delta,
         coalesce((SELECT z.rho FROM checkpoint z), 0) + c.old_epsilon * c.old_epsilon * 0.5
           + c.rho,
         coalesce((SELECT z.zcdp_delta FROM checkpoint z), 0) + c.zcdp_delta,
         (SELECT k.budget_digest FROM keyed k WHERE k.budget_digest IS NOT NULL
          ORDER BY k.seq DESC LIMIT 1)
  FROM charges c
$$;

-- The key ('role OID@system identifier') of the budget that a
-- reattach_budget entry re-attached, read from its query text (written by
-- dp_agg.attach_orphan: keep the two in step); NULL if it names none.
CREATE FUNCTION dp_agg.reattached_key(query text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT m[1] || '@' || m[2]
  FROM regexp_match(query, '^re-attached the budget restored from role .* \(OID ([0-9]+) in the cluster with system identifier (-?[0-9]+)\): [a-z_]+ budget, epsilon [^ ]+ of [^ ]+ and delta [^ ]+ of [^ ]+ spent$') m
$$;

-- Why the restored budget `orphan` may not be re-attached, or NULL: it must
-- be the budget its own ledger rows (restored with it) recorded last, and
-- have spent what they charged. A row changed after the dump, or created
-- outside dp_agg's functions, would otherwise become a role's budget with a
-- clean ledger entry (review 28).
CREATE FUNCTION dp_agg.restored_budget_disagreement(orphan dp_agg.role_budget) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  spent record;
BEGIN
  SELECT * INTO spent
  FROM dp_agg.ledger_spent(orphan.role_oid::text || '@' || orphan.system_identifier,
                           9223372036854775807);
  IF spent.entries = 0 THEN
    RETURN 'no ledger row of it was restored with it (it was created outside dp_agg''s functions, or its ledger was not restored)';
  ELSIF spent.recorded_digest IS NOT NULL
        AND spent.recorded_digest <> dp_agg.budget_digest(orphan) THEN
    RETURN 'it is not the budget its last ledger row recorded (it was changed outside dp_agg''s functions)';
  ELSIF orphan.epsilon_spent <> spent.epsilon OR orphan.delta_spent <> spent.delta
        OR orphan.rho_spent <> spent.rho OR orphan.zcdp_delta_spent <> spent.zcdp_delta THEN
    RETURN format('it has spent epsilon %s, delta %s, rho %s, zCDP delta %s, but its ledger rows charged epsilon %s, delta %s, rho %s, zCDP delta %s',
                  orphan.epsilon_spent, orphan.delta_spent, orphan.rho_spent,
                  orphan.zcdp_delta_spent, spent.epsilon, spent.delta, spent.rho,
                  spent.zcdp_delta);
  END IF;
  RETURN NULL;
END $$;

-- Checks the whole ledger (administrators): ok is true when
--  - every row is chained (seq, entry_hash), seq runs 1, 2, ... without gap or
--    repeat up to the head's seq, the last hash is the head's, and every
--    entry_hash is that of its row and of the row before it;
--  - every budget row (keyed by role OID and cluster; the rows of the
--    budgets re-attached to it are its rows) is the one recorded
--    (budget_digest) with its last ledger entry, every role whose last entry
--    is not a revoke_budget has one, and its spent amounts are the sums of
--    its charges since its last reset_spent or revoke_budget, or since its
--    last reattach_budget plus what that recorded (0.1.0's charges, which
--    carry no zCDP amounts, count as the upgrade counted them: rho
--    epsilon^2 / 2 of their epsilon sum, zCDP delta their delta);
--  - every budget restored from another cluster that is gone was
--    re-attached, and every reattach_budget entry names the restored budget
--    and records what that budget's own ledger rows charged;
--  - no charge has a negative amount;
--  - given an anchor (a seq and hash from the server log's "dp_agg ledger
--    head" lines, or a copy kept elsewhere), the entry of that seq has that
--    hash.
-- problems says what is wrong (at most 100 lines); first_bad_entry is the
-- lowest seq concerned. head_seq and head_hash are the head now: keep them
-- outside the database to anchor a later check.
CREATE FUNCTION dp_agg.verify_ledger(anchor_seq bigint DEFAULT NULL,
                                     anchor_hash text DEFAULT NULL,
                                     OUT ok boolean, OUT entries bigint, OUT head_seq bigint,
                                     OUT head_hash text, OUT first_bad_entry bigint,
                                     OUT problems text[])
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r record;
  head dp_agg.ledger_head;
  has_head boolean;
  last_seq bigint;
  last_hash bytea;
  found_count bigint := 0;
  max_problems constant int := 100;
BEGIN
  PERFORM dp_agg.require_admin('verify the privacy ledger');
  problems := ARRAY[]::text[];
  SELECT * INTO head FROM dp_agg.ledger_head;
  has_head := FOUND;
  head_seq := coalesce(head.seq, 0);
  head_hash := encode(head.entry_hash, 'hex');
  SELECT count(*) INTO entries FROM dp_agg.ledger_entry;

  -- 1. The chain, in seq order: rows without seq, gaps, repeats, hashes.
  FOR r IN
    SELECT format('ledger row id %s has no sequence number and hash: inserted outside dp_agg''s functions', e.id) AS problem,
           NULL::bigint AS seq
    FROM dp_agg.ledger_entry e WHERE e.seq IS NULL OR e.entry_hash IS NULL
    UNION ALL
    SELECT CASE
             WHEN c.previous_seq = c.seq THEN
               format('entry %s (id %s) repeats a sequence number: inserted outside dp_agg''s functions', c.seq, c.id)
             WHEN c.seq = coalesce(c.previous_seq, 0) + 2 THEN
               format('entry %s is missing: removed outside dp_agg''s functions', c.seq - 1)
             WHEN c.seq > coalesce(c.previous_seq, 0) + 2 THEN
               format('entries %s to %s are missing: removed outside dp_agg''s functions',
                      coalesce(c.previous_seq, 0) + 1, c.seq - 1)
             ELSE
               format('entry %s (id %s) does not match its hash: changed (or inserted) outside dp_agg''s functions', c.seq, c.id)
           END,
           -- (the first entry concerned: the first missing one of a gap)
           CASE WHEN c.seq > coalesce(c.previous_seq, 0) + 1 THEN coalesce(c.previous_seq, 0) + 1
                ELSE c.seq END
    FROM (SELECT e.seq, e.id, e.entry_hash,
                 lag(e.seq) OVER w AS previous_seq,
                 dp_agg.ledger_entry_hash(lag(e.entry_hash) OVER w, e) AS recomputed
          FROM dp_agg.ledger_entry e
          WHERE e.seq IS NOT NULL AND e.entry_hash IS NOT NULL
          WINDOW w AS (ORDER BY e.seq, e.id)) c
    WHERE c.seq <> coalesce(c.previous_seq, 0) + 1 OR c.recomputed <> c.entry_hash
    ORDER BY 2 NULLS FIRST
  LOOP
    found_count := found_count + 1;
    IF found_count <= max_problems THEN problems := problems || r.problem; END IF;
    first_bad_entry := least(first_bad_entry, r.seq);
  END LOOP;

  -- 2. The end of the chain against the head.
  SELECT e.seq, e.entry_hash INTO last_seq, last_hash
  FROM dp_agg.ledger_entry e WHERE e.seq IS NOT NULL ORDER BY e.seq DESC, e.id DESC LIMIT 1;
  last_seq := coalesce(last_seq, 0);
  IF NOT has_head AND last_seq > 0 THEN
    found_count := found_count + 1;
    problems := problems || 'the chain head (dp_agg.ledger_head) is missing: removed outside dp_agg''s functions'::text;
  ELSIF last_seq < head_seq THEN
    found_count := found_count + 1;
    problems := problems || format('%s missing at the end: the chain head says %s entries (the ledger was truncated, or its last rows removed, outside dp_agg''s functions)',
                                   CASE WHEN last_seq + 1 = head_seq
                                        THEN format('entry %s is', head_seq)
                                        ELSE format('entries %s to %s are', last_seq + 1, head_seq)
                                   END, head_seq);
    first_bad_entry := least(first_bad_entry, last_seq + 1);
  ELSIF last_seq > head_seq THEN
    found_count := found_count + 1;
    problems := problems || format('%s beyond the chain head (%s): inserted outside dp_agg''s functions, or the head set back',
                                   CASE WHEN last_seq = head_seq + 1
                                        THEN format('entry %s is', last_seq)
                                        ELSE format('entries %s to %s are', head_seq + 1, last_seq)
                                   END, head_seq);
    first_bad_entry := least(first_bad_entry, head_seq + 1);
  ELSIF last_seq > 0 AND last_hash IS DISTINCT FROM head.entry_hash THEN
    found_count := found_count + 1;
    problems := problems || format('the hash of entry %s differs from the chain head''s', last_seq);
    first_bad_entry := least(first_bad_entry, last_seq);
  END IF;

  -- 3. An anchor kept outside the database.
  IF anchor_seq IS NOT NULL OR anchor_hash IS NOT NULL THEN
    IF anchor_seq IS NULL OR anchor_hash IS NULL THEN
      RAISE EXCEPTION 'an anchor is a sequence number and a hash, both given'
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Use the entry number and hash of a "dp_agg ledger head" line of the server log.';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM dp_agg.ledger_entry e
                   WHERE e.seq = anchor_seq AND encode(e.entry_hash, 'hex') = lower(anchor_hash)) THEN
      found_count := found_count + 1;
      problems := problems || format('entry %s does not have the anchored hash %s: the chain was rewritten (or the entry removed) since the anchor was taken',
                                     anchor_seq, lower(anchor_hash));
      first_bad_entry := least(first_bad_entry, anchor_seq);
    END IF;
  END IF;

  -- 4. Budgets against the ledger.
  FOR r IN
    WITH budget_keys AS (
      -- A budget is keyed by role OID and cluster; the ledger rows of the
      -- budgets re-attached to it after a restore (42_budget_restores.sql)
      -- are its rows too.
      SELECT b.role_oid, b.system_identifier,
             b.role_oid::text || '@' || b.system_identifier AS entry_key
      FROM dp_agg.role_budget b
      UNION ALL
      SELECT b.role_oid, b.system_identifier, unnest(b.reattached_from)
      FROM dp_agg.role_budget b),
    entries AS (
      SELECT coalesce(k.role_oid, e.role_oid) AS owner_oid,
             coalesce(k.system_identifier, e.system_identifier) AS owner_cluster,
             e.seq, e.kind, e.role_name, e.budget_digest, e.epsilon, e.delta, e.rho,
             e.zcdp_delta
      FROM dp_agg.ledger_entry e
      LEFT JOIN budget_keys k ON k.entry_key = e.role_oid::text || '@' || e.system_identifier
      WHERE e.role_oid IS NOT NULL AND e.seq IS NOT NULL),
    last_entry AS (
      SELECT DISTINCT ON (owner_oid, owner_cluster) owner_oid, owner_cluster, seq, kind, role_name
      FROM entries ORDER BY owner_oid, owner_cluster, seq DESC),
    -- The last entry that recorded the budget after it: every entry since
    -- 0.2.0 but a revoke_budget (after which there is none) does; one
    -- without a digest is older, or forged (and then flagged by the chain).
    last_recorded AS (
      SELECT DISTINCT ON (owner_oid, owner_cluster) owner_oid, owner_cluster, seq, budget_digest
      FROM entries WHERE budget_digest IS NOT NULL
      ORDER BY owner_oid, owner_cluster, seq DESC),
    -- Where the spending now recorded starts: the last reset_spent (from
    -- nothing), revoke_budget (no budget, then a new one from nothing) or
    -- reattach_budget (from what the re-attached budget had spent).
    checkpoint AS (
      SELECT DISTINCT ON (owner_oid, owner_cluster) owner_oid, owner_cluster, seq,
             CASE WHEN kind = 'reattach_budget' THEN epsilon ELSE 0 END AS epsilon,
             CASE WHEN kind = 'reattach_budget' THEN delta ELSE 0 END AS delta,
             CASE WHEN kind = 'reattach_budget' THEN rho ELSE 0 END AS rho,
             CASE WHEN kind = 'reattach_budget' THEN zcdp_delta ELSE 0 END AS zcdp_delta
      FROM entries WHERE kind IN ('reset_spent', 'revoke_budget', 'reattach_budget')
      ORDER BY owner_oid, owner_cluster, seq DESC),
    charges AS (
      SELECT e.owner_oid, e.owner_cluster,
             sum(e.epsilon) AS epsilon,
             sum(e.delta) AS delta,
             coalesce(sum(e.epsilon) FILTER (WHERE e.rho IS NULL), 0) AS old_epsilon,
             coalesce(sum(e.rho), 0) AS rho,
             coalesce(sum(e.delta) FILTER (WHERE e.rho IS NULL), 0)
               + coalesce(sum(e.zcdp_delta), 0) AS zcdp_delta
      FROM entries e
      LEFT JOIN checkpoint z ON z.owner_oid = e.owner_oid AND z.owner_cluster = e.owner_cluster
      WHERE e.kind = 'charge' AND e.seq > coalesce(z.seq, 0)
      GROUP BY e.owner_oid, e.owner_cluster),
    -- The restored budgets that were re-attached (step 5 checks each).
    attached AS (
      SELECT DISTINCT dp_agg.reattached_key(e.query) AS entry_key
      FROM dp_agg.ledger_entry e WHERE e.kind = 'reattach_budget' AND e.seq IS NOT NULL)
    SELECT coalesce(b.role_oid, l.owner_oid) AS role_oid,
           coalesce(b.system_identifier, l.owner_cluster) AS cluster,
           coalesce(b.role_name, l.role_name) AS role_name,
           b.role_oid IS NOT NULL AS has_budget,
           CASE WHEN b.role_oid IS NOT NULL THEN dp_agg.budget_digest(b) END AS digest,
           b.epsilon_spent, b.delta_spent, b.rho_spent, b.zcdp_delta_spent,
           l.seq AS last_seq, l.kind AS last_kind, d.seq AS recorded_seq,
           d.budget_digest AS recorded_digest,
           coalesce(z.epsilon, 0) + coalesce(c.epsilon, 0) AS charged_epsilon,
           coalesce(z.delta, 0) + coalesce(c.delta, 0) AS charged_delta,
           coalesce(z.rho, 0) + coalesce(c.old_epsilon, 0) * coalesce(c.old_epsilon, 0) * 0.5
             + coalesce(c.rho, 0) AS charged_rho,
           coalesce(z.zcdp_delta, 0) + coalesce(c.zcdp_delta, 0) AS charged_zcdp_delta,
           EXISTS (SELECT 1 FROM attached a
                   WHERE a.entry_key = coalesce(b.role_oid, l.owner_oid)::text || '@'
                                       || coalesce(b.system_identifier, l.owner_cluster))
             AS reattached
    FROM dp_agg.role_budget b
    FULL JOIN last_entry l ON l.owner_oid = b.role_oid AND l.owner_cluster = b.system_identifier
    LEFT JOIN last_recorded d ON d.owner_oid = coalesce(b.role_oid, l.owner_oid)
                             AND d.owner_cluster = coalesce(b.system_identifier, l.owner_cluster)
    LEFT JOIN checkpoint z ON z.owner_oid = coalesce(b.role_oid, l.owner_oid)
                          AND z.owner_cluster = coalesce(b.system_identifier, l.owner_cluster)
    LEFT JOIN charges c ON c.owner_oid = coalesce(b.role_oid, l.owner_oid)
                       AND c.owner_cluster = coalesce(b.system_identifier, l.owner_cluster)
    ORDER BY 1, 2
  LOOP
    IF r.has_budget AND r.last_seq IS NULL THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) has no ledger entry: created outside dp_agg''s functions', r.role_name, r.role_oid);
      END IF;
      CONTINUE;
    END IF;
    IF NOT r.has_budget THEN
      -- (Rows of another cluster's role without a budget here belonged to a
      -- restored budget that was re-attached and later revoked: their
      -- re-attachment is not kept once that budget is gone. One that no
      -- reattach_budget entry names was removed while it waited.)
      IF r.last_kind <> 'revoke_budget' AND r.cluster = dp_agg.system_identifier() THEN
        found_count := found_count + 1;
        IF found_count <= max_problems THEN
          problems := problems || format('role "%s" (OID %s) has no budget, but its last ledger entry %s (%s) says it has one: removed outside dp_agg''s functions', r.role_name, r.role_oid, r.last_seq, r.last_kind);
        END IF;
      ELSIF r.last_kind <> 'revoke_budget' AND NOT r.reattached THEN
        found_count := found_count + 1;
        IF found_count <= max_problems THEN
          problems := problems || format('the budget restored for role "%s" (OID %s in the cluster with system identifier %s) is gone, but was never re-attached and its last ledger entry %s (%s) says it exists: removed outside dp_agg''s functions', r.role_name, r.role_oid, r.cluster, r.last_seq, r.last_kind);
        END IF;
      END IF;
      CONTINUE;
    END IF;
    IF r.last_kind = 'revoke_budget' THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) exists although its last ledger entry %s revoked it: created outside dp_agg''s functions', r.role_name, r.role_oid, r.last_seq);
      END IF;
    ELSIF r.recorded_digest IS NOT NULL AND r.recorded_digest <> r.digest THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) is not the one recorded with its ledger entry %s: changed outside dp_agg''s functions', r.role_name, r.role_oid, r.recorded_seq);
      END IF;
    END IF;
    IF r.epsilon_spent <> r.charged_epsilon OR r.delta_spent <> r.charged_delta
       OR r.rho_spent <> r.charged_rho OR r.zcdp_delta_spent <> r.charged_zcdp_delta THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) has spent epsilon %s, delta %s, rho %s, zCDP delta %s, but its charges since its last reset sum to epsilon %s, delta %s, rho %s, zCDP delta %s',
                                       r.role_name, r.role_oid, r.epsilon_spent, r.delta_spent,
                                       r.rho_spent, r.zcdp_delta_spent, r.charged_epsilon,
                                       r.charged_delta, r.charged_rho, r.charged_zcdp_delta);
      END IF;
    END IF;
  END LOOP;

  -- 5. Each re-attachment against the restored budget's own ledger rows: it
  --    names that budget, and records what they charged (its amounts start
  --    the new owner's sums: a budget changed before it was re-attached
  --    would otherwise pass).
  FOR r IN
    SELECT e.seq, e.role_name, e.epsilon, e.delta, e.rho, e.zcdp_delta, k.entry_key,
           s.entries AS key_entries, s.epsilon AS spent_epsilon, s.delta AS spent_delta,
           s.rho AS spent_rho, s.zcdp_delta AS spent_zcdp_delta
    FROM dp_agg.ledger_entry e
    CROSS JOIN LATERAL (SELECT dp_agg.reattached_key(e.query) AS entry_key) k
    LEFT JOIN LATERAL dp_agg.ledger_spent(k.entry_key, e.seq) s ON true
    WHERE e.kind = 'reattach_budget' AND e.seq IS NOT NULL
    ORDER BY e.seq
  LOOP
    IF r.entry_key IS NULL THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('entry %s re-attached a budget to role "%s" without naming it', r.seq, r.role_name);
      END IF;
      first_bad_entry := least(first_bad_entry, r.seq);
    ELSIF r.key_entries = 0 OR r.epsilon <> r.spent_epsilon OR r.delta <> r.spent_delta
          OR r.rho <> r.spent_rho OR r.zcdp_delta <> r.spent_zcdp_delta THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('entry %s re-attached to role "%s" the restored budget %s with epsilon %s, delta %s, rho %s, zCDP delta %s spent, but its ledger rows (%s) charged epsilon %s, delta %s, rho %s, zCDP delta %s: it was changed (or created) outside dp_agg''s functions before it was re-attached',
                                       r.seq, r.role_name, r.entry_key, r.epsilon, r.delta, r.rho,
                                       r.zcdp_delta, r.key_entries, r.spent_epsilon,
                                       r.spent_delta, r.spent_rho, r.spent_zcdp_delta);
      END IF;
      first_bad_entry := least(first_bad_entry, r.seq);
    END IF;
  END LOOP;

  -- 6. A charge never gives budget back: one with a negative amount was
  --    appended outside the ledger writer (review 28: with the budget's
  --    spending lowered to match, it passed every other check).
  FOR r IN
    SELECT e.seq, e.role_name, e.epsilon, e.delta, e.rho, e.zcdp_delta
    FROM dp_agg.ledger_entry e
    WHERE e.kind = 'charge' AND e.seq IS NOT NULL
      AND (e.epsilon < 0 OR e.delta < 0 OR e.rho < 0 OR e.zcdp_delta < 0)
    ORDER BY e.seq
  LOOP
    found_count := found_count + 1;
    IF found_count <= max_problems THEN
      problems := problems || format('entry %s charges role "%s" a negative amount (epsilon %s, delta %s, rho %s, zCDP delta %s): appended outside the ledger writer',
                                     r.seq, r.role_name, r.epsilon, r.delta, r.rho, r.zcdp_delta);
    END IF;
    first_bad_entry := least(first_bad_entry, r.seq);
  END LOOP;

  IF found_count > max_problems THEN
    problems := problems || format('... and %s more problems', found_count - max_problems);
  END IF;
  ok := found_count = 0;
END $$;

-- This database now holds a ledger: DROP DATABASE needs the same
-- confirmation as DROP EXTENSION.
SELECT dp_agg.mark_ledger_database();

COMMENT ON TABLE dp_agg.ledger_head IS
  'The chain head of the privacy ledger: the seq and entry_hash of its last entry, where a TRUNCATE of the ledger does not reach (dp_agg.verify_ledger)';
COMMENT ON FUNCTION dp_agg.ledger_entry_hash(bytea, dp_agg.ledger_entry) IS
  'SHA-256 of a ledger row''s canonical record (every column but entry_hash) and of the previous row''s hash (internal)';
COMMENT ON FUNCTION dp_agg.budget_digest(dp_agg.role_budget) IS
  'SHA-256 of a budget row''s canonical record (internal)';
COMMENT ON FUNCTION dp_agg.mark_ledger_database() IS
  'Labels this database as holding a dp_agg ledger, so that DROP DATABASE needs dp_agg.allow_drop_extension (internal)';
COMMENT ON FUNCTION dp_agg.append_ledger_entry(text, oid, name, name, name, numeric, numeric, numeric, numeric, dp_agg.role_budget, boolean, bigint, text, text, bigint) IS
  'Appends a ledger row with the digest of the budget after it, chained now or at commit (internal)';
COMMENT ON FUNCTION dp_agg.chain_deferred_entry() IS
  'Trigger: chains at commit the ledger rows dp_agg appended in the transaction, refuses any other (internal)';
COMMENT ON FUNCTION dp_agg.guard_ledger_entry() IS
  'Trigger: refuses UPDATE of ledger rows except their chaining (internal)';
COMMENT ON FUNCTION dp_agg.guard_ledger_head() IS
  'Trigger: refuses UPDATE of the chain head except its advance with an entry dp_agg appends (internal)';
COMMENT ON FUNCTION dp_agg.guard_budget_record() IS
  'Trigger: refuses to change a budget that is not the one its last ledger entry recorded (internal)';
COMMENT ON FUNCTION dp_agg.refuse_ledger_removal() IS
  'Trigger: refuses DELETE and TRUNCATE of the ledger and its head (internal)';
COMMENT ON FUNCTION dp_agg.ledger_spent(text, bigint) IS
  'What the ledger says the budget of a key (role OID@system identifier) had spent before an entry (internal)';
COMMENT ON FUNCTION dp_agg.reattached_key(text) IS
  'The key (role OID@system identifier) of the budget a reattach_budget entry re-attached (internal)';
COMMENT ON FUNCTION dp_agg.restored_budget_disagreement(dp_agg.role_budget) IS
  'Why a restored budget may not be re-attached (its ledger rows do not vouch for it), or NULL (internal)';
COMMENT ON FUNCTION dp_agg.verify_ledger(bigint, text) IS
  'verify_ledger([anchor_seq, anchor_hash]): recomputes the ledger''s hash chain and compares every budget with its ledger entries; ok, the head (to keep as an anchor) and what is wrong (administrators)';

-- Every ledger write through dp_agg.append_ledger_entry (as in
-- src/sql/40_budgets_ledger.sql, 42_budget_restores.sql and
-- 45_release_cache.sql).
CREATE OR REPLACE FUNCTION dp_agg.set_budget(role regrole, epsilon float8, delta float8 DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  before dp_agg.role_budget;
  kept_delta numeric;
  now_set dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('set privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.refuse_beside_orphan(role, name_of_role);
  SELECT * INTO before FROM dp_agg.role_budget b
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier();
  kept_delta := coalesce(delta::numeric, before.delta_total, 0);
  PERFORM dp_agg.check_amounts(epsilon, kept_delta::float8);
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total)
  VALUES (role, name_of_role, epsilon::numeric, kept_delta)
  ON CONFLICT (role_oid, system_identifier) DO UPDATE
    SET role_name = excluded.role_name, epsilon_total = excluded.epsilon_total,
        delta_total = excluded.delta_total, budget_kind = 'epsilon_delta',
        epsilon_delta_binding = false,
        -- (the zCDP certificate binds on if it admitted anything since the
        -- last reset_spent: any sum > 0)
        zcdp_binding = b.zcdp_binding
                       OR (b.budget_kind = 'zcdp'
                           AND (b.epsilon_spent > 0 OR b.delta_spent > 0 OR b.rho_spent > 0
                                OR b.zcdp_delta_spent > 0)),
        rho_total = CASE WHEN b.zcdp_binding
                               OR (b.budget_kind = 'zcdp'
                                   AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                        OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0))
                         THEN b.rho_total END,
        zcdp_delta_total = CASE WHEN b.zcdp_binding
                                      OR (b.budget_kind = 'zcdp'
                                          AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                               OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0))
                                THEN b.zcdp_delta_total END,
        updated_at = now()
  RETURNING * INTO now_set;
  PERFORM dp_agg.append_ledger_entry('set_budget', role, name_of_role, session_user,
                                     current_user, epsilon::numeric, kept_delta, NULL, NULL,
                                     now_set, false);
  -- An administrator who lowers a total is told, with both numbers: the
  -- call reads the same whether it grants or takes away.
  IF before.budget_kind = 'epsilon_delta'
     AND (now_set.epsilon_total < before.epsilon_total
          OR now_set.delta_total < before.delta_total) THEN
    RAISE NOTICE 'this lowers the budget of role "%": epsilon total % (was %), delta total % (was %)',
      name_of_role, now_set.epsilon_total, before.epsilon_total, now_set.delta_total,
      before.delta_total;
  END IF;
  IF now_set.epsilon_spent > now_set.epsilon_total OR now_set.delta_spent > now_set.delta_total
     OR (now_set.zcdp_binding AND (now_set.rho_spent > now_set.rho_total
                                   OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total))
  THEN
    IF now_set.epsilon_spent > now_set.epsilon_total OR now_set.delta_spent > now_set.delta_total
    THEN
      RAISE NOTICE 'role "%" has already spent more than the new total (epsilon % of %, delta % of %): its remaining budget is 0',
        name_of_role, now_set.epsilon_spent, now_set.epsilon_total, now_set.delta_spent,
        now_set.delta_total;
    ELSE
      -- Only the earlier zCDP certificate, which still binds, is exceeded.
      RAISE NOTICE 'role "%" has already spent more than its earlier zCDP budget, which still binds (rho % of %, delta % of %): its remaining budget is 0 until dp_agg.reset_spent',
        name_of_role, now_set.rho_spent, now_set.rho_total, now_set.zcdp_delta_spent,
        now_set.zcdp_delta_total;
    END IF;
  END IF;
END $$;

CREATE OR REPLACE FUNCTION dp_agg.add_budget(role regrole, epsilon float8, delta float8 DEFAULT 0)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  now_set dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('add to privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.refuse_beside_orphan(role, name_of_role);
  IF EXISTS (SELECT 1 FROM dp_agg.role_budget b
             WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
               AND b.budget_kind = 'zcdp') THEN
    RAISE EXCEPTION 'the budget of role "%" is a zCDP budget (rho), to which epsilon cannot be added', name_of_role
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Set its new totals with dp_agg.set_budget_zcdp(role, rho, delta) (the rho for an (epsilon, delta) guarantee is dp_agg.zcdp_rho(epsilon, delta)), or make it an (epsilon, delta) budget with dp_agg.set_budget.';
  END IF;
  PERFORM dp_agg.check_amounts(epsilon, delta);
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total)
  VALUES (role, name_of_role, epsilon::numeric, delta::numeric)
  ON CONFLICT (role_oid, system_identifier) DO UPDATE
    SET role_name = excluded.role_name, epsilon_total = b.epsilon_total + excluded.epsilon_total,
        delta_total = b.delta_total + excluded.delta_total, updated_at = now()
  RETURNING * INTO now_set;
  PERFORM dp_agg.append_ledger_entry('add_budget', role, name_of_role, session_user,
                                     current_user, epsilon::numeric, delta::numeric, NULL, NULL,
                                     now_set, false);
END $$;

CREATE OR REPLACE FUNCTION dp_agg.reset_spent(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  previous dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('reset privacy budgets');
  UPDATE dp_agg.role_budget b SET epsilon_spent = 0, delta_spent = 0, rho_spent = 0,
                                  zcdp_delta_spent = 0, updated_at = now(),
                                  epsilon_delta_binding = false, zcdp_binding = false,
                                  rho_total = CASE WHEN b.budget_kind = 'zcdp'
                                                   THEN b.rho_total END,
                                  zcdp_delta_total = CASE WHEN b.budget_kind = 'zcdp'
                                                          THEN b.zcdp_delta_total END,
                                  role_name = coalesce(name_of_role, b.role_name)
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
  RETURNING * INTO previous;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'role "%" has no privacy budget', coalesce(name_of_role, role::text)
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.append_ledger_entry('reset_spent', role, previous.role_name, session_user,
                                     current_user, 0, 0, NULL, NULL, previous, false);
END $$;

CREATE OR REPLACE FUNCTION dp_agg.revoke_budget(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  previous dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('revoke privacy budgets');
  DELETE FROM dp_agg.role_budget b
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
  RETURNING * INTO previous;
  PERFORM dp_agg.append_ledger_entry('revoke_budget', role,
                                     coalesce(name_of_role, previous.role_name, role::text),
                                     session_user, current_user, 0, 0, NULL, NULL, NULL, false);
END $$;

CREATE OR REPLACE FUNCTION dp_agg.apply_charge(role_oid oid, role name, session_role name, epsilon numeric,
                                    delta numeric, query_id bigint, aggregates text, query text,
                                    rho numeric, zcdp_delta numeric,
                                    OUT status text, OUT budget_kind text,
                                    OUT epsilon_total numeric, OUT epsilon_spent numeric,
                                    OUT delta_total numeric, OUT delta_spent numeric,
                                    OUT rho_total numeric, OUT rho_spent numeric,
                                    OUT zcdp_delta_total numeric, OUT zcdp_delta_spent numeric)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  here bigint := dp_agg.system_identifier();
  now_budget dp_agg.role_budget;
BEGIN
  UPDATE dp_agg.role_budget b
     SET epsilon_spent = b.epsilon_spent + apply_charge.epsilon,
         delta_spent = b.delta_spent + apply_charge.delta,
         rho_spent = b.rho_spent + apply_charge.rho,
         zcdp_delta_spent = b.zcdp_delta_spent + apply_charge.zcdp_delta,
         role_name = apply_charge.role
   WHERE b.role_oid = apply_charge.role_oid AND b.system_identifier = here
     AND b.budget_kind IN ('epsilon_delta', 'zcdp')
     AND CASE WHEN b.budget_kind = 'epsilon_delta' OR b.epsilon_delta_binding THEN
           b.epsilon_spent + apply_charge.epsilon <= b.epsilon_total
           AND b.delta_spent + apply_charge.delta <= b.delta_total
         ELSE true END
     AND CASE WHEN b.budget_kind = 'zcdp' OR b.zcdp_binding THEN
           b.rho_spent + apply_charge.rho <= b.rho_total
           AND b.zcdp_delta_spent + apply_charge.zcdp_delta <= b.zcdp_delta_total
         ELSE true END
  RETURNING b.* INTO now_budget;
  IF FOUND THEN
    -- Chained at once: the writer's transaction commits promptly.
    PERFORM dp_agg.append_ledger_entry('charge', apply_charge.role_oid, role, role, session_role,
                                       apply_charge.epsilon, apply_charge.delta,
                                       apply_charge.rho, apply_charge.zcdp_delta, now_budget,
                                       true, apply_charge.query_id, apply_charge.aggregates,
                                       left(apply_charge.query, 1000));
    status := 'charged';
  ELSE
    SELECT * INTO now_budget FROM dp_agg.role_budget b
    WHERE b.role_oid = apply_charge.role_oid AND b.system_identifier = here;
    status := CASE WHEN FOUND THEN 'exhausted' ELSE 'no_budget' END;
    IF NOT FOUND THEN
      -- A budget restored from another cluster under the role's name, not
      -- re-attached: the refusal names it (its latest, and what it spent).
      SELECT * INTO now_budget FROM dp_agg.role_budget b
      WHERE b.system_identifier <> here AND b.role_name = apply_charge.role
      ORDER BY b.updated_at DESC, b.role_oid DESC LIMIT 1;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      status := 'orphaned';
    END IF;
  END IF;
  budget_kind := now_budget.budget_kind;
  epsilon_total := now_budget.epsilon_total;
  epsilon_spent := now_budget.epsilon_spent;
  delta_total := now_budget.delta_total;
  delta_spent := now_budget.delta_spent;
  rho_total := now_budget.rho_total;
  rho_spent := now_budget.rho_spent;
  zcdp_delta_total := now_budget.zcdp_delta_total;
  zcdp_delta_spent := now_budget.zcdp_delta_spent;
END $$;

CREATE OR REPLACE FUNCTION dp_agg.set_budget_zcdp(role regrole, rho numeric, delta numeric DEFAULT 0)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  before dp_agg.role_budget;
  now_set dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('set privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.refuse_beside_orphan(role, name_of_role);
  SELECT * INTO before FROM dp_agg.role_budget b
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier();
  IF rho IS NULL OR rho = 'NaN' OR rho = 'Infinity' OR rho < 0 OR rho > 1000000
     OR (rho > 0 AND rho < 1e-300) OR delta IS NULL OR delta = 'NaN' OR delta < 0
     OR delta >= 1 OR (delta > 0 AND delta < 1e-300) THEN
    -- (cut: 1e400 has 401 digits)
    RAISE EXCEPTION 'invalid zCDP budget: rho % and delta %',
      CASE WHEN length(rho::text) > 40 THEN left(rho::text, 30) || '...' ELSE rho::text END,
      CASE WHEN length(delta::text) > 40 THEN left(delta::text, 30) || '...'
           ELSE delta::text END
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'rho must be 0 or a number in [1e-300, 1e6] (dp_agg.zcdp_rho(1, 1e-6) is the rho of a (1, 1e-6) guarantee) and delta 0 or a number in [1e-300, 1) (needed by group selection only).';
  END IF;
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total,
                                       budget_kind, rho_total, zcdp_delta_total)
  VALUES (role, name_of_role, 0, 0, 'zcdp', rho, delta)
  ON CONFLICT (role_oid, system_identifier) DO UPDATE
    SET role_name = excluded.role_name, budget_kind = 'zcdp', rho_total = excluded.rho_total,
        zcdp_delta_total = excluded.zcdp_delta_total, zcdp_binding = false,
        epsilon_delta_binding = b.epsilon_delta_binding
                                OR (b.budget_kind = 'epsilon_delta'
                                    AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                         OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0)),
        updated_at = now()
  RETURNING * INTO now_set;
  PERFORM dp_agg.append_ledger_entry('set_budget_zcdp', role, name_of_role, session_user,
                                     current_user, 0, 0, rho, delta, now_set, false);
  IF before.budget_kind = 'zcdp'
     AND (now_set.rho_total < before.rho_total
          OR now_set.zcdp_delta_total < before.zcdp_delta_total) THEN
    RAISE NOTICE 'this lowers the zCDP budget of role "%": rho total % (was %), delta total % (was %)',
      name_of_role, now_set.rho_total, before.rho_total, now_set.zcdp_delta_total,
      before.zcdp_delta_total;
  END IF;
  IF now_set.rho_spent > now_set.rho_total OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total
     OR (now_set.epsilon_delta_binding AND (now_set.epsilon_spent > now_set.epsilon_total
                                            OR now_set.delta_spent > now_set.delta_total))
  THEN
    IF now_set.rho_spent > now_set.rho_total OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total
    THEN
      RAISE NOTICE 'role "%" has already spent more than the new total (rho % of %, delta % of %): its remaining budget is 0',
        name_of_role, now_set.rho_spent, now_set.rho_total, now_set.zcdp_delta_spent,
        now_set.zcdp_delta_total;
    ELSE
      -- Only the earlier (epsilon, delta) certificate, which still binds, is
      -- exceeded.
      RAISE NOTICE 'role "%" has already spent more than its earlier (epsilon, delta) budget, which still binds (epsilon % of %, delta % of %): its remaining budget is 0 until dp_agg.reset_spent',
        name_of_role, now_set.epsilon_spent, now_set.epsilon_total, now_set.delta_spent,
        now_set.delta_total;
    END IF;
  END IF;
END $$;

CREATE OR REPLACE FUNCTION dp_agg.attach_orphan(previous_role_oid oid, previous_system_identifier bigint,
                                     role oid)
RETURNS void LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  orphan dp_agg.role_budget;
  attached dp_agg.role_budget;
  disagreement text;
BEGIN
  SELECT * INTO orphan FROM dp_agg.role_budget b
  WHERE b.role_oid = previous_role_oid AND b.system_identifier = previous_system_identifier;
  -- Only the budget its own ledger rows vouch for: its amounts start the
  -- role's sums here (review 28).
  disagreement := dp_agg.restored_budget_disagreement(orphan);
  IF disagreement IS NOT NULL THEN
    RAISE EXCEPTION 'the budget restored for role "%" (OID % in the cluster with system identifier %) cannot be re-attached',
      orphan.role_name, previous_role_oid, previous_system_identifier
      USING ERRCODE = 'ZP004',
            DETAIL = format('Its ledger rows do not vouch for it: %s. Nothing was changed.', disagreement),
            HINT = 'SELECT * FROM dp_agg.verify_ledger() shows what differs. Restore the budget with its ledger rows from the dump: re-attaching never changes what a budget recorded.';
  END IF;
  UPDATE dp_agg.role_budget b
     SET role_oid = role, system_identifier = dp_agg.system_identifier(),
         role_name = name_of_role,
         reattached_from = b.reattached_from
                           || (previous_role_oid::text || '@' || previous_system_identifier),
         updated_at = now()
   WHERE b.role_oid = previous_role_oid AND b.system_identifier = previous_system_identifier
  RETURNING * INTO attached;
  PERFORM dp_agg.append_ledger_entry('reattach_budget', role, name_of_role, session_user,
          current_user, orphan.epsilon_spent, orphan.delta_spent, orphan.rho_spent,
          orphan.zcdp_delta_spent, attached, false, NULL, NULL,
          format('re-attached the budget restored from role %I (OID %s in the cluster with system identifier %s): %s budget, epsilon %s of %s and delta %s of %s spent',
                 orphan.role_name, previous_role_oid, previous_system_identifier,
                 orphan.budget_kind, orphan.epsilon_spent, orphan.epsilon_total,
                 orphan.delta_spent, orphan.delta_total));
END $$;

CREATE OR REPLACE FUNCTION dp_agg.apply_reuse(role_oid oid, role name, session_role name, query_id bigint,
                                   aggregates text, query text, OUT status text)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  budget dp_agg.role_budget;
BEGIN
  -- FOR SHARE: the budget recorded with the row is the budget until this
  -- transaction ends (an administrator's change waits, and is chained after).
  SELECT * INTO budget FROM dp_agg.role_budget b
  WHERE b.role_oid = apply_reuse.role_oid AND b.system_identifier = dp_agg.system_identifier()
  FOR SHARE;
  IF NOT FOUND THEN
    status := 'no_budget';
    RETURN;
  END IF;
  PERFORM dp_agg.append_ledger_entry('reused', apply_reuse.role_oid, role, role, session_role,
                                     0, 0, 0, 0, budget, true, apply_reuse.query_id,
                                     apply_reuse.aggregates, left(apply_reuse.query, 1000));
  status := 'reused';
END $$;
COMMENT ON TABLE dp_agg.ledger_entry IS
  'The privacy ledger: one row per charge, per reuse of a stored release and per budget change, append-only and chained by SHA-256 (seq, entry_hash); read it through dp_agg.ledger, check it with dp_agg.verify_ledger()';

-- ---- Spend you can watch (issue 28, finding 4; README "Watching spend"), as
-- in src/sql/47_spend_monitoring.sql.
-- Administrators only (like dp_agg.ledger's other roles' rows): everyone
-- else sees no rows. role is the role's current name (the name it had at its
-- last charge if it was dropped); day is the charge's date in the session's
-- TimeZone; query_id is NULL for charges recorded without one (before 0.2.0,
-- or with compute_query_id = off); sample_query is the text of the latest
-- charge of that shape that day.
CREATE VIEW dp_agg.spend_by_query WITH (security_barrier) AS
  SELECT coalesce(r.rolname, s.role_name) AS role, s.query_id, s.day, s.charges, s.epsilon,
         s.delta, s.rho, s.zcdp_delta, s.sample_query, s.first_charge, s.last_charge
  FROM (SELECT e.role_oid, (array_agg(e.role_name ORDER BY e.id DESC))[1] AS role_name,
               e.query_id, e.recorded_at::date AS day, count(*) AS charges,
               sum(e.epsilon) AS epsilon, sum(e.delta) AS delta, sum(e.rho) AS rho,
               sum(e.zcdp_delta) AS zcdp_delta,
               (array_agg(e.query ORDER BY e.id DESC))[1] AS sample_query,
               min(e.recorded_at) AS first_charge, max(e.recorded_at) AS last_charge
        FROM dp_agg.ledger_entry e
        WHERE e.kind = 'charge' AND dp_agg.is_admin()
        GROUP BY e.role_oid, CASE WHEN e.role_oid IS NULL THEN e.role_name END, e.query_id,
                 e.recorded_at::date) s
  LEFT JOIN pg_catalog.pg_roles r ON r.oid = s.role_oid;

COMMENT ON VIEW dp_agg.spend_by_query IS
  'Privacy spending per role, query shape (query_id, with a sample text) and day: charges and epsilon, delta, rho, zCDP delta spent (administrators)';


-- ===========================================================================
-- Budgets that renew (issue 29, item 3; README "Budgets that renew"), as in
-- src/sql/38_budget_periods.sql, 40_budgets_ledger.sql (the renewal columns,
-- the 'renewal' ledger kind, set_budget and set_budget_zcdp with
-- renew_every and renew_from, apply_charge's renewal, the budgets view),
-- 46_ledger_integrity.sql (verify_ledger) and 48_budget_renewal.sql.
-- ===========================================================================
CREATE FUNCTION dp_agg.renewal_period_start(every interval, anchor timestamptz,
                                            at timestamptz) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'dp_agg_renewal_period_start' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.renewal_period_end(every interval, anchor timestamptz,
                                          at timestamptz) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'dp_agg_renewal_period_end' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.renewal_text(every interval, anchor timestamptz) RETURNS text
AS 'MODULE_PATHNAME', 'dp_agg_renewal_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION dp_agg.renewal_period_start(interval, timestamptz, timestamptz) IS
  'renewal_period_start(every, anchor, at): the start of the period containing at, for a budget that renews every `every` from `anchor` (boundaries anchor + k * every)';
COMMENT ON FUNCTION dp_agg.renewal_period_end(interval, timestamptz, timestamptz) IS
  'renewal_period_end(every, anchor, at): the end of the period containing at (the next renewal after at)';
COMMENT ON FUNCTION dp_agg.renewal_text(interval, timestamptz) IS
  'renewal_text(every, anchor): the renewal schedule as the ledger records it, in UTC, the same in every session (internal)';

ALTER TABLE dp_agg.role_budget ADD COLUMN renew_every interval;
ALTER TABLE dp_agg.role_budget ADD COLUMN renew_from timestamptz;
ALTER TABLE dp_agg.role_budget ADD COLUMN period_start timestamptz;
ALTER TABLE dp_agg.role_budget ADD CONSTRAINT role_budget_renewal
  CHECK ((renew_every IS NULL) = (renew_from IS NULL)
         AND (renew_every IS NULL) = (period_start IS NULL));
ALTER TABLE dp_agg.ledger_entry DROP CONSTRAINT ledger_entry_kind_check;
ALTER TABLE dp_agg.ledger_entry ADD CONSTRAINT ledger_entry_kind_check
  CHECK (kind IN ('charge', 'set_budget', 'add_budget', 'reset_spent',
                  'revoke_budget', 'set_budget_zcdp', 'reused',
                  'reattach_budget', 'renewal'));

-- Budgets: administrators see every role, everyone else their own (by OID,
-- so a role keeps its row through a rename). role is the role's current
-- name, or the last name it had if it was dropped (role_dropped), or the name
-- recorded with a budget restored from another cluster that is not
-- re-attached (orphaned: no role spends it; dp_agg.reattach_budgets).
-- budget_kind is the kind the administrator chose last; binding_certificates
-- lists every certificate that admission needs: that kind's, and an earlier
-- kind's that still binds after a switch with spending (README "Switching
-- kinds"). Each *_total column is shown when its certificate binds, NULL
-- otherwise; every charge is recorded in both currencies, so all spent sums
-- are shown. The remaining amounts are the least over the binding
-- certificates (what one more release of that kind can still use):
--  - epsilon_remaining: the largest pure epsilon that still fits: the
--    epsilon left of an (epsilon, delta) certificate, and for a zCDP one
--    the largest epsilon whose charged epsilon^2 / 2 fits the rho left
--    (zcdp_pure_epsilon);
--  - delta_remaining: the delta left of an (epsilon, delta) certificate,
--    the zCDP delta left (group selection's) of a zCDP one;
--  - rho_remaining: the rho left of a zCDP certificate, and for an (epsilon,
--    delta) one the rho of the largest Gaussian count (dp_count(v,
--    epsilon_remaining, delta_remaining)) that still fits (NULL when no such
--    count exists).
-- guarantee_epsilon, guarantee_delta: what the whole budget certifies as
-- (epsilon, delta)-DP by the certificate of budget_kind (a binding earlier
-- kind certifies its own guarantee as well): the totals for epsilon_delta
-- budgets; for zcdp ones (zcdp_epsilon(rho_total, 1e-6), zcdp_delta_total +
-- 1e-6), the conversion at d = 1e-6 (dp_agg.zcdp_epsilon gives it at any
-- other d).
-- (Budgets that renew: every amount above is the current period's. A row
-- whose period ended but that no charge has renewed yet (renewal is lazy,
-- 48_budget_renewal.sql) is shown as the renewal will leave it:
-- dp_agg.budget_in_period. renew_every and renew_from are its schedule,
-- period_start the start of the current period, next_renewal its end; all
-- NULL for a budget that never renews.)
CREATE FUNCTION dp_agg.budget_in_period(budget dp_agg.role_budget, at timestamptz)
RETURNS dp_agg.role_budget
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  starts timestamptz;
BEGIN
  IF budget.renew_every IS NULL THEN
    RETURN budget;
  END IF;
  starts := dp_agg.renewal_period_start(budget.renew_every, budget.renew_from, at);
  IF starts <= budget.period_start THEN
    RETURN budget;
  END IF;
  -- A new period: nothing spent in it, and (as after reset_spent) only the
  -- current kind's certificate binds, with its own totals.
  budget.epsilon_spent := 0;
  budget.delta_spent := 0;
  budget.rho_spent := 0;
  budget.zcdp_delta_spent := 0;
  budget.epsilon_delta_binding := false;
  budget.zcdp_binding := false;
  IF budget.budget_kind <> 'zcdp' THEN
    budget.rho_total := NULL;
    budget.zcdp_delta_total := NULL;
  END IF;
  budget.period_start := starts;
  RETURN budget;
END $$;
CREATE OR REPLACE VIEW dp_agg.budgets WITH (security_barrier) AS
  SELECT coalesce(r.rolname, b.role_name) AS role,
         CASE WHEN c.epsilon_delta_binds THEN b.epsilon_total END AS epsilon_total,
         b.epsilon_spent,
         least(CASE WHEN c.epsilon_delta_binds
                    THEN greatest(b.epsilon_total - b.epsilon_spent, 0) END,
               CASE WHEN c.zcdp_binds
                    THEN dp_agg.zcdp_pure_epsilon(greatest(b.rho_total - b.rho_spent, 0))
               END) AS epsilon_remaining,
         CASE WHEN c.epsilon_delta_binds THEN b.delta_total END AS delta_total,
         b.delta_spent,
         least(CASE WHEN c.epsilon_delta_binds
                    THEN greatest(b.delta_total - b.delta_spent, 0) END,
               CASE WHEN c.zcdp_binds
                    THEN greatest(b.zcdp_delta_total - b.zcdp_delta_spent, 0) END)
           AS delta_remaining,
         b.updated_at, r.oid IS NULL AND NOT o.orphaned AS role_dropped, b.budget_kind,
         b.rho_total, b.rho_spent,
         CASE WHEN c.epsilon_delta_binds AND g.gaussian_rho IS NULL THEN NULL
              ELSE least(g.gaussian_rho, CASE WHEN c.zcdp_binds
                                              THEN greatest(b.rho_total - b.rho_spent, 0) END)
         END AS rho_remaining,
         b.zcdp_delta_total, b.zcdp_delta_spent,
         -- NULL when what was spent already exceeds the current kind's
         -- totals (a total lowered, or a kind switched, below the spending):
         -- those totals then certify nothing about the history.
         CASE WHEN c.over_totals THEN NULL
              WHEN b.budget_kind = 'zcdp'
              THEN dp_agg.zcdp_epsilon(b.rho_total::float8, 1e-6)::numeric
              ELSE b.epsilon_total END AS guarantee_epsilon,
         CASE WHEN c.over_totals THEN NULL
              WHEN b.budget_kind = 'zcdp' THEN b.zcdp_delta_total + 0.000001
              ELSE b.delta_total END AS guarantee_delta,
         c.binding_certificates, o.orphaned, b.renew_every, b.renew_from, b.period_start,
         dp_agg.renewal_period_end(b.renew_every, b.renew_from, now()) AS next_renewal
  FROM dp_agg.role_budget stored
  CROSS JOIN LATERAL dp_agg.budget_in_period(stored, now()) b
  CROSS JOIN LATERAL (SELECT b.system_identifier <> dp_agg.system_identifier() AS orphaned) o
  LEFT JOIN pg_catalog.pg_roles r ON r.oid = b.role_oid AND NOT o.orphaned
  CROSS JOIN LATERAL (
    SELECT b.budget_kind = 'epsilon_delta' OR b.epsilon_delta_binding AS epsilon_delta_binds,
           b.budget_kind = 'zcdp' OR b.zcdp_binding AS zcdp_binds,
           array_remove(ARRAY[b.budget_kind,
                              CASE WHEN b.epsilon_delta_binding THEN 'epsilon_delta' END,
                              CASE WHEN b.zcdp_binding THEN 'zcdp' END], NULL)
             AS binding_certificates,
           CASE WHEN b.budget_kind = 'zcdp'
                THEN b.rho_spent > b.rho_total OR b.zcdp_delta_spent > b.zcdp_delta_total
                ELSE b.epsilon_spent > b.epsilon_total OR b.delta_spent > b.delta_total
           END AS over_totals) c
  -- least(..., 1e300): an epsilon total summed by add_budget may exceed
  -- float8; every epsilon that large has no Gaussian count (NULL) anyway.
  CROSS JOIN LATERAL (
    SELECT CASE WHEN c.epsilon_delta_binds
                THEN dp_agg.gaussian_count_rho(
                       least(greatest(b.epsilon_total - b.epsilon_spent, 0), 1e300),
                       greatest(b.delta_total - b.delta_spent, 0)) END AS gaussian_rho) g
  WHERE (b.role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s WHERE s.rolname = session_user)
         AND NOT o.orphaned)
     OR dp_agg.is_admin();

DROP FUNCTION dp_agg.set_budget(regrole, float8, float8);
DROP FUNCTION dp_agg.set_budget_zcdp(regrole, numeric, numeric);
-- Sets a role's budget to an (epsilon, delta) budget (basic composition),
-- whatever its kind was; spent amounts are kept. delta NULL (the default)
-- keeps the role's delta total (0 for a new budget), so that
-- set_budget('alice', 5.0) never silently takes away a delta budget.
-- A total below what was already spent is accepted: it stops the role's
-- private queries (remaining is shown as 0, never negative), which is what an
-- administrator lowering a budget means; a NOTICE says so. A role that was
-- under a zCDP budget keeps every charge in epsilon_spent and delta_spent
-- (each charge is recorded in both currencies), so the new certificate
-- counts all past spending; if it had spent anything, its zCDP certificate
-- (with its rho and zCDP delta totals) keeps binding too, until reset_spent
-- (README "Switching kinds").
-- renew_every, renew_from (README "Budgets that renew"): make the budget
-- renew every renew_every (a fixed length of at least a second) at the
-- boundaries renew_from + k * renew_every (renew_from 1970-01-01 00:00:00
-- UTC unless given); NULL (the default) keeps the role's schedule, interval
-- '0' stops the renewals (dp_agg.schedule_renewal).
CREATE FUNCTION dp_agg.set_budget(role regrole, epsilon float8, delta float8 DEFAULT NULL,
                                  renew_every interval DEFAULT NULL,
                                  renew_from timestamptz DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  before dp_agg.role_budget;
  kept_delta numeric;
  now_set dp_agg.role_budget;
  schedule dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('set privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.refuse_beside_orphan(role, name_of_role);
  -- (locked: the renewal schedule below is decided from this row, and a
  -- renewal by the ledger writer in between would otherwise be undone by
  -- writing back its old period_start, so that the next charge renewed again
  -- and forgot what the new period had spent)
  SELECT * INTO before FROM dp_agg.role_budget b
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
  FOR UPDATE;
  kept_delta := coalesce(delta::numeric, before.delta_total, 0);
  PERFORM dp_agg.check_amounts(epsilon, kept_delta::float8);
  -- The new schedule is decided first and written by the same statement as
  -- the totals: a budget row changes once per administrative call, so the
  -- budget guard (budget_guard.cpp) sees the row its last ledger entry
  -- recorded.
  schedule := before;
  schedule.role_name := name_of_role;
  schedule := dp_agg.schedule_renewal(schedule, renew_every, renew_from);
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total,
                                       renew_every, renew_from, period_start)
  VALUES (role, name_of_role, epsilon::numeric, kept_delta, schedule.renew_every,
          schedule.renew_from, schedule.period_start)
  ON CONFLICT (role_oid, system_identifier) DO UPDATE
    SET role_name = excluded.role_name, epsilon_total = excluded.epsilon_total,
        delta_total = excluded.delta_total, budget_kind = 'epsilon_delta',
        renew_every = excluded.renew_every, renew_from = excluded.renew_from,
        period_start = excluded.period_start,
        epsilon_delta_binding = false,
        -- (the zCDP certificate binds on if it admitted anything since the
        -- last reset_spent: any sum > 0)
        zcdp_binding = b.zcdp_binding
                       OR (b.budget_kind = 'zcdp'
                           AND (b.epsilon_spent > 0 OR b.delta_spent > 0 OR b.rho_spent > 0
                                OR b.zcdp_delta_spent > 0)),
        rho_total = CASE WHEN b.zcdp_binding
                               OR (b.budget_kind = 'zcdp'
                                   AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                        OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0))
                         THEN b.rho_total END,
        zcdp_delta_total = CASE WHEN b.zcdp_binding
                                      OR (b.budget_kind = 'zcdp'
                                          AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                               OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0))
                                THEN b.zcdp_delta_total END,
        updated_at = now()
  RETURNING * INTO now_set;
  PERFORM dp_agg.append_ledger_entry('set_budget', role, name_of_role, session_user,
                                     current_user, epsilon::numeric, kept_delta, NULL, NULL,
                                     now_set, false, NULL, NULL,
                                     dp_agg.renewal_description(now_set));
  -- An administrator who lowers a total is told, with both numbers: the
  -- call reads the same whether it grants or takes away.
  IF before.budget_kind = 'epsilon_delta'
     AND (now_set.epsilon_total < before.epsilon_total
          OR now_set.delta_total < before.delta_total) THEN
    RAISE NOTICE 'this lowers the budget of role "%": epsilon total % (was %), delta total % (was %)',
      name_of_role, now_set.epsilon_total, before.epsilon_total, now_set.delta_total,
      before.delta_total;
  END IF;
  IF now_set.epsilon_spent > now_set.epsilon_total OR now_set.delta_spent > now_set.delta_total
     OR (now_set.zcdp_binding AND (now_set.rho_spent > now_set.rho_total
                                   OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total))
  THEN
    IF now_set.epsilon_spent > now_set.epsilon_total OR now_set.delta_spent > now_set.delta_total
    THEN
      RAISE NOTICE 'role "%" has already spent more than the new total (epsilon % of %, delta % of %): its remaining budget is 0',
        name_of_role, now_set.epsilon_spent, now_set.epsilon_total, now_set.delta_spent,
        now_set.delta_total;
    ELSE
      -- Only the earlier zCDP certificate, which still binds, is exceeded.
      RAISE NOTICE 'role "%" has already spent more than its earlier zCDP budget, which still binds (rho % of %, delta % of %): its remaining budget is 0 until dp_agg.reset_spent',
        name_of_role, now_set.rho_spent, now_set.rho_total, now_set.zcdp_delta_spent,
        now_set.zcdp_delta_total;
    END IF;
  END IF;
END $$;
-- Sets a role's budget to a zCDP budget, whatever its kind was: approximate
-- zero-concentrated DP (Bun and Steinke 2016, Def. 8.1) with totals rho and
-- delta, admitted while the sums of the charges' rho and zCDP delta stay
-- within them. The role is then (dp_agg.zcdp_epsilon(rho, d), delta + d)-DP
-- for every d in (0, 1) (README "The accountant"); dp_agg.zcdp_rho(epsilon,
-- delta) gives the rho of an (epsilon, delta) guarantee. Spent amounts are
-- kept: every past charge is in rho_spent and zcdp_delta_spent already; if
-- the role was an (epsilon, delta) budget and had spent anything, that
-- certificate (with its totals) keeps binding too, until reset_spent
-- (README "Switching kinds"). rho is at most 1e6 (zcdp_epsilon(1e6, 1e-6)
-- is about 1e6: no protection left) and 0 or at least 1e-300, so that the
-- totals convert to float8 for display.
-- renew_every, renew_from: as for dp_agg.set_budget (rho and delta per
-- period).
CREATE FUNCTION dp_agg.set_budget_zcdp(role regrole, rho numeric, delta numeric DEFAULT 0,
                                       renew_every interval DEFAULT NULL,
                                       renew_from timestamptz DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  before dp_agg.role_budget;
  now_set dp_agg.role_budget;
  schedule dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('set privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.refuse_beside_orphan(role, name_of_role);
  -- (locked: the renewal schedule below is decided from this row, and a
  -- renewal by the ledger writer in between would otherwise be undone by
  -- writing back its old period_start, so that the next charge renewed again
  -- and forgot what the new period had spent)
  SELECT * INTO before FROM dp_agg.role_budget b
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
  FOR UPDATE;
  IF rho IS NULL OR rho = 'NaN' OR rho = 'Infinity' OR rho < 0 OR rho > 1000000
     OR (rho > 0 AND rho < 1e-300) OR delta IS NULL OR delta = 'NaN' OR delta < 0
     OR delta >= 1 OR (delta > 0 AND delta < 1e-300) THEN
    -- (cut: 1e400 has 401 digits)
    RAISE EXCEPTION 'invalid zCDP budget: rho % and delta %',
      CASE WHEN length(rho::text) > 40 THEN left(rho::text, 30) || '...' ELSE rho::text END,
      CASE WHEN length(delta::text) > 40 THEN left(delta::text, 30) || '...'
           ELSE delta::text END
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'rho must be 0 or a number in [1e-300, 1e6] (dp_agg.zcdp_rho(1, 1e-6) is the rho of a (1, 1e-6) guarantee) and delta 0 or a number in [1e-300, 1) (needed by group selection only).';
  END IF;
  -- (the schedule is written with the totals, as in set_budget)
  schedule := before;
  schedule.role_name := name_of_role;
  schedule := dp_agg.schedule_renewal(schedule, renew_every, renew_from);
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total,
                                       budget_kind, rho_total, zcdp_delta_total,
                                       renew_every, renew_from, period_start)
  VALUES (role, name_of_role, 0, 0, 'zcdp', rho, delta, schedule.renew_every,
          schedule.renew_from, schedule.period_start)
  ON CONFLICT (role_oid, system_identifier) DO UPDATE
    SET role_name = excluded.role_name, budget_kind = 'zcdp', rho_total = excluded.rho_total,
        renew_every = excluded.renew_every, renew_from = excluded.renew_from,
        period_start = excluded.period_start,
        zcdp_delta_total = excluded.zcdp_delta_total, zcdp_binding = false,
        epsilon_delta_binding = b.epsilon_delta_binding
                                OR (b.budget_kind = 'epsilon_delta'
                                    AND (b.epsilon_spent > 0 OR b.delta_spent > 0
                                         OR b.rho_spent > 0 OR b.zcdp_delta_spent > 0)),
        updated_at = now()
  RETURNING * INTO now_set;
  PERFORM dp_agg.append_ledger_entry('set_budget_zcdp', role, name_of_role, session_user,
                                     current_user, 0, 0, rho, delta, now_set, false, NULL, NULL,
                                     dp_agg.renewal_description(now_set));
  IF before.budget_kind = 'zcdp'
     AND (now_set.rho_total < before.rho_total
          OR now_set.zcdp_delta_total < before.zcdp_delta_total) THEN
    RAISE NOTICE 'this lowers the zCDP budget of role "%": rho total % (was %), delta total % (was %)',
      name_of_role, now_set.rho_total, before.rho_total, now_set.zcdp_delta_total,
      before.zcdp_delta_total;
  END IF;
  IF now_set.rho_spent > now_set.rho_total OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total
     OR (now_set.epsilon_delta_binding AND (now_set.epsilon_spent > now_set.epsilon_total
                                            OR now_set.delta_spent > now_set.delta_total))
  THEN
    IF now_set.rho_spent > now_set.rho_total OR now_set.zcdp_delta_spent > now_set.zcdp_delta_total
    THEN
      RAISE NOTICE 'role "%" has already spent more than the new total (rho % of %, delta % of %): its remaining budget is 0',
        name_of_role, now_set.rho_spent, now_set.rho_total, now_set.zcdp_delta_spent,
        now_set.zcdp_delta_total;
    ELSE
      -- Only the earlier (epsilon, delta) certificate, which still binds, is
      -- exceeded.
      RAISE NOTICE 'role "%" has already spent more than its earlier (epsilon, delta) budget, which still binds (epsilon % of %, delta % of %): its remaining budget is 0 until dp_agg.reset_spent',
        name_of_role, now_set.epsilon_spent, now_set.epsilon_total, now_set.delta_spent,
        now_set.delta_total;
    END IF;
  END IF;
END $$;
CREATE OR REPLACE FUNCTION dp_agg.apply_charge(role_oid oid, role name, session_role name, epsilon numeric,
                                    delta numeric, query_id bigint, aggregates text, query text,
                                    rho numeric, zcdp_delta numeric,
                                    OUT status text, OUT budget_kind text,
                                    OUT epsilon_total numeric, OUT epsilon_spent numeric,
                                    OUT delta_total numeric, OUT delta_spent numeric,
                                    OUT rho_total numeric, OUT rho_spent numeric,
                                    OUT zcdp_delta_total numeric, OUT zcdp_delta_spent numeric)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  here bigint := dp_agg.system_identifier();
  now_budget dp_agg.role_budget;
BEGIN
  -- A budget that renews starts its new period first, if one has begun
  -- (48_budget_renewal.sql): the charge then counts in exactly that period.
  PERFORM dp_agg.renew_budget_if_due(apply_charge.role_oid, role, session_role);
  UPDATE dp_agg.role_budget b
     SET epsilon_spent = b.epsilon_spent + apply_charge.epsilon,
         delta_spent = b.delta_spent + apply_charge.delta,
         rho_spent = b.rho_spent + apply_charge.rho,
         zcdp_delta_spent = b.zcdp_delta_spent + apply_charge.zcdp_delta,
         role_name = apply_charge.role
   WHERE b.role_oid = apply_charge.role_oid AND b.system_identifier = here
     AND b.budget_kind IN ('epsilon_delta', 'zcdp')
     AND CASE WHEN b.budget_kind = 'epsilon_delta' OR b.epsilon_delta_binding THEN
           b.epsilon_spent + apply_charge.epsilon <= b.epsilon_total
           AND b.delta_spent + apply_charge.delta <= b.delta_total
         ELSE true END
     AND CASE WHEN b.budget_kind = 'zcdp' OR b.zcdp_binding THEN
           b.rho_spent + apply_charge.rho <= b.rho_total
           AND b.zcdp_delta_spent + apply_charge.zcdp_delta <= b.zcdp_delta_total
         ELSE true END
  RETURNING b.* INTO now_budget;
  IF FOUND THEN
    -- Chained at once: the writer's transaction commits promptly.
    PERFORM dp_agg.append_ledger_entry('charge', apply_charge.role_oid, role, role, session_role,
                                       apply_charge.epsilon, apply_charge.delta,
                                       apply_charge.rho, apply_charge.zcdp_delta, now_budget,
                                       true, apply_charge.query_id, apply_charge.aggregates,
                                       left(apply_charge.query, 1000));
    status := 'charged';
  ELSE
    SELECT * INTO now_budget FROM dp_agg.role_budget b
    WHERE b.role_oid = apply_charge.role_oid AND b.system_identifier = here;
    status := CASE WHEN FOUND THEN 'exhausted' ELSE 'no_budget' END;
    IF NOT FOUND THEN
      -- A budget restored from another cluster under the role's name, not
      -- re-attached: the refusal names it (its latest, and what it spent).
      SELECT * INTO now_budget FROM dp_agg.role_budget b
      WHERE b.system_identifier <> here AND b.role_name = apply_charge.role
      ORDER BY b.updated_at DESC, b.role_oid DESC LIMIT 1;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      status := 'orphaned';
    END IF;
  END IF;
  budget_kind := now_budget.budget_kind;
  epsilon_total := now_budget.epsilon_total;
  epsilon_spent := now_budget.epsilon_spent;
  delta_total := now_budget.delta_total;
  delta_spent := now_budget.delta_spent;
  rho_total := now_budget.rho_total;
  rho_spent := now_budget.rho_spent;
  zcdp_delta_total := now_budget.zcdp_delta_total;
  zcdp_delta_spent := now_budget.zcdp_delta_spent;
END $$;
CREATE FUNCTION dp_agg.budget_ledger_entries(OUT owner_oid oid, OUT owner_cluster bigint,
                                             OUT seq bigint, OUT kind text, OUT role_name name,
                                             OUT budget_digest bytea, OUT epsilon numeric,
                                             OUT delta numeric, OUT rho numeric,
                                             OUT zcdp_delta numeric)
RETURNS SETOF record LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  WITH budget_keys AS (
    SELECT b.role_oid, b.system_identifier,
           b.role_oid::text || '@' || b.system_identifier AS entry_key
    FROM dp_agg.role_budget b
    UNION ALL
    SELECT b.role_oid, b.system_identifier, unnest(b.reattached_from)
    FROM dp_agg.role_budget b)
  SELECT coalesce(k.role_oid, e.role_oid), coalesce(k.system_identifier, e.system_identifier),
         e.seq, e.kind, e.role_name, e.budget_digest, e.epsilon, e.delta, e.rho, e.zcdp_delta
  FROM dp_agg.ledger_entry e
  LEFT JOIN budget_keys k ON k.entry_key = e.role_oid::text || '@' || e.system_identifier
  WHERE e.role_oid IS NOT NULL AND e.seq IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION dp_agg.verify_ledger(anchor_seq bigint DEFAULT NULL,
                                     anchor_hash text DEFAULT NULL,
                                     OUT ok boolean, OUT entries bigint, OUT head_seq bigint,
                                     OUT head_hash text, OUT first_bad_entry bigint,
                                     OUT problems text[])
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r record;
  head dp_agg.ledger_head;
  has_head boolean;
  last_seq bigint;
  last_hash bytea;
  found_count bigint := 0;
  max_problems constant int := 100;
BEGIN
  PERFORM dp_agg.require_admin('verify the privacy ledger');
  problems := ARRAY[]::text[];
  SELECT * INTO head FROM dp_agg.ledger_head;
  has_head := FOUND;
  head_seq := coalesce(head.seq, 0);
  head_hash := encode(head.entry_hash, 'hex');
  SELECT count(*) INTO entries FROM dp_agg.ledger_entry;

  -- 1. The chain, in seq order: rows without seq, gaps, repeats, hashes.
  FOR r IN
    SELECT format('ledger row id %s has no sequence number and hash: inserted outside dp_agg''s functions', e.id) AS problem,
           NULL::bigint AS seq
    FROM dp_agg.ledger_entry e WHERE e.seq IS NULL OR e.entry_hash IS NULL
    UNION ALL
    SELECT CASE
             WHEN c.previous_seq = c.seq THEN
               format('entry %s (id %s) repeats a sequence number: inserted outside dp_agg''s functions', c.seq, c.id)
             WHEN c.seq = coalesce(c.previous_seq, 0) + 2 THEN
               format('entry %s is missing: removed outside dp_agg''s functions', c.seq - 1)
             WHEN c.seq > coalesce(c.previous_seq, 0) + 2 THEN
               format('entries %s to %s are missing: removed outside dp_agg''s functions',
                      coalesce(c.previous_seq, 0) + 1, c.seq - 1)
             ELSE
               format('entry %s (id %s) does not match its hash: changed (or inserted) outside dp_agg''s functions', c.seq, c.id)
           END,
           -- (the first entry concerned: the first missing one of a gap)
           CASE WHEN c.seq > coalesce(c.previous_seq, 0) + 1 THEN coalesce(c.previous_seq, 0) + 1
                ELSE c.seq END
    FROM (SELECT e.seq, e.id, e.entry_hash,
                 lag(e.seq) OVER w AS previous_seq,
                 dp_agg.ledger_entry_hash(lag(e.entry_hash) OVER w, e) AS recomputed
          FROM dp_agg.ledger_entry e
          WHERE e.seq IS NOT NULL AND e.entry_hash IS NOT NULL
          WINDOW w AS (ORDER BY e.seq, e.id)) c
    WHERE c.seq <> coalesce(c.previous_seq, 0) + 1 OR c.recomputed <> c.entry_hash
    ORDER BY 2 NULLS FIRST
  LOOP
    found_count := found_count + 1;
    IF found_count <= max_problems THEN problems := problems || r.problem; END IF;
    first_bad_entry := least(first_bad_entry, r.seq);
  END LOOP;

  -- 2. The end of the chain against the head.
  SELECT e.seq, e.entry_hash INTO last_seq, last_hash
  FROM dp_agg.ledger_entry e WHERE e.seq IS NOT NULL ORDER BY e.seq DESC, e.id DESC LIMIT 1;
  last_seq := coalesce(last_seq, 0);
  IF NOT has_head AND last_seq > 0 THEN
    found_count := found_count + 1;
    problems := problems || 'the chain head (dp_agg.ledger_head) is missing: removed outside dp_agg''s functions'::text;
  ELSIF last_seq < head_seq THEN
    found_count := found_count + 1;
    problems := problems || format('%s missing at the end: the chain head says %s entries (the ledger was truncated, or its last rows removed, outside dp_agg''s functions)',
                                   CASE WHEN last_seq + 1 = head_seq
                                        THEN format('entry %s is', head_seq)
                                        ELSE format('entries %s to %s are', last_seq + 1, head_seq)
                                   END, head_seq);
    first_bad_entry := least(first_bad_entry, last_seq + 1);
  ELSIF last_seq > head_seq THEN
    found_count := found_count + 1;
    problems := problems || format('%s beyond the chain head (%s): inserted outside dp_agg''s functions, or the head set back',
                                   CASE WHEN last_seq = head_seq + 1
                                        THEN format('entry %s is', last_seq)
                                        ELSE format('entries %s to %s are', head_seq + 1, last_seq)
                                   END, head_seq);
    first_bad_entry := least(first_bad_entry, head_seq + 1);
  ELSIF last_seq > 0 AND last_hash IS DISTINCT FROM head.entry_hash THEN
    found_count := found_count + 1;
    problems := problems || format('the hash of entry %s differs from the chain head''s', last_seq);
    first_bad_entry := least(first_bad_entry, last_seq);
  END IF;

  -- 3. An anchor kept outside the database.
  IF anchor_seq IS NOT NULL OR anchor_hash IS NOT NULL THEN
    IF anchor_seq IS NULL OR anchor_hash IS NULL THEN
      RAISE EXCEPTION 'an anchor is a sequence number and a hash, both given'
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Use the entry number and hash of a "dp_agg ledger head" line of the server log.';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM dp_agg.ledger_entry e
                   WHERE e.seq = anchor_seq AND encode(e.entry_hash, 'hex') = lower(anchor_hash)) THEN
      found_count := found_count + 1;
      problems := problems || format('entry %s does not have the anchored hash %s: the chain was rewritten (or the entry removed) since the anchor was taken',
                                     anchor_seq, lower(anchor_hash));
      first_bad_entry := least(first_bad_entry, anchor_seq);
    END IF;
  END IF;

  -- 4. Budgets against the ledger.
  FOR r IN
    WITH entries AS (SELECT * FROM dp_agg.budget_ledger_entries()),
    last_entry AS (
      SELECT DISTINCT ON (owner_oid, owner_cluster) owner_oid, owner_cluster, seq, kind, role_name
      FROM entries ORDER BY owner_oid, owner_cluster, seq DESC),
    -- The last entry that recorded the budget after it: every entry since
    -- 0.2.0 but a revoke_budget (after which there is none) does; one
    -- without a digest is older, or forged (and then flagged by the chain).
    last_recorded AS (
      SELECT DISTINCT ON (owner_oid, owner_cluster) owner_oid, owner_cluster, seq, budget_digest
      FROM entries WHERE budget_digest IS NOT NULL
      ORDER BY owner_oid, owner_cluster, seq DESC),
    -- Where the spending now recorded starts: the last reset_spent or
    -- renewal (from nothing), revoke_budget (no budget, then a new one from
    -- nothing) or reattach_budget (from what the re-attached budget had
    -- spent).
    checkpoint AS (
      SELECT DISTINCT ON (owner_oid, owner_cluster) owner_oid, owner_cluster, seq,
             CASE WHEN kind = 'reattach_budget' THEN epsilon ELSE 0 END AS epsilon,
             CASE WHEN kind = 'reattach_budget' THEN delta ELSE 0 END AS delta,
             CASE WHEN kind = 'reattach_budget' THEN rho ELSE 0 END AS rho,
             CASE WHEN kind = 'reattach_budget' THEN zcdp_delta ELSE 0 END AS zcdp_delta
      FROM entries WHERE kind IN ('reset_spent', 'revoke_budget', 'reattach_budget', 'renewal')
      ORDER BY owner_oid, owner_cluster, seq DESC),
    charges AS (
      SELECT e.owner_oid, e.owner_cluster,
             sum(e.epsilon) AS epsilon,
             sum(e.delta) AS delta,
             coalesce(sum(e.epsilon) FILTER (WHERE e.rho IS NULL), 0) AS old_epsilon,
             coalesce(sum(e.rho), 0) AS rho,
             coalesce(sum(e.delta) FILTER (WHERE e.rho IS NULL), 0)
               + coalesce(sum(e.zcdp_delta), 0) AS zcdp_delta
      FROM entries e
      LEFT JOIN checkpoint z ON z.owner_oid = e.owner_oid AND z.owner_cluster = e.owner_cluster
      WHERE e.kind = 'charge' AND e.seq > coalesce(z.seq, 0)
      GROUP BY e.owner_oid, e.owner_cluster),
    -- The restored budgets that were re-attached (step 5 checks each).
    attached AS (
      SELECT DISTINCT dp_agg.reattached_key(e.query) AS entry_key
      FROM dp_agg.ledger_entry e WHERE e.kind = 'reattach_budget' AND e.seq IS NOT NULL)
    SELECT coalesce(b.role_oid, l.owner_oid) AS role_oid,
           coalesce(b.system_identifier, l.owner_cluster) AS cluster,
           coalesce(b.role_name, l.role_name) AS role_name,
           b.role_oid IS NOT NULL AS has_budget,
           CASE WHEN b.role_oid IS NOT NULL THEN dp_agg.budget_digest(b) END AS digest,
           b.epsilon_spent, b.delta_spent, b.rho_spent, b.zcdp_delta_spent,
           l.seq AS last_seq, l.kind AS last_kind, d.seq AS recorded_seq,
           d.budget_digest AS recorded_digest,
           coalesce(z.epsilon, 0) + coalesce(c.epsilon, 0) AS charged_epsilon,
           coalesce(z.delta, 0) + coalesce(c.delta, 0) AS charged_delta,
           coalesce(z.rho, 0) + coalesce(c.old_epsilon, 0) * coalesce(c.old_epsilon, 0) * 0.5
             + coalesce(c.rho, 0) AS charged_rho,
           coalesce(z.zcdp_delta, 0) + coalesce(c.zcdp_delta, 0) AS charged_zcdp_delta,
           EXISTS (SELECT 1 FROM attached a
                   WHERE a.entry_key = coalesce(b.role_oid, l.owner_oid)::text || '@'
                                       || coalesce(b.system_identifier, l.owner_cluster))
             AS reattached
    FROM dp_agg.role_budget b
    FULL JOIN last_entry l ON l.owner_oid = b.role_oid AND l.owner_cluster = b.system_identifier
    LEFT JOIN last_recorded d ON d.owner_oid = coalesce(b.role_oid, l.owner_oid)
                             AND d.owner_cluster = coalesce(b.system_identifier, l.owner_cluster)
    LEFT JOIN checkpoint z ON z.owner_oid = coalesce(b.role_oid, l.owner_oid)
                          AND z.owner_cluster = coalesce(b.system_identifier, l.owner_cluster)
    LEFT JOIN charges c ON c.owner_oid = coalesce(b.role_oid, l.owner_oid)
                       AND c.owner_cluster = coalesce(b.system_identifier, l.owner_cluster)
    ORDER BY 1, 2
  LOOP
    IF r.has_budget AND r.last_seq IS NULL THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) has no ledger entry: created outside dp_agg''s functions', r.role_name, r.role_oid);
      END IF;
      CONTINUE;
    END IF;
    IF NOT r.has_budget THEN
      -- (Rows of another cluster's role without a budget here belonged to a
      -- restored budget that was re-attached and later revoked: their
      -- re-attachment is not kept once that budget is gone. One that no
      -- reattach_budget entry names was removed while it waited.)
      IF r.last_kind <> 'revoke_budget' AND r.cluster = dp_agg.system_identifier() THEN
        found_count := found_count + 1;
        IF found_count <= max_problems THEN
          problems := problems || format('role "%s" (OID %s) has no budget, but its last ledger entry %s (%s) says it has one: removed outside dp_agg''s functions', r.role_name, r.role_oid, r.last_seq, r.last_kind);
        END IF;
      ELSIF r.last_kind <> 'revoke_budget' AND NOT r.reattached THEN
        found_count := found_count + 1;
        IF found_count <= max_problems THEN
          problems := problems || format('the budget restored for role "%s" (OID %s in the cluster with system identifier %s) is gone, but was never re-attached and its last ledger entry %s (%s) says it exists: removed outside dp_agg''s functions', r.role_name, r.role_oid, r.cluster, r.last_seq, r.last_kind);
        END IF;
      END IF;
      CONTINUE;
    END IF;
    IF r.last_kind = 'revoke_budget' THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) exists although its last ledger entry %s revoked it: created outside dp_agg''s functions', r.role_name, r.role_oid, r.last_seq);
      END IF;
    ELSIF r.recorded_digest IS NOT NULL AND r.recorded_digest <> r.digest THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) is not the one recorded with its ledger entry %s: changed outside dp_agg''s functions', r.role_name, r.role_oid, r.recorded_seq);
      END IF;
    END IF;
    IF r.epsilon_spent <> r.charged_epsilon OR r.delta_spent <> r.charged_delta
       OR r.rho_spent <> r.charged_rho OR r.zcdp_delta_spent <> r.charged_zcdp_delta THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) has spent epsilon %s, delta %s, rho %s, zCDP delta %s, but its charges since its last reset or renewal sum to epsilon %s, delta %s, rho %s, zCDP delta %s',
                                       r.role_name, r.role_oid, r.epsilon_spent, r.delta_spent,
                                       r.rho_spent, r.zcdp_delta_spent, r.charged_epsilon,
                                       r.charged_delta, r.charged_rho, r.charged_zcdp_delta);
      END IF;
    END IF;
  END LOOP;

  -- 5. Each re-attachment against the restored budget's own ledger rows: it
  --    names that budget, and records what they charged (its amounts start
  --    the new owner's sums: a budget changed before it was re-attached
  --    would otherwise pass).
  FOR r IN
    SELECT e.seq, e.role_name, e.epsilon, e.delta, e.rho, e.zcdp_delta, k.entry_key,
           s.entries AS key_entries, s.epsilon AS spent_epsilon, s.delta AS spent_delta,
           s.rho AS spent_rho, s.zcdp_delta AS spent_zcdp_delta
    FROM dp_agg.ledger_entry e
    CROSS JOIN LATERAL (SELECT dp_agg.reattached_key(e.query) AS entry_key) k
    LEFT JOIN LATERAL dp_agg.ledger_spent(k.entry_key, e.seq) s ON true
    WHERE e.kind = 'reattach_budget' AND e.seq IS NOT NULL
    ORDER BY e.seq
  LOOP
    IF r.entry_key IS NULL THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('entry %s re-attached a budget to role "%s" without naming it', r.seq, r.role_name);
      END IF;
      first_bad_entry := least(first_bad_entry, r.seq);
    ELSIF r.key_entries = 0 OR r.epsilon <> r.spent_epsilon OR r.delta <> r.spent_delta
          OR r.rho <> r.spent_rho OR r.zcdp_delta <> r.spent_zcdp_delta THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('entry %s re-attached to role "%s" the restored budget %s with epsilon %s, delta %s, rho %s, zCDP delta %s spent, but its ledger rows (%s) charged epsilon %s, delta %s, rho %s, zCDP delta %s: it was changed (or created) outside dp_agg''s functions before it was re-attached',
                                       r.seq, r.role_name, r.entry_key, r.epsilon, r.delta, r.rho,
                                       r.zcdp_delta, r.key_entries, r.spent_epsilon,
                                       r.spent_delta, r.spent_rho, r.spent_zcdp_delta);
      END IF;
      first_bad_entry := least(first_bad_entry, r.seq);
    END IF;
  END LOOP;

  -- 6. A charge never gives budget back: one with a negative amount was
  --    appended outside the ledger writer (review 28: with the budget's
  --    spending lowered to match, it passed every other check).
  FOR r IN
    SELECT e.seq, e.role_name, e.epsilon, e.delta, e.rho, e.zcdp_delta
    FROM dp_agg.ledger_entry e
    WHERE e.kind = 'charge' AND e.seq IS NOT NULL
      AND (e.epsilon < 0 OR e.delta < 0 OR e.rho < 0 OR e.zcdp_delta < 0)
    ORDER BY e.seq
  LOOP
    found_count := found_count + 1;
    IF found_count <= max_problems THEN
      problems := problems || format('entry %s charges role "%s" a negative amount (epsilon %s, delta %s, rho %s, zCDP delta %s): appended outside the ledger writer',
                                     r.seq, r.role_name, r.epsilon, r.delta, r.rho, r.zcdp_delta);
    END IF;
    first_bad_entry := least(first_bad_entry, r.seq);
  END LOOP;

  -- 7. Each renewal forgot exactly what its period had spent: the charges
  -- since the checkpoint before it, counted as in 4.
  FOR r IN
    WITH entries AS (
      SELECT e.*,
             -- (the checkpoints up to this entry: an entry after the n-th
             -- checkpoint and the n-th itself are in segment n)
             count(*) FILTER (WHERE e.kind IN ('reset_spent', 'revoke_budget',
                                                'reattach_budget', 'renewal'))
               OVER (PARTITION BY e.owner_oid, e.owner_cluster ORDER BY e.seq) AS segment
      FROM dp_agg.budget_ledger_entries() e),
    spent AS (
      SELECT owner_oid, owner_cluster, segment,
             coalesce(sum(epsilon) FILTER (WHERE kind = 'reattach_budget'), 0)
               + coalesce(sum(epsilon) FILTER (WHERE kind = 'charge'), 0) AS epsilon,
             coalesce(sum(delta) FILTER (WHERE kind = 'reattach_budget'), 0)
               + coalesce(sum(delta) FILTER (WHERE kind = 'charge'), 0) AS delta,
             coalesce(sum(rho) FILTER (WHERE kind = 'reattach_budget'), 0)
               + coalesce(sum(epsilon) FILTER (WHERE kind = 'charge' AND rho IS NULL), 0)
                 * coalesce(sum(epsilon) FILTER (WHERE kind = 'charge' AND rho IS NULL), 0)
                 * 0.5
               + coalesce(sum(rho) FILTER (WHERE kind = 'charge'), 0) AS rho,
             coalesce(sum(zcdp_delta) FILTER (WHERE kind = 'reattach_budget'), 0)
               + coalesce(sum(delta) FILTER (WHERE kind = 'charge' AND rho IS NULL), 0)
               + coalesce(sum(zcdp_delta) FILTER (WHERE kind = 'charge'), 0) AS zcdp_delta
      FROM entries GROUP BY owner_oid, owner_cluster, segment)
    SELECT n.seq, n.role_name, n.epsilon, n.delta, n.rho, n.zcdp_delta,
           coalesce(p.epsilon, 0) AS spent_epsilon, coalesce(p.delta, 0) AS spent_delta,
           coalesce(p.rho, 0) AS spent_rho, coalesce(p.zcdp_delta, 0) AS spent_zcdp_delta
    FROM entries n
    LEFT JOIN spent p ON p.owner_oid = n.owner_oid AND p.owner_cluster = n.owner_cluster
                     AND p.segment = n.segment - 1
    WHERE n.kind = 'renewal'
      AND (n.epsilon IS DISTINCT FROM coalesce(p.epsilon, 0)
           OR n.delta IS DISTINCT FROM coalesce(p.delta, 0)
           OR n.rho IS DISTINCT FROM coalesce(p.rho, 0)
           OR n.zcdp_delta IS DISTINCT FROM coalesce(p.zcdp_delta, 0))
    ORDER BY n.seq
  LOOP
    found_count := found_count + 1;
    IF found_count <= max_problems THEN
      problems := problems || format('the renewal entry %s of role "%s" forgot epsilon %s, delta %s, rho %s, zCDP delta %s, but the period it ended had spent epsilon %s, delta %s, rho %s, zCDP delta %s',
                                     r.seq, r.role_name, r.epsilon, r.delta, r.rho, r.zcdp_delta,
                                     r.spent_epsilon, r.spent_delta, r.spent_rho,
                                     r.spent_zcdp_delta);
    END IF;
    first_bad_entry := least(first_bad_entry, r.seq);
  END LOOP;

  IF found_count > max_problems THEN
    problems := problems || format('... and %s more problems', found_count - max_problems);
  END IF;
  ok := found_count = 0;
END $$;
COMMENT ON FUNCTION dp_agg.budget_ledger_entries() IS
  'The chained ledger rows of every budget, with the budget (role OID and cluster) each counts for after re-attachments (internal, for verify_ledger)';
COMMENT ON FUNCTION dp_agg.set_budget(regrole, float8, float8, interval, timestamptz) IS
  'set_budget(role, epsilon[, delta][, renew_every => interval][, renew_from => timestamptz]): makes a role''s budget an (epsilon, delta) budget (basic composition) with these totals, keeping what it spent and, when delta is omitted, its delta total; renew_every makes the totals per period (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.set_budget_zcdp(regrole, numeric, numeric, interval, timestamptz) IS
  'set_budget_zcdp(role, rho[, delta][, renew_every => interval][, renew_from => timestamptz]): makes a role''s budget a zCDP budget (approximate zCDP: rho and delta add up), keeping what it spent; renew_every makes the totals per period (administrators; leaves a ledger row)';
COMMENT ON VIEW dp_agg.budgets IS
  'Privacy budgets: administrators see every role, everyone else their own (a renewing budget''s amounts are its current period''s)';
COMMENT ON FUNCTION dp_agg.budget_in_period(dp_agg.role_budget, timestamptz) IS
  'budget_in_period(budget, at): a budget row as it is in the period containing at: a renewing budget whose period ended is shown renewed (nothing spent) (internal)';

-- The schedule as the ledger records it (set_budget, set_budget_zcdp and
-- renewal rows, column query), in UTC whatever the session's settings; NULL
-- for a budget that never renews.
CREATE FUNCTION dp_agg.renewal_description(budget dp_agg.role_budget) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT 'renews ' || dp_agg.renewal_text(budget.renew_every, budget.renew_from)
         || '; this period from '
         || to_char(budget.period_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')
         || ' UTC'
  WHERE budget.renew_every IS NOT NULL
$$;

-- Sets the renewal schedule of `budget` (a role_budget row that the calling
-- administration function has just written and holds locked) and returns
-- the row as it is then:
--  - every and anchor NULL: the schedule is kept;
--  - every interval '0': the budget stops renewing (anchor must be NULL);
--  - otherwise the budget renews every `every` (the role's current length
--    when NULL) from `anchor` (the role's current anchor when NULL, else
--    1970-01-01 00:00:00 UTC). A changed schedule starts its current period
--    with the amounts spent so far (nothing is given back by changing a
--    schedule: only a boundary renews).
CREATE FUNCTION dp_agg.schedule_renewal(budget dp_agg.role_budget, every interval,
                                        anchor timestamptz)
RETURNS dp_agg.role_budget
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  new_every interval;
  new_from timestamptz;
BEGIN
  IF every IS NULL AND anchor IS NULL THEN
    RETURN budget;
  END IF;
  IF every = interval '0' THEN
    IF anchor IS NOT NULL THEN
      RAISE EXCEPTION 'renew_from needs a renewal period, but renew_every is 0 (no renewal)'
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Omit renew_from to stop the renewals, or give renew_every => interval ''1 day'' (for example) with it.';
    END IF;
    IF budget.renew_every IS NULL THEN
      RETURN budget;
    END IF;
    budget.renew_every := NULL;
    budget.renew_from := NULL;
    budget.period_start := NULL;
    RETURN budget;
  END IF;
  new_every := coalesce(every, budget.renew_every);
  IF new_every IS NULL THEN
    RAISE EXCEPTION 'renew_from needs a renewal period, and the budget of role "%" does not renew',
      budget.role_name
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Give renew_every => interval ''1 day'' (for example) with renew_from.';
  END IF;
  new_from := coalesce(anchor, budget.renew_from, timestamptz '1970-01-01 00:00:00+00');
  -- (validates both: a fixed length of at least a second, a finite anchor)
  PERFORM dp_agg.renewal_period_start(new_every, new_from, now());
  IF budget.renew_every IS NOT NULL
     AND dp_agg.renewal_text(new_every, new_from)
         = dp_agg.renewal_text(budget.renew_every, budget.renew_from) THEN
    RETURN budget;
  END IF;
  budget.renew_every := new_every;
  budget.renew_from := new_from;
  budget.period_start := dp_agg.renewal_period_start(new_every, new_from, now());
  RETURN budget;
END $$;

-- Applied by the ledger writer (from dp_agg.apply_charge, never by users),
-- before a charge: renews the role's budget if it renews and a boundary has
-- passed since its period began (at the writer transaction's start, now(),
-- which is the recorded_at of the charge that follows). Under the budget
-- row's lock (FOR UPDATE: the writer does not wait for it, it retries), so
-- that one period is renewed once.
CREATE FUNCTION dp_agg.renew_budget_if_due(role_oid oid, role name, session_role name)
RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  before dp_agg.role_budget;
  renewed dp_agg.role_budget;
BEGIN
  SELECT * INTO before FROM dp_agg.role_budget b
  WHERE b.role_oid = renew_budget_if_due.role_oid
    AND b.system_identifier = dp_agg.system_identifier() AND b.renew_every IS NOT NULL
  FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  renewed := dp_agg.budget_in_period(before, now());
  IF renewed.period_start = before.period_start THEN
    RETURN;
  END IF;
  UPDATE dp_agg.role_budget b
     SET epsilon_spent = renewed.epsilon_spent, delta_spent = renewed.delta_spent,
         rho_spent = renewed.rho_spent, zcdp_delta_spent = renewed.zcdp_delta_spent,
         epsilon_delta_binding = renewed.epsilon_delta_binding,
         zcdp_binding = renewed.zcdp_binding, rho_total = renewed.rho_total,
         zcdp_delta_total = renewed.zcdp_delta_total, period_start = renewed.period_start
   WHERE b.role_oid = before.role_oid AND b.system_identifier = before.system_identifier
  RETURNING * INTO renewed;
  PERFORM dp_agg.append_ledger_entry('renewal', before.role_oid, before.role_name, role,
                                     session_role, before.epsilon_spent, before.delta_spent,
                                     before.rho_spent, before.zcdp_delta_spent, renewed, true,
                                     NULL, NULL, dp_agg.renewal_description(renewed));
END $$;

COMMENT ON FUNCTION dp_agg.renewal_description(dp_agg.role_budget) IS
  'The renewal schedule and current period of a budget row, as the ledger records them (internal)';
COMMENT ON FUNCTION dp_agg.schedule_renewal(dp_agg.role_budget, interval, timestamptz) IS
  'Decides the renewal schedule of a budget row for set_budget and set_budget_zcdp, which write it (internal)';
COMMENT ON FUNCTION dp_agg.renew_budget_if_due(oid, name, name) IS
  'Renews a role''s budget at the first charge of a new period, with a ledger row of kind renewal (called by the ledger writer only)';

-- Privileges, as in src/sql/90_privileges.sql: the period arithmetic is
-- public (dp_agg.budgets calls it as the querying user), the renewal's
-- helpers are internal, and set_budget and set_budget_zcdp (created anew)
-- are callable by everyone and check dp_agg.is_admin() themselves.
REVOKE ALL ON FUNCTION
  dp_agg.renewal_period_start(interval, timestamptz, timestamptz),
  dp_agg.renewal_period_end(interval, timestamptz, timestamptz),
  dp_agg.renewal_text(interval, timestamptz),
  dp_agg.budget_in_period(dp_agg.role_budget, timestamptz),
  dp_agg.set_budget(regrole, float8, float8, interval, timestamptz),
  dp_agg.set_budget_zcdp(regrole, numeric, numeric, interval, timestamptz),
  dp_agg.renewal_description(dp_agg.role_budget),
  dp_agg.schedule_renewal(dp_agg.role_budget, interval, timestamptz),
  dp_agg.renew_budget_if_due(oid, name, name),
  dp_agg.budget_ledger_entries()
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
  dp_agg.set_budget(regrole, float8, float8, interval, timestamptz),
  dp_agg.set_budget_zcdp(regrole, numeric, numeric, interval, timestamptz),
  dp_agg.renewal_period_start(interval, timestamptz, timestamptz),
  dp_agg.renewal_period_end(interval, timestamptz, timestamptz),
  dp_agg.budget_in_period(dp_agg.role_budget, timestamptz)
TO PUBLIC;


-- ===========================================================================
-- dp_variance and dp_stddev (src/sql/55_variance.sql), unchanged.
-- ===========================================================================
-- ===========================================================================
-- dp_variance(value, lower, upper, epsilon [, delta]) and dp_stddev(...):
-- population variance (and its square root) of values clamped to
-- [lower, upper], from a noisy count, a noisy sum and a noisy sum of squares
-- of the values re-centred at the midpoint of the bounds, a third of the
-- budget each (Google's BoundedVariance; core/variance.h states the
-- estimator and its error). Always within [0, ((upper - lower) / 2)^2]
-- (dp_stddev: [0, (upper - lower) / 2]), also on empty input. Result types
-- follow var_pop() / stddev_pop(). With delta: discrete Gaussian noise,
-- charged as zCDP its rho.
-- ===========================================================================
CREATE TYPE dp_agg.variance_state;
CREATE FUNCTION dp_agg.variance_state_in(cstring) RETURNS dp_agg.variance_state
  AS 'MODULE_PATHNAME', 'dp_variance_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_state_out(dp_agg.variance_state) RETURNS cstring
  AS 'MODULE_PATHNAME', 'dp_variance_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE dp_agg.variance_state (
  INPUT = dp_agg.variance_state_in, OUTPUT = dp_agg.variance_state_out,
  INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = plain
);

CREATE FUNCTION dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int2_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int2_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_float4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_float4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_float8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_float8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_numeric_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_numeric_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_combine(dp_agg.variance_state, dp_agg.variance_state)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_combine'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_final_float8(dp_agg.variance_state) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_variance_final_float8' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_final_numeric(dp_agg.variance_state) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_variance_final_numeric' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.stddev_final_float8(dp_agg.variance_state) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_stddev_final_float8' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.stddev_final_numeric(dp_agg.variance_state) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_stddev_final_numeric' LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE AGGREGATE dp_variance(smallint, smallint, smallint, float8) (
  SFUNC = dp_agg.variance_int2_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(smallint, smallint, smallint, float8, float8) (
  SFUNC = dp_agg.variance_int2_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(integer, integer, integer, float8) (
  SFUNC = dp_agg.variance_int4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(integer, integer, integer, float8, float8) (
  SFUNC = dp_agg.variance_int4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(bigint, bigint, bigint, float8) (
  SFUNC = dp_agg.variance_int8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(bigint, bigint, bigint, float8, float8) (
  SFUNC = dp_agg.variance_int8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(real, real, real, float8) (
  SFUNC = dp_agg.variance_float4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(real, real, real, float8, float8) (
  SFUNC = dp_agg.variance_float4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(float8, float8, float8, float8) (
  SFUNC = dp_agg.variance_float8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.variance_float8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(numeric, numeric, numeric, float8) (
  SFUNC = dp_agg.variance_numeric_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.variance_numeric_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(smallint, smallint, smallint, float8) (
  SFUNC = dp_agg.variance_int2_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(smallint, smallint, smallint, float8, float8) (
  SFUNC = dp_agg.variance_int2_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(integer, integer, integer, float8) (
  SFUNC = dp_agg.variance_int4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(integer, integer, integer, float8, float8) (
  SFUNC = dp_agg.variance_int4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(bigint, bigint, bigint, float8) (
  SFUNC = dp_agg.variance_int8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(bigint, bigint, bigint, float8, float8) (
  SFUNC = dp_agg.variance_int8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(real, real, real, float8) (
  SFUNC = dp_agg.variance_float4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(real, real, real, float8, float8) (
  SFUNC = dp_agg.variance_float4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(float8, float8, float8, float8) (
  SFUNC = dp_agg.variance_float8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.variance_float8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(numeric, numeric, numeric, float8) (
  SFUNC = dp_agg.variance_numeric_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.variance_numeric_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);

COMMENT ON TYPE dp_agg.variance_state IS
  'Transition state of dp_variance and dp_stddev (exact partial sums: never shown to analysts)';
COMMENT ON AGGREGATE dp_variance(smallint, smallint, smallint, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(smallint, smallint, smallint, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(integer, integer, integer, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(integer, integer, integer, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(bigint, bigint, bigint, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(bigint, bigint, bigint, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(real, real, real, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(real, real, real, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(float8, float8, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(float8, float8, float8, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(numeric, numeric, numeric, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(numeric, numeric, numeric, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_stddev(smallint, smallint, smallint, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(smallint, smallint, smallint, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(integer, integer, integer, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(integer, integer, integer, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(bigint, bigint, bigint, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(bigint, bigint, bigint, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(real, real, real, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(real, real, real, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(float8, float8, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(float8, float8, float8, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(numeric, numeric, numeric, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(numeric, numeric, numeric, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';

-- Comments for the support functions (granted in 90_privileges.sql).
COMMENT ON FUNCTION dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_combine(dp_agg.variance_state, dp_agg.variance_state) IS
  'Support function of dp_agg''s aggregates (combine function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_final_float8(dp_agg.variance_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_final_numeric(dp_agg.variance_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.stddev_final_float8(dp_agg.variance_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.stddev_final_numeric(dp_agg.variance_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';

-- ===========================================================================
-- Randomized response (src/sql/56_randomized_response.sql), unchanged.
-- ===========================================================================
-- ===========================================================================
-- Randomized response (local differential privacy; core/randomized_response.h).
--
-- dp_agg.randomized_response(answer, epsilon): for applications that collect
-- a sensitive yes/no and store only the randomized answer. True answer with
-- probability e^epsilon / (1 + e^epsilon), drawn exactly from OpenSSL's
-- CSPRNG; each call is epsilon-DP for that answer. Not charged to any budget
-- (it is applied to the respondent's own answer before it is stored).
--
-- dp_rr_proportion(randomized_answer, epsilon): the unbiased estimate
-- (observed - q) / (p - q), p = e^epsilon / (1 + e^epsilon), q = 1 - p, of the
-- proportion of true answers; dp_rr_proportion_se(...) its standard error.
-- They charge nothing at query time: the answers are already private. The
-- number of answers is not protected (as in every local-DP collection).
-- Restricted roles may use neither over protected tables (README).
-- ===========================================================================
CREATE FUNCTION dp_agg.randomized_response(answer boolean, epsilon float8) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_randomized_response' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE FUNCTION dp_agg.rr_check_epsilon(epsilon float8, previous float8, answers float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_rr_check_epsilon' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION dp_agg.rr_transfn(state float8[], answer boolean, epsilon float8) RETURNS float8[]
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$
    SELECT ARRAY[state[1] + 1, state[2] + answer::int,
                 dp_agg.rr_check_epsilon(epsilon, state[3], state[1])]
  $$;

CREATE FUNCTION dp_agg.rr_combine(float8[], float8[]) RETURNS float8[]
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$
    SELECT CASE
      WHEN $1[1] = 0 THEN $2
      WHEN $2[1] = 0 THEN $1
      ELSE ARRAY[$1[1] + $2[1], $1[2] + $2[2], dp_agg.rr_check_epsilon($2[3], $1[3], $1[1])]
    END
  $$;

CREATE FUNCTION dp_agg.rr_proportion_final(float8[]) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_rr_proportion_final' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.rr_proportion_se_final(float8[]) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_rr_proportion_se_final' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE dp_rr_proportion(boolean, float8) (
  SFUNC = dp_agg.rr_transfn, STYPE = float8[], INITCOND = '{0,0,0}',
  FINALFUNC = dp_agg.rr_proportion_final, COMBINEFUNC = dp_agg.rr_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_rr_proportion_se(boolean, float8) (
  SFUNC = dp_agg.rr_transfn, STYPE = float8[], INITCOND = '{0,0,0}',
  FINALFUNC = dp_agg.rr_proportion_se_final, COMBINEFUNC = dp_agg.rr_combine, PARALLEL = SAFE
);

COMMENT ON FUNCTION dp_agg.randomized_response(boolean, float8) IS
  'randomized_response(answer, epsilon): the answer with probability e^epsilon/(1+e^epsilon), else its negation (local epsilon-DP, exact, CSPRNG); not charged to any budget; refused on protected data for restricted roles';
COMMENT ON FUNCTION dp_agg.rr_check_epsilon(float8, float8, float8) IS
  'Support function of dp_rr_proportion: checks its epsilon (internal)';
COMMENT ON FUNCTION dp_agg.rr_transfn(float8[], boolean, float8) IS
  'Support function of dp_rr_proportion (transition function; internal)';
COMMENT ON FUNCTION dp_agg.rr_combine(float8[], float8[]) IS
  'Support function of dp_rr_proportion (combine function; internal)';
COMMENT ON FUNCTION dp_agg.rr_proportion_final(float8[]) IS
  'Support function of dp_rr_proportion (final function; internal)';
COMMENT ON FUNCTION dp_agg.rr_proportion_se_final(float8[]) IS
  'Support function of dp_rr_proportion_se (final function; internal)';
COMMENT ON AGGREGATE dp_rr_proportion(boolean, float8) IS
  'dp_rr_proportion(randomized_answer, epsilon): unbiased estimate of the true proportion from answers randomized by randomized_response at epsilon; charges nothing at query time (the answers are already private)';
COMMENT ON AGGREGATE dp_rr_proportion_se(boolean, float8) IS
  'dp_rr_proportion_se(randomized_answer, epsilon): standard error of dp_rr_proportion; charges nothing at query time';

-- Privileges, as in src/sql/90_privileges.sql: everything above is first
-- taken from PUBLIC, then the entry points and support functions granted back.
REVOKE ALL ON FUNCTION
  dp_agg.variance_state_in(cstring),
  dp_agg.variance_state_out(dp_agg.variance_state),
  dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8),
  dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8, float8),
  dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8),
  dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8, float8),
  dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8),
  dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8, float8),
  dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8),
  dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8, float8),
  dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8),
  dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8, float8),
  dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8),
  dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8, float8),
  dp_agg.variance_combine(dp_agg.variance_state, dp_agg.variance_state),
  dp_agg.variance_final_float8(dp_agg.variance_state),
  dp_agg.variance_final_numeric(dp_agg.variance_state),
  dp_agg.stddev_final_float8(dp_agg.variance_state),
  dp_agg.stddev_final_numeric(dp_agg.variance_state),
  dp_agg.randomized_response(boolean, float8),
  dp_agg.rr_check_epsilon(float8, float8, float8),
  dp_agg.rr_transfn(float8[], boolean, float8),
  dp_agg.rr_combine(float8[], float8[]),
  dp_agg.rr_proportion_final(float8[]),
  dp_agg.rr_proportion_se_final(float8[])
FROM PUBLIC;
-- dp_variance and dp_stddev (55_variance.sql): their support functions, for
-- the reasons given above for the other aggregates' (Citus checks EXECUTE).
GRANT EXECUTE ON FUNCTION
  dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8),
  dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8, float8),
  dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8),
  dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8, float8),
  dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8),
  dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8, float8),
  dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8),
  dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8, float8),
  dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8),
  dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8, float8),
  dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8),
  dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8, float8),
  dp_agg.variance_combine(dp_agg.variance_state, dp_agg.variance_state),
  dp_agg.variance_final_float8(dp_agg.variance_state),
  dp_agg.variance_final_numeric(dp_agg.variance_state),
  dp_agg.stddev_final_float8(dp_agg.variance_state),
  dp_agg.stddev_final_numeric(dp_agg.variance_state)
TO PUBLIC;

-- Randomized response (56_randomized_response.sql): an application may randomize
-- the answers it stores; dp_rr_proportion's support functions (not charged,
-- what they read is already private).
GRANT EXECUTE ON FUNCTION
  dp_agg.randomized_response(boolean, float8),
  dp_agg.rr_check_epsilon(float8, float8, float8),
  dp_agg.rr_transfn(float8[], boolean, float8),
  dp_agg.rr_combine(float8[], float8[]),
  dp_agg.rr_proportion_final(float8[]),
  dp_agg.rr_proportion_se_final(float8[])
TO PUBLIC;

-- dp_variance, dp_stddev, dp_rr_proportion and dp_rr_proportion_se are
-- VOLATILE like every aggregate of the extension (src/sql/80_volatility.sql).
UPDATE pg_catalog.pg_proc SET provolatile = 'v'
WHERE prokind = 'a'
  AND oid IN (SELECT d.objid FROM pg_catalog.pg_depend d
              WHERE d.classid = 'pg_catalog.pg_proc'::regclass
                AND d.refclassid = 'pg_catalog.pg_extension'::regclass
                AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension e
                                  WHERE e.extname = 'dp_agg')
                AND d.deptype = 'e');

-- ---- Public key sets (issue 29, item 2; README "Public key sets"), as in
-- src/sql/74_public_keys.sql.
CREATE TABLE dp_agg.public_key_set (
  relation regclass NOT NULL,
  column_name name NOT NULL,
  keys text[] NOT NULL,
  PRIMARY KEY (relation, column_name)
);
SELECT pg_catalog.pg_extension_config_dump('dp_agg.public_key_set', '');

-- Cached plans (prepared statements, generic plans) read the key sets when
-- they were planned: a change plans them again. The column's own dp_agg
-- label is set again, unchanged, and the label hook invalidates the
-- cached plans of the table and of its partitions and INHERITS children.
CREATE FUNCTION dp_agg.replan_public_keys(target regclass, column_name name) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  column_number int2;
BEGIN
  PERFORM dp_agg.require_admin('declare public keys');
  SELECT a.attnum INTO column_number
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  WHERE a.attrelid = target AND a.attname = replan_public_keys.column_name AND a.attnum > 0
    AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'm', 'f');
  IF NOT FOUND THEN
    RETURN;  -- no table column: no plan reads its keys
  END IF;
  EXECUTE format('SECURITY LABEL FOR dp_agg ON COLUMN %s.%I IS %L', target,
                 replan_public_keys.column_name,
                 (SELECT l.label FROM pg_seclabel l
                  WHERE l.objoid = target AND l.classoid = 'pg_class'::regclass
                    AND l.objsubid = column_number AND l.provider = 'dp_agg'));
END $$;

CREATE FUNCTION dp_agg.set_public_keys(target regclass, column_name name, keys anyarray)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  column_type oid;
  column_collation oid;
  type_kind "char";
  stored text[];
BEGIN
  PERFORM dp_agg.require_admin('declare public keys');
  SELECT a.atttypid, a.attcollation, t.typtype INTO column_type, column_collation, type_kind
  FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
  WHERE a.attrelid = target AND a.attname = set_public_keys.column_name AND a.attnum > 0
    AND NOT a.attisdropped;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'column "%" of relation % does not exist', set_public_keys.column_name, target
      USING ERRCODE = 'undefined_column';
  END IF;
  IF NOT (column_type IN ('text'::regtype, 'varchar'::regtype, 'int2'::regtype,
                          'int4'::regtype, 'int8'::regtype, 'bool'::regtype, 'uuid'::regtype)
          OR type_kind = 'e') THEN
    RAISE EXCEPTION 'dp_agg: public keys of column "%" of type % are not supported',
                    set_public_keys.column_name, format_type(column_type, NULL)
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Public keys are declared on text, varchar, smallint, integer, bigint, boolean, uuid and enum columns, whose equal values are the same value.',
            HINT = 'Declare them on such a column, or group by this one with group selection.';
  END IF;
  IF column_collation <> 0 AND NOT (SELECT collisdeterministic FROM pg_collation
                                    WHERE oid = column_collation) THEN
    RAISE EXCEPTION 'dp_agg: column "%" has a nondeterministic collation',
                    set_public_keys.column_name
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Under it, values that differ would be one key.',
            HINT = 'Use a deterministic collation for the column.';
  END IF;
  IF keys IS NULL OR cardinality(keys) = 0 OR cardinality(keys) > 100000
     OR array_position(keys, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'dp_agg: public keys must be 1 to 100000 values, none NULL'
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Pass an array of the keys, e.g. ARRAY[''north'', ''south''].';
  END IF;
  EXECUTE format('SELECT array_agg(DISTINCT (k::%s)::text) FROM unnest($1) k',
                 format_type(column_type, NULL))
    INTO stored USING keys;
  -- Key sets of tables dropped since (their OIDs) go too.
  DELETE FROM dp_agg.public_key_set s
  WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = s.relation);
  INSERT INTO dp_agg.public_key_set AS s (relation, column_name, keys)
  VALUES (target, set_public_keys.column_name, stored)
  ON CONFLICT (relation, column_name) DO UPDATE SET keys = EXCLUDED.keys;
  PERFORM dp_agg.replan_public_keys(target, set_public_keys.column_name);
END $$;

CREATE FUNCTION dp_agg.unset_public_keys(target regclass, column_name name) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM dp_agg.require_admin('remove public keys');
  DELETE FROM dp_agg.public_key_set s
  WHERE s.relation = target AND s.column_name = unset_public_keys.column_name;
  PERFORM dp_agg.replan_public_keys(target, unset_public_keys.column_name);
END $$;

CREATE VIEW dp_agg.public_keys AS
  SELECT s.relation AS table_name, s.column_name, s.keys,
         pg_catalog.cardinality(s.keys) AS key_count
  FROM dp_agg.public_key_set s
  WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = s.relation);

COMMENT ON TABLE dp_agg.public_key_set IS
  'Declared public key sets of group-key columns (dp_agg.set_public_keys); read it through dp_agg.public_keys';
COMMENT ON FUNCTION dp_agg.set_public_keys(regclass, name, anyarray) IS
  'set_public_keys(table, column, keys): declares the public keys of a column, so that a restricted role''s GROUP BY on it releases exactly those keys, every one, without group selection (administrators)';
COMMENT ON FUNCTION dp_agg.unset_public_keys(regclass, name) IS
  'unset_public_keys(table, column): removes the declared public keys of a column (administrators)';
COMMENT ON FUNCTION dp_agg.replan_public_keys(regclass, name) IS
  'replan_public_keys(table, column): plans cached under a changed key set are made again (set_public_keys and unset_public_keys call it; administrators)';
COMMENT ON VIEW dp_agg.public_keys IS
  'Declared public key sets (dp_agg.set_public_keys): the keys a GROUP BY on the column releases';

-- Privileges, as in src/sql/90_privileges.sql: the table is read through the
-- view; set_public_keys and unset_public_keys check dp_agg.is_admin() themselves.
REVOKE ALL ON FUNCTION dp_agg.set_public_keys(regclass, name, anyarray),
  dp_agg.unset_public_keys(regclass, name), dp_agg.replan_public_keys(regclass, name) FROM PUBLIC;
REVOKE ALL ON dp_agg.public_key_set, dp_agg.public_keys FROM PUBLIC;
GRANT SELECT ON dp_agg.public_keys TO PUBLIC;
GRANT EXECUTE ON FUNCTION dp_agg.set_public_keys(regclass, name, anyarray),
  dp_agg.unset_public_keys(regclass, name) TO PUBLIC;

-- Group selection's description: the optimal rule replaced the threshold
-- (issue 29, item 5; review29).
COMMENT ON AGGREGATE dp_agg.group_selection(float8, float8) IS
  'True for a group released by (epsilon, delta)-DP partition selection: a group of n rows (or units) with the optimal probability for n (Desfontaines et al., PoPETs 2022); dp_agg adds it to HAVING for restricted roles';

-- 0.2.0, admin input (found by the crash fuzzer's long run): add_budget refuses
-- a delta total reaching 1 with 22023 and guidance (not the table's 23514),
-- revoke_budget(NULL) with 22023 (not a NOT NULL violation of the ledger).
CREATE OR REPLACE FUNCTION dp_agg.add_budget(role regrole, epsilon float8, delta float8 DEFAULT 0)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  now_set dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('add to privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  PERFORM dp_agg.refuse_beside_orphan(role, name_of_role);
  IF EXISTS (SELECT 1 FROM dp_agg.role_budget b
             WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
               AND b.budget_kind = 'zcdp') THEN
    RAISE EXCEPTION 'the budget of role "%" is a zCDP budget (rho), to which epsilon cannot be added', name_of_role
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Set its new totals with dp_agg.set_budget_zcdp(role, rho, delta) (the rho for an (epsilon, delta) guarantee is dp_agg.zcdp_rho(epsilon, delta)), or make it an (epsilon, delta) budget with dp_agg.set_budget.';
  END IF;
  PERFORM dp_agg.check_amounts(epsilon, delta);
  -- (else the table's CHECK would refuse it with 23514 and no guidance)
  IF EXISTS (SELECT 1 FROM dp_agg.role_budget b
             WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
               AND b.delta_total + delta::numeric >= 1) THEN
    RAISE EXCEPTION 'adding delta % would bring the delta total of role "%" to 1 or more',
      delta, name_of_role
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'A delta total must stay below 1 (delta 1 promises nothing): add less, or set the totals with dp_agg.set_budget(role, epsilon, delta).';
  END IF;
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total)
  VALUES (role, name_of_role, epsilon::numeric, delta::numeric)
  ON CONFLICT (role_oid, system_identifier) DO UPDATE
    SET role_name = excluded.role_name, epsilon_total = b.epsilon_total + excluded.epsilon_total,
        delta_total = b.delta_total + excluded.delta_total, updated_at = now()
  RETURNING * INTO now_set;
  PERFORM dp_agg.append_ledger_entry('add_budget', role, name_of_role, session_user,
                                     current_user, epsilon::numeric, delta::numeric, NULL, NULL,
                                     now_set, false);
END $$;

CREATE OR REPLACE FUNCTION dp_agg.revoke_budget(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  previous dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('revoke privacy budgets');
  IF role IS NULL THEN
    RAISE EXCEPTION 'dp_agg.revoke_budget needs a role, not NULL'
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Name the role whose budget to remove, e.g. dp_agg.revoke_budget(''alice'').';
  END IF;
  DELETE FROM dp_agg.role_budget b
  WHERE b.role_oid = role AND b.system_identifier = dp_agg.system_identifier()
  RETURNING * INTO previous;
  PERFORM dp_agg.append_ledger_entry('revoke_budget', role,
                                     coalesce(name_of_role, previous.role_name, role::text),
                                     session_user, current_user, 0, 0, NULL, NULL, NULL, false);
END $$;

-- dp_sum_interval and dp_avg_interval of numeric values without a cast to
-- double precision per row (issue 31, row 12), as in src/sql/30_error_bars.sql (and its
-- transition function's six-argument signature, src/sql/10_aggregate_state.sql).
CREATE FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_numeric_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE AGGREGATE dp_sum_interval(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum_interval(numeric, numeric, numeric, float8, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg_interval(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg_interval(numeric, numeric, numeric, float8, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

-- VOLATILE like every aggregate of the extension (src/sql/80_volatility.sql).
UPDATE pg_catalog.pg_proc SET provolatile = 'v'
WHERE prokind = 'a'
  AND oid IN (SELECT d.objid FROM pg_catalog.pg_depend d
              WHERE d.classid = 'pg_catalog.pg_proc'::regclass
                AND d.refclassid = 'pg_catalog.pg_extension'::regclass
                AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension e
                                  WHERE e.extname = 'dp_agg')
                AND d.deptype = 'e');
COMMENT ON AGGREGATE dp_sum_interval(numeric, numeric, numeric, float8, float8) IS
  'dp_sum_interval(value, lower, upper, epsilon, confidence): dp_sum with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_sum_interval(numeric, numeric, numeric, float8, float8, float8) IS
  'dp_sum_interval(value, lower, upper, epsilon, delta, confidence): dp_sum with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_avg_interval(numeric, numeric, numeric, float8, float8) IS
  'dp_avg_interval(value, lower, upper, epsilon, confidence): dp_avg with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_avg_interval(numeric, numeric, numeric, float8, float8, float8) IS
  'dp_avg_interval(value, lower, upper, epsilon, delta, confidence): dp_avg with its confidence interval (same single release and cost)';

COMMENT ON FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';

-- ---- Generated by test/scripts/privilege_tail.py from src/sql/90_privileges.sql (do not edit below this line; run it with --write instead).
-- What PUBLIC may use in schema dp_agg, decided here and nowhere else: first
-- everything is taken from PUBLIC, then the public entry points are granted
-- back by name. An object added later is therefore private until it is
-- listed here, and the regression suite "privileges" pins this list.
--
-- Not granted: the state types' input and output functions, the ledger
-- writer's apply_charge and apply_reuse, the helpers behind the
-- administration functions (the ledger chain's among them), and the budget
-- and ledger tables themselves (read through the filtered views).
GRANT USAGE ON SCHEMA dp_agg TO PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA dp_agg FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA dp_agg FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA dp_agg FROM PUBLIC;

-- Views that filter rows by the session user (spend_by_query: administrators
-- see every row, everyone else none).
GRANT SELECT ON dp_agg.budgets, dp_agg.ledger, dp_agg.protected_tables, dp_agg.restricted_roles,
  dp_agg.column_bounds, dp_agg.release_cache, dp_agg.spend_by_query, dp_agg.public_keys TO PUBLIC;

-- The budget and label administration functions check dp_agg.is_admin()
-- themselves (judged by the session user), and is_admin() is called by the
-- views above as the querying user. query_cost plans and starts the query as
-- the caller (their own privileges and restrictions apply) and reveals only
-- what the query's text decides. system_identifier() is called by the views;
-- it shows what pg_control_system() shows everyone.
GRANT EXECUTE ON FUNCTION
  dp_agg.is_admin(),
  dp_agg.remaining_budget(),
  dp_agg.query_cost(text),
  dp_agg.set_budget(regrole, float8, float8, interval, timestamptz),
  dp_agg.set_budget_zcdp(regrole, numeric, numeric, interval, timestamptz),
  dp_agg.zcdp_epsilon(float8, float8),
  dp_agg.zcdp_rho(float8, float8),
  dp_agg.gaussian_count_epsilon(numeric, float8),
  dp_agg.gaussian_count_rho(numeric, numeric),
  dp_agg.zcdp_pure_epsilon(numeric),
  dp_agg.add_budget(regrole, float8, float8),
  dp_agg.reset_spent(regrole),
  dp_agg.revoke_budget(regrole),
  dp_agg.reattach_budgets(),
  dp_agg.system_identifier(),
  dp_agg.reattach_budget(regrole, oid, bigint),
  dp_agg.verify_ledger(bigint, text),
  dp_agg.protect_table(regclass),
  dp_agg.unprotect_table(regclass),
  dp_agg.restrict_role(regrole),
  dp_agg.unrestrict_role(regrole),
  dp_agg.set_privacy_unit(regclass, name),
  dp_agg.unset_privacy_unit(regclass, name),
  dp_agg.set_column_bounds(regclass, name, numeric, numeric),
  dp_agg.unset_column_bounds(regclass, name),
  dp_agg.set_public_keys(regclass, name, anyarray),
  dp_agg.unset_public_keys(regclass, name),
  dp_agg.release_cache_entries(),
  dp_agg.clear_release_cache(regrole)
TO PUBLIC;

-- Budgets that renew: the period arithmetic (pure functions of their
-- arguments), called by dp_agg.budgets as the querying user.
GRANT EXECUTE ON FUNCTION
  dp_agg.renewal_period_start(interval, timestamptz, timestamptz),
  dp_agg.renewal_period_end(interval, timestamptz, timestamptz),
  dp_agg.budget_in_period(dp_agg.role_budget, timestamptz)
TO PUBLIC;

-- dp_agg's privacy-unit rewrite puts this window function into a query over
-- a table with a privacy unit column, which runs as the querying role. It
-- only marks random rows; restricted roles may not write it themselves.
GRANT EXECUTE ON FUNCTION dp_agg.unit_group_sample(integer) TO PUBLIC;
-- and these aggregates (75_total_functions.sql), sums that never raise.
GRANT EXECUTE ON ROUTINE dp_agg.unit_sum(float4), dp_agg.unit_sum(float8),
  dp_agg.unit_sum(numeric) TO PUBLIC;

-- dp_agg puts this aggregate into the HAVING clause of a restricted role's
-- query, which runs as that role.
GRANT EXECUTE ON ROUTINE dp_agg.group_selection(float8, float8) TO PUBLIC;

-- dp_agg on Citus: the planner hook writes these into the analyst's query
-- over a distributed table (dp_count's monomorphic forms, charged like
-- dp_count, and the identity around a distribution-column group key).
GRANT EXECUTE ON ROUTINE
  dp_agg.citus_count(boolean, float8),
  dp_agg.citus_count(boolean, float8, float8),
  dp_agg.citus_count_interval(boolean, float8, float8),
  dp_agg.citus_count_interval(boolean, float8, float8, float8),
  dp_agg.citus_group_key(anyelement)
TO PUBLIC;

-- The support functions of dp_agg's own aggregates: Citus checks EXECUTE on
-- an aggregate's transition, combine and final functions for the querying
-- role on every node. They are safe to grant because of where they run, not
-- who calls them (src/pg/support_guard.h; README, "Scaling out with Citus",
-- "Who may query"): only inside an aggregate call, only for dp_agg's own
-- aggregates or a Citus site dp_agg prepared (an aggregate built on them is
-- refused when created and when run), and only on states dp_agg's executor
-- hook prepared (never on a state typed as text).
GRANT EXECUTE ON FUNCTION
  dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8),
  dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8),
  dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8, float8),
  dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8),
  dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8, float8),
  dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8),
  dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8, float8),
  dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8),
  dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8, float8),
  dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8),
  dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8, float8),
  dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8),
  dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8),
  dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8, float8),
  dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8),
  dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8),
  dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8, float8),
  dp_agg.group_selection_transfn(dp_agg.aggregate_state, float8, float8),
  dp_agg.combine(dp_agg.aggregate_state, dp_agg.aggregate_state),
  dp_agg.count_final(dp_agg.aggregate_state),
  dp_agg.count_interval_final(dp_agg.aggregate_state),
  dp_agg.sum_final_int8(dp_agg.aggregate_state),
  dp_agg.sum_final_numeric(dp_agg.aggregate_state),
  dp_agg.sum_final_float4(dp_agg.aggregate_state),
  dp_agg.sum_final_float8(dp_agg.aggregate_state),
  dp_agg.sum_interval_final(dp_agg.aggregate_state),
  dp_agg.avg_final_numeric(dp_agg.aggregate_state),
  dp_agg.avg_final_float8(dp_agg.aggregate_state),
  dp_agg.avg_interval_final(dp_agg.aggregate_state),
  dp_agg.group_selection_final(dp_agg.aggregate_state),
  dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8),
  dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8, float8),
  dp_agg.quantile_combine(dp_agg.quantile_state, dp_agg.quantile_state),
  dp_agg.quantile_final(dp_agg.quantile_state),
  dp_agg.select_transfn(dp_agg.selection_state, anyelement, anyarray, float8),
  dp_agg.select_transfn(dp_agg.selection_state, anyelement, float8, float8, float8, anyarray, float8),
  dp_agg.select_combine(dp_agg.selection_state, dp_agg.selection_state),
  dp_agg.select_final(dp_agg.selection_state, anyelement, anyarray, float8),
  dp_agg.select_final(dp_agg.selection_state, anyelement, float8, float8, float8, anyarray, float8)
TO PUBLIC;

-- dp_select's Citus forms (65_citus.sql), written into queries over distributed
-- tables by the planner hook, and their final functions (Citus checks EXECUTE).
GRANT EXECUTE ON ROUTINE
  dp_agg.citus_select(text, text[], float8),
  dp_agg.citus_select(text, float8, float8, float8, text[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, text, text[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, text, float8, float8, float8, text[], float8),
  dp_agg.citus_select(integer, integer[], float8),
  dp_agg.citus_select(integer, float8, float8, float8, integer[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, integer, integer[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, integer, float8, float8, float8, integer[], float8),
  dp_agg.citus_select(bigint, bigint[], float8),
  dp_agg.citus_select(bigint, float8, float8, float8, bigint[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, bigint, bigint[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, bigint, float8, float8, float8, bigint[], float8)
TO PUBLIC;

-- Comments for the support functions granted above.
COMMENT ON FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.group_selection_transfn(dp_agg.aggregate_state, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.combine(dp_agg.aggregate_state, dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (combine function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.count_final(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.count_interval_final(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.sum_final_int8(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.sum_final_numeric(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.sum_final_float4(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.sum_final_float8(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.sum_interval_final(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.avg_final_numeric(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.avg_final_float8(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.avg_interval_final(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.group_selection_final(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.quantile_combine(dp_agg.quantile_state, dp_agg.quantile_state) IS
  'Support function of dp_agg''s aggregates (combine function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.quantile_final(dp_agg.quantile_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.select_transfn(dp_agg.selection_state, anyelement, anyarray, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.select_transfn(dp_agg.selection_state, anyelement, float8, float8, float8, anyarray, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.select_combine(dp_agg.selection_state, dp_agg.selection_state) IS
  'Support function of dp_agg''s aggregates (combine function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.select_final(dp_agg.selection_state, anyelement, anyarray, float8) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.select_final(dp_agg.selection_state, anyelement, float8, float8, float8, anyarray, float8) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';

-- dp_agg puts these into a restricted role's expressions over protected rows
-- in place of the built-in arithmetic (75_total_functions.sql), and that query
-- runs as that role. They are pure and never raise.
GRANT EXECUTE ON FUNCTION
  dp_agg.total_int2pl(int2, int2),
  dp_agg.total_int2mi(int2, int2),
  dp_agg.total_int2mul(int2, int2),
  dp_agg.total_int2div(int2, int2),
  dp_agg.total_int4pl(int4, int4),
  dp_agg.total_int4mi(int4, int4),
  dp_agg.total_int4mul(int4, int4),
  dp_agg.total_int4div(int4, int4),
  dp_agg.total_int8pl(int8, int8),
  dp_agg.total_int8mi(int8, int8),
  dp_agg.total_int8mul(int8, int8),
  dp_agg.total_int8div(int8, int8),
  dp_agg.total_int24pl(int2, int4),
  dp_agg.total_int24mi(int2, int4),
  dp_agg.total_int24mul(int2, int4),
  dp_agg.total_int24div(int2, int4),
  dp_agg.total_int42pl(int4, int2),
  dp_agg.total_int42mi(int4, int2),
  dp_agg.total_int42mul(int4, int2),
  dp_agg.total_int42div(int4, int2),
  dp_agg.total_int28pl(int2, int8),
  dp_agg.total_int28mi(int2, int8),
  dp_agg.total_int28mul(int2, int8),
  dp_agg.total_int28div(int2, int8),
  dp_agg.total_int82pl(int8, int2),
  dp_agg.total_int82mi(int8, int2),
  dp_agg.total_int82mul(int8, int2),
  dp_agg.total_int82div(int8, int2),
  dp_agg.total_int48pl(int4, int8),
  dp_agg.total_int48mi(int4, int8),
  dp_agg.total_int48mul(int4, int8),
  dp_agg.total_int48div(int4, int8),
  dp_agg.total_int84pl(int8, int4),
  dp_agg.total_int84mi(int8, int4),
  dp_agg.total_int84mul(int8, int4),
  dp_agg.total_int84div(int8, int4),
  dp_agg.total_int2mod(int2, int2),
  dp_agg.total_int2um(int2),
  dp_agg.total_int4mod(int4, int4),
  dp_agg.total_int4um(int4),
  dp_agg.total_int8mod(int8, int8),
  dp_agg.total_int8um(int8),
  dp_agg.total_float4pl(float4, float4),
  dp_agg.total_float4mi(float4, float4),
  dp_agg.total_float4mul(float4, float4),
  dp_agg.total_float4div(float4, float4),
  dp_agg.total_float8pl(float8, float8),
  dp_agg.total_float8mi(float8, float8),
  dp_agg.total_float8mul(float8, float8),
  dp_agg.total_float8div(float8, float8),
  dp_agg.total_float48pl(float4, float8),
  dp_agg.total_float48mi(float4, float8),
  dp_agg.total_float48mul(float4, float8),
  dp_agg.total_float48div(float4, float8),
  dp_agg.total_float84pl(float8, float4),
  dp_agg.total_float84mi(float8, float4),
  dp_agg.total_float84mul(float8, float4),
  dp_agg.total_float84div(float8, float4),
  dp_agg.total_numeric_add(numeric, numeric),
  dp_agg.total_numeric_sub(numeric, numeric),
  dp_agg.total_numeric_mul(numeric, numeric),
  dp_agg.total_numeric_div(numeric, numeric),
  dp_agg.total_numeric_mod(numeric, numeric),
  dp_agg.total_float8(numeric),
  dp_agg.total_date_pli(date, int4),
  dp_agg.total_date_mii(date, int4),
  dp_agg.total_timestamp_pl_interval(timestamp, interval),
  dp_agg.total_timestamp_mi_interval(timestamp, interval),
  dp_agg.total_timestamptz_pl_interval(timestamptz, interval),
  dp_agg.total_timestamptz_mi_interval(timestamptz, interval),
  dp_agg.total_timestamp(date),
  dp_agg.total_timestamptz(date),
  dp_agg.total_date_trunc(text, timestamp),
  dp_agg.total_lower(text),
  dp_agg.total_upper(text),
  dp_agg.total_texticlike(text, text),
  dp_agg.total_texticnlike(text, text),
  dp_agg.total_bpchariclike(bpchar, text),
  dp_agg.total_bpcharicnlike(bpchar, text),
  dp_agg.total_textlike(text, text),
  dp_agg.total_textnlike(text, text),
  dp_agg.total_textlen(text),
  dp_agg.total_length(text),
  dp_agg.total_char_length(text),
  dp_agg.total_character_length(text),
  dp_agg.total_substr(text, int4, int4),
  dp_agg.total_substr(text, int4),
  dp_agg.total_substring(text, int4, int4),
  dp_agg.total_substring(text, int4),
  dp_agg.total_floor(numeric),
  dp_agg.total_ceil(numeric),
  dp_agg.total_ceiling(numeric),
  dp_agg.total_round(numeric, int4),
  dp_agg.total_trunc(numeric, int4),
  dp_agg.total_width_bucket(numeric, numeric, numeric, int4),
  dp_agg.total_width_bucket(float8, float8, float8, int4),
  dp_agg.total_to_char(timestamp, text),
  dp_agg.total_to_char(timestamptz, text),
  dp_agg.total_date_trunc(text, timestamptz)
TO PUBLIC;

-- dp_agg puts these into a restricted role's expressions over protected rows
-- in place of the casts BI tools write (76_total_casts.sql), and that query
-- runs as that role. They are pure and never raise.
GRANT EXECUTE ON FUNCTION
  dp_agg.total_int4(numeric),
  dp_agg.total_int8(numeric),
  dp_agg.total_int2(numeric),
  dp_agg.total_int4(float8),
  dp_agg.total_int2(float8),
  dp_agg.total_int8(float8),
  dp_agg.total_int4(float4),
  dp_agg.total_int2(float4),
  dp_agg.total_int8(float4),
  dp_agg.total_int4(int8),
  dp_agg.total_int2(int8),
  dp_agg.total_int2(int4),
  dp_agg.total_float4(float8),
  dp_agg.total_date(timestamptz),
  dp_agg.total_timestamp(timestamptz),
  dp_agg.total_timestamptz(timestamp),
  dp_agg.total_to_timestamp(float8),
  dp_agg.total_to_timestamp(text, text, timestamptz, text),
  dp_agg.total_to_date(text, text, date, text)
TO PUBLIC;

-- A restricted session reads these in place of information_schema.tables and
-- information_schema.columns (78_information_schema.sql); they list what
-- pg_catalog shows every role.
GRANT SELECT ON dp_agg.information_schema_tables, dp_agg.information_schema_columns TO PUBLIC;
GRANT EXECUTE ON FUNCTION dp_agg.lists_protected_table(oid) TO PUBLIC;

-- dp_variance and dp_stddev (55_variance.sql): their support functions, for
-- the reasons given above for the other aggregates' (Citus checks EXECUTE).
GRANT EXECUTE ON FUNCTION
  dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8),
  dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8, float8),
  dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8),
  dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8, float8),
  dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8),
  dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8, float8),
  dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8),
  dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8, float8),
  dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8),
  dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8, float8),
  dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8),
  dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8, float8),
  dp_agg.variance_combine(dp_agg.variance_state, dp_agg.variance_state),
  dp_agg.variance_final_float8(dp_agg.variance_state),
  dp_agg.variance_final_numeric(dp_agg.variance_state),
  dp_agg.stddev_final_float8(dp_agg.variance_state),
  dp_agg.stddev_final_numeric(dp_agg.variance_state)
TO PUBLIC;

-- Randomized response (56_randomized_response.sql): an application may randomize
-- the answers it stores; dp_rr_proportion's support functions (not charged,
-- what they read is already private).
GRANT EXECUTE ON FUNCTION
  dp_agg.randomized_response(boolean, float8),
  dp_agg.rr_check_epsilon(float8, float8, float8),
  dp_agg.rr_transfn(float8[], boolean, float8),
  dp_agg.rr_combine(float8[], float8[]),
  dp_agg.rr_proportion_final(float8[]),
  dp_agg.rr_proportion_se_final(float8[])
TO PUBLIC;
