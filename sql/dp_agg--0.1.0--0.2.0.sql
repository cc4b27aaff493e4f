-- dp_agg 0.1.0 -> 0.2.0. Brings a 0.1.0 installation to exactly the catalog
-- state of a fresh 0.2.0 install (test/upgrade/run_upgrade_test.sh compares
-- the two). Budgets, the ledger and security labels are kept: no table is
-- rewritten.
--
-- 0.2.0 changes of the SQL objects:
--  * COMMENT ON every object of the extension;
--  * privileges in schema dp_agg decided in one place: everything is revoked
--    from PUBLIC and the public entry points are granted back by name (the
--    state types' input/output functions are no longer executable by PUBLIC).
-- (The SQLSTATEs of budget refusals moved from DP001/DP002 to ZP001/ZP002 and
-- DROP EXTENSION needs dp_agg.allow_drop_extension; both live in the library.)
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.2.0'" to load this file. \quit

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
  'set_budget(role, epsilon, delta): sets a role''s budget totals, keeping what it spent (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.add_budget(regrole, float8, float8) IS
  'add_budget(role, epsilon, delta): adds to a role''s budget totals (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.reset_spent(regrole) IS
  'reset_spent(role): sets a role''s spent amounts back to zero, giving budget back (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.revoke_budget(regrole) IS
  'revoke_budget(role): removes a role''s budget, so its private queries are refused (administrators; leaves a ledger row)';
COMMENT ON FUNCTION dp_agg.apply_charge(name, name, numeric, numeric, bigint, text, text) IS
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
