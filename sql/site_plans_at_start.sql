-- Per-call-site plans are built when the query starts (site_plans.h; issue
-- 29, second review): group selection's table, the Gaussian calibrations,
-- dp_avg_interval's noise tables, dp_variance's plans and dp_select's
-- candidate index. Built on the first group or row instead, their time would
-- show whether any group existed. dp_agg.insecure_test_late_plans counts the
-- plans a support function had to build after its query started: every
-- shape below must leave it unchanged, in serial, parallel, partitionwise
-- and restricted plans, with parameters no earlier query used.
\set VERBOSITY terse

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS sp CASCADE;
DROP ROLE IF EXISTS regress_sp_analyst;
RESET client_min_messages;
CREATE SCHEMA sp;
CREATE TABLE sp.visits (region text, age int, cost float8, amount numeric, patient int);
INSERT INTO sp.visits
SELECT (ARRAY['north', 'south', 'east', 'west'])[1 + i % 4], i % 90, (i % 1000) / 10.0,
       (i % 500)::numeric / 4, i % 300
FROM generate_series(1, 20000) AS i;
ANALYZE sp.visits;
CREATE TABLE sp.parts (region text, age int) PARTITION BY LIST (region);
CREATE TABLE sp.parts_n PARTITION OF sp.parts FOR VALUES IN ('north', 'south');
CREATE TABLE sp.parts_e PARTITION OF sp.parts FOR VALUES IN ('east', 'west');
INSERT INTO sp.parts SELECT region, age FROM sp.visits;
ANALYZE sp.parts;

-- The late plans this backend has built so far.
CREATE FUNCTION sp.late() RETURNS bigint LANGUAGE sql
AS $$ SELECT current_setting('dp_agg.insecure_test_late_plans')::bigint $$;
SELECT sp.late() AS late_before \gset

-- 1. Serial GROUP BY, every family with a per-site plan, fresh parameters
-- (Laplace and Gaussian), and the interval forms.
SELECT region, dp_count(age, 0.71) IS NOT NULL AS c, dp_sum(age, 0, 90, 0.72) IS NOT NULL AS s,
       dp_avg(cost, 0, 100, 0.73) IS NOT NULL AS a,
       dp_count(age, 0.74, 1e-7) IS NOT NULL AS gc, dp_sum(amount, 0, 125, 0.75, 1e-7) IS NOT NULL AS gs,
       dp_avg(age, 0, 90, 0.76, 1e-7) IS NOT NULL AS ga,
       (dp_avg_interval(cost, 0, 100, 0.77, 0.9)).value IS NOT NULL AS ai,
       (dp_avg_interval(age, 0, 90, 0.78, 1e-7, 0.9)).value IS NOT NULL AS gai,
       (dp_count_interval(age, 0.79, 0.9)).value IS NOT NULL AS ci,
       (dp_sum_interval(cost, 0, 100, 0.8, 1e-7, 0.9)).value IS NOT NULL AS gsi,
       dp_variance(cost, 0, 100, 0.81) IS NOT NULL AS v, dp_stddev(age, 0, 90, 0.82, 1e-7) IS NOT NULL AS sd,
       dp_select(region, ARRAY['north', 'south', 'east', 'west', 'up'], 0.83) IS NOT NULL AS sel
FROM sp.visits GROUP BY region ORDER BY region;
SELECT sp.late() - :late_before AS late_plans_serial;

-- 2. Parallel plans: the finalize step above Gather gets the partial
-- step's parameters.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT sp.late() AS late_before \gset
EXPLAIN (COSTS OFF) SELECT region, dp_avg(cost, 0, 100, 0.84, 1e-7) FROM sp.visits GROUP BY region;
SELECT region, dp_count(age, 0.85, 1e-7) IS NOT NULL AS gc, dp_avg(cost, 0, 100, 0.86, 1e-7) IS NOT NULL AS ga,
       (dp_avg_interval(age, 0, 90, 0.87, 0.9)).value IS NOT NULL AS ai,
       dp_variance(cost, 0, 100, 0.88, 1e-7) IS NOT NULL AS v
FROM sp.visits GROUP BY region ORDER BY region;
SELECT dp_sum(cost, 0, 100, 0.89, 1e-7) IS NOT NULL AS gs,
       dp_select(region, ARRAY['north', 'south', 'up'], 0.9) IS NOT NULL AS sel
FROM sp.visits;
SELECT sp.late() - :late_before AS late_plans_parallel;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- 3. Partitionwise aggregation: a finalize step above an Append of partial
-- steps.
SET enable_partitionwise_aggregate = on;
SELECT sp.late() AS late_before \gset
EXPLAIN (COSTS OFF) SELECT age % 3 AS k, dp_count(age, 0.91, 1e-7) FROM sp.parts GROUP BY age % 3;
SELECT age % 3 AS k, dp_count(age, 0.91, 1e-7) IS NOT NULL AS gc,
       dp_avg(age, 0, 90, 0.92, 1e-7) IS NOT NULL AS ga
FROM sp.parts GROUP BY age % 3 ORDER BY k;
SELECT sp.late() - :late_before AS late_plans_partitionwise;
RESET enable_partitionwise_aggregate;

-- 4. A restricted analyst: group selection's plan, over rows and over
-- privacy units; a cursor read, rewound and read again.
CREATE ROLE regress_sp_analyst LOGIN;
SELECT dp_agg.restrict_role('regress_sp_analyst');
SELECT dp_agg.set_budget('regress_sp_analyst', 100000, 0.1);
GRANT USAGE ON SCHEMA sp TO regress_sp_analyst;
SELECT dp_agg.protect_table('sp.visits');
CREATE TABLE sp.unit_visits AS SELECT * FROM sp.visits;
SECURITY LABEL FOR dp_agg ON COLUMN sp.unit_visits.patient IS 'privacy_unit';
SELECT dp_agg.protect_table('sp.unit_visits');
SELECT sp.late() AS late_before \gset
SET SESSION AUTHORIZATION regress_sp_analyst;
SET dp_agg.group_selection_epsilon = 0.93;
SELECT count(*) <= 4 AS at_most_four
FROM (SELECT region, dp_count(age, 0.94) FROM sp.visits GROUP BY region) AS released;
SELECT count(*) <= 4 AS at_most_four
FROM (SELECT region, dp_avg(age, 0, 90, 0.95, 1e-7) FROM sp.visits WHERE age > 80 GROUP BY region) AS r;
SET dp_agg.group_selection_epsilon = 0.96;
SELECT count(*) <= 4 AS at_most_four
FROM (SELECT region, dp_sum(cost, 0, 100, 0.97) FROM sp.unit_visits GROUP BY region) AS released;
BEGIN;
DECLARE c SCROLL CURSOR FOR
  SELECT region, dp_count(age, 0.98) FROM sp.visits GROUP BY region ORDER BY region;
MOVE FORWARD ALL IN c;
MOVE ABSOLUTE 0 IN c;
MOVE FORWARD ALL IN c;
COMMIT;
RESET dp_agg.group_selection_epsilon;
RESET SESSION AUTHORIZATION;
SELECT sp.late() - :late_before AS late_plans_restricted;

-- 5. The counter sees late plans: with the fault late_site_plans (the
-- plans left to the first group, as before the fix) a query with groups
-- builds them late, and the same query over no row builds none.
SET dp_agg.insecure_test_fault = late_site_plans;
SELECT sp.late() AS late_before \gset
SELECT region, dp_avg(age, 0, 90, 0.99, 1e-7) IS NOT NULL AS ga
FROM sp.visits WHERE age < 0 GROUP BY region;
SELECT sp.late() - :late_before AS late_plans_no_group_with_fault;
SELECT count(*) AS groups FROM (SELECT region, dp_avg(age, 0, 90, 0.99, 1e-7)
                                FROM sp.visits WHERE age < 5 GROUP BY region) AS g;
SELECT sp.late() - :late_before > 0 AS late_plans_with_groups_with_fault;
RESET dp_agg.insecure_test_fault;

-- 6. Without the fault, the same two queries with fresh parameters: no late
-- plan either way.
SELECT sp.late() AS late_before \gset
SELECT region, dp_avg(age, 0, 90, 1.01, 1e-7) IS NOT NULL AS ga
FROM sp.visits WHERE age < 0 GROUP BY region;
SELECT count(*) AS groups FROM (SELECT region, dp_avg(age, 0, 90, 1.02, 1e-7)
                                FROM sp.visits WHERE age < 5 GROUP BY region) AS g;
SELECT sp.late() - :late_before AS late_plans_without_fault;

-- 7. The noise samplers' constants (exact_sampler.h): the first draw with a
-- noise scale this process had not used computed them (0.1-0.4 ms), so a
-- first group paid them and no group did not. Built when the query starts
-- with the plans, and counted by the same counter when a draw builds them.
-- Laplace and Gaussian, count, sum over numeric, mean interval, variance.
SELECT sp.late() AS late_before \gset
SELECT region, dp_count(age, 1.11) IS NOT NULL AS c, dp_sum(amount, 0, 125, 1.12) IS NOT NULL AS s,
       (dp_avg_interval(cost, 0, 100, 1.13, 0.9)).value IS NOT NULL AS ai,
       dp_variance(cost, 0, 100, 1.14) IS NOT NULL AS v, dp_stddev(age, 0, 90, 1.15, 1e-7) IS NOT NULL AS sd
FROM sp.visits GROUP BY region ORDER BY region;
SELECT sp.late() - :late_before AS late_sampler_constants;
-- A scale prepared by an earlier query, then 31 new scales (the process
-- keeps 32), then a query with that scale and one more: its start must
-- keep the scale it prepares for its first group (replaced in rotation,
-- the cache evicted it for the new one, and the first group rebuilt it).
SELECT sp.late() AS late_before \gset
SELECT count(*) FROM (SELECT region, dp_count(age, 1.21) FROM sp.visits GROUP BY region) AS g;
SELECT count(*) FROM (SELECT region, dp_count(age, 1.30), dp_count(age, 1.31), dp_count(age, 1.32), dp_count(age, 1.33),
                             dp_count(age, 1.34), dp_count(age, 1.35), dp_count(age, 1.36), dp_count(age, 1.37),
                             dp_count(age, 1.38), dp_count(age, 1.39), dp_count(age, 1.40), dp_count(age, 1.41),
                             dp_count(age, 1.42), dp_count(age, 1.43), dp_count(age, 1.44), dp_count(age, 1.45),
                             dp_count(age, 1.46), dp_count(age, 1.47), dp_count(age, 1.48), dp_count(age, 1.49),
                             dp_count(age, 1.50), dp_count(age, 1.51), dp_count(age, 1.52), dp_count(age, 1.53),
                             dp_count(age, 1.54), dp_count(age, 1.55), dp_count(age, 1.56), dp_count(age, 1.57),
                             dp_count(age, 1.58), dp_count(age, 1.59), dp_count(age, 1.60)
                      FROM sp.visits GROUP BY region) AS g;
SELECT count(*) FROM (SELECT region, dp_count(age, 1.21), dp_count(age, 1.22)
                      FROM sp.visits GROUP BY region) AS g;
SELECT sp.late() - :late_before AS late_sampler_constants_kept;

SET client_min_messages = warning;
DROP SCHEMA sp CASCADE;
DROP OWNED BY regress_sp_analyst;
DROP ROLE regress_sp_analyst;
