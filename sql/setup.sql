-- Shared fixtures for the dp_agg regression suites. Every noisy assertion in
-- the suites is a boolean whose false-failure probability is stated next to
-- it and is at most 1e-9.
SELECT extname, extversion FROM pg_extension WHERE extname = 'dp_agg';

-- Every private query is paid from the session user's budget; the suites
-- run as one superuser with a budget large enough for all of them.
SELECT dp_agg.set_budget(session_user::regrole, 1000000, 0.5);

-- 1000 rows, x = 1..1000, with a NULL in every 10th row of y.
CREATE TABLE numbers AS
SELECT g AS x,
       CASE WHEN g % 10 = 0 THEN NULL ELSE g % 7 END AS y,
       (g % 5)::smallint AS s,
       g::bigint AS b,
       (g / 1000.0)::real AS r,
       (g / 1000.0)::float8 AS f,
       (g / 1000.0)::numeric AS n,
       'group ' || (g % 3) AS grp
FROM generate_series(1, 1000) g;

CREATE TABLE empty_table (LIKE numbers);

-- A role without special rights, for privilege checks (left over from an
-- earlier run if that one stopped half-way).
SET client_min_messages = warning;
DROP ROLE IF EXISTS dp_agg_regress_analyst;
RESET client_min_messages;
CREATE ROLE dp_agg_regress_analyst;
GRANT SELECT ON numbers, empty_table TO dp_agg_regress_analyst;

-- 300 groups of 3 rows (v = 1, 2, 3), for answers that must stay within the
-- bounds (avg, quantile).
CREATE TABLE three_rows AS SELECT g, v FROM generate_series(1, 300) g, generate_series(1, 3) v;

-- 200,000 rows, large enough for parallel plans (parallel, quantile).
CREATE TABLE big AS
SELECT g AS x, ((g % 1000) / 1000.0)::float8 AS f, (g % 1000 / 1000.0)::numeric AS n, g % 4 AS grp
FROM generate_series(1, 200000) g;
ANALYZE big;
