-- What PUBLIC may use in schema dp_agg, decided here and nowhere else: first
-- everything is taken from PUBLIC, then the public entry points are granted
-- back by name. An object added later is therefore private until it is
-- listed here, and the regression suite "privileges" pins this list.
--
-- Not granted: the support functions of the aggregates (their states hold
-- exact sums; PostgreSQL checks them against the aggregate's owner, so the
-- aggregates still work for everyone), the state types' input and output
-- functions, the ledger writer's apply_charge, the helpers behind the
-- administration functions, and the budget and ledger tables themselves
-- (read through the filtered views).
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
  dp_agg.set_budget(regrole, float8, float8),
  dp_agg.add_budget(regrole, float8, float8),
  dp_agg.reset_spent(regrole),
  dp_agg.revoke_budget(regrole),
  dp_agg.protect_table(regclass),
  dp_agg.unprotect_table(regclass),
  dp_agg.restrict_role(regrole),
  dp_agg.unrestrict_role(regrole),
  dp_agg.set_privacy_unit(regclass, name),
  dp_agg.unset_privacy_unit(regclass, name)
TO PUBLIC;

-- dp_agg's privacy-unit rewrite puts this function into a query over a
-- table with a privacy unit column, which runs as the querying role. It only
-- returns random numbers; restricted roles may not write it themselves.
GRANT EXECUTE ON FUNCTION dp_agg.unit_sample_key(integer) TO PUBLIC;

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
