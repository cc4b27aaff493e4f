-- Clean failures: statements that stress the aggregates' input handling
-- (bad bounds, ORDER BY/DISTINCT inside a call, parallel workers, unhashable
-- types, partitioned joins, parameter errors, the test seed) fail cleanly with
-- a documented SQLSTATE (or work), and the next statement works.
-- Found by: a crash review; each case once crashed the server, read memory it
-- should not, charged nothing, or raised an internal error. Noisy assertions state their false-failure probability.
\set VERBOSITY default
\set SHOW_CONTEXT never

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS cf CASCADE;
DROP ROLE IF EXISTS regress_cf_analyst;
DROP ROLE IF EXISTS regress_cf_restricted;
RESET client_min_messages;
CREATE SCHEMA cf;
CREATE ROLE regress_cf_analyst;
CREATE ROLE regress_cf_restricted;
GRANT USAGE ON SCHEMA cf TO regress_cf_analyst, regress_cf_restricted;
SELECT dp_agg.set_budget(session_user::regrole, 1000000, 0.5);
SELECT dp_agg.set_budget('regress_cf_analyst', 1000000, 0.5);
SELECT dp_agg.set_budget('regress_cf_restricted', 1000, 0.001);
CREATE TABLE cf.data AS SELECT g AS x, (g % 10)::float8 AS w FROM generate_series(1, 100) g;
GRANT SELECT ON cf.data TO regress_cf_analyst;

-- ---------------------------------------------------------------------------
-- 1. Bounds with lower > upper: real and double precision bounds are
-- by-value floats, never numerics (was SIGSEGV).
-- ---------------------------------------------------------------------------
SELECT dp_sum(1.0::float8, 1, 0, 1.0);
\echo :LAST_ERROR_SQLSTATE
SELECT 1 AS alive;
SELECT dp_avg(1::real, 1, 0, 1.0);
\echo :LAST_ERROR_SQLSTATE
SELECT 1 AS alive;
SELECT dp_sum(1.0::float8, 1, 0, 1.0, 1e-6);
SELECT dp_avg(1::real, 1, 0, 1.0, 1e-6);
SELECT dp_sum_interval(1.0::float8, 1, 0, 1.0, 0.9);
SELECT dp_avg_interval(1::real, 1, 0, 1.0, 1e-6, 0.9);
SELECT 1 AS alive;
-- equal numeric bounds between two doubles still work
SELECT dp_sum(1.0::numeric, 0.1, 0.1, 1.0) IS NOT NULL AS answered;

-- ---------------------------------------------------------------------------
-- 2. ORDER BY and DISTINCT inside a private aggregate call are refused for
-- every role, before any parameter is read (ORDER BY keys used to shift the
-- parameter positions: SIGSEGV, the wrong form, answers outside the bounds).
-- ---------------------------------------------------------------------------
SELECT epsilon_spent AS before FROM dp_agg.budgets WHERE role = session_user \gset
SELECT dp_select('a'::text, ARRAY['a','b'], 1.0 ORDER BY 2.0::float8, 5, 0.5::float8);
\echo :LAST_ERROR_SQLSTATE
SELECT 1 AS alive;
SELECT dp_count(1, 1.0 ORDER BY 1e-6::float8);
\echo :LAST_ERROR_SQLSTATE
SELECT 1 AS alive;
SELECT dp_median(w, 0, 1, 5 ORDER BY 0.25::float8) FROM cf.data;
SELECT dp_percentile(w, 0.5, 0, 1, 5 ORDER BY w) FROM cf.data;
SELECT dp_count(DISTINCT x, 1.0 ORDER BY x) FROM cf.data;
SELECT dp_sum(DISTINCT x, 0, 10, 1.0) FROM cf.data;
SELECT dp_select(DISTINCT 'a'::text, ARRAY['a','b'], 1.0);
SELECT 1 AS alive;
-- nothing was charged for the refused calls
SELECT round(epsilon_spent - :before, 6) AS charged FROM dp_agg.budgets WHERE role = session_user;
-- the ordinary forms still work
SELECT dp_median(w, 0, 10, 5) BETWEEN 0 AND 10 AS in_bounds FROM cf.data;
SELECT dp_select(x % 2, ARRAY[0, 1], 1.0) IN (0, 1) AS a_candidate FROM cf.data;

-- ---------------------------------------------------------------------------
-- 3. A complete private aggregate in a parallel worker is charged (by the
-- worker); a partial step in a worker is paid by the leader.
-- ---------------------------------------------------------------------------
CREATE FUNCTION cf.f() RETURNS bigint LANGUAGE sql PARALLEL SAFE
  AS 'select dp_count(1, 1.0) from cf.data';
SELECT epsilon_spent AS before FROM dp_agg.budgets WHERE role = session_user \gset
SET force_parallel_mode = on;
SELECT count(cf.f()) AS calls FROM generate_series(1, 5);
SELECT round(epsilon_spent - :before, 6) AS charged FROM dp_agg.budgets WHERE role = session_user;
-- (the calls did run in a parallel worker; EXPLAIN ANALYZE pays for 5 more)
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(cf.f()) AS calls FROM generate_series(1, 5);
RESET force_parallel_mode;
-- a parallel aggregation (partial steps in workers) costs its epsilon once
CREATE TABLE cf.big AS SELECT g AS x FROM generate_series(1, 100000) g;
ANALYZE cf.big;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT dp_count(x, 0.5) FROM cf.big;
SELECT epsilon_spent AS before FROM dp_agg.budgets WHERE role = session_user \gset
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM cf.big;
SELECT round(epsilon_spent - :before, 6) AS charged FROM dp_agg.budgets WHERE role = session_user;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;

-- ---------------------------------------------------------------------------
-- 4. dp_select works for every type with an equality operator, hashable or
-- not (bit, varbit, tsvector, money have btree equality only).
-- ---------------------------------------------------------------------------
SELECT dp_select(b, ARRAY[B'1'], 1.0) AS bit FROM (VALUES (B'1')) v(b);
SELECT dp_select(b, ARRAY[B'10'::varbit, B'1'::varbit], 1.0) IN (B'10', B'1') AS varbit
FROM (VALUES (B'1'::varbit)) v(b);
SELECT dp_select(t, ARRAY['a'::tsvector, 'b'::tsvector], 1.0) IN ('a', 'b') AS tsvector
FROM (VALUES ('a'::tsvector)) v(t);
SELECT dp_select(m, ARRAY['1.00'::money, '2.00'::money], 1.0) IN ('1.00', '2.00') AS money
FROM (VALUES ('1.00'::money)) v(m);
-- duplicates are still refused, hashable or not
SELECT dp_select(b, ARRAY[B'1', B'1'], 1.0) FROM (VALUES (B'1')) v(b);
SELECT dp_select(t, ARRAY['a', 'a'], 1.0) FROM (VALUES ('a'::text)) v(t);
-- a type without any equality is refused at preparation (42883)
SELECT dp_select(p, ARRAY[point(1, 1)], 1.0) FROM (VALUES (point(1, 1))) v(p);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_select(p, ARRAY[point(1, 1)], 1.0) FROM (VALUES (point(1, 1))) v(p) WHERE false;
\echo :LAST_ERROR_SQLSTATE

-- ---------------------------------------------------------------------------
-- 5. A key join of a partitioned protected table with a public table: the
-- scanned partitions are one protected table.
-- ---------------------------------------------------------------------------
CREATE TABLE cf.regions (k int PRIMARY KEY, name text NOT NULL);
INSERT INTO cf.regions VALUES (0, 'north'), (1, 'south');
CREATE TABLE cf.pt (id int NOT NULL, region_id int NOT NULL REFERENCES cf.regions (k))
  PARTITION BY RANGE (id);
CREATE TABLE cf.pt1 PARTITION OF cf.pt FOR VALUES FROM (0) TO (100);
CREATE TABLE cf.pt2 PARTITION OF cf.pt FOR VALUES FROM (100) TO (1000);
INSERT INTO cf.pt SELECT g, g % 2 FROM generate_series(1, 500) g;
ANALYZE cf.pt, cf.regions;
SELECT dp_agg.protect_table('cf.pt') IS NULL AS protected;
GRANT SELECT ON cf.regions TO regress_cf_restricted;
SELECT dp_agg.restrict_role('regress_cf_restricted') IS NULL AS restricted;
EXPLAIN (COSTS OFF)
SELECT dp_count(p.id, 1.0) FROM cf.pt p JOIN cf.regions r ON r.k = p.region_id;
SELECT dp_count(p.id, 1.0) IS NOT NULL AS answered
FROM cf.pt p JOIN cf.regions r ON r.k = p.region_id;
SET SESSION AUTHORIZATION regress_cf_restricted;
-- |noise| < 25 at epsilon 1: P(fail) = 2 e^-25 / (1 + e^-1) < 1e-10
SELECT abs(dp_count(p.id, 1.0) - 500) < 25 AS accurate
FROM cf.pt p JOIN cf.regions r ON r.k = p.region_id;
SELECT r.name, abs(dp_count(p.id, 1.0) - 250) < 25 AS accurate
FROM cf.pt p JOIN cf.regions r ON r.k = p.region_id GROUP BY r.name ORDER BY r.name;
-- still refused: the same protected table twice
SELECT dp_count(a.id, 1.0) FROM cf.pt a JOIN cf.pt b ON a.id = b.id;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- 6. No internal error (XX000) from SQL: parameter errors are 22023, decided
-- before execution; input functions reject garbage with 22P02.
-- ---------------------------------------------------------------------------
SELECT dp_count(1, 8.881784197001252e-16, 1e-100);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count_interval(x, 8.881784197001252e-16, 1e-100, 0.9) FROM cf.data WHERE false;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_avg(x, 0, 1, 1.0, 5e-324) FROM cf.data;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count_margin(8.881784197001252e-16, 1e-100);
\echo :LAST_ERROR_SQLSTATE
SELECT 'garbage'::dp_agg.selection_state;
\echo :LAST_ERROR_SQLSTATE
SELECT 's1 type=- candidates={}'::dp_agg.selection_state;
\echo :LAST_ERROR_SQLSTATE
SELECT 's1 type=void candidates={}'::dp_agg.selection_state;
\echo :LAST_ERROR_SQLSTATE
SELECT 's1 type=int4[] candidates={}'::dp_agg.selection_state;
\echo :LAST_ERROR_SQLSTATE
SELECT 's1 type=int4 candidates={{1},{2}}'::dp_agg.selection_state;
\echo :LAST_ERROR_SQLSTATE
SELECT 's1 type=no_such_type candidates={1}'::dp_agg.selection_state;
\echo :LAST_ERROR_SQLSTATE
SELECT 'garbage'::dp_agg.aggregate_state;
\echo :LAST_ERROR_SQLSTATE
SELECT 'garbage'::dp_agg.quantile_state;
\echo :LAST_ERROR_SQLSTATE
SELECT 1 AS alive;
-- small deltas that the README allows are charged exactly
SELECT dp_count(x, 0.5, 1e-126) IS NOT NULL AS answered FROM cf.data;
SELECT delta = 1e-126 AS exact_delta FROM dp_agg.ledger
WHERE kind = 'charge' ORDER BY id DESC LIMIT 1;
SELECT dp_count(x, 0.5, 1e-300) IS NOT NULL AS a, dp_count(x, 0.5, 1e-5) IS NOT NULL AS b
FROM cf.data;
SELECT delta = 1e-300 + 1e-5 AS exact_delta FROM dp_agg.ledger
WHERE kind = 'charge' ORDER BY id DESC LIMIT 1;

-- ---------------------------------------------------------------------------
-- 7. The seeded test generator serves superuser SESSIONS only: not an
-- analyst calling a superuser-owned SECURITY DEFINER function, even with the
-- seed set for the database; and only superusers may see the seed.
-- ---------------------------------------------------------------------------
CREATE FUNCTION cf.noisy_count() RETURNS bigint LANGUAGE sql SECURITY DEFINER
  AS 'SELECT dp_count(x, 0.000001) FROM cf.data';
GRANT EXECUTE ON FUNCTION cf.noisy_count() TO regress_cf_analyst;
ALTER DATABASE :"DBNAME" SET dp_agg.insecure_test_seed = 4242;
-- control: two fresh superuser sessions draw the same (seeded) noise
\c
SELECT cf.noisy_count() AS super1 \gset
\c
SELECT cf.noisy_count() = :super1 AS superuser_sessions_repeat;
-- the analyst, three fresh sessions: fresh noise. False failure (all three
-- equal) with discrete Laplace at epsilon 1e-6: below 1e-12.
\c
SET SESSION AUTHORIZATION regress_cf_analyst;
SELECT cf.noisy_count() AS a1 \gset
SHOW dp_agg.insecure_test_seed;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS visible FROM pg_settings WHERE name = 'dp_agg.insecure_test_seed';
SELECT count(*) AS visible FROM pg_settings WHERE name = 'dp_agg.insecure_test_fault';
\c
SET SESSION AUTHORIZATION regress_cf_analyst;
SELECT cf.noisy_count() AS a2 \gset
\c
SET SESSION AUTHORIZATION regress_cf_analyst;
SELECT cf.noisy_count() AS a3 \gset
SELECT NOT (:a1 = :a2 AND :a2 = :a3) AS analyst_noise_is_fresh;
RESET SESSION AUTHORIZATION;
ALTER DATABASE :"DBNAME" RESET dp_agg.insecure_test_seed;

-- ---------------------------------------------------------------------------
-- Issue 26, finding 4: dp_agg.zcdp_rho(1e-20, 1e-300) spun at 100% CPU for
-- ever (it stepped rho down one double at a time from 1e-300), deaf to
-- statement_timeout, pg_cancel_backend and pg_terminate_backend; any role
-- could call it. Under the 5 s timeout below the old code never returned
-- (this file hung); now the conversion is a bisection of at most 63 steps.
-- No positive rho is certified at epsilon 1e-20 and delta 1e-300 (the
-- accountant's orders alpha stop at 1 + e^45), so the answer is 0. Every
-- answer converts back within the requested epsilon, per zcdp_epsilon.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_cf_restricted;
SET statement_timeout = '5s';
SELECT dp_agg.zcdp_rho(1e-20, 1e-300) AS rho_of_finding_4;
SELECT e, d, r > 0 AS positive,
       r = 0 OR dp_agg.zcdp_epsilon(r::float8, d) <= e AS within_epsilon
FROM (SELECT e, d, dp_agg.zcdp_rho(e, d) AS r
      FROM unnest(ARRAY[1e-300, 4.9e-324, 1e-20, 1e-15, 1, 1e300]::float8[]) e,
           unnest(ARRAY[1e-300, 4.9e-324, 1e-6, 0.999999]::float8[]) d) s
ORDER BY e, d;
RESET statement_timeout;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Clean up.
-- ---------------------------------------------------------------------------
\c
SHOW dp_agg.insecure_test_seed;
SET client_min_messages = warning;
SELECT dp_agg.unrestrict_role('regress_cf_restricted') IS NULL AS unrestricted;
SELECT dp_agg.unprotect_table('cf.pt') IS NULL AS unprotected;
SELECT dp_agg.revoke_budget('regress_cf_analyst');
SELECT dp_agg.revoke_budget('regress_cf_restricted');
DROP SCHEMA cf CASCADE;
DROP OWNED BY regress_cf_analyst, regress_cf_restricted;
DROP ROLE regress_cf_analyst;
DROP ROLE regress_cf_restricted;
RESET client_min_messages;
