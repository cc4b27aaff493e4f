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
  -- 0.2.0: the accountant (README "Privacy budgets"). A budget is written in
  -- (epsilon, delta) (epsilon_total, delta_total) or in rho (rho_total).
  -- epsilon_spent and delta_spent sum every charge (basic composition); the
  -- columns below split the same charges by how they compose: pure releases'
  -- epsilon and epsilon^2, Gaussian releases' rho and their own epsilon and
  -- delta. What is neither pure nor Gaussian is (epsilon, delta)-only.
  budget_unit text NOT NULL DEFAULT 'epsilon_delta'
    CHECK (budget_unit IN ('epsilon_delta', 'rho')),
  rho_total numeric CHECK (rho_total >= 0),
  rho_spent numeric NOT NULL DEFAULT 0 CHECK (rho_spent >= 0),
  pure_epsilon_spent numeric NOT NULL DEFAULT 0 CHECK (pure_epsilon_spent >= 0),
  pure_epsilon_squared_spent numeric NOT NULL DEFAULT 0 CHECK (pure_epsilon_squared_spent >= 0),
  gaussian_epsilon_spent numeric NOT NULL DEFAULT 0 CHECK (gaussian_epsilon_spent >= 0),
  gaussian_delta_spent numeric NOT NULL DEFAULT 0 CHECK (gaussian_delta_spent >= 0),
  CONSTRAINT role_budget_pkey PRIMARY KEY (role_oid),
  CONSTRAINT role_budget_unit_matches_total CHECK ((budget_unit = 'rho') = (rho_total IS NOT NULL))
);

-- One row per charge and per administrative change (never updated or deleted
-- by dp_agg).
CREATE TABLE dp_agg.ledger_entry (
  id bigserial PRIMARY KEY,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  kind text NOT NULL CHECK (kind IN ('charge', 'set_budget', 'add_budget', 'reset_spent',
                                     'revoke_budget', 'set_budget_zcdp')),
  role_name name NOT NULL,           -- whose budget
  session_user_name name NOT NULL,   -- who ran the query or made the change
  current_user_name name,            -- the active role at that moment (audit only)
  epsilon numeric NOT NULL,          -- charged, or the new/added total for admin rows
  delta numeric NOT NULL,
  query_id bigint,                   -- pg_stat_statements' query identifier, when computed
  aggregates text,                   -- the private aggregates that were paid for
  query text,                        -- the statement text (at most 1000 characters and
                                     -- 1023 bytes, cut between characters)
  role_oid oid,                      -- OID of the role whose budget; NULL only for rows
                                     -- written before 0.2.0 for a role dropped since
  rho numeric                        -- 0.2.0: the charge's Gaussian rho, or the new
                                     -- rho total of a set_budget_zcdp row
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
        delta_total = excluded.delta_total, budget_unit = 'epsilon_delta', rho_total = NULL,
        updated_at = now()
  RETURNING * INTO now_set;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta)
  VALUES ('set_budget', role, name_of_role, session_user, current_user, epsilon::numeric,
          kept_delta);
  IF NOT dp_agg.budget_admits(now_set.budget_unit, now_set.epsilon_total, now_set.delta_total,
                              now_set.rho_total, now_set.epsilon_spent, now_set.delta_spent,
                              now_set.pure_epsilon_spent, now_set.pure_epsilon_squared_spent,
                              now_set.rho_spent, now_set.gaussian_epsilon_spent,
                              now_set.gaussian_delta_spent)
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
  IF EXISTS (SELECT 1 FROM dp_agg.role_budget b WHERE b.role_oid = role AND b.budget_unit = 'rho')
  THEN
    RAISE EXCEPTION 'the budget of role "%" is written in rho', name_of_role
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Set a new rho total with dp_agg.set_budget_zcdp, or write the budget in (epsilon, delta) with dp_agg.set_budget.';
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
  UPDATE dp_agg.role_budget b SET epsilon_spent = 0, delta_spent = 0, rho_spent = 0,
                                  pure_epsilon_spent = 0, pure_epsilon_squared_spent = 0,
                                  gaussian_epsilon_spent = 0, gaussian_delta_spent = 0,
                                  updated_at = now(),
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

-- The accountant (src/pg/accountant_functions.cpp, core/privacy_accountant.h).
CREATE FUNCTION dp_agg.zcdp_admits(epsilon_total numeric, delta_total numeric,
                                   pure_epsilon numeric, pure_epsilon_squared numeric,
                                   rho numeric, approx_epsilon numeric, approx_delta numeric)
RETURNS boolean AS 'MODULE_PATHNAME', 'dp_agg_zcdp_admits'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.budget_terms(budget_unit text, epsilon_total numeric,
                                    delta_total numeric, rho_total numeric,
                                    epsilon_spent numeric, delta_spent numeric,
                                    pure_epsilon_spent numeric,
                                    pure_epsilon_squared_spent numeric, rho_spent numeric,
                                    gaussian_epsilon_spent numeric,
                                    gaussian_delta_spent numeric,
                                    OUT epsilon_remaining numeric, OUT delta_remaining numeric,
                                    OUT rho_remaining numeric, OUT epsilon_guarantee numeric)
AS 'MODULE_PATHNAME', 'dp_agg_budget_terms' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dp_agg.zcdp_epsilon(rho float8, delta float8) RETURNS float8
AS 'MODULE_PATHNAME', 'dp_agg_zcdp_epsilon' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.zcdp_rho(epsilon float8, delta float8) RETURNS float8
AS 'MODULE_PATHNAME', 'dp_agg_zcdp_rho' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.gaussian_count_epsilon(rho float8, delta float8) RETURNS float8
AS 'MODULE_PATHNAME', 'dp_agg_gaussian_count_epsilon' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Whether a budget admits what would then have been spent (README "Privacy
-- budgets"). A budget in (epsilon, delta) admits when either certificate
-- fits: basic composition of every release's (epsilon, delta), exact in
-- numeric (what 0.1.0 checked), or the accountant (dp_agg.zcdp_admits): pure
-- releases in epsilon, Gaussian releases in zCDP (rho), (epsilon, delta)-only
-- releases by basic composition, converted to (epsilon, delta) by Canonne,
-- Kamath and Steinke's bound, every sum rounded up and the budget down. Both
-- certificates hold for the same releases, so the smaller suffices. A budget
-- in rho admits when the Gaussian releases' rho plus epsilon^2 / 2 of the
-- pure ones (Bun and Steinke, Prop. 1.4) fits, exactly in numeric; it cannot
-- pay for (epsilon, delta)-only releases.
CREATE FUNCTION dp_agg.budget_admits(budget_unit text, epsilon_total numeric,
                                     delta_total numeric, rho_total numeric,
                                     epsilon_spent numeric, delta_spent numeric,
                                     pure_epsilon_spent numeric,
                                     pure_epsilon_squared_spent numeric, rho_spent numeric,
                                     gaussian_epsilon_spent numeric,
                                     gaussian_delta_spent numeric)
RETURNS boolean LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN budget_unit = 'rho' THEN
           2 * rho_spent + pure_epsilon_squared_spent <= 2 * rho_total
           AND epsilon_spent - pure_epsilon_spent - gaussian_epsilon_spent = 0
           AND delta_spent - gaussian_delta_spent = 0
         ELSE
           (epsilon_spent <= epsilon_total AND delta_spent <= delta_total)
           OR dp_agg.zcdp_admits(epsilon_total, delta_total, pure_epsilon_spent,
                                 pure_epsilon_squared_spent, rho_spent,
                                 epsilon_spent - pure_epsilon_spent - gaussian_epsilon_spent,
                                 delta_spent - gaussian_delta_spent)
         END
$$;

-- Applied by the ledger writer (never by users): the charge, atomically
-- against the limit, under the row lock of the role's budget, found by the
-- role's OID (role_name: its name at charge time, kept for the audit). The
-- charge comes as the sums of basic composition (epsilon, delta) and, for
-- the accountant, by how its releases compose (pure epsilon and its square,
-- the Gaussian releases' rho and their own epsilon and delta).
CREATE FUNCTION dp_agg.apply_charge(role_oid oid, role name, session_role name, epsilon numeric,
                                    delta numeric, query_id bigint, aggregates text, query text,
                                    pure_epsilon numeric, pure_epsilon_squared numeric,
                                    rho numeric, gaussian_epsilon numeric,
                                    gaussian_delta numeric,
                                    OUT status text, OUT epsilon_total numeric,
                                    OUT epsilon_spent numeric, OUT delta_total numeric,
                                    OUT delta_spent numeric, OUT budget_unit text,
                                    OUT rho_total numeric, OUT rho_spent numeric,
                                    OUT epsilon_remaining numeric, OUT delta_remaining numeric,
                                    OUT rho_remaining numeric)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  now_budget dp_agg.role_budget;
BEGIN
  UPDATE dp_agg.role_budget b
     SET epsilon_spent = b.epsilon_spent + apply_charge.epsilon,
         delta_spent = b.delta_spent + apply_charge.delta,
         pure_epsilon_spent = b.pure_epsilon_spent + apply_charge.pure_epsilon,
         pure_epsilon_squared_spent = b.pure_epsilon_squared_spent
                                      + apply_charge.pure_epsilon_squared,
         rho_spent = b.rho_spent + apply_charge.rho,
         gaussian_epsilon_spent = b.gaussian_epsilon_spent + apply_charge.gaussian_epsilon,
         gaussian_delta_spent = b.gaussian_delta_spent + apply_charge.gaussian_delta,
         role_name = apply_charge.role
   WHERE b.role_oid = apply_charge.role_oid
     AND dp_agg.budget_admits(b.budget_unit, b.epsilon_total, b.delta_total, b.rho_total,
                              b.epsilon_spent + apply_charge.epsilon,
                              b.delta_spent + apply_charge.delta,
                              b.pure_epsilon_spent + apply_charge.pure_epsilon,
                              b.pure_epsilon_squared_spent + apply_charge.pure_epsilon_squared,
                              b.rho_spent + apply_charge.rho,
                              b.gaussian_epsilon_spent + apply_charge.gaussian_epsilon,
                              b.gaussian_delta_spent + apply_charge.gaussian_delta)
  RETURNING b.* INTO now_budget;
  IF FOUND THEN
    INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                     current_user_name, epsilon, delta, query_id, aggregates,
                                     query, rho)
    VALUES ('charge', apply_charge.role_oid, role, role, session_role, apply_charge.epsilon,
            apply_charge.delta, apply_charge.query_id, apply_charge.aggregates,
            left(apply_charge.query, 1000), apply_charge.rho);
    status := 'charged';
  ELSE
    SELECT * INTO now_budget FROM dp_agg.role_budget b WHERE b.role_oid = apply_charge.role_oid;
    status := CASE WHEN FOUND THEN 'exhausted' ELSE 'no_budget' END;
    IF NOT FOUND THEN
      RETURN;
    END IF;
  END IF;
  epsilon_total := now_budget.epsilon_total;
  epsilon_spent := now_budget.epsilon_spent;
  delta_total := now_budget.delta_total;
  delta_spent := now_budget.delta_spent;
  budget_unit := now_budget.budget_unit;
  rho_total := now_budget.rho_total;
  rho_spent := now_budget.rho_spent
               + CASE WHEN now_budget.budget_unit = 'rho'
                      THEN now_budget.pure_epsilon_squared_spent * 0.5 ELSE 0 END;
  SELECT t.epsilon_remaining, t.delta_remaining, t.rho_remaining
    INTO epsilon_remaining, delta_remaining, rho_remaining
    FROM dp_agg.budget_terms(now_budget.budget_unit, now_budget.epsilon_total,
                             now_budget.delta_total, now_budget.rho_total,
                             now_budget.epsilon_spent, now_budget.delta_spent,
                             now_budget.pure_epsilon_spent,
                             now_budget.pure_epsilon_squared_spent, now_budget.rho_spent,
                             now_budget.gaussian_epsilon_spent,
                             now_budget.gaussian_delta_spent) t;
END $$;

-- Sets a role's budget in rho (zero-concentrated DP): its Gaussian releases
-- cost their rho, its pure releases epsilon^2 / 2; spent amounts are kept.
-- The role's guarantee is rho-zCDP, i.e. (dp_agg.zcdp_epsilon(rho, delta),
-- delta)-DP for every delta. set_budget writes it back in (epsilon, delta).
CREATE FUNCTION dp_agg.set_budget_zcdp(role regrole, rho float8)
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
  IF rho IS NULL OR rho = 'NaN' OR rho < 0 OR rho = 'Infinity' THEN
    RAISE EXCEPTION 'invalid budget: rho %', rho
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'rho must be a finite number >= 0 (e.g. dp_agg.zcdp_rho(1, 1e-6) for the rho that (1, 1e-6) buys).';
  END IF;
  INSERT INTO dp_agg.role_budget AS b (role_oid, role_name, epsilon_total, delta_total,
                                       budget_unit, rho_total)
  VALUES (role, name_of_role, 0, 0, 'rho', rho::numeric)
  ON CONFLICT (role_oid) DO UPDATE
    SET role_name = excluded.role_name, budget_unit = 'rho', rho_total = excluded.rho_total,
        updated_at = now()
  RETURNING * INTO now_set;
  INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name,
                                   current_user_name, epsilon, delta, rho)
  VALUES ('set_budget_zcdp', role, name_of_role, session_user, current_user, 0, 0, rho::numeric);
  IF 2 * now_set.rho_spent + now_set.pure_epsilon_squared_spent > 2 * now_set.rho_total
     OR now_set.epsilon_spent - now_set.pure_epsilon_spent - now_set.gaussian_epsilon_spent > 0
     OR now_set.delta_spent - now_set.gaussian_delta_spent > 0 THEN
    RAISE NOTICE 'role "%" has already spent more than rho % (or spent on (epsilon, delta)-only releases, which rho cannot pay for): its remaining budget is 0',
      name_of_role, now_set.rho_total;
  END IF;
END $$;

-- Budgets: administrators see every role, everyone else their own (by OID,
-- so a role keeps its row through a rename). role is the role's current
-- name, or the last name it had if it was dropped (role_dropped).
-- epsilon_spent and delta_spent are the sums of the charges (basic
-- composition); what remains is what one more release may still spend, by
-- the better of basic composition and the accountant (dp_agg.budget_terms):
-- epsilon_remaining for a pure release, delta_remaining for an
-- (epsilon, delta)-only one, rho_remaining for a Gaussian one, never
-- negative. epsilon_guarantee: the epsilon the role's releases so far are
-- certified at delta_total. A budget written in rho shows no epsilon or
-- delta total; its rho_spent includes epsilon^2 / 2 of its pure releases.
CREATE VIEW dp_agg.budgets WITH (security_barrier) AS
  SELECT coalesce(r.rolname, b.role_name) AS role,
         CASE WHEN b.budget_unit = 'rho' THEN NULL ELSE b.epsilon_total END AS epsilon_total,
         b.epsilon_spent, t.epsilon_remaining,
         CASE WHEN b.budget_unit = 'rho' THEN NULL ELSE b.delta_total END AS delta_total,
         b.delta_spent, t.delta_remaining, b.updated_at,
         r.oid IS NULL AS role_dropped, b.budget_unit, b.rho_total,
         b.rho_spent + CASE WHEN b.budget_unit = 'rho'
                            THEN b.pure_epsilon_squared_spent * 0.5 ELSE 0 END AS rho_spent,
         t.rho_remaining, t.epsilon_guarantee
  FROM dp_agg.role_budget b LEFT JOIN pg_catalog.pg_roles r ON r.oid = b.role_oid
       CROSS JOIN LATERAL dp_agg.budget_terms(b.budget_unit, b.epsilon_total, b.delta_total,
                                              b.rho_total, b.epsilon_spent, b.delta_spent,
                                              b.pure_epsilon_spent,
                                              b.pure_epsilon_squared_spent, b.rho_spent,
                                              b.gaussian_epsilon_spent,
                                              b.gaussian_delta_spent) t
  WHERE b.role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s WHERE s.rolname = session_user)
     OR dp_agg.is_admin();

-- The ledger, filtered the same way: a new role that takes a dropped role's
-- name does not see the dropped role's rows.
CREATE VIEW dp_agg.ledger WITH (security_barrier) AS
  SELECT id, recorded_at, kind, role_name AS role, session_user_name, current_user_name,
         epsilon, delta, query_id, aggregates, query, rho
  FROM dp_agg.ledger_entry
  WHERE role_oid = (SELECT s.oid FROM pg_catalog.pg_roles s WHERE s.rolname = session_user)
     OR dp_agg.is_admin();

-- What the session user has left, in both terms (as in dp_agg.budgets).
CREATE FUNCTION dp_agg.remaining_budget(OUT epsilon numeric, OUT delta numeric, OUT rho numeric)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT t.epsilon_remaining, t.delta_remaining, t.rho_remaining
  FROM dp_agg.role_budget b
       CROSS JOIN LATERAL dp_agg.budget_terms(b.budget_unit, b.epsilon_total, b.delta_total,
                                              b.rho_total, b.epsilon_spent, b.delta_spent,
                                              b.pure_epsilon_spent,
                                              b.pure_epsilon_squared_spent, b.rho_spent,
                                              b.gaussian_epsilon_spent,
                                              b.gaussian_delta_spent) t
  WHERE b.role_oid = (SELECT s.oid FROM pg_roles s WHERE s.rolname = session_user)
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

COMMENT ON FUNCTION dp_agg.zcdp_admits(numeric, numeric, numeric, numeric, numeric, numeric, numeric) IS
  'Whether the zCDP accountant certifies a spending within an (epsilon, delta) budget (internal)';
COMMENT ON FUNCTION dp_agg.budget_terms(text, numeric, numeric, numeric, numeric, numeric, numeric, numeric, numeric, numeric, numeric) IS
  'A budget''s remaining epsilon, delta and rho and its epsilon guarantee at its delta total (behind dp_agg.budgets)';
COMMENT ON FUNCTION dp_agg.zcdp_epsilon(float8, float8) IS
  'zcdp_epsilon(rho, delta): the epsilon at which rho-zCDP is (epsilon, delta)-DP (Canonne, Kamath and Steinke 2020)';
COMMENT ON FUNCTION dp_agg.zcdp_rho(float8, float8) IS
  'zcdp_rho(epsilon, delta): the largest rho whose zCDP guarantee is within (epsilon, delta)';
COMMENT ON FUNCTION dp_agg.gaussian_count_epsilon(float8, float8) IS
  'gaussian_count_epsilon(rho, delta): the largest epsilon at which dp_count(value, epsilon, delta) costs at most rho';
COMMENT ON FUNCTION dp_agg.budget_admits(text, numeric, numeric, numeric, numeric, numeric, numeric, numeric, numeric, numeric, numeric) IS
  'Whether a budget admits a spending, by basic composition or the zCDP accountant (internal)';
COMMENT ON FUNCTION dp_agg.apply_charge(oid, name, name, numeric, numeric, bigint, text, text, numeric, numeric, numeric, numeric, numeric) IS
  'Records one charge atomically against the limit (called by the ledger writer only)';
COMMENT ON FUNCTION dp_agg.set_budget_zcdp(regrole, float8) IS
  'set_budget_zcdp(role, rho): sets a role''s budget in rho (zCDP), keeping what it spent (administrators; leaves a ledger row)';
COMMENT ON VIEW dp_agg.budgets IS
  'Privacy budgets: administrators see every role, everyone else their own';
COMMENT ON VIEW dp_agg.ledger IS
  'The privacy ledger: administrators see every row, everyone else the rows of their own budget';
COMMENT ON FUNCTION dp_agg.remaining_budget() IS
  'The epsilon, delta and rho the session user has left';

-- What a query would cost, without running it: parsed, judged, planned and
-- started as the caller (refused exactly when running it would be), costed
-- by the same code as a real execution, never run and never charged. The
-- cost depends only on the query (its epsilons, deltas, grouping sets and
-- group selection), never on the data.
CREATE FUNCTION dp_agg.query_cost(query text, OUT epsilon numeric, OUT delta numeric,
                                  OUT aggregates text, OUT rho numeric)
  AS 'MODULE_PATHNAME', 'dp_agg_query_cost' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dp_agg.query_cost(text) IS
  'query_cost(query): the epsilon and delta a SELECT would be charged (and the rho of its Gaussian releases), and for which aggregates, without running or charging it';
