-- Parallel aggregation: Partial Aggregate in the workers, combine and noise
-- once in the leader. The true sums are exact integers, so serial and
-- parallel plans must produce identical answers under the same test seed.
-- The table big is one of setup's shared fixtures.

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

-- Gaussian forms in parallel (issue 31): a worker's initial state skips the
-- calibration its leader did for the same call site (initial_state.h); the
-- leader's final function calibrates the noise. The same answers and the
-- same charge (rho) as serial under one test seed.
SET dp_agg.insecure_test_seed = 78;
SELECT dp_count(x, 1, 1e-9) AS c, dp_sum(f, 0, 1, 1, 1e-9) AS s,
       dp_avg(x, 0, 200000, 1, 1e-9) AS a
FROM big \gset gauss_
SELECT rho AS gauss_rho FROM dp_agg.ledger WHERE kind = 'charge' ORDER BY id DESC LIMIT 1 \gset
SET max_parallel_workers_per_gather = 0;
SET dp_agg.insecure_test_seed = 78;
SELECT dp_count(x, 1, 1e-9) = :gauss_c AS same_count,
       dp_sum(f, 0, 1, 1, 1e-9) = :gauss_s AS same_sum,
       dp_avg(x, 0, 200000, 1, 1e-9) = :gauss_a AS same_mean
FROM big;
SELECT rho = :gauss_rho AND rho > 0 AS same_rho
FROM dp_agg.ledger WHERE kind = 'charge' ORDER BY id DESC LIMIT 1;
RESET dp_agg.insecure_test_seed;
SET max_parallel_workers_per_gather = 2;
-- The leader still refuses what no discrete Gaussian supports, before any
-- worker starts and before any charge.
SELECT count(*) AS charges_before FROM dp_agg.ledger WHERE kind = 'charge' \gset
SELECT dp_count(x, 1e-12, 1e-300) FROM big;
SELECT count(*) = :charges_before AS nothing_charged FROM dp_agg.ledger WHERE kind = 'charge';
-- A single-copy Gather: the worker runs the final function, which calibrates
-- for itself (|N_Z(0, sigma^2)| > 40 at epsilon 10, delta 1e-9, sigma < 1:
-- probability below 1e-300; the mean's noise has a standard deviation near 1).
SET force_parallel_mode = on;
SELECT abs(dp_count(x, 10, 1e-9) - 200000) <= 40 AS count_ok,
       abs(dp_avg(x, 0, 200000, 10, 1e-9) - avg(x)) < 10 AS mean_ok
FROM big;
RESET force_parallel_mode;

-- ---------------------------------------------------------------------------
-- Restricted roles: an uncorrelated scalar subquery with a private aggregate
-- under a Gather is answered, released and charged once.
-- ---------------------------------------------------------------------------
\set VERBOSITY terse
-- Fixtures: a protected table, a public table large enough for a parallel
-- plan at the default settings' thresholds (forced cheaply below), and a
-- restricted role with a budget.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS par CASCADE;
DROP ROLE IF EXISTS regress_par_analyst;
RESET client_min_messages;
CREATE SCHEMA par;
CREATE TABLE par.people (id int PRIMARY KEY, v int NOT NULL);
INSERT INTO par.people SELECT g, g % 10 FROM generate_series(1, 2000) g;
CREATE TABLE par.lookup (k int PRIMARY KEY, name text NOT NULL);
INSERT INTO par.lookup SELECT g, 'name ' || g FROM generate_series(1, 3) g;
ANALYZE par.people, par.lookup;
SELECT dp_agg.protect_table('par.people');
CREATE ROLE regress_par_analyst LOGIN;
SELECT dp_agg.restrict_role('regress_par_analyst');
GRANT USAGE ON SCHEMA par TO regress_par_analyst;
GRANT SELECT ON par.lookup TO regress_par_analyst;
SELECT dp_agg.set_budget('regress_par_analyst', 1000, 0.001);
-- The outcome of a restricted query must not depend on the plan (README,
-- "Known limits"): an uncorrelated scalar subquery with a private aggregate,
-- which the restricted-role rewrite makes a materialised init plan, is
-- answered and charged once when the planner puts a Gather at the top of the
-- outer query (a Gather's own init plans run in the leader, once, before the
-- workers start: ExecGather evaluates initParam and ships the values).
-- Found by: the issue-17 privacy review (VerifyReleasedOnce, release_once.cpp,
-- walked a Gather's init plans as if they ran in every worker, so the query
-- was refused over a public table of some 10 MB and answered over a small one).
-- ---------------------------------------------------------------------------
-- Planner settings as a restricted login would pass them (PGOPTIONS='-c ...'),
-- which dp_agg does not check; SET SESSION AUTHORIZATION keeps them.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET SESSION AUTHORIZATION regress_par_analyst;
-- Answered: every lookup row passes (the noisy count is near 2000; it is
-- below 4 with probability < 1e-80, discrete Laplace at epsilon 0.1).
SELECT k FROM par.lookup WHERE k < (SELECT dp_count(id, 0.1) FROM par.people) ORDER BY k;
-- One release for all rows: equal values, within 2000 +- 300 (P(|Z| >= 300)
-- = 2 q^300 / (1 + q), q = exp(-0.1): < 1e-13).
WITH r AS (SELECT (SELECT dp_count(id, 0.1) FROM par.people) AS n FROM par.lookup)
SELECT count(*) AS rows, count(DISTINCT n) AS releases, bool_and(n BETWEEN 1700 AND 2300) AS near
FROM r;
-- Charged once per statement, 0.1 each.
SELECT epsilon, aggregates FROM dp_agg.ledger WHERE kind = 'charge' ORDER BY id;
RESET SESSION AUTHORIZATION;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- ---------------------------------------------------------------------------
-- Clean-up.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
DROP SCHEMA par CASCADE;
SELECT dp_agg.revoke_budget('regress_par_analyst');
SELECT dp_agg.unrestrict_role('regress_par_analyst');
DROP ROLE regress_par_analyst;
RESET client_min_messages;
\set VERBOSITY default
