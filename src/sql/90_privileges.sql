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
-- views above as the querying user. query_cost plans and starts the query as
-- the caller (their own privileges and restrictions apply) and reveals only
-- what the query's text decides.
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
