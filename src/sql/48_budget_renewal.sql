-- ===========================================================================
-- Budgets that renew (README "Budgets that renew").
--
-- dp_agg.set_budget(role, epsilon, delta, renew_every => interval '1 day')
-- (and set_budget_zcdp(role, rho, delta, renew_every => ...)) make a budget's
-- totals per period: the periods are fixed by a public clock
-- (38_budget_periods.sql: boundaries renew_from + k * renew_every), never by
-- the role's activity.
--
-- Renewal is lazy: the ledger writer, about to apply a charge, first renews
-- the budget if a boundary has passed since its period began
-- (dp_agg.renew_budget_if_due, called by dp_agg.apply_charge), under the
-- budget row's lock and in the same transaction as the charge. It records a
-- ledger row of kind 'renewal' (chained like every entry) with the amounts
-- the ended period had spent, which are forgotten, and sets the spent
-- amounts to 0 and period_start to the start of the current period. So
--  - a charge counts in exactly one period: the one its writer transaction
--    started in (its recorded_at), or a later one if the budget was already
--    renewed past it; never lost, never refunded (a renewal forgets only
--    charges committed before it, and the period they were admitted in has
--    ended);
--  - two renewals of one period cannot happen: the second finds, under the
--    same row lock, period_start already at the current period's start;
--  - views and reads never write: dp_agg.budgets shows a budget whose period
--    ended as the renewal will leave it (dp_agg.budget_in_period), and
--    dp_agg.verify_ledger compares each budget with its charges since its
--    last renewal.
-- A period with no charge leaves no renewal row: the next charge's renewal
-- forgets the amounts of the last period that had any.
--
-- The release cache (45_release_cache.sql) is unaffected: serving a release
-- that was paid for in an earlier period releases nothing new, so it costs
-- nothing in the current one (a 'reused' row with epsilon 0, as always).
-- ===========================================================================

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

-- Decides the renewal schedule of `budget` (the role's row before the
-- calling administration function changes it, or a row of NULLs but the
-- role's name) and returns it with that schedule, without writing it: the
-- caller writes schedule and totals in one statement, so that the budget
-- guard (budget_guard.cpp) sees one change from the recorded row:
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
