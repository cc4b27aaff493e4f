-- dp_select: permute-and-flip among candidates from the query.
--
-- Accuracy bound: with scores that all move the same way (counts), a
-- candidate whose score is g below the best is accepted with probability
-- exp(-epsilon g); at epsilon 5 and a gap of 100 rows that is e^-500.
\set VERBOSITY default

CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE votes AS
SELECT g,
       (ARRAY['red', 'green', 'blue'])[1 + (g % 7 = 0)::int + (g % 3 = 0)::int] AS colour,
       g % 5 AS digit,
       (ARRAY['sad', 'ok', 'happy']::mood[])[1 + (g % 3 = 0)::int] AS feeling,
       DATE '2024-01-01' + (g % 7 = 0)::int AS day,
       (g % 13)::float8 AS revenue
FROM generate_series(1, 1000) g;
SELECT colour, count(*) FROM votes GROUP BY colour ORDER BY colour;

-- the true mode wins at high epsilon, for any type with equality; the
-- result type is the candidates' element type; non-candidates are ignored
SELECT dp_select(colour, ARRAY['red', 'green', 'blue', 'violet'], 5) AS colour,
       pg_typeof(dp_select(colour, ARRAY['red', 'green'], 5)) AS result_type,
       dp_select(feeling, ARRAY['sad', 'ok', 'happy']::mood[], 5) AS feeling,
       dp_select(day, ARRAY[DATE '2024-01-01', DATE '2024-01-02'], 5) AS day,
       dp_select(colour, ARRAY['green', 'blue'], 5) AS among_two
FROM votes;
-- weighted: the candidate with the largest sum of clamped weights
-- (red 572 rows, green 381; weights 0..12 clamped to [0, 10])
SELECT dp_select(colour, revenue, 0, 10, ARRAY['red', 'green', 'blue'], 5) AS best_revenue,
       dp_select(colour, -revenue, -10, 0, ARRAY['red', 'green', 'blue'], 5) AS least_negative
FROM votes;

-- the answer is always a candidate, also on empty input (300 answers, and
-- with 3 candidates and no data each is equally likely: all three appear
-- except with probability 3 (2/3)^300 < 1e-50)
CREATE TABLE ballots AS SELECT b, v FROM generate_series(1, 300) b, generate_series(1, 3) v;
SELECT bool_and(a IN ('x', 'y', 'z')) AS always_a_candidate, count(DISTINCT a) = 3 AS all_appear
FROM (SELECT b, dp_select(v::text, ARRAY['x', 'y', 'z'], 1) FILTER (WHERE v > 3) AS a
      FROM ballots GROUP BY b) q;

-- bad parameters: 22023, decided from the query alone
SELECT dp_select(colour, ARRAY['red', 'red'], 1) FROM votes;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_select(colour, ARRAY[]::text[], 1) FROM votes;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_select(colour, NULL::text[], 1) FROM votes WHERE false;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_select(colour, ARRAY['red', NULL], 1) FROM votes;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_select(colour, ARRAY['red', 'green'], NULL) FROM votes;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_select(colour, ARRAY['red', 'green'], 0) FROM votes;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_select(colour, revenue, 10, 0, ARRAY['red'], 1) FROM votes;
\echo :LAST_ERROR_SQLSTATE
-- candidates may not come from the rows
SELECT dp_select(colour, ARRAY['red', colour], 1) FROM votes;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_select(colour, (SELECT array_agg(DISTINCT colour) FROM votes), 1) FROM votes;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_select(colour, ARRAY['red'], 1) OVER () FROM votes LIMIT 1;
\echo :LAST_ERROR_SQLSTATE
-- as a prepared statement with the candidates as a parameter
PREPARE pick(text[], float8) AS SELECT dp_select(colour, $1, $2) FROM votes;
EXECUTE pick(ARRAY['red', 'green'], 5);
DEALLOCATE pick;

-- parallel: partial scores combine exactly, so serial and parallel plans
-- give the same answer under the same test seed
CREATE TABLE big_votes AS
SELECT g, (ARRAY['red', 'green', 'blue'])[1 + g % 3] AS colour FROM generate_series(1, 200000) g;
ANALYZE big_votes;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT dp_select(colour, ARRAY['red', 'green', 'blue'], 0.001) FROM big_votes;
SET dp_agg.insecure_test_seed = 7;
SELECT dp_select(colour, ARRAY['red', 'green', 'blue'], 0.001) AS s FROM big_votes \gset parallel_
SET max_parallel_workers_per_gather = 0;
SET dp_agg.insecure_test_seed = 7;
SELECT dp_select(colour, ARRAY['red', 'green', 'blue'], 0.001) = :'parallel_s' AS same_answer
FROM big_votes;
RESET ALL;
SELECT aggregates FROM dp_agg.ledger WHERE aggregates LIKE 'dp_select%' ORDER BY id DESC LIMIT 1;

-- the text form round-trips exactly (Citus moves partial states as text);
-- scores that do not match the candidates are refused
SELECT 's1 weighted=0 epsilon=0x1p+0 lower=0x0p+0 upper=0x0p+0 unit_exponent=0 scores=3,-1,0 type=pg_catalog.text candidates={a,"b c",d}'::dp_agg.selection_state;
SELECT 's1 weighted=1 epsilon=0x1p-1 lower=-0x1p+0 upper=0x1p+1 unit_exponent=-61 scores=170141183460469231731687303715884105727,0 type=public.mood candidates={sad,ok}'::dp_agg.selection_state;
SELECT 's1 weighted=0 epsilon=0x1p+0 lower=0x0p+0 upper=0x0p+0 unit_exponent=0 scores=3,-1 type=pg_catalog.text candidates={a,b,c}'::dp_agg.selection_state;
