-- (epsilon, delta) variants with discrete Gaussian noise, error bars, and
-- the coverage of the intervals.
--
-- Accuracy assertions use the margin functions themselves at level
-- 1 - 1e-9: the margins are exact quantiles of the noise, so each such
-- assertion fails with probability at most 1e-9.
\set VERBOSITY default

-- result types follow sum() and avg() as for the Laplace forms
SELECT pg_typeof(dp_count(x, 1, 1e-6)) AS count_type,
       pg_typeof(dp_sum(x, 0, 10, 1, 1e-6)) AS int_sum_type,
       pg_typeof(dp_sum(f, 0, 1, 1, 1e-6)) AS float_sum_type,
       pg_typeof(dp_avg(n, 0, 1, 1, 1e-6)) AS numeric_avg_type
FROM numbers;

-- accuracy
SELECT abs(dp_count(x, 1, 1e-6) - 1000) <= dp_count_margin(1, 1e-6, 1 - 1e-9) AS count_ok,
       abs(dp_sum(x, 0, 1000, 1, 1e-6) - 500500) <= dp_sum_margin(0, 1000, 1, 1e-6, 1 - 1e-9) AS int_sum_ok,
       abs(dp_sum(f, 0, 1, 1, 1e-6) - 500.5) <= dp_sum_margin(0, 1, 1, 1e-6, 1 - 1e-9) AS float_sum_ok,
       abs(dp_sum(n, 0, 1, 1, 1e-6) - 500.5) <= dp_sum_margin(0, 1, 1, 1e-6, 1 - 1e-9) AS numeric_sum_ok
FROM numbers;
SELECT (e).low <= 500.5 AND 500.5 <= (e).high AS mean_ok, (e).confidence
FROM (SELECT dp_avg_interval(x, 0, 1000, 1, 1e-6, 1 - 1e-9) AS e FROM numbers) q;
-- zero rows still give values, in the bounds for the mean
SELECT dp_count(x, 1, 1e-6) IS NOT NULL AS count_not_null,
       dp_sum(f, 0, 1, 1, 1e-6) IS NOT NULL AS sum_not_null,
       dp_avg(f, 0, 1, 1, 1e-6) BETWEEN 0 AND 1 AS avg_in_bounds
FROM empty_table;

-- the margins: Gaussian noise at this (epsilon, delta) is wider than Laplace
-- at the same epsilon, and a higher level gives a wider interval
SELECT dp_count_margin(1) AS laplace_count_95, dp_count_margin(1, 1e-6) AS gaussian_count_95,
       dp_count_margin(1, 0, 0.99) AS laplace_count_99,
       dp_sum_margin(0, 100, 1) AS laplace_sum_95;
SELECT dp_sum_margin(0, 100, 1, 0, 0.99) > dp_sum_margin(0, 100, 1) AS wider_at_99,
       dp_sum_margin(-100, 50, 1) = dp_sum_margin(0, 100, 1) AS sensitivity_is_max_abs_bound;

-- bad parameters: 22023, decided from the query alone
SELECT dp_count(x, 1, 0) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, 1, -1e-6) FROM empty_table;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(x, 0, 10, 1, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_avg(x, 0, 10, 1, 'NaN') FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_avg(x, 0, 10, 1, NULL) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT grp, dp_sum(x, 0, 10, 1, 1e-3) FROM empty_table GROUP BY grp;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_avg_interval(x, 0, 10, 1, 1.5) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count_interval(x, 1, 0) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count_margin(0);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum_margin(10, 0, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum_margin(0, 10, 1, 2);
\echo :LAST_ERROR_SQLSTATE
-- max_delta is superuser-only
SET ROLE dp_agg_regress_analyst;
SET dp_agg.max_delta = 0.1;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- delta is charged to the delta budget; exceeding it is refused
SET client_min_messages = warning;
DROP ROLE IF EXISTS dp_gauss_analyst;
RESET client_min_messages;
CREATE ROLE dp_gauss_analyst;
GRANT SELECT ON numbers TO dp_gauss_analyst;
SELECT dp_agg.set_budget('dp_gauss_analyst', 10, 2.5e-6);
SET SESSION AUTHORIZATION dp_gauss_analyst;
SELECT dp_count(x, 0.5, 1e-6) IS NOT NULL AS answered FROM numbers;
SELECT grp, dp_sum(x, 0, 10, 0.5, 1e-6) IS NOT NULL AS answered FROM numbers GROUP BY grp ORDER BY grp;
SELECT * FROM dp_agg.remaining_budget();
SELECT dp_count(x, 0.5, 1e-6) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, 0.5) IS NOT NULL AS laplace_still_answered FROM numbers;
SELECT kind, epsilon, delta, aggregates FROM dp_agg.ledger WHERE kind = 'charge' ORDER BY id;
RESET SESSION AUTHORIZATION;

-- Coverage: 20,000 independent releases (one per group of 10 rows, so one
-- query and one charge each). For count and sum the interval is an exact
-- quantile of noise at least 100 grid steps wide, so its exact coverage lies
-- in [0.95, 0.9505]; the observed share lies within 0.0095 of it except with
-- probability below 1e-9 (6.1 standard deviations of a binomial with
-- n = 20000). So it must lie within 0.95 +- 1%. The mean's interval is
-- conservative (a union bound), so only coverage >= 94% is asserted.
CREATE TABLE coverage AS
SELECT g, v::float8 AS v FROM generate_series(1, 20000) g, generate_series(1, 10) v;
WITH releases AS (
  SELECT g,
         dp_count_interval(v, 0.01, 0.95) AS count_laplace,
         dp_count_interval(v, 0.02, 1e-6, 0.95) AS count_gaussian,
         dp_sum_interval(v, 0, 10, 1, 0.95) AS sum_laplace,
         dp_sum_interval(v, 0, 10, 1, 1e-6, 0.95) AS sum_gaussian,
         dp_avg_interval(v, 0, 10, 1, 0.95) AS mean_laplace,
         dp_avg_interval(v, 0, 10, 1, 1e-6, 0.95) AS mean_gaussian
  FROM coverage GROUP BY g)
SELECT abs(avg(((count_laplace).low <= 10 AND 10 <= (count_laplace).high)::int) - 0.95) <= 0.01 AS count_laplace,
       abs(avg(((count_gaussian).low <= 10 AND 10 <= (count_gaussian).high)::int) - 0.95) <= 0.01 AS count_gaussian,
       abs(avg(((sum_laplace).low <= 55 AND 55 <= (sum_laplace).high)::int) - 0.95) <= 0.01 AS sum_laplace,
       abs(avg(((sum_gaussian).low <= 55 AND 55 <= (sum_gaussian).high)::int) - 0.95) <= 0.01 AS sum_gaussian,
       avg(((mean_laplace).low <= 5.5 AND 5.5 <= (mean_laplace).high)::int) >= 0.94 AS mean_laplace,
       avg(((mean_gaussian).low <= 5.5 AND 5.5 <= (mean_gaussian).high)::int) >= 0.94 AS mean_gaussian,
       count(*) AS releases
FROM releases;
-- (agg(...)).* would expand into one aggregate call per field, i.e. four
-- separate releases; reading the fields from a subquery keeps it one.
