-- Findings of the issue-17 privacy review (branch review17), each pinned
-- with the CORRECT behaviour: the expected output fails until the finding is
-- fixed. Runs after drop_guard (finding 2 drops the extension inside a
-- transaction that is rolled back).
\set VERBOSITY terse

-- ---------------------------------------------------------------------------
-- Fixtures: a protected table, a public table large enough for a parallel
-- plan at the default settings' thresholds (forced cheaply below), and a
-- restricted role with a budget.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS review CASCADE;
DROP ROLE IF EXISTS regress_review_analyst;
RESET client_min_messages;
CREATE SCHEMA review;
CREATE TABLE review.people (id int PRIMARY KEY, v int NOT NULL);
INSERT INTO review.people SELECT g, g % 10 FROM generate_series(1, 2000) g;
CREATE TABLE review.lookup (k int PRIMARY KEY, name text NOT NULL);
INSERT INTO review.lookup SELECT g, 'name ' || g FROM generate_series(1, 3) g;
ANALYZE review.people, review.lookup;
SELECT dp_agg.protect_table('review.people');
CREATE ROLE regress_review_analyst LOGIN;
SELECT dp_agg.restrict_role('regress_review_analyst');
GRANT USAGE ON SCHEMA review TO regress_review_analyst;
GRANT SELECT ON review.lookup TO regress_review_analyst;
SELECT dp_agg.set_budget('regress_review_analyst', 1000, 0.001);

-- ---------------------------------------------------------------------------
-- Finding 1. VerifyReleasedOnce (release_once.cpp) walks a Gather's own
-- init plans as if they ran below it, in every worker. They run in the
-- leader, once, before the workers start (ExecGather evaluates initParam and
-- ships the values). So an uncorrelated scalar subquery with a private
-- aggregate, which the restricted-role rewrite makes a materialised init
-- plan, is refused whenever the planner puts a Gather at the top of the
-- outer query. Whether it does depends on planner settings (connection
-- options a restricted role may pass) and on table sizes: at the default
-- settings the query below is answered over a small public table and refused
-- over one of some 10 MB. The outcome of a restricted query must not depend
-- on the plan (README, "Known limits"): it must be answered, charged once.
-- ---------------------------------------------------------------------------
-- Planner settings as a restricted login would pass them (PGOPTIONS='-c ...'),
-- which dp_agg does not check; SET SESSION AUTHORIZATION keeps them.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET SESSION AUTHORIZATION regress_review_analyst;
-- Answered: every lookup row passes (the noisy count is near 2000; it is
-- below 4 with probability < 1e-80, discrete Laplace at epsilon 0.1).
SELECT k FROM review.lookup WHERE k < (SELECT dp_count(id, 0.1) FROM review.people) ORDER BY k;
-- One release for all rows: equal values, within 2000 +- 300 (P(|Z| >= 300)
-- = 2 q^300 / (1 + q), q = exp(-0.1): < 1e-13).
WITH r AS (SELECT (SELECT dp_count(id, 0.1) FROM review.people) AS n FROM review.lookup)
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
-- Finding 2. The DROP EXTENSION guard (drop_guard.cpp) refuses a statement
-- naming dp_agg even where dp_agg is not installed, so the idempotent
-- `DROP EXTENSION IF EXISTS dp_agg` of migration scripts and of
-- `pg_restore --clean --if-exists` into a database without dp_agg fails
-- with "would delete every privacy budget": there is no ledger to lose.
-- Shown in this database after a confirmed drop (rolled back).
-- ---------------------------------------------------------------------------
BEGIN;
SET LOCAL dp_agg.allow_drop_extension = on;
SET LOCAL client_min_messages = warning;
DROP EXTENSION dp_agg CASCADE;
RESET dp_agg.allow_drop_extension;
SET LOCAL client_min_messages = notice;
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'dp_agg';
-- Nothing to drop: a NOTICE, not the guard's refusal.
DROP EXTENSION IF EXISTS dp_agg;
SELECT 'continues' AS transaction_state;
ROLLBACK;
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'dp_agg';

-- ---------------------------------------------------------------------------
-- Clean-up.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
DROP SCHEMA review CASCADE;
SELECT dp_agg.revoke_budget('regress_review_analyst');
SELECT dp_agg.unrestrict_role('regress_review_analyst');
DROP ROLE regress_review_analyst;
RESET client_min_messages;
