-- Restricted analysts: query shapes that would read an exact fact (a row's
-- existence, a value, a statistic), each refused.
-- Found by: the attack suite and an adversarial review; every query below
-- leaked before its fix.
\set VERBOSITY terse
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS h CASCADE;
DROP ROLE IF EXISTS regress_dp_hole_analyst;
RESET client_min_messages;
CREATE SCHEMA h;
CREATE TABLE h.t (id int PRIMARY KEY, region_id int NOT NULL, v int NOT NULL);
INSERT INTO h.t SELECT g, CASE WHEN g = 7 THEN 3 ELSE g % 2 END, g % 10 FROM generate_series(1, 2000) g;
CREATE TABLE h.regions (k int PRIMARY KEY, name text NOT NULL);
INSERT INTO h.regions VALUES (0, 'north'), (1, 'south'), (2, 'east'), (3, 'lonely');
CREATE TABLE h.ids (k int PRIMARY KEY, name text NOT NULL);   -- a public lookup table
INSERT INTO h.ids SELECT g, 'id ' || g FROM generate_series(1, 3000) g;
CREATE TABLE h.parts (id int, v int) PARTITION BY RANGE (id);
CREATE TABLE h.parts_low PARTITION OF h.parts FOR VALUES FROM (0) TO (1000);
CREATE TABLE h.parts_high PARTITION OF h.parts FOR VALUES FROM (1000) TO (2000);
CREATE TABLE h.loose (id int, v int);
ANALYZE h.t;
CREATE ROLE regress_dp_hole_analyst;
GRANT USAGE ON SCHEMA h TO regress_dp_hole_analyst;
GRANT SELECT ON h.regions, h.ids, h.loose TO regress_dp_hole_analyst;
SELECT true AS done FROM dp_agg.protect_table('h.t');
SELECT true AS done FROM dp_agg.protect_table('h.parts');
SELECT true AS done FROM dp_agg.restrict_role('regress_dp_hole_analyst');
SELECT true AS done FROM dp_agg.set_budget('regress_dp_hole_analyst', 1000, 0.001);

-- F. The no-privilege invariant covers partitions and every privilege.
GRANT SELECT ON h.parts_low TO regress_dp_hole_analyst;
GRANT INSERT ON h.t TO regress_dp_hole_analyst;
GRANT REFERENCES (id) ON h.t TO regress_dp_hole_analyst;
ALTER TABLE h.parts ATTACH PARTITION h.loose FOR VALUES FROM (2000) TO (3000);
SELECT has_table_privilege('regress_dp_hole_analyst', 'h.parts_low', 'SELECT') AS low_readable,
       has_table_privilege('regress_dp_hole_analyst', 'h.t', 'INSERT') AS t_insertable;

-- Superuser settings stay with the session: LOG output must still not reach
-- the restricted client (plans carry row estimates).
SET debug_print_plan = on;
SET trace_sort = on;
SET SESSION AUTHORIZATION regress_dp_hole_analyst;

-- A. Non-leakproof functions of query parameters are evaluated per row by a
-- generic plan, only for the rows a condition selects.
-- Since issue 13 the division is dp_agg's total version (NULL for a zero
-- divisor): the probes answer, for every row alike, instead of failing.
SET plan_cache_mode = force_generic_plan;
PREPARE probe(int, int) AS
  SELECT dp_count(CASE WHEN id = $1 THEN 1 / $2 ELSE 0 END, 0.01) IS NOT NULL AS ok FROM h.t;
EXECUTE probe(7, 0);
PREPARE probe2(int, text) AS
  SELECT dp_count(1, 0.01) IS NOT NULL AS ok FROM h.t WHERE CASE WHEN v = $1 THEN $2::int > 0 ELSE true END;
EXECUTE probe2(3, 'x');
DO $$
DECLARE z int := 0; r boolean;
BEGIN
  SELECT dp_count(CASE WHEN id = 500 THEN 1 / z END, 0.01) IS NOT NULL INTO r FROM h.t;
END $$;
-- Parameters of the aggregates themselves are fine: evaluated before any row.
PREPARE fine(float8) AS SELECT dp_count(id, $1 * 2) IS NOT NULL AS ok FROM h.t;
EXECUTE fine(0.05);
RESET plan_cache_mode;

-- B, C. Debugging output: LOG messages are not sent, and the settings
-- cannot be changed by the analyst.
SET client_min_messages = log;
SELECT dp_count(id, 1.0) IS NOT NULL AS answered FROM h.t WHERE v < 3;
SELECT count(*) AS groups FROM (SELECT v, dp_count(id, 1.0) FROM h.t GROUP BY v) q;
RESET client_min_messages;
SELECT set_config('debug_print_plan', 'on', false);
SET trace_sort = on;
SET enable_hashagg = off;
SET work_mem = '64kB';

-- D. public LEFT JOIN protected: anything but grouping and filtering by the
-- public side decides groups by protected rows.
SELECT p.k FROM h.regions p LEFT JOIN h.t t ON t.region_id = p.k
  JOIN h.regions q ON q.k = p.k AND t.id = 7 GROUP BY p.k;
SELECT i.name FROM h.regions p
  LEFT JOIN (h.t t JOIN h.ids i ON i.k = t.id) ON t.region_id = p.k
  WHERE p.k = 3 GROUP BY i.name ORDER BY 1;
SELECT p.k FROM h.regions p
  LEFT JOIN (h.t t JOIN h.ids i ON i.k = t.id) ON t.region_id = p.k
  WHERE i.k = 7 GROUP BY p.k;
SELECT p.k, dp_count(t.id, 1.0) IS NOT NULL AS n FROM h.regions p
  LEFT JOIN h.t t ON t.region_id = p.k LEFT JOIN h.ids i ON i.k = t.v GROUP BY p.k, i.k;
-- ... while the intended shape works and shows every public group (4 rows).
SELECT count(*) AS groups FROM (SELECT p.name, dp_count(t.id, 1.0) FROM h.regions p
  LEFT JOIN h.t t ON t.region_id = p.k WHERE p.k >= 0 GROUP BY p.name) q;

-- E. An inheritance parent's primary key says nothing about its children.
CREATE TEMP TABLE par (k int PRIMARY KEY);
CREATE TEMP TABLE chi () INHERITS (par);
SELECT dp_count(t.id, 1.0) FROM h.t t JOIN par ON par.k = t.id WHERE t.id = 7;
-- ONLY the parent is pinned by its key.
SELECT dp_count(t.id, 1.0) IS NOT NULL AS answered FROM h.t t JOIN ONLY par ON par.k = t.id;

-- Catalogs through COPY, extension statistics by name.
COPY pg_class (relname, reltuples, relpages) TO STDOUT;
SELECT pg_stat_have_stats('relation', 0, 0);

-- Partitions of a protected table are protected.
SELECT * FROM h.parts_low;
SELECT dp_count(id, 1.0) IS NOT NULL AS answered FROM h.parts_high;

-- A view of the analyst's own over a private query works; over raw rows it
-- does not.
CREATE TEMP VIEW mine AS SELECT v, dp_count(id, 1.0) AS n FROM h.t GROUP BY v;
-- 10 groups of 200 rows: each released (group selection at epsilon 1, delta
-- 1e-6 releases every group of 28 rows or more).
SELECT count(*) AS groups FROM mine;
CREATE TEMP VIEW raw AS SELECT * FROM h.t;
SELECT * FROM raw WHERE id = 7;

RESET SESSION AUTHORIZATION;
RESET debug_print_plan;
RESET trace_sort;
SET client_min_messages = warning;
DROP SCHEMA h CASCADE;
SELECT true AS done FROM dp_agg.revoke_budget('regress_dp_hole_analyst');
DROP OWNED BY regress_dp_hole_analyst;
DROP ROLE regress_dp_hole_analyst;
RESET client_min_messages;
