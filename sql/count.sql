-- dp_count(value anyelement, epsilon float8) -> bigint
--
-- Tolerances: at epsilon 10 the noise is discrete Laplace with q = e^-10, so
-- P[|noise| >= 4] = 2 q^4 / (1 + q) < 1e-17 per answer.

SELECT pg_typeof(dp_count(x, 1)) AS result_type FROM numbers;

SELECT abs(dp_count(x, 10) - 1000) <= 3 AS accurate FROM numbers;
-- NULLs are not counted (100 of y are NULL)
SELECT abs(dp_count(y, 10) - 900) <= 3 AS skips_nulls FROM numbers;
-- any type with a value: text, dates, booleans, records
SELECT abs(dp_count(grp, 10) - 1000) <= 3 AS text_ok,
       abs(dp_count(DATE '2020-01-01' + x, 10) - 1000) <= 3 AS date_ok,
       abs(dp_count(x > 500, 10) - 1000) <= 3 AS bool_ok,
       abs(dp_count(numbers, 10) - 1000) <= 3 AS record_ok
FROM numbers;
-- counting rows with a constant
SELECT abs(dp_count(1, 10) - 1000) <= 3 AS rows_counted FROM numbers;
-- Distinct values: dp_count(DISTINCT ...) (the only private aggregate that
-- takes DISTINCT), or DISTINCT in a subquery; one row changes the number of
-- distinct values by at most 1. P(|Z| > 3) at epsilon 10 is below 1e-17.
SELECT abs(dp_count(DISTINCT grp, 10) - 3) <= 3 AS distinct_in_call_ok FROM numbers;
SELECT abs(dp_count(grp, 10) - 3) <= 3 AS distinct_ok FROM (SELECT DISTINCT grp FROM numbers) d;
-- FILTER and WHERE
SELECT abs(dp_count(x, 10) FILTER (WHERE x <= 100) - 100) <= 3 AS filter_ok,
       abs(dp_count(x, 10) FILTER (WHERE x > 2000)) <= 3 AS empty_filter_ok
FROM numbers;

-- zero rows and all-NULL input still give a noisy number, never NULL
SELECT dp_count(x, 1) IS NOT NULL AS empty_not_null,
       abs(dp_count(x, 10)) <= 3 AS empty_near_zero
FROM empty_table;
SELECT dp_count(NULL::integer, 1) IS NOT NULL AS all_null_not_null FROM numbers;
SELECT dp_count(x, 1) IS NOT NULL AS where_false_not_null FROM numbers WHERE false;

-- every group of a GROUP BY is its own release
SELECT grp, abs(dp_count(x, 10) - count(x)) <= 3 AS accurate
FROM numbers GROUP BY grp ORDER BY grp;
SELECT count(*) AS groups FROM (SELECT grp, dp_count(x, 1) FROM numbers GROUP BY grp) q;
-- hashed and sorted grouping give the same kind of answers
SET enable_hashagg = off;
SELECT grp, abs(dp_count(x, 10) - count(x)) <= 3 AS accurate
FROM numbers GROUP BY grp ORDER BY grp;
RESET enable_hashagg;

-- in HAVING, subqueries and CTEs
SELECT count(*) AS big_groups FROM (
  SELECT grp FROM numbers GROUP BY grp HAVING dp_count(x, 10) > 300) q;
WITH c AS (SELECT dp_count(x, 10) AS n FROM numbers) SELECT abs(n - 1000) <= 3 AS cte_ok FROM c;

-- every call site is its own release: two identical calls draw independent
-- noise (50 pairs at epsilon 1 all equal: probability < 0.47^50 < 1e-16)
CREATE TABLE small_groups AS SELECT g, x FROM generate_series(1, 50) g, generate_series(1, 10) x;
SELECT count(*) FILTER (WHERE a <> b) > 0 AS independent_calls
FROM (SELECT g, dp_count(x, 1) AS a, dp_count(x, 1) AS b FROM small_groups GROUP BY g) q;
-- and one call referenced twice is one value: the planner must not copy the
-- scalar subquery into both places (it may not, since the aggregate is
-- VOLATILE); with two copies the values would differ with probability 0.99
EXPLAIN (COSTS OFF) SELECT v = v FROM (SELECT (SELECT dp_count(x, 0.01) FROM small_groups) AS v) q;
SELECT v = v AS one_release_referenced_twice
FROM (SELECT (SELECT dp_count(x, 0.01) FROM small_groups) AS v) q;
