-- dp_agg 0.1.0 -> 0.2.0. Brings a 0.1.0 installation to exactly the catalog
-- state of a fresh 0.2.0 install (test/upgrade/run_upgrade_test.sh compares
-- the two). Budgets, the ledger and security labels are kept: no table is
-- rewritten.
--
-- 0.2.0 changes of the SQL objects:
--  * budgets and ledger rows are keyed by the role's OID (see below);
--  * set_budget keeps the delta total when delta is omitted; remaining
--    budgets are never shown negative;
--  * COMMENT ON every object of the extension;
--  * privileges in schema dp_agg decided in one place: everything is revoked
--    from PUBLIC and the public entry points are granted back by name (the
--    state types' input/output functions are no longer executable by PUBLIC).
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
    RAISE NOTICE 'role "%" has already spent more than the new total (epsilon % of %, delta % of %): its remaining budget is 0',
      name_of_role, now_set.epsilon_spent, now_set.epsilon_total, now_set.delta_spent,
      now_set.delta_total;
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
                                  OUT aggregates text)
  AS 'MODULE_PATHNAME', 'dp_agg_query_cost' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dp_agg.query_cost(text) IS
  'query_cost(query): the epsilon and delta a SELECT would be charged, and for which aggregates, without running or charging it';

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
  'Transition state of dp_percentile and dp_median (exact bin counts: never shown to analysts)';
COMMENT ON AGGREGATE dp_percentile(float8, float8, float8, float8, float8) IS
  'dp_percentile(value, fraction, lower, upper, epsilon): epsilon-DP quantile by the exponential mechanism over 1024 bins of [lower, upper]';
COMMENT ON AGGREGATE dp_median(float8, float8, float8, float8) IS
  'dp_median(value, lower, upper, epsilon): epsilon-DP median by the exponential mechanism over 1024 bins of [lower, upper]';
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

-- The privileges of 0.2.0, as in src/sql/90_privileges.sql.
GRANT USAGE ON SCHEMA dp_agg TO PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA dp_agg FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA dp_agg FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA dp_agg FROM PUBLIC;

-- Views that filter rows by the session user.
GRANT SELECT ON dp_agg.budgets, dp_agg.ledger, dp_agg.protected_tables, dp_agg.restricted_roles
  TO PUBLIC;

-- The budget and label administration functions check dp_agg.is_admin()
-- themselves (judged by the session user), and is_admin() is called by the
-- views above as the querying user.
GRANT EXECUTE ON FUNCTION
  dp_agg.is_admin(),
  dp_agg.remaining_budget(),
  dp_agg.query_cost(text),
  dp_agg.set_budget(regrole, float8, float8),
  dp_agg.add_budget(regrole, float8, float8),
  dp_agg.reset_spent(regrole),
  dp_agg.revoke_budget(regrole),
  dp_agg.protect_table(regclass),
  dp_agg.unprotect_table(regclass),
  dp_agg.restrict_role(regrole),
  dp_agg.unrestrict_role(regrole)
TO PUBLIC;

-- dp_agg puts this aggregate into the HAVING clause of a restricted role's
-- query, which runs as that role.
GRANT EXECUTE ON ROUTINE dp_agg.group_selection(float8, float8) TO PUBLIC;
