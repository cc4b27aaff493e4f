-- Bad parameters: ERROR 22023 with a HINT, decided from the query alone, so
-- the same error on an empty table, with or without GROUP BY.
\set VERBOSITY default

-- epsilon
SELECT dp_count(x, 0) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, -1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, 'NaN') FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, 'infinity') FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, NULL) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, 1e-20) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, 10.5) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(x, 0, 10, 0) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_avg(f, 0, 1, -0.5) FROM numbers;
\echo :LAST_ERROR_SQLSTATE

-- the same on an empty table, and with GROUP BY over an empty table (no
-- group exists, yet the error is raised before any row is read)
SELECT dp_count(x, 0) FROM empty_table;
\echo :LAST_ERROR_SQLSTATE
SELECT grp, dp_count(x, 0) FROM empty_table GROUP BY grp;
\echo :LAST_ERROR_SQLSTATE
SELECT grp, dp_sum(x, 10, 0, 1) FROM empty_table GROUP BY grp;
\echo :LAST_ERROR_SQLSTATE

-- bounds
SELECT dp_sum(x, 10, 0, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(x, NULL, 10, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_avg(x, 0, NULL, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(f, 'NaN', 1, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(f, 0, 'infinity', 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_avg(r, '-infinity', 0, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(n, 0, 'infinity'::numeric, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(n, 0, 1e400, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_avg(n, 2.5, 1.5, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
-- lower = upper is allowed
SELECT dp_sum(x, 5, 5, 1) IS NOT NULL AS equal_bounds_ok FROM numbers;

-- parameters must not vary between rows: columns, subqueries, volatile
-- functions are refused before execution
SELECT dp_count(x, x::float8) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, x::float8) FROM empty_table;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(x, 0, x, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_avg(x, y, 100, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, random() + 0.5) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, (SELECT 0.5)) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, (SELECT max(f) FROM numbers)) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
-- constant expressions of built-in immutable functions are fine
SELECT dp_count(x, 0.25 * 4) IS NOT NULL AS constant_expression_ok FROM numbers;
SELECT dp_count(x, sqrt(0.25)::float8 + abs(-0.5)) IS NOT NULL AS immutable_function_ok FROM numbers;
-- but not stable or user-defined functions evaluated at run time: a parallel
-- worker could get a different value than the leader charged (e.g. a
-- function returning a tiny epsilon in the leader and a large one in the
-- workers), or the value could depend on data. (A function the planner folds
-- into a constant is a constant in every process.)
SELECT dp_count(x, length(current_user)::float8 / 100) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
CREATE FUNCTION pg_temp.my_epsilon() RETURNS float8 LANGUAGE plpgsql STABLE PARALLEL SAFE
  AS $$ BEGIN RETURN 0.5; END $$;
SELECT dp_count(x, pg_temp.my_epsilon()) FROM numbers;
\echo :LAST_ERROR_SQLSTATE

-- window use is refused, also over an empty table
SELECT dp_count(x, 1) OVER () FROM numbers LIMIT 1;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(x, 0, 10, 1) OVER (ORDER BY x) FROM empty_table;
\echo :LAST_ERROR_SQLSTATE

-- prepared statements: parameters arrive as $n, custom and generic plans
PREPARE count_with(float8) AS SELECT dp_count(x, $1) IS NOT NULL AS answered FROM numbers;
EXECUTE count_with(1);
EXECUTE count_with(0);
\echo :LAST_ERROR_SQLSTATE
SET plan_cache_mode = force_generic_plan;
PREPARE sum_with(int, int, float8) AS
  SELECT grp, dp_sum(x, $1, $2, $3) IS NOT NULL AS answered FROM numbers GROUP BY grp ORDER BY grp;
EXECUTE sum_with(0, 100, 1);
EXECUTE sum_with(100, 0, 1);
\echo :LAST_ERROR_SQLSTATE
EXECUTE sum_with(0, 100, NULL);
\echo :LAST_ERROR_SQLSTATE
RESET plan_cache_mode;
DEALLOCATE ALL;

-- parameters from PL/pgSQL variables
DO $$
DECLARE
  eps float8 := 0.5;
  answer bigint;
BEGIN
  SELECT dp_count(x, eps) INTO answer FROM numbers;
  RAISE NOTICE 'plpgsql variable epsilon answered: %', answer IS NOT NULL;
  eps := -1;
  SELECT dp_count(x, eps) INTO answer FROM numbers;
EXCEPTION WHEN invalid_parameter_value THEN
  RAISE NOTICE 'plpgsql negative epsilon refused with 22023';
END $$;

-- only superusers may raise the epsilon cap or turn on the test generator;
-- nobody else can call the support functions (their states hold exact sums)
-- or build an aggregate on them
SET ROLE dp_agg_regress_analyst;
SET dp_agg.max_epsilon = 100;
\echo :LAST_ERROR_SQLSTATE
SET dp_agg.insecure_test_seed = 1;
\echo :LAST_ERROR_SQLSTATE
SET dp_agg.insecure_test_fault = halve_noise;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.count_final('uninitialized');
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.int4_transfn('uninitialized', 1, 0, 10, 1.0);
\echo :LAST_ERROR_SQLSTATE
CREATE TEMP TABLE leak_attempt AS SELECT 1;
CREATE AGGREGATE pg_temp.leak_sum(integer, integer, integer, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized');
\echo :LAST_ERROR_SQLSTATE
-- the aggregates themselves work for the analyst
SELECT dp_count(x, 1) IS NOT NULL AS analyst_can_query FROM numbers;
RESET ROLE;

-- even a superuser cannot read a state through the support functions
SELECT dp_agg.count_final('uninitialized');
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.int4_transfn('uninitialized', 1, 0, 10, 1.0);
\echo :LAST_ERROR_SQLSTATE
