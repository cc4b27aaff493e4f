-- ===========================================================================
-- Privacy budgets and the ledger.
--
-- Who pays: the session user, i.e. the role that logged in. SET ROLE and
-- SECURITY DEFINER functions change current_user but not session_user, so
-- they cannot move spending to a role with more budget, and membership in
-- other roles grants no budget. Budgets belong to login roles.
-- Budgets are per database (each database has its own tables and writer).
-- Amounts are exact numerics: 50 charges of 0.1 are exactly 5.0.
--
-- Budgets follow roles, not names: a budget row and the ledger rows are keyed
-- by the role's OID (role_oid). ALTER ROLE ... RENAME keeps the budget; a
-- dropped role's budget row stays (for audit, under the name it had) and is
-- never found by a new role of the same name, which has another OID.
-- role_name is the name the role had when its row was last written.
-- ===========================================================================

CREATE TABLE dp_agg.role_budget (
  role_name name NOT NULL,
  epsilon_total numeric NOT NULL CHECK (epsilon_total >= 0),
  epsilon_spent numeric NOT NULL DEFAULT 0 CHECK (epsilon_spent >= 0),
  delta_total numeric NOT NULL DEFAULT 0 CHECK (delta_total >= 0 AND delta_total < 1),
  delta_spent numeric NOT NULL DEFAULT 0 CHECK (delta_spent >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  role_oid oid NOT NULL,
  CONSTRAINT role_budget_pkey PRIMARY KEY (role_oid)
);

-- One row per charge and per administrative change (never updated or deleted
-- by dp_agg).
CREATE TABLE dp_agg.ledger_entry (
  id bigserial PRIMARY KEY,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  kind text NOT NULL CHECK (kind IN ('charge', 'set_budget', 'add_budget', 'reset_spent',
                                     'revoke_budget')),
  role_name name NOT NULL,           -- whose budget
  session_user_name name NOT NULL,   -- who ran the query or made the change
  current_user_name name,            -- the active role at that moment (audit only)
  epsilon numeric NOT NULL,          -- charged, or the new/added total for admin rows
  delta numeric NOT NULL,
  query_id bigint,                   -- pg_stat_statements' query identifier, when computed
  aggregates text,                   -- the private aggregates that were paid for
  query text,                        -- the statement text (at most 1000 characters and
                                     -- 1023 bytes, cut between characters)
  role_oid oid                       -- OID of the role whose budget; NULL only for rows
                                     -- written before 0.2.0 for a role dropped since
);

-- pg_dump keeps budgets and the ledger.
SELECT pg_catalog.pg_extension_config_dump('dp_agg.role_budget', '');
SELECT pg_catalog.pg_extension_config_dump('dp_agg.ledger_entry', '');
SELECT pg_catalog.pg_extension_config_dump('dp_agg.ledger_entry_id_seq', '');


-- Administrators: superusers, and members of the role named by the
-- superuser-only setting dp_agg.admin_role. Judged by the session user, so
-- that neither SET ROLE nor a SECURITY DEFINER function can lend the right.
CREATE FUNCTION dp_agg.is_admin() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = session_user AND rolsuper)
      OR (coalesce(current_setting('dp_agg.admin_role', true), '') <> ''
          AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_setting('dp_agg.admin_role'))
          AND pg_has_role(session_user, current_setting('dp_agg.admin_role'), 'MEMBER'))
$$;

CREATE FUNCTION dp_agg.require_admin(action text) RETURNS void
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT dp_agg.is_admin() THEN
    RAISE EXCEPTION 'permission denied to %', action
      USING ERRCODE = 'insufficient_privilege',
            HINT = 'Only superusers and members of the role named in dp_agg.admin_role manage privacy budgets.';
  END IF;
END $$;

CREATE FUNCTION dp_agg.check_amounts(epsilon float8, delta float8) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF epsilon IS NULL OR delta IS NULL OR epsilon = 'NaN' OR epsilon < 0
     OR epsilon = 'Infinity' OR delta = 'NaN' OR delta < 0 OR delta >= 1 THEN
    RAISE EXCEPTION 'invalid budget: epsilon % and delta %', epsilon, delta
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'epsilon must be a finite number >= 0 and delta a number in [0, 1).';
  END IF;
END $$;

-- Sets a role's totals (spent amounts are kept). delta NULL (the default)
-- keeps the role's delta total (0 for a new budget), so that
-- set_budget('alice', 5.0) never silently takes away a delta budget.
-- A total below what was already spent is accepted: it stops the role's
-- private queries (remaining is shown as 0, never negative), which is what an
-- administrator lowering a budget means; a NOTICE says so.
CREATE FUNCTION dp_agg.set_budget(role regrole, epsilon float8, delta float8 DEFAULT NULL)
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
CREATE FUNCTION dp_agg.add_budget(role regrole, epsilon float8, delta float8 DEFAULT 0)
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
CREATE FUNCTION dp_agg.reset_spent(role regrole)
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
CREATE FUNCTION dp_agg.revoke_budget(role regrole)
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


-- Budgets: administrators see every role, everyone else their own (by OID,
-- so a role keeps its row through a rename). role is the role's current
-- name, or the last name it had if it was dropped (role_dropped). A total
-- set below what was spent shows 0 remaining, never a negative amount.
CREATE VIEW dp_agg.budgets WITH (security_barrier) AS
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
CREATE VIEW dp_agg.ledger WITH (security_barrier) AS
  SELECT id, recorded_at, kind, role_name AS role, session_user_name, current_user_name,
         epsilon, delta, query_id, aggregates, query
  FROM dp_agg.ledger_entry
  WHERE role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s WHERE s.rolname = session_user)
     OR dp_agg.is_admin();

-- What the session user has left (0, never negative).
CREATE FUNCTION dp_agg.remaining_budget(OUT epsilon numeric, OUT delta numeric)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT greatest(epsilon_total - epsilon_spent, 0), greatest(delta_total - delta_spent, 0)
  FROM dp_agg.role_budget
  WHERE role_oid = (SELECT s.oid FROM pg_roles s WHERE s.rolname = session_user)
$$;


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

-- What a query would cost, without running it: parsed, judged, planned and
-- started as the caller (refused exactly when running it would be), costed
-- by the same code as a real execution, never run and never charged. The
-- cost depends only on the query (its epsilons, deltas, grouping sets and
-- group selection), never on the data.
CREATE FUNCTION dp_agg.query_cost(query text, OUT epsilon numeric, OUT delta numeric,
                                  OUT aggregates text)
  AS 'MODULE_PATHNAME', 'dp_agg_query_cost' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dp_agg.query_cost(text) IS
  'query_cost(query): the epsilon and delta a SELECT would be charged, and for which aggregates, without running or charging it';
