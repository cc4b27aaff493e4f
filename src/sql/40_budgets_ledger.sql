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
--
-- Role OIDs mean something only in the cluster that assigned them, so every
-- budget and ledger row also records the system identifier of the cluster it
-- was written in (system_identifier). A row restored from a dump of another
-- cluster (pg_dumpall, or pg_dump restored elsewhere), where the same names
-- were given other OIDs and its OID may belong to somebody else, is found by
-- no role: it is *orphaned* until an administrator re-attaches it to the role
-- of its recorded name (dp_agg.reattach_budgets, 42_budget_restores.sql).
-- Copies within one cluster (CREATE DATABASE ... TEMPLATE, a pg_dump restored
-- into another database, a physical standby or backup) keep the cluster's
-- identifier and OIDs: each such database has its own budgets, copied with
-- what was spent so far.
-- ===========================================================================

-- The system identifier of this cluster (pg_control_system()'s, read from
-- shared memory): chosen by initdb, kept by physical copies, new in a cluster
-- that a dump is restored into.
CREATE FUNCTION dp_agg.system_identifier() RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_agg_system_identifier' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE TABLE dp_agg.role_budget (
  role_name name NOT NULL,
  epsilon_total numeric NOT NULL CHECK (epsilon_total >= 0),
  epsilon_spent numeric NOT NULL DEFAULT 0 CHECK (epsilon_spent >= 0),
  delta_total numeric NOT NULL DEFAULT 0 CHECK (delta_total >= 0 AND delta_total < 1),
  delta_spent numeric NOT NULL DEFAULT 0 CHECK (delta_spent >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  role_oid oid NOT NULL,
  -- 0.2.0 (README "Privacy budgets"): every budget has one kind, chosen by
  -- an administrator, and is admitted by that kind's certificate only:
  -- 'epsilon_delta' (dp_agg.set_budget): basic composition, epsilon_spent
  -- <= epsilon_total and delta_spent <= delta_total;
  -- 'zcdp' (dp_agg.set_budget_zcdp): approximate zCDP, rho_spent <=
  -- rho_total and zcdp_delta_spent <= zcdp_delta_total.
  -- Every charge is added to all four sums whatever the kind, so that a
  -- change of kind never forgets spending.
  budget_kind text NOT NULL DEFAULT 'epsilon_delta'
    CHECK (budget_kind IN ('epsilon_delta', 'zcdp')),
  rho_total numeric CHECK (rho_total >= 0),
  zcdp_delta_total numeric CHECK (zcdp_delta_total >= 0 AND zcdp_delta_total < 1),
  rho_spent numeric NOT NULL DEFAULT 0 CHECK (rho_spent >= 0),
  zcdp_delta_spent numeric NOT NULL DEFAULT 0 CHECK (zcdp_delta_spent >= 0),
  -- A kind the role had earlier, since its last reset_spent, whose
  -- certificate still binds (README "Switching kinds"): set when the kind is
  -- switched away from it with anything spent, cleared by reset_spent.
  -- Admission then needs every binding certificate, each with that kind's
  -- own totals (kept: a zCDP budget switched to epsilon_delta keeps
  -- rho_total and zcdp_delta_total).
  epsilon_delta_binding boolean NOT NULL DEFAULT false,
  zcdp_binding boolean NOT NULL DEFAULT false,
  -- The cluster whose role OID role_oid is (see above).
  system_identifier bigint NOT NULL DEFAULT dp_agg.system_identifier(),
  -- The earlier owners of this budget, 'role OID@system identifier', one per
  -- re-attachment after a restore: their ledger rows are this role's too.
  reattached_from text[] NOT NULL DEFAULT '{}',
  -- 0.2.0, budgets that renew (README "Budgets that renew",
  -- 38_budget_periods.sql, 48_budget_renewal.sql): NULL for a budget that
  -- never renews. Otherwise its spent amounts are those of the period that
  -- starts at period_start, one of the boundaries renew_from + k *
  -- renew_every; the first charge after the next boundary records a
  -- 'renewal' ledger row with the amounts forgotten and starts again from 0.
  renew_every interval,
  renew_from timestamptz,
  period_start timestamptz,
  CONSTRAINT role_budget_pkey PRIMARY KEY (role_oid, system_identifier),
  CONSTRAINT role_budget_kind_has_totals
    CHECK ((budget_kind = 'zcdp' OR zcdp_binding) = (rho_total IS NOT NULL)
           AND (rho_total IS NULL) = (zcdp_delta_total IS NULL)
           AND NOT (budget_kind = 'zcdp' AND zcdp_binding)
           AND NOT (budget_kind = 'epsilon_delta' AND epsilon_delta_binding)),
  CONSTRAINT role_budget_renewal
    CHECK ((renew_every IS NULL) = (renew_from IS NULL)
           AND (renew_every IS NULL) = (period_start IS NULL))
);

-- One row per charge, per reuse of a stored release (kind 'reused', epsilon
-- 0: src/pg/release_cache.h) and per administrative change, appended by
-- dp_agg.append_ledger_entry only; never updated or deleted (triggers refuse
-- it, 46_ledger_integrity.sql). Every row is chained: seq numbers the rows
-- without gaps in the order they were chained, and entry_hash is SHA-256 of
-- the row's canonical content (every column but entry_hash) and of the
-- previous row's entry_hash (README "A tamper-evident ledger").
CREATE TABLE dp_agg.ledger_entry (
  id bigserial PRIMARY KEY,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  kind text NOT NULL CHECK (kind IN ('charge', 'set_budget', 'add_budget', 'reset_spent',
                                     'revoke_budget', 'set_budget_zcdp', 'reused',
                                     'reattach_budget', 'renewal')),
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
  rho numeric,                       -- 0.2.0: the charge in zCDP (rho, zcdp_delta), or
  zcdp_delta numeric,                -- the new totals of a set_budget_zcdp row; NULL
                                     -- for rows written before 0.2.0
  -- The cluster whose role OID role_oid is (as in role_budget).
  -- A reattach_budget row: role_oid is the role that now holds the budget,
  -- epsilon, delta, rho and zcdp_delta what it had spent, query what it
  -- was attached from.
  -- A renewal row (0.2.0, 48_budget_renewal.sql): epsilon, delta, rho and
  -- zcdp_delta what the period that ended had spent (forgotten from here
  -- on), query the schedule and the period that starts.
  system_identifier bigint NOT NULL DEFAULT dp_agg.system_identifier(),
  seq bigint,                        -- 0.2.0: position in the chain, 1, 2, 3, ...; NULL only
                                     -- until the commit of an administrator's change
  budget_digest bytea,               -- SHA-256 of the role's dp_agg.role_budget row right
                                     -- after this entry (NULL: no budget after a
                                     -- revoke_budget; unknown for rows written before 0.2.0)
  entry_hash bytea,                  -- SHA-256 of this row and of the previous row's hash
  CONSTRAINT ledger_entry_seq_key UNIQUE (seq),
  CONSTRAINT ledger_entry_chained CHECK ((seq IS NULL) = (entry_hash IS NULL) AND seq >= 1)
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

-- Refuses to give a role a fresh budget while a budget restored from another
-- cluster under its name waits to be re-attached (ZP004): a fresh budget
-- beside it would start from nothing spent, forgetting the privacy loss the
-- restored one records.
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

-- Adds to a role's (epsilon, delta) totals (creating such a budget if it has
-- none). A zCDP budget is refused: adding epsilon to a rho total has no
-- meaning, and silently switching its kind would be a surprise; the
-- administrator sets a new rho total with set_budget_zcdp instead.
CREATE FUNCTION dp_agg.add_budget(role regrole, epsilon float8, delta float8 DEFAULT 0)
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

-- Sets a role's spent amounts (in both currencies) back to zero. This gives
-- privacy budget back, so it is an administrator's decision and leaves an
-- audit row. It also ends the binding of earlier kinds' certificates: from
-- here on only the current kind's admits (README "Switching kinds").
CREATE FUNCTION dp_agg.reset_spent(role regrole)
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

-- Removes a role's budget: its private queries are refused again.
CREATE FUNCTION dp_agg.revoke_budget(role regrole)
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
-- The ledger, filtered the same way: a new role that takes a dropped role's
-- name does not see the dropped role's rows, nor a role the rows of another
-- cluster's role that had its OID there; a role sees the rows of the budgets
-- re-attached to it (role_budget.reattached_from).
CREATE VIEW dp_agg.ledger WITH (security_barrier) AS
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
  WHERE v.role = session_user AND NOT v.role_dropped AND NOT v.orphaned
$$;

COMMENT ON TABLE dp_agg.role_budget IS
  'Privacy budget of each login role (kind, totals and exact spent amounts in both currencies); read it through dp_agg.budgets';
COMMENT ON TABLE dp_agg.ledger_entry IS
  'The privacy ledger: one row per charge, per reuse of a stored release and per budget change, append-only and chained by SHA-256 (seq, entry_hash); read it through dp_agg.ledger, check it with dp_agg.verify_ledger()';
COMMENT ON FUNCTION dp_agg.is_admin() IS
  'True when the session user is a superuser or a member of the role named by dp_agg.admin_role';
COMMENT ON FUNCTION dp_agg.require_admin(text) IS
  'Raises insufficient_privilege unless dp_agg.is_admin() (internal)';
COMMENT ON FUNCTION dp_agg.check_amounts(float8, float8) IS
  'Validates a budget amount: finite epsilon >= 0, delta in [0, 1) (internal)';
COMMENT ON FUNCTION dp_agg.system_identifier() IS
  'The system identifier of this cluster (as pg_control_system() shows it), recorded with every budget and ledger row: role OIDs mean something only in the cluster that assigned them';
COMMENT ON FUNCTION dp_agg.refuse_beside_orphan(oid, name) IS
  'Raises ZP004 when a role without a budget here has a budget restored from another cluster under its name, not yet re-attached (internal)';
COMMENT ON FUNCTION dp_agg.set_budget(regrole, float8, float8, interval, timestamptz) IS
  'set_budget(role, epsilon[, delta][, renew_every => interval][, renew_from => timestamptz]): makes a role''s budget an (epsilon, delta) budget (basic composition) with these totals, keeping what it spent and, when delta is omitted, its delta total; renew_every makes the totals per period (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.add_budget(regrole, float8, float8) IS
  'add_budget(role, epsilon, delta): adds to a role''s (epsilon, delta) budget totals; refused for zCDP budgets (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.reset_spent(regrole) IS
  'reset_spent(role): sets a role''s spent amounts back to zero, giving budget back (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.revoke_budget(regrole) IS
  'revoke_budget(role): removes a role''s budget, so its private queries are refused (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.apply_charge(oid, name, name, numeric, numeric, bigint, text, text, numeric, numeric) IS
  'Records one charge atomically against the limit of the budget''s own kind (called by the ledger writer only)';
COMMENT ON FUNCTION dp_agg.set_budget_zcdp(regrole, numeric, numeric, interval, timestamptz) IS
  'set_budget_zcdp(role, rho[, delta][, renew_every => interval][, renew_from => timestamptz]): makes a role''s budget a zCDP budget (approximate zCDP: rho and delta add up), keeping what it spent; renew_every makes the totals per period (administrators; leaves a ledger row)';
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
  'Privacy budgets: administrators see every role, everyone else their own (a renewing budget''s amounts are its current period''s)';
COMMENT ON FUNCTION dp_agg.budget_in_period(dp_agg.role_budget, timestamptz) IS
  'budget_in_period(budget, at): a budget row as it is in the period containing at: a renewing budget whose period ended is shown renewed (nothing spent) (internal)';
COMMENT ON VIEW dp_agg.ledger IS
  'The privacy ledger: administrators see every row, everyone else the rows of their own budget';
COMMENT ON FUNCTION dp_agg.remaining_budget() IS
  'What the session user has left (the least over every binding certificate): epsilon, delta, rho, the kind of its budget and the certificates that bind';

-- What a query would cost, without running it: parsed, judged, planned and
-- started as the caller (refused exactly when running it would be), costed
-- by the same code as a real execution, never run and never charged. The
-- cost depends only on the query (its epsilons, deltas, grouping sets and
-- group selection), never on the data.
CREATE FUNCTION dp_agg.query_cost(query text, OUT epsilon numeric, OUT delta numeric,
                                  OUT aggregates text, OUT rho numeric,
                                  OUT zcdp_delta numeric)
  AS 'MODULE_PATHNAME', 'dp_agg_query_cost' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dp_agg.query_cost(text) IS
  'query_cost(query): what a SELECT would be charged, in (epsilon, delta) and in zCDP (rho, zcdp_delta), and for which aggregates, without running or charging it';
