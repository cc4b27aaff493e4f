-- Who may run dp_agg's support functions (src/pg/support_guard.h; README,
-- "Scaling out with Citus", "Who may query"). PUBLIC holds EXECUTE on them,
-- because Citus checks it for the querying role on every node; what keeps
-- their exact states from being read out is where they run: only inside
-- dp_agg's own aggregates, on states dp_agg's executor hook prepared.

-- 1. PUBLIC may execute the support functions (what Citus checks).
SELECT has_function_privilege('dp_agg_regress_analyst',
         'dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8)', 'EXECUTE') AS transfn,
       has_function_privilege('dp_agg_regress_analyst', 'dp_agg.combine(dp_agg.aggregate_state, dp_agg.aggregate_state)', 'EXECUTE') AS combine,
       has_function_privilege('dp_agg_regress_analyst', 'dp_agg.sum_final_int8(dp_agg.aggregate_state)', 'EXECUTE') AS final,
       has_function_privilege('dp_agg_regress_analyst', 'dp_agg.aggregate_state_out(dp_agg.aggregate_state)', 'EXECUTE') AS state_out;

-- Charges go to the session user (the suite's superuser).
SELECT epsilon_spent AS spent_before FROM dp_agg.budgets WHERE role = session_user \gset
SET ROLE dp_agg_regress_analyst;

-- 2. An analyst cannot build an aggregate on them: qualified, through the
-- search path, as the final or combine function, or in the old syntax.
CREATE AGGREGATE pg_temp.leak_sum(integer, integer, integer, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized');
\echo :LAST_ERROR_SQLSTATE
SET search_path = dp_agg, public;
CREATE AGGREGATE pg_temp.leak_sum(integer, integer, integer, float8) (
  SFUNC = int4_transfn, STYPE = aggregate_state);
\echo :LAST_ERROR_SQLSTATE
RESET search_path;
CREATE FUNCTION pg_temp.made_up(s dp_agg.aggregate_state, v integer) RETURNS dp_agg.aggregate_state
  LANGUAGE sql AS $$ SELECT 'v1 kind=1 count=1 sum=1 epsilon=0x1p+0 lower=0x0p+0 upper=0x1p+0 lower_units=0 upper_units=1 unit_exponent=0 delta=0x0p+0 confidence=0x0p+0'::dp_agg.aggregate_state $$;
CREATE AGGREGATE pg_temp.fake_release(integer) (
  SFUNC = pg_temp.made_up, STYPE = dp_agg.aggregate_state, FINALFUNC = dp_agg.sum_final_int8);
\echo :LAST_ERROR_SQLSTATE
CREATE AGGREGATE pg_temp.fake_combine(integer) (
  SFUNC = pg_temp.made_up, STYPE = dp_agg.aggregate_state, COMBINEFUNC = dp_agg.combine);
\echo :LAST_ERROR_SQLSTATE
CREATE AGGREGATE pg_temp.leak_old (BASETYPE = integer, SFUNC = dp_agg.count_transfn,
  STYPE = dp_agg.aggregate_state);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS aggregates_created FROM pg_proc WHERE proname IN ('leak_sum', 'fake_release', 'fake_combine', 'leak_old');

-- 3. Direct calls, and calls from the analyst's own SQL and PL/pgSQL
-- functions, have no aggregate context.
SELECT dp_agg.sum_final_int8('v1 kind=1 count=1 sum=1 epsilon=0x1p+0 lower=0x0p+0 upper=0x1p+0 lower_units=0 upper_units=1 unit_exponent=0 delta=0x0p+0 confidence=0x0p+0');
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.int4_transfn('uninitialized', 1, 0, 10, 1.0);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.combine('uninitialized', 'uninitialized');
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.quantile_final('uninitialized');
\echo :LAST_ERROR_SQLSTATE
CREATE FUNCTION pg_temp.release(s dp_agg.aggregate_state) RETURNS bigint
  LANGUAGE sql AS 'SELECT dp_agg.sum_final_int8(s)';
SELECT pg_temp.release('uninitialized');
\echo :LAST_ERROR_SQLSTATE
CREATE FUNCTION pg_temp.accumulate(v integer) RETURNS text LANGUAGE plpgsql AS $$
BEGIN RETURN dp_agg.int4_transfn('uninitialized', v, 0, 10, 1.0)::text; END $$;
-- (No CONTEXT: it names the temporary schema, pg_temp_<backend id>, which
-- depends on which backends, ledger writers included, are connected.)
\set SHOW_CONTEXT never
SELECT pg_temp.accumulate(x) FROM numbers LIMIT 1;
\echo :LAST_ERROR_SQLSTATE
\set SHOW_CONTEXT errors

-- The aggregates themselves work for the analyst, charged once each; none
-- of the refusals above charged anything.
SELECT dp_sum(x, 0, 1000, 1.0) IS NOT NULL AS sum_works, dp_count(x, 1.0) IS NOT NULL AS count_works
FROM numbers;
RESET ROLE;
SELECT (epsilon_spent - :spent_before)::float8 AS charged FROM dp_agg.budgets WHERE role = session_user;
SELECT epsilon_spent AS spent_before FROM dp_agg.budgets WHERE role = session_user \gset

-- 4. Not even a superuser can build one on dp_agg's functions by name.
CREATE AGGREGATE public.leak_sum(integer, integer, integer, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized');
\echo :LAST_ERROR_SQLSTATE

-- 5. An aggregate over dp_agg's code under another name (only a superuser
-- can create the C function) is refused when a query using it starts,
-- before anything is charged: alone, next to dp_sum (nodeAgg would share one
-- transition between them), in a subquery, and with a state typed as text as
-- its initial value.
CREATE FUNCTION public.alias_int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8)
  RETURNS dp_agg.aggregate_state AS 'dp_agg', 'dp_int4_transfn' LANGUAGE C;
CREATE AGGREGATE public.alias_sum(integer, integer, integer, float8) (
  SFUNC = public.alias_int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized');
CREATE AGGREGATE public.alias_sum_typed(integer, integer, integer, float8) (
  SFUNC = public.alias_int4_transfn, STYPE = dp_agg.aggregate_state,
  INITCOND = 'v1 kind=1 count=0 sum=0 epsilon=0x1p+0 lower=0x0p+0 upper=0x1.f4p+9 lower_units=0 upper_units=1000 unit_exponent=0 delta=0x0p+0 confidence=0x0p+0');
GRANT EXECUTE ON FUNCTION public.alias_sum(integer, integer, integer, float8),
  public.alias_sum_typed(integer, integer, integer, float8) TO dp_agg_regress_analyst;
SET ROLE dp_agg_regress_analyst;
SELECT alias_sum(x, 0, 1000, 1.0) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(x, 0, 1000, 1.0), alias_sum(x, 0, 1000, 1.0) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM (SELECT alias_sum_typed(x, 0, 1000, 1.0) FROM numbers) s;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT (epsilon_spent - :spent_before)::float8 AS charged FROM dp_agg.budgets WHERE role = session_user;
DROP AGGREGATE public.alias_sum(integer, integer, integer, float8);
DROP AGGREGATE public.alias_sum_typed(integer, integer, integer, float8);
DROP FUNCTION public.alias_int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8);
