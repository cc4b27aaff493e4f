-- Parallel aggregation: Partial Aggregate in the workers, combine and noise
-- once in the leader. The true sums are exact integers, so serial and
-- parallel plans must produce identical answers under the same test seed.

CREATE TABLE big AS
SELECT g AS x, ((g % 1000) / 1000.0)::float8 AS f, (g % 1000 / 1000.0)::numeric AS n, g % 4 AS grp
FROM generate_series(1, 200000) g;
ANALYZE big;

SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;

EXPLAIN (COSTS OFF) SELECT dp_count(x, 1), dp_sum(f, 0, 1, 1), dp_avg(x, 0, 200000, 1) FROM big;
EXPLAIN (COSTS OFF) SELECT grp, dp_sum(x, 0, 10, 1) FROM big GROUP BY grp;

-- accuracy in parallel (tolerances as in count.sql / sum.sql: < 2.1e-10 each)
SELECT abs(dp_count(x, 10) - 200000) <= 3 AS count_ok,
       abs(dp_sum(f, 0, 1, 10) - sum(f)) <= 2.3 + 1e-9 AS sum_ok,
       abs(dp_sum(n, 0, 1, 10) - sum(n)) <= 2.3 + 1e-9 AS numeric_sum_ok
FROM big;
SELECT grp, abs(dp_sum(x, 0, 10, 10) - sum(least(x, 10))) <= 23 AS accurate
FROM big GROUP BY grp ORDER BY grp;

-- identical answers serial and parallel under the same test seed
SET dp_agg.insecure_test_seed = 77;
SELECT dp_sum(f, 0, 1, 1) AS s, dp_sum(n, 0, 1, 1) AS sn, dp_avg(f, 0, 1, 1) AS a,
       dp_count(x, 1) AS c
FROM big \gset parallel_
SET max_parallel_workers_per_gather = 0;
SET dp_agg.insecure_test_seed = 77;
SELECT dp_sum(f, 0, 1, 1) = :parallel_s AS same_float_sum,
       dp_sum(n, 0, 1, 1) = :parallel_sn AS same_numeric_sum,
       dp_avg(f, 0, 1, 1) = :parallel_a AS same_mean,
       dp_count(x, 1) = :parallel_c AS same_count
FROM big;
RESET dp_agg.insecure_test_seed;
SET max_parallel_workers_per_gather = 2;

-- an empty table in a parallel plan: participants that saw no rows still
-- pass on the parameters, and the answer is a noisy value, not NULL
CREATE TABLE big_empty (LIKE big);
ALTER TABLE big_empty SET (parallel_workers = 2);
EXPLAIN (COSTS OFF) SELECT dp_count(x, 1), dp_avg(f, 0, 1, 1) FROM big_empty;
SELECT dp_count(x, 1) IS NOT NULL AS count_not_null,
       dp_avg(f, 0, 1, 1) BETWEEN 0 AND 1 AS avg_in_bounds,
       dp_sum(n, 0, 1, 1) IS NOT NULL AS sum_not_null
FROM big_empty;
SELECT dp_count(x, 1) IS NOT NULL AS filtered_to_nothing FROM big WHERE x < 0;
