-- dp_variance(value, lower, upper, epsilon [, delta]) and dp_stddev(...)
--
-- Three releases, epsilon/3 each (core/variance.h): a noisy count C
-- (sensitivity 1), a noisy sum S of values centred on the midpoint m
-- (sensitivity h = (upper - lower) / 2) and a noisy sum Q of their squares
-- (sensitivity h^2); the answer is clamp(clamp(Q/N, 0, h^2) - clamp(S/N, -h, h)^2,
-- 0, h^2) with N = max(1, C).
-- Tolerances, epsilon 10 (each part 10/3), n = 1000 (x = 1..1000), bounds
-- [0, 1000] (h = 500): discrete Laplace P(|Z| >= k * scale) <= 2 e^-k, so
-- |C - n| < 8 fails with 2 e^-26.7, |S - S_true| < 150 * 25 = 3750 with
-- 2 e^-25, |Q - Q_true| < 75000 * 25 = 1.875e6 with 2 e^-25: together
-- < 1e-10. True: S_true = 500, Q_true = 83333500, variance 83333.25; then
-- Q/N lies in [80812, 85895] and (S/N)^2 < 19, so |answer - 83333.25| < 2600.
-- Scaled by 1/1000 for the values in [0, 1] (variance by 1e-6).

-- result types follow var_pop() and stddev_pop()
SELECT pg_typeof(dp_variance(s, 0::smallint, 4::smallint, 1)) AS int2_var,
       pg_typeof(dp_variance(x, 0, 10, 1)) AS int4_var,
       pg_typeof(dp_variance(b, 0, 10, 1)) AS int8_var,
       pg_typeof(dp_variance(r, 0, 1, 1)) AS float4_var,
       pg_typeof(dp_variance(f, 0, 1, 1)) AS float8_var,
       pg_typeof(dp_variance(n, 0, 1, 1)) AS numeric_var,
       pg_typeof(dp_stddev(x, 0, 10, 1)) AS int4_sd,
       pg_typeof(dp_stddev(f, 0, 1, 1)) AS float8_sd
FROM numbers;
SELECT pg_typeof(var_pop(s)) AS int2_var, pg_typeof(var_pop(x)) AS int4_var,
       pg_typeof(var_pop(b)) AS int8_var, pg_typeof(var_pop(r)) AS float4_var,
       pg_typeof(var_pop(f)) AS float8_var, pg_typeof(var_pop(n)) AS numeric_var,
       pg_typeof(stddev_pop(x)) AS int4_sd, pg_typeof(stddev_pop(f)) AS float8_sd
FROM numbers;

-- accuracy (true variance 83333.25, standard deviation 288.675)
SELECT abs(dp_variance(x, 0, 1000, 10) - 83333.25) < 2600 AS int4_ok,
       abs(dp_variance(b, 0, 1000, 10) - 83333.25) < 2600 AS int8_ok,
       abs(dp_variance(f, 0, 1, 10) - 0.08333325) < 0.0026 AS float8_ok,
       abs(dp_variance(r, 0, 1, 10) - 0.08333325) < 0.0026 AS float4_ok,
       abs(dp_variance(n, 0, 1, 10) - 0.08333325) < 0.0026 AS numeric_ok,
       abs(dp_stddev(x, 0, 1000, 10) - 288.675) < 5 AS int4_sd_ok,
       abs(dp_stddev(f, 0, 1, 10) - 0.288675) < 0.005 AS float8_sd_ok
FROM numbers;
-- smallint s = g % 5 in [0, 4] (variance 2; h = 2: |S - S_true| < 15,
-- |Q - Q_true| < 30 with the probabilities above, so the error is < 0.05)
SELECT abs(dp_variance(s, 0::smallint, 4::smallint, 10) - 2) < 0.05 AS int2_ok FROM numbers;
-- The Gaussian form (epsilon 10, delta 1e-6: rho/3 each, sigma of Q about
-- 263000 < 1.71e6 / 6.5, two-sided 6.5-sigma tails 8e-11 each): the same
-- tolerance holds.
SELECT abs(dp_variance(x, 0, 1000, 10, 1e-6) - 83333.25) < 2600 AS gaussian_ok,
       abs(dp_stddev(f, 0, 1, 10, 1e-6) - 0.288675) < 0.005 AS gaussian_sd_ok
FROM numbers;
-- clamping: every value clamps to -5 (variance 0): the answer lies in
-- [0, 2.5^2] and is near 0 (Q/N < 6.25 * 1.875e6 / 250000 / 992 < 0.05)
SELECT dp_variance(x, -10, -5, 10) < 0.05 AS clamped_ok FROM numbers;

-- The answer always lies within [0, ((upper - lower) / 2)^2] (dp_stddev:
-- [0, (upper - lower) / 2]), on 3 rows and on no rows, at a tiny epsilon:
-- a certain property, not a probabilistic one. Never NULL.
CREATE TABLE variance_three AS SELECT g, v FROM generate_series(1, 300) g, generate_series(1, 3) v;
SELECT bool_and(a BETWEEN 0 AND 25) AS within_bounds,
       bool_and(d BETWEEN 0 AND 5) AS sd_within_bounds,
       bool_and(e BETWEEN 0 AND 6.25) AS within_bounds_empty,
       bool_and(a IS NOT NULL AND e IS NOT NULL) AS never_null,
       count(DISTINCT a) > 10 AS noisy
FROM (SELECT g, dp_variance(v, 0, 10, 0.01) AS a, dp_stddev(v::float8, 0, 10, 0.01) AS d,
             dp_variance(v::numeric, -7.5, -2.5, 0.01) FILTER (WHERE false) AS e
      FROM variance_three GROUP BY g) q;
SELECT dp_variance(x, 0, 10, 1) IS NOT NULL AS empty_not_null FROM empty_table;

-- Extreme scales (review of issue 29): the answer is combined from the
-- releases normalised by h, so it is as accurate at h ~ 1e-301 or 1e150 as
-- on [0, 1] (same tolerance, scaled); it was always 0 before (h^2 under- or
-- overflowed the double range), and sometimes -0.
SELECT abs(dp_stddev(f * 1e-300, 0, 1e-300, 10) / 1e-300 - 0.288675) < 0.005 AS tiny_sd_ok,
       abs(dp_stddev(f * 1e150, 0, 1e150, 10) / 1e150 - 0.288675) < 0.005 AS huge_sd_ok,
       abs(dp_variance(f * 1e150, 0, 1e150, 10) / 1e300 - 0.08333325) < 0.0026 AS huge_var_ok
FROM numbers;
-- never -0 (a certain property; these 300 calls gave 174 before);
-- h^2 = 2.5e-601 is below the double range, so the variance is exactly 0
CREATE TABLE variance_tiny AS
  SELECT g, (v * 1e-301)::float8 AS v FROM generate_series(1, 300) g, generate_series(1, 3) v;
SELECT bool_and(a::text NOT LIKE '-%' AND d::text NOT LIKE '-%') AS no_negative_zero,
       bool_and(a = 0 AND d BETWEEN 0 AND 5e-301) AS within_bounds
FROM (SELECT g, dp_variance(v, 0, 1e-300, 1) AS a, dp_stddev(v, 0, 1e-300, 1) AS d
      FROM variance_tiny GROUP BY g) q;
DROP TABLE variance_tiny;
-- lower = upper: exactly 0
SELECT dp_variance(x, 5, 5, 1) AS var_point, dp_stddev(f, 0.5, 0.5, 1) AS sd_point FROM numbers;
-- bounds whose ((upper - lower) / 2)^2 is no double are refused before any
-- row is read (half-width 1e154 still answers)
SELECT dp_variance(f, 0, 1e200, 1) FROM numbers;
SELECT dp_stddev(n, -1e155, 1e155, 1) FROM numbers;
SELECT dp_stddev(f, -1e154, 1e154, 1) BETWEEN 0 AND 1e154 AS widest_ok FROM numbers;

-- parameters are checked before any row is read
SELECT dp_variance(x, 10, 0, 1) FROM numbers;
SELECT dp_variance(x, 0, 10, 0) FROM numbers;
SELECT dp_variance(x, 0, 10, 1, 2) FROM numbers;
SELECT dp_variance(x, 0, x, 1) FROM numbers;
SELECT dp_stddev(f, 'NaN', 1, 1) FROM numbers;

-- the support functions run only inside dp_agg's aggregates
SELECT dp_agg.variance_state_out('uninitialized'::dp_agg.variance_state);
SELECT dp_agg.variance_final_float8('uninitialized'::dp_agg.variance_state);

-- GROUP BY, parallel partial aggregation (combine) and the charge: one
-- call site charges its epsilon once (dp_agg.query_cost shows the call).
SELECT * FROM dp_agg.query_cost('SELECT grp, dp_variance(x, 0, 1000, 1), dp_stddev(f, 0, 1, 0.5, 1e-6) FROM numbers GROUP BY grp');
CREATE TABLE variance_big AS SELECT g AS x, g % 2 AS k FROM generate_series(1, 200000) g;
ANALYZE variance_big;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT k, dp_variance(x, 0, 200000, 1) FROM variance_big GROUP BY k;
-- variance of 1..200000 within each parity, about 3.33e9 (h = 1e5, eps 10:
-- |Q - Q_true| < 3e9 * 25 with 2 e^-25, over N ~ 1e5: error < 8e5 + 1e3)
SELECT k, abs(dp_variance(x, 0, 200000, 10) - 3333333333.25) < 1e6 AS parallel_ok
FROM variance_big GROUP BY k ORDER BY k;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
DROP TABLE variance_big, variance_three;

-- ---------------------------------------------------------------------------
-- A restricted analyst over a protected table with a privacy unit: group
-- selection, the zCDP budget kind, and per-unit contribution bounding (the
-- variance of the units' means, as dp_avg takes their mean).
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS var_s CASCADE;
DROP ROLE IF EXISTS regress_var_analyst;
DROP ROLE IF EXISTS regress_var_zcdp;
RESET client_min_messages;
CREATE SCHEMA var_s;
-- 10000 patients with one visit costing 10 and patient 0 with 10000 visits
-- costing 90: row-level variance 1600, variance of the units' means 0.64.
CREATE TABLE var_s.heavy (patient_id int, cost int NOT NULL, region text NOT NULL);
INSERT INTO var_s.heavy SELECT g, 10, 'a' FROM generate_series(1, 10000) g;
INSERT INTO var_s.heavy SELECT 0, 90, 'a' FROM generate_series(1, 10000);
CREATE ROLE regress_var_analyst LOGIN;
CREATE ROLE regress_var_zcdp LOGIN;
GRANT USAGE ON SCHEMA var_s TO regress_var_analyst, regress_var_zcdp;
SELECT dp_agg.set_budget('regress_var_analyst', 1000, 0.001);
SELECT dp_agg.set_budget_zcdp('regress_var_zcdp', 100);
SELECT dp_agg.set_privacy_unit('var_s.heavy', 'patient_id');
SELECT dp_agg.protect_table('var_s.heavy');
SELECT dp_agg.restrict_role('regress_var_analyst');
SELECT dp_agg.restrict_role('regress_var_zcdp');
-- (review of issue 29) a view and a SQL wrapper an administrator granted
CREATE VIEW var_s.heavy_view AS SELECT patient_id, cost FROM var_s.heavy;
CREATE FUNCTION var_s.rr(answer boolean) RETURNS boolean LANGUAGE sql
  AS 'SELECT dp_agg.randomized_response(answer, 64)';
GRANT SELECT ON var_s.heavy_view TO regress_var_analyst;
GRANT EXECUTE ON FUNCTION var_s.rr(boolean) TO regress_var_analyst;
SET SESSION AUTHORIZATION regress_var_analyst;
-- 10001 units, epsilon 10 (each part 10/3, h = 50): |C - 10001| < 8,
-- |S - S_true| < 15 * 25, |Q - Q_true| < 750 * 25 fail with < 1e-10; then
-- Q/N is within 1.9 + 1.3 of 1600, (S/N)^2 within 3 of 1599.4, and the
-- answer within 10 of 0.64 (row level would give 1600).
SELECT abs(dp_variance(cost, 0, 100, 10) - 0.64) < 10 AS unit_means_ok FROM var_s.heavy;
-- GROUP BY over protected rows gets group selection (its cost shows)
SELECT * FROM dp_agg.query_cost('SELECT region, dp_stddev(cost, 0, 100, 1) FROM var_s.heavy GROUP BY region');
-- randomized response on protected rows is refused for restricted roles,
-- before anything is charged
SELECT dp_agg.randomized_response(cost > 50, 1.0) FROM var_s.heavy;
SELECT dp_count(1, 1) FROM var_s.heavy WHERE dp_agg.randomized_response(cost > 50, 1.0);
SELECT dp_rr_proportion(cost > 50, 1.0) FROM var_s.heavy;
-- nor through a view, an inlined SQL wrapper, a FILTER or a CASE in a
-- private aggregate's value, nor dp_rr_proportion of a constant
SELECT dp_rr_proportion(cost > 50, 64) FROM var_s.heavy_view;
SELECT var_s.rr(cost > 50) FROM var_s.heavy;
SELECT dp_count(1.0) FILTER (WHERE var_s.rr(cost > 50)) FROM var_s.heavy;
SELECT dp_variance(CASE WHEN dp_agg.randomized_response(cost > 50, 64) THEN 1 ELSE 0 END, 0, 1, 1)
FROM var_s.heavy;
SELECT dp_rr_proportion(true, 64) FROM var_s.heavy;
RESET SESSION AUTHORIZATION;
SELECT role, epsilon_spent, delta_spent FROM dp_agg.budgets WHERE role = 'regress_var_analyst';
-- The zCDP budget kind: a Laplace call costs epsilon^2 / 2, a Gaussian one
-- the sum of its three parts' rho.
SET SESSION AUTHORIZATION regress_var_zcdp;
SELECT dp_variance(cost, 0, 100, 1) IS NOT NULL AS answered FROM var_s.heavy;
SELECT dp_stddev(cost, 0, 100, 1, 1e-6) IS NOT NULL AS answered FROM var_s.heavy;
RESET SESSION AUTHORIZATION;
SELECT role, budget_kind, round(rho_spent, 6) AS rho_spent FROM dp_agg.budgets
WHERE role = 'regress_var_zcdp';
SELECT dp_agg.unrestrict_role('regress_var_analyst');
SELECT dp_agg.unrestrict_role('regress_var_zcdp');
SELECT dp_agg.revoke_budget('regress_var_analyst');
SELECT dp_agg.revoke_budget('regress_var_zcdp');
SELECT dp_agg.unprotect_table('var_s.heavy');
DROP SCHEMA var_s CASCADE;
DROP ROLE regress_var_analyst;
DROP ROLE regress_var_zcdp;
