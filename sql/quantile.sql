-- dp_percentile and dp_median: Smith's exponential mechanism over the
-- fixed-point lattice between the bounds (core/continuous_quantile.h).
--
-- Accuracy bound: a lattice point whose rank is g rows from the target rank
-- f n has weight exp(-lambda g) relative to the best, lambda =
-- epsilon / (2 max(f, 1 - f)) >= epsilon / 2 = 5 at epsilon 10. With one row
-- per unit the lattice points are spread evenly over the ranks (the same
-- number between consecutive rows), so the answer lies g or more rows from
-- the target with probability at most 2 exp(-5 g) / (1 - exp(-5)) per
-- assertion: below 1e-17 for g = 8. That keeps it within 8 of the true
-- quantile.
\set VERBOSITY default

SELECT pg_typeof(dp_median(x, 0, 1000, 1)) AS median_type,
       abs(dp_median(x, 0, 1000, 10) - 500.5) <= 8 AS median_ok,
       abs(dp_percentile(x, 0.9, 0, 1000, 10) - 900.5) <= 8 AS p90_ok,
       abs(dp_percentile(n * 1000, 0.25, 0, 1000, 10) - 250.5) <= 8 AS numeric_p25_ok,
       abs(dp_percentile(x, 0, 0, 1000, 10) - 1) <= 8 AS minimum_ok,
       abs(dp_percentile(x, 1, 0, 1000, 10) - 1000) <= 8 AS maximum_ok
FROM numbers;

-- always within [lower, upper]: 300 answers each on 3 rows, on no rows, with
-- one extreme row far outside the bounds, at epsilon 0.01 (certain)
SELECT bool_and(m BETWEEN 0 AND 10) AS within_bounds,
       bool_and(e BETWEEN 0 AND 10) AS within_bounds_empty,
       bool_and(p BETWEEN 0 AND 10) AS within_bounds_extreme,
       count(DISTINCT m) > 1 AS noisy
FROM (SELECT g, dp_median(v, 0, 10, 0.01) AS m,
             dp_median(v, 0, 10, 0.01) FILTER (WHERE v > 3) AS e,
             dp_percentile(CASE WHEN v = 3 THEN 1e12 ELSE v END, 0.99, 0, 10, 0.01) AS p
      FROM three_rows GROUP BY g) q;

-- bad parameters: 22023, also on an empty table
SELECT dp_percentile(x, 1.5, 0, 10, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_percentile(x, -0.1, 0, 10, 1) FROM empty_table;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_percentile(x, 'NaN', 0, 10, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_median(x, 10, 0, 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_median(x, 0, 'infinity', 1) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_median(x, 0, 10, 0) FROM numbers;
\echo :LAST_ERROR_SQLSTATE
SELECT grp, dp_percentile(x, x / 1000.0, 0, 10, 1) FROM numbers GROUP BY grp;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_median(x, 0, 10, 1) OVER () FROM numbers LIMIT 1;
\echo :LAST_ERROR_SQLSTATE

-- charged like every private aggregate
SELECT aggregates FROM dp_agg.ledger WHERE aggregates LIKE '%dp_percentile%' ORDER BY id DESC LIMIT 1;

-- the state keeps every row (sorted before the draw), so serial and
-- parallel plans give identical
-- answers under the same test seed
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT dp_median(x, 0, 200000, 1) FROM big;
SET dp_agg.insecure_test_seed = 99;
SELECT dp_median(x, 0, 200000, 1) AS m, dp_percentile(f, 0.75, 0, 1, 1) AS p FROM big \gset parallel_
SET max_parallel_workers_per_gather = 0;
SET dp_agg.insecure_test_seed = 99;
SELECT dp_median(x, 0, 200000, 1) = :parallel_m AS same_median,
       dp_percentile(f, 0.75, 0, 1, 1) = :parallel_p AS same_percentile
FROM big;
RESET dp_agg.insecure_test_seed;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;

SELECT 'uninitialized'::dp_agg.quantile_state;
SELECT 'q2 epsilon=0x1p+0 fraction=0x1p-1 lower=0x0p+0 upper=0x1p+0 points=3,1,2'::dp_agg.quantile_state;
SELECT 'q2 epsilon=0x1p+0 fraction=0x1p-1 lower=0x0p+0 upper=0x1p+0 points='::dp_agg.quantile_state;
-- a point outside the bounds' lattice, a sign, the old grid form: rejected
SELECT 'q2 epsilon=0x1p+0 fraction=0x1p-1 lower=0x0p+0 upper=0x1p+0 points=1,-2,3'::dp_agg.quantile_state;
SELECT 'q2 epsilon=0x1p+0 fraction=0x1p-1 lower=0x0p+0 upper=0x1p+0 points=+1'::dp_agg.quantile_state;
SELECT 'q1 epsilon=0x1p+0 fraction=0x1p-1 lower=0x0p+0 upper=0x1p+0 counts=1,2,3'::dp_agg.quantile_state;
