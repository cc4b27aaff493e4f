-- Restricted analysts and protected tables (issue 7): an attack suite run as
-- a restricted role. Every attack must be refused with the error of the rule
-- it breaks, or give differentially private answers only. Noisy answers are
-- printed as properties; each states its false-failure probability
-- (at most 1e-9). Discrete Laplace noise with epsilon e has
-- P(|Z| >= k) = 2 q^k / (1 + q), q = exp(-e).
\set VERBOSITY terse

-- ---------------------------------------------------------------------------
-- Fixtures (superuser). Roles are cluster-wide: drop leftovers of a run that
-- stopped half-way (their objects in this database went with it).
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS s CASCADE;
DROP SCHEMA IF EXISTS w CASCADE;
DROP ROLE IF EXISTS regress_dp_analyst;
DROP ROLE IF EXISTS regress_dp_helper;
DROP ROLE IF EXISTS regress_dp_reader;
DROP ROLE IF EXISTS regress_dp_readers;
DROP ROLE IF EXISTS regress_dp_outsider;
DROP ROLE IF EXISTS regress_dp_super;
RESET client_min_messages;

CREATE SCHEMA s;
CREATE SCHEMA w;  -- where the analyst may create objects
-- 2000 people: 1000 in 'north' (even id), 999 in 'south', and id 7 alone
-- in 'lonely'. v = id % 10.
CREATE TABLE s.t (id int PRIMARY KEY, region text NOT NULL, region_id int NOT NULL,
                  v int NOT NULL, amount numeric NOT NULL);
INSERT INTO s.t
SELECT g, CASE WHEN g = 7 THEN 'lonely' WHEN g % 2 = 0 THEN 'north' ELSE 'south' END,
       CASE WHEN g = 7 THEN 3 ELSE g % 2 END, g % 10, g
FROM generate_series(1, 2000) g;
-- A second protected table, a public lookup table (primary key k, kind not
-- unique) and a public parent with a protected child.
CREATE TABLE s.u (id int PRIMARY KEY, w int NOT NULL);
INSERT INTO s.u SELECT g, g % 3 FROM generate_series(1, 500) g;
CREATE TABLE s.regions (k int PRIMARY KEY, name text NOT NULL, kind int NOT NULL);
INSERT INTO s.regions VALUES (0, 'north', 1), (1, 'south', 1), (2, 'east', 2), (3, 'lonely', 2);
ALTER TABLE s.t ADD FOREIGN KEY (region_id) REFERENCES s.regions (k);
CREATE TABLE s.parent (id int, v int);
CREATE TABLE s.child () INHERITS (s.parent);
INSERT INTO s.child SELECT g, g % 10 FROM generate_series(1, 100) g;
CREATE VIEW s.t_view AS SELECT * FROM s.t;
CREATE SEQUENCE s.seq;
ANALYZE s.t, s.u, s.regions, s.child;
CREATE EXTENSION IF NOT EXISTS tsm_system_rows;
-- Objects an analyst might use (a restricted role may not create functions).
CREATE FUNCTION s.peek(int) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'peek: %', $1; RETURN true; END $$;
CREATE FUNCTION s.rows() RETURNS SETOF s.t LANGUAGE sql AS 'SELECT * FROM s.t';
CREATE FUNCTION s.rows_inlined() RETURNS SETOF s.t LANGUAGE sql STABLE AS 'SELECT * FROM s.t';
CREATE AGGREGATE s.my_sum(int) (SFUNC = int4pl, STYPE = int);
CREATE DOMAIN s.small AS int CHECK (VALUE < 5);

CREATE ROLE regress_dp_analyst LOGIN;
CREATE ROLE regress_dp_helper;            -- not restricted; the analyst belongs to it
CREATE ROLE regress_dp_reader;            -- unrestricted, with SELECT on s.t
CREATE ROLE regress_dp_readers;
CREATE ROLE regress_dp_outsider;          -- neither admin nor restricted
CREATE ROLE regress_dp_super SUPERUSER;
GRANT regress_dp_helper TO regress_dp_analyst;
GRANT USAGE ON SCHEMA s TO regress_dp_analyst, regress_dp_helper, regress_dp_reader,
  regress_dp_outsider;
GRANT SELECT ON s.regions, s.parent, s.t_view TO regress_dp_analyst, regress_dp_helper;
GRANT USAGE ON SEQUENCE s.seq TO regress_dp_analyst;
GRANT USAGE, CREATE ON SCHEMA w TO regress_dp_analyst;
GRANT DELETE ON s.regions TO regress_dp_analyst;
GRANT SELECT ON s.t TO regress_dp_reader, regress_dp_readers;
SELECT dp_agg.set_budget('regress_dp_analyst', 1000, 0.001);
SELECT dp_agg.set_budget('regress_dp_reader', 1000, 0.001);

-- ---------------------------------------------------------------------------
-- Administration: labels, and the invariant that a restricted role holds no
-- SELECT of its own on a protected table.
-- ---------------------------------------------------------------------------
SELECT dp_agg.protect_table('s.t');
SELECT dp_agg.protect_table('s.u');
SELECT dp_agg.protect_table('s.child');
SELECT dp_agg.restrict_role('regress_dp_analyst');
SELECT * FROM dp_agg.protected_tables ORDER BY 1::text;
SELECT * FROM dp_agg.restricted_roles WHERE role_name::text LIKE 'regress_dp_%';
-- A1. Restricting a role that may read a protected table.
SELECT dp_agg.restrict_role('regress_dp_reader');
\echo :LAST_ERROR_SQLSTATE
-- A2. Protecting a table that a restricted role may read.
CREATE TABLE s.readable (x int);
GRANT SELECT ON s.readable TO regress_dp_analyst;
SELECT dp_agg.protect_table('s.readable');
\echo :LAST_ERROR_SQLSTATE
-- A3. Column privileges count too.
REVOKE SELECT ON s.readable FROM regress_dp_analyst;
GRANT SELECT (x) ON s.readable TO regress_dp_analyst;
SECURITY LABEL FOR dp_agg ON TABLE s.readable IS 'protected';
\echo :LAST_ERROR_SQLSTATE
-- A4. GRANT SELECT on a protected table to a restricted role, to PUBLIC, or
-- membership in a role that may read it: refused, and nothing granted.
GRANT SELECT ON s.t TO regress_dp_analyst;
\echo :LAST_ERROR_SQLSTATE
GRANT SELECT (v) ON s.t TO regress_dp_analyst;
\echo :LAST_ERROR_SQLSTATE
-- (the message names some restricted role of the cluster: only its SQLSTATE)
\set VERBOSITY sqlstate
GRANT SELECT ON s.t TO PUBLIC;
\set VERBOSITY terse
GRANT regress_dp_readers TO regress_dp_analyst;
\echo :LAST_ERROR_SQLSTATE
GRANT SELECT ON s.t TO regress_dp_helper;
\echo :LAST_ERROR_SQLSTATE
SELECT has_table_privilege('regress_dp_analyst', 's.t', 'SELECT') AS analyst_may_select,
       pg_has_role('regress_dp_analyst', 'regress_dp_readers', 'MEMBER') AS analyst_is_reader;
-- A5. A superuser cannot be restricted.
SELECT dp_agg.restrict_role('regress_dp_super');
\echo :LAST_ERROR_SQLSTATE
-- A6. A restricted role may not own a protected table.
CREATE TABLE s.owned (x int);
ALTER TABLE s.owned OWNER TO regress_dp_analyst;
SELECT dp_agg.protect_table('s.owned');
\echo :LAST_ERROR_SQLSTATE
-- A7. Only tables (not views) and only the two labels.
SECURITY LABEL FOR dp_agg ON VIEW s.t_view IS 'protected';
\echo :LAST_ERROR_SQLSTATE
SECURITY LABEL FOR dp_agg ON TABLE s.readable IS 'secret';
\echo :LAST_ERROR_SQLSTATE
SECURITY LABEL FOR dp_agg ON ROLE regress_dp_outsider IS 'admin';
\echo :LAST_ERROR_SQLSTATE
-- A8. Someone who is neither superuser nor in dp_agg.admin_role, not even
-- on a table of its own.
CREATE TABLE s.outsiders (x int);
ALTER TABLE s.outsiders OWNER TO regress_dp_outsider;
SET SESSION AUTHORIZATION regress_dp_outsider;
SELECT dp_agg.protect_table('s.regions');
\echo :LAST_ERROR_SQLSTATE
SECURITY LABEL FOR dp_agg ON TABLE s.outsiders IS 'protected';
\echo :LAST_ERROR_SQLSTATE
SECURITY LABEL FOR dp_agg ON TABLE s.t IS NULL;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;
SELECT count(*) AS protected_tables FROM dp_agg.protected_tables
WHERE table_name::text LIKE 's.%';

-- ---------------------------------------------------------------------------
-- Attacks, as the restricted analyst. The session user is the analyst, so
-- the rules apply whatever current_user is.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_dp_analyst;
SELECT session_user, current_user;
-- Raw rows, and exact aggregates of them.
SELECT * FROM s.t;
\echo :LAST_ERROR_SQLSTATE
SELECT v FROM s.t WHERE id = 7;
TABLE s.t;
SELECT t FROM s.t t WHERE id = 7;
SELECT * FROM s.u;
SELECT count(*) FROM s.t;
SELECT sum(v) FROM s.t;
SELECT array_agg(id) FROM s.t WHERE region = 'lonely';
SELECT string_agg(region, ',') FROM s.t;
SELECT s.my_sum(v) FROM s.t;
SELECT region, count(*) FROM s.t GROUP BY region;
SELECT dp_count(id, 1.0), max(v) FROM s.t;
-- Through a view the analyst may read, and through one it creates.
SELECT * FROM s.t_view WHERE id = 7;
CREATE TEMP VIEW mine AS SELECT * FROM s.t;
SELECT * FROM mine;
-- Joins that repeat protected rows.
SELECT dp_count(a.id, 1.0) FROM s.t a JOIN s.t b ON a.v = b.v;
SELECT dp_count(t.id, 1.0) FROM s.t t JOIN s.u u ON u.id = t.id;
SELECT g, dp_count(id, 1.0) FROM s.t, generate_series(1, 3) g GROUP BY g;
-- (a list of keys repeated: distinct ones pin each row to one, issue 29)
SELECT dp_count(t.id, 1.0) FROM s.t t JOIN (VALUES (0), (1), (0)) x(a) ON x.a = t.region_id;
SELECT dp_count(x.v, 1.0) FROM s.t t, LATERAL (SELECT t.v) x;
-- A LATERAL level without references next to protected rows. Once the statement has
-- met a protected table, such a level becomes a materialised WITH query, no longer
-- LATERAL; an earlier level that reads nothing protected stays as it was.
SELECT dp_count(t.id, 1.0) FROM s.t t, LATERAL (SELECT dp_count(1, 1.0) n FROM s.t) x;
SELECT dp_count(t.id, 1.0) FROM LATERAL (SELECT dp_count(1, 1.0) n FROM s.t) x, s.t t;
SELECT dp_count(t.id, 1.0) FROM s.t t, LATERAL (SELECT 1 n) x;
SELECT dp_count(t.id, 1.0) FROM LATERAL (SELECT 1 n) x, s.t t;
SELECT dp_count(t.id, 1.0) FROM s.t t JOIN s.regions r ON r.kind = t.region_id;
SELECT dp_count(t.id, 1.0) FROM s.t t CROSS JOIN s.regions r;
SELECT dp_count(t.id, 1.0) FROM s.t t FULL JOIN s.regions r ON r.k = t.region_id;
-- Set operations.
SELECT dp_count(id, 1.0) FROM (SELECT id FROM s.t UNION ALL SELECT id FROM s.t) x;
SELECT id FROM s.t INTERSECT SELECT 7;
SELECT 7 EXCEPT SELECT id FROM s.t;
SELECT dp_count(id, 1.0) FROM (SELECT id FROM s.t UNION SELECT id FROM s.u) x;
SELECT dp_count(id, 1.0) FROM (SELECT id FROM s.t UNION ALL SELECT k FROM s.regions) x;
-- Window functions, DISTINCT, LIMIT/OFFSET, grouping sets.
SELECT dp_count(id, 1.0) OVER () FROM s.t;
SELECT dp_count(r, 1.0) FROM (SELECT row_number() OVER (ORDER BY v) AS r FROM s.t) x;
SELECT DISTINCT region FROM s.t;
SELECT dp_count(region, 1.0) FROM (SELECT DISTINCT ON (region) region FROM s.t) x;
SELECT dp_count(id, 1.0) FROM (SELECT id FROM s.t ORDER BY v LIMIT 5) x;
SELECT dp_count(id, 1.0) FROM (SELECT id FROM s.t OFFSET 1999) x;
SELECT region, dp_count(id, 1.0) FROM s.t GROUP BY CUBE (region);
SELECT region, v, dp_count(id, 1.0) FROM s.t GROUP BY ROLLUP (region, v);
SELECT dp_sum(DISTINCT v, 0, 10, 1.0) FROM s.t;
SELECT dp_sum(v, 0, 10, 1.0 ORDER BY id) FROM s.t;
-- Functions that can fail or talk for some values (sqrt of a negative number
-- raises; arithmetic is replaced by total versions instead, see surface.sql).
SELECT dp_count(id, 1.0) FROM s.t WHERE sqrt(v - 5) > 0;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(id, 1.0) FROM s.t WHERE v::text::int = 5;
SELECT dp_count(id, 1.0) FROM s.t WHERE v::s.small < 5;
SELECT dp_count(id, 1.0) FROM s.t WHERE s.peek(v);
SELECT dp_count(id, 1.0) FROM s.t WHERE id = 7 AND nextval('s.seq') > 0;
SELECT dp_count(id, 1.0) FROM s.t WHERE region ~* 'lon';
SELECT dp_sum(sqrt(10 - v), 0, 10, 1.0) FROM s.t;
SELECT dp_count(id, 1.0) FILTER (WHERE s.peek(v)) FROM s.t;
SELECT dp_count(id, 1.0) FROM (SELECT id FROM s.t ORDER BY sqrt(v - 5)) x;
SELECT v, dp_count(id, 1.0) FROM s.t GROUP BY v HAVING sqrt(v - 5) > 0;
SELECT sqrt(v - 5), dp_count(id, 1.0) FROM s.t GROUP BY sqrt(v - 5);
SELECT dp_count(id, 1.0) FROM s.t WHERE CASE WHEN id = 7 THEN s.peek(id) ELSE true END;
-- Subqueries that read protected rows.
SELECT dp_count(id, 1.0) FROM s.t WHERE v IN (SELECT v FROM s.t WHERE id = 7);
SELECT dp_count(id, 1.0) FROM s.t a WHERE EXISTS (SELECT 1 FROM s.t b WHERE b.id = a.v);
SELECT 'exists' WHERE EXISTS (SELECT 1 FROM s.t WHERE id = 7);
SELECT (SELECT v FROM s.t WHERE id = 7);
SELECT r.k, (SELECT dp_count(t.id, 1.0) FROM s.t t WHERE t.region_id = r.k) FROM s.regions r;
SELECT r.k, x.n FROM s.regions r,
  LATERAL (SELECT dp_count(t.id, 1.0) AS n FROM s.t t WHERE t.region_id = r.k) x;
SELECT dp_select(region, (SELECT array_agg(DISTINCT region) FROM s.t), 1.0) FROM s.t;
SELECT dp_select(region, ARRAY(SELECT region FROM s.t WHERE id = 7), 1.0) FROM s.t;
-- WITH queries.
WITH c AS (SELECT * FROM s.t) SELECT * FROM c WHERE id = 7;
WITH c AS (SELECT id FROM s.t)
SELECT dp_count(a.id, 1.0) FROM c a JOIN c b ON a.id = b.id;
WITH RECURSIVE r(id) AS (SELECT id FROM s.t WHERE id = 7 UNION ALL SELECT id + 1 FROM r WHERE id < 9)
SELECT dp_count(id, 1.0) FROM r;
-- Set-returning functions and functions that run queries themselves.
SELECT generate_series(1, v) FROM s.t;
SELECT dp_count(g, 1.0) FROM (SELECT generate_series(1, v) AS g FROM s.t) x;
SELECT * FROM s.rows() WHERE id = 7;
\echo :LAST_ERROR_SQLSTATE
-- (inlined into the query after the rules ran: no owner access for it)
SELECT dp_count(id, 1.0) FROM s.rows_inlined();
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM ts_stat('SELECT to_tsvector(region) FROM s.t');
SELECT query_to_xml('SELECT * FROM s.t WHERE id = 7', true, false, '');
DO $$ BEGIN RAISE NOTICE 'v = %', (SELECT v FROM s.t WHERE id = 7); END $$;
DO $$ DECLARE r record; BEGIN
  FOR r IN EXECUTE 'SELECT * FROM s.t' LOOP RAISE NOTICE '%', r; END LOOP;
END $$;
-- Reading, locking and changing rows by other statements.
SELECT dp_count(id, 1.0) FROM (SELECT id FROM s.t FOR UPDATE) x;
CREATE TEMP TABLE loot (id int, region text, region_id int, v int, amount numeric);
INSERT INTO loot SELECT * FROM s.t;
INSERT INTO loot SELECT * FROM s.t_view;
WITH c AS (SELECT * FROM s.t) INSERT INTO loot SELECT * FROM c;
UPDATE loot SET v = t.v FROM s.t t WHERE t.id = loot.id;
MERGE INTO loot l USING s.t t ON l.id = t.id WHEN NOT MATCHED THEN INSERT VALUES (t.id, t.region, t.region_id, t.v, t.amount);
UPDATE s.t SET v = v WHERE id = 7;
DELETE FROM s.t WHERE id = 7;
WITH d AS (DELETE FROM s.t WHERE id = 7 RETURNING v) SELECT dp_count(v, 1.0) FROM d;
CREATE TEMP TABLE loot2 AS SELECT * FROM s.t;
SELECT * INTO TEMP loot3 FROM s.t;
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM s.t;
ROLLBACK;
CREATE MATERIALIZED VIEW loot4 AS SELECT * FROM s.t;
-- (WITH NO DATA plans nothing; filling it is refused)
CREATE MATERIALIZED VIEW w.loot5 AS SELECT * FROM s.t WITH NO DATA;
REFRESH MATERIALIZED VIEW w.loot5;
SELECT * FROM w.loot5;
INSERT INTO s.t VALUES (5000, 'x', 0, 0, 0);
COPY s.t FROM '/nonexistent/rows.csv';
TRUNCATE s.t;
-- The foreign key check of s.t runs a query on s.t: refused whether or not
-- rows refer to the region (0 has many, 2 none).
DELETE FROM s.regions WHERE k = 0;
DELETE FROM s.regions WHERE k = 2;
COPY s.t TO STDOUT;
COPY s.t (v) TO STDOUT;
COPY (SELECT * FROM s.t WHERE id = 7) TO STDOUT;
SELECT count(*) AS looted FROM loot;
-- The public parent of a protected child, with and without ONLY.
SELECT * FROM s.parent WHERE id = 7;
SELECT count(*) AS parent_only_rows FROM ONLY s.parent;
-- Plans and statistics.
EXPLAIN (COSTS OFF) SELECT dp_count(id, 1.0) FROM s.t;
EXPLAIN ANALYZE SELECT dp_count(id, 1.0) FROM s.t;
PREPARE counted(float8) AS SELECT dp_count(id, $1) FROM s.t WHERE region = 'lonely';
EXPLAIN EXECUTE counted(1.0);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE counted(1.0);
DEALLOCATE counted;
SELECT * FROM pg_stats WHERE tablename = 't';
SELECT * FROM pg_stats_ext;
SELECT * FROM pg_statistic;
-- pg_class's row-count columns are masked (what a never-analyzed table
-- shows: reltuples -1, relpages 0, relallvisible 0), in every form of
-- reading them, so that drivers' catalog queries (JDBC getIndexInfo) work.
SELECT reltuples, relpages, relallvisible FROM pg_class WHERE oid = 's.t'::regclass;
SELECT relname, reltuples, relpages FROM (SELECT * FROM pg_class WHERE oid = 's.t'::regclass) c;
SELECT row_to_json(c)->>'reltuples' AS reltuples FROM pg_class c WHERE oid = 's.t'::regclass;
SELECT relname FROM pg_class WHERE reltuples > 0 AND relnamespace = 's'::regnamespace;
SELECT count(*) AS tables FROM pg_class WHERE relnamespace = 's'::regnamespace
  AND relpages = 0 AND reltuples = -1 AND relallvisible = 0;
SELECT ci.relname, ci.reltuples AS cardinality, ci.relpages AS pages
FROM pg_class ct JOIN pg_index i ON i.indrelid = ct.oid JOIN pg_class ci ON ci.oid = i.indexrelid
WHERE ct.oid = 's.t'::regclass;
SELECT relname FROM pg_class WHERE oid = 's.t'::regclass
  AND (SELECT c.reltuples FROM pg_class c WHERE c.oid = 's.t'::regclass) = -1;
-- refused: a system column or TABLESAMPLE with them
SELECT reltuples, xmin FROM pg_class WHERE oid = 's.t'::regclass;
SELECT relpages FROM pg_class TABLESAMPLE SYSTEM (100) WHERE oid = 's.t'::regclass;
SELECT pg_relation_size('s.t');
SELECT pg_total_relation_size('s.t');
SELECT pg_table_size('s.t_pkey');
SELECT pg_indexes_size('s.t');
SELECT pg_size_pretty(pg_database_size(current_database()));
SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 't';
SELECT heap_blks_read FROM pg_statio_user_tables WHERE relname = 't';
SELECT pg_stat_get_live_tuples('s.t'::regclass);
SELECT pg_stat_get_numscans('s.t'::regclass);
SELECT count(*) FROM pg_stat_activity;
SELECT * FROM pg_stats_ext_exprs;
-- Catalog columns without row counts stay readable.
SELECT relname, relkind FROM pg_class WHERE oid = 's.t'::regclass;
-- Sampling by a method that is not built in (SYSTEM_ROWS(n) picks n rows,
-- like LIMIT).
SELECT dp_count(id, 1.0) FROM s.t TABLESAMPLE SYSTEM_ROWS (10);
-- A statement prepared by a superuser is planned again for the analyst.
RESET SESSION AUTHORIZATION;
PREPARE prepared_by_superuser AS SELECT v FROM s.t WHERE id = 7;
EXECUTE prepared_by_superuser;
SET SESSION AUTHORIZATION regress_dp_analyst;
EXECUTE prepared_by_superuser;
DEALLOCATE prepared_by_superuser;
-- Settings, labels, privileges and libraries.
SET dp_agg.max_epsilon = 1000;
\echo :LAST_ERROR_SQLSTATE
SET dp_agg.insecure_test_seed = 42;
SET LOCAL dp_agg.max_delta = 0.5;
RESET dp_agg.max_epsilon;
SELECT set_config('dp_agg.max_epsilon', '1000', false);
ALTER ROLE regress_dp_analyst SET dp_agg.max_epsilon = 1000;
ALTER ROLE regress_dp_analyst SET dp_agg.group_selection_delta = 0.5;
LOAD 'dp_agg';
SECURITY LABEL FOR dp_agg ON ROLE regress_dp_analyst IS NULL;
SECURITY LABEL FOR dp_agg ON TABLE s.t IS NULL;
SELECT dp_agg.unrestrict_role(current_user::regrole);
SELECT dp_agg.protect_table('s.regions');
GRANT SELECT ON s.t TO regress_dp_analyst;
REVOKE SELECT ON s.regions FROM regress_dp_helper;
ANALYZE s.t;
VACUUM s.t;
CREATE FUNCTION leak(int) RETURNS boolean LEAKPROOF LANGUAGE sql AS 'SELECT true';
CREATE INDEX ON loot (v);
LOCK TABLE s.t;
-- Partition selection settings the analyst may choose, within the limits.
SET dp_agg.group_selection_delta = 0.4;
SELECT region, dp_count(id, 1.0) FROM s.t GROUP BY region;
\echo :LAST_ERROR_SQLSTATE
SET dp_agg.group_selection_epsilon = 100000;
SELECT region, dp_count(id, 1.0) FROM s.t GROUP BY region;
\echo :LAST_ERROR_SQLSTATE
RESET dp_agg.group_selection_delta;
RESET dp_agg.group_selection_epsilon;
SHOW dp_agg.group_selection_epsilon;
-- SET ROLE to a role that is not restricted: the session user still is.
SET ROLE regress_dp_helper;
SELECT session_user, current_user;
SELECT * FROM s.t WHERE id = 7;
COPY s.t TO STDOUT;
EXPLAIN (COSTS OFF) SELECT dp_count(id, 1.0) FROM s.t;
SELECT * FROM s.regions WHERE false;
RESET ROLE;
-- Nothing was changed or charged by the refusals.
SELECT epsilon, delta FROM dp_agg.remaining_budget();
RESET SESSION AUTHORIZATION;
SELECT count(*) AS rows_left, sum(v) AS v_sum FROM s.t;
SELECT last_value, is_called FROM s.seq;
SELECT count(*) AS regions FROM s.regions;
SELECT count(*) AS analyst_labels FROM dp_agg.restricted_roles
WHERE role_name = 'regress_dp_analyst'::regrole;

-- ---------------------------------------------------------------------------
-- What works for a restricted analyst. Properties of noisy answers:
--   dp_count, epsilon 1: P(|Z| >= 25) = 2 e^-25 / (1 + e^-1) = 2.1e-11.
--   group selection with delta 1e-10: a group of one row appears with
--   probability at most 1e-10; groups of about 1000 rows always do (the
--   optimal rule releases every group of 46 rows or more at (1, 1e-10)).
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_dp_analyst;
SET dp_agg.group_selection_delta = 1e-10;
SELECT epsilon AS before FROM dp_agg.remaining_budget() \gset
-- W1. A BI tool's wrapper over a grouped private count; 'lonely' (one row)
-- is not shown (<= 1e-10), and each count is within 24 of the truth
-- (2 x 2.1e-11).
SELECT region, abs(n - CASE region WHEN 'north' THEN 1000 ELSE 999 END) < 25 AS close
FROM (SELECT * FROM (SELECT region, dp_count(id, 1.0) n FROM s.t GROUP BY region) q
      LIMIT 2000) w
ORDER BY region;
-- It cost epsilon 1 for dp_count and 1 for group selection.
SELECT :before - epsilon AS spent FROM dp_agg.remaining_budget();
-- W2. GROUP BY a protected key of singleton groups: 2000 groups of one row,
-- none shown (probability of any at most 2000 x 1e-13 = 2e-10).
SET dp_agg.group_selection_delta = 1e-13;
SELECT count(*) AS shown FROM (SELECT id, dp_count(id, 1.0) FROM s.t GROUP BY id) q;
SET dp_agg.group_selection_delta = 1e-10;
-- W3. A join to a public table on its primary key, grouped by a public
-- column: 'north' and 'south' (2 x 2.1e-11), not 'lonely' (1e-10), not
-- 'east' (no rows).
SELECT r.name, abs(n - CASE r.name WHEN 'north' THEN 1000 ELSE 999 END) < 25 AS close
FROM (SELECT r.name, dp_count(t.id, 1.0) AS n
      FROM s.t t JOIN s.regions r ON r.k = t.region_id GROUP BY r.name) r
ORDER BY 1;
-- W4. public LEFT JOIN protected, grouped by the public key: every public
-- row is a group, no selection needed (4 x 2.1e-11).
SELECT r.k, abs(n - CASE r.k WHEN 0 THEN 1000 WHEN 1 THEN 999 WHEN 3 THEN 1 ELSE 0 END) < 25
       AS close
FROM (SELECT r.k, dp_count(t.id, 1.0) AS n
      FROM s.regions r LEFT JOIN s.t t ON t.region_id = r.k GROUP BY r.k) r
ORDER BY 1;
-- W5. A prepared statement with epsilon as $1, executed 7 times (custom
-- plans, then the generic plan); each count within 24 of 2000 (epsilon 1.5:
-- 7 x 2 e^-37.5 / (1 + e^-1.5) = 6e-16).
PREPARE total(float8) AS SELECT abs(dp_count(id, $1) - 2000) < 25 AS close FROM s.t;
EXECUTE total(1.5);
EXECUTE total(1.5);
EXECUTE total(1.5);
EXECUTE total(1.5);
EXECUTE total(1.5);
EXECUTE total(1.5);
EXECUTE total(1.5);
DEALLOCATE total;
-- W6. GROUP BY a protected column alone, asked for explicitly with the gate
-- (issue 27: without it the listing is refused before any charge, as BI
-- tools send it in the background), releases the keys that pass selection:
-- not 'lonely' (1e-10). INSERT of private answers works.
SELECT region FROM s.t GROUP BY region ORDER BY 1;
SELECT region FROM s.t GROUP BY region HAVING dp_agg.group_selection(1.0, 1e-10) ORDER BY 1;
CREATE TEMP TABLE kept (region text, n bigint);
INSERT INTO kept SELECT region, dp_count(id, 1.0) FROM s.t GROUP BY region;
SELECT region FROM kept ORDER BY 1;
-- A cheaper selection, paid for: epsilon 0.5 + 0.25 for dp_count.
SET dp_agg.group_selection_epsilon = 0.5;
SELECT epsilon AS before FROM dp_agg.remaining_budget() \gset
SELECT count(*) > 0 AS answered FROM (SELECT region, dp_count(id, 0.25) FROM s.t GROUP BY region) q;
SELECT :before - epsilon AS spent FROM dp_agg.remaining_budget();
RESET dp_agg.group_selection_epsilon;
-- W7. Other aggregates (their answers always lie in the bounds; the sum,
-- 9000, with Laplace noise of scale 9, leaves [0, 18000] with probability
-- e^-1000), filters with leakproof operators, TABLESAMPLE BERNOULLI and
-- SYSTEM, a CTE and a subquery read once, a cursor, CREATE TABLE AS of
-- private answers (not 'lonely', 1e-10).
SELECT dp_sum(v, 0, 9, 1.0) BETWEEN 0 AND 18000 AS sum_ok,
       dp_avg(v, 0, 9, 1.0) BETWEEN 0 AND 9 AS avg_ok,
       dp_median(v, 0, 9, 1.0) BETWEEN 0 AND 9 AS median_ok,
       dp_select(region, ARRAY['north', 'south', 'east'], 1.0) IS NOT NULL AS select_ok
FROM s.t WHERE v < 10 AND region <> 'x';
SELECT ((e).low <= (e).value AND (e).value <= (e).high) AS interval_ok
FROM (SELECT dp_count_interval(id, 1.0, 0.95) AS e FROM s.t) q;
SELECT dp_count(id, 1.0) IS NOT NULL AS sampled FROM s.t TABLESAMPLE BERNOULLI (50);
SELECT dp_count(id, 1.0) IS NOT NULL AS sampled FROM s.t TABLESAMPLE SYSTEM (50);
-- (2.1e-11 each)
WITH c AS (SELECT id, v FROM s.t WHERE v = 3) SELECT abs(dp_count(id, 1.0) - 200) < 25 AS close FROM c;
SELECT abs(dp_count(id, 1.0) - 200) < 25 AS close FROM (SELECT id FROM s.t WHERE v = 3) x;
BEGIN;
DECLARE private_cursor CURSOR FOR SELECT abs(dp_count(id, 1.0) - 2000) < 25 AS close FROM s.t;
FETCH ALL FROM private_cursor;
COMMIT;
CREATE TEMP TABLE answers AS SELECT region, dp_count(id, 1.0) AS n FROM s.t GROUP BY region;
SELECT region FROM answers ORDER BY 1;
RESET dp_agg.group_selection_delta;
RESET SESSION AUTHORIZATION;
-- W8. Group selection under a zCDP budget (docs/administrator_guide.md "Privacy budgets"): it is
-- delta-approximately (epsilon^2 / 2)-zCDP, so a zCDP budget with a delta
-- total pays for it: dp_count(id, 1.0) costs rho 1/2, selection at epsilon 1
-- another 1/2 and its delta 1e-10. With a delta total of 0 it is refused
-- (ZP001, with guidance) before anything is charged or released. (The
-- group selections above already spent zCDP delta: every charge is recorded
-- in both currencies, so the NOTICE says that such a budget is used up.)
SELECT dp_agg.set_budget_zcdp('regress_dp_analyst', 1000);
SET SESSION AUTHORIZATION regress_dp_analyst;
SET dp_agg.group_selection_delta = 1e-10;
SELECT budget_kind, epsilon_total, delta_total, rho_total, zcdp_delta_total FROM dp_agg.budgets;
SELECT epsilon_spent AS eps0, rho_spent AS rho0, zcdp_delta_spent AS zd0 FROM dp_agg.budgets \gset
SELECT region FROM (SELECT region, dp_count(id, 1.0) n FROM s.t GROUP BY region) q ORDER BY 1;
\echo :LAST_ERROR_SQLSTATE
SELECT epsilon_spent - :eps0 AS epsilon_charged, rho_spent - :rho0 AS rho_charged,
       zcdp_delta_spent - :zd0 AS delta_charged FROM dp_agg.budgets;
RESET SESSION AUTHORIZATION;
SELECT dp_agg.set_budget_zcdp('regress_dp_analyst', 1000, 0.001);
SET SESSION AUTHORIZATION regress_dp_analyst;
SET dp_agg.group_selection_delta = 1e-10;
-- Not 'lonely' (1e-10).
SELECT region FROM (SELECT region, dp_count(id, 1.0) n FROM s.t GROUP BY region) q ORDER BY 1;
SELECT epsilon_spent - :eps0 AS epsilon_charged, rho_spent - :rho0 AS rho_charged,
       zcdp_delta_spent - :zd0 AS delta_charged FROM dp_agg.budgets;
SELECT rho, zcdp_delta, aggregates FROM dp_agg.ledger WHERE kind = 'charge' ORDER BY id DESC LIMIT 1;
RESET dp_agg.group_selection_delta;
RESET SESSION AUTHORIZATION;
-- Back to the (epsilon, delta) budget of the suites below; what was spent
-- under the zCDP budget is in its sums.
SELECT dp_agg.set_budget('regress_dp_analyst', 1000, 0.001);

-- ---------------------------------------------------------------------------
-- A real login as the analyst: SET SESSION AUTHORIZATION needs a superuser
-- login, so it cannot escape; neither can SET ROLE.
-- ---------------------------------------------------------------------------
SELECT current_user AS superuser_name \gset
\c - regress_dp_analyst
\set VERBOSITY terse
SELECT session_user, current_user;
SET SESSION AUTHORIZATION regress_dp_super;
SET ROLE regress_dp_super;
SET ROLE regress_dp_helper;
SELECT * FROM s.t WHERE id = 7;
\c - :superuser_name
\set VERBOSITY terse

-- ---------------------------------------------------------------------------
-- Unrestricted roles are unaffected.
-- ---------------------------------------------------------------------------
SELECT id, region, v FROM s.t WHERE id = 7;
SET SESSION AUTHORIZATION regress_dp_reader;
SELECT id, region, v FROM s.t WHERE id = 7;
SELECT region, count(*) FROM s.t GROUP BY region ORDER BY 1;
RESET SESSION AUTHORIZATION;
-- Lifting the restriction gives the analyst nothing it was not granted.
SELECT dp_agg.unrestrict_role('regress_dp_analyst');
SET SESSION AUTHORIZATION regress_dp_analyst;
SELECT * FROM s.t WHERE id = 7;
SELECT region, dp_count(id, 1.0) FROM s.t GROUP BY region;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Clean up.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
SELECT dp_agg.unprotect_table('s.t');
SELECT dp_agg.unprotect_table('s.u');
SELECT dp_agg.unprotect_table('s.child');
SELECT count(*) AS protected_tables FROM dp_agg.protected_tables WHERE table_name::text LIKE 's.%';
SELECT dp_agg.revoke_budget('regress_dp_analyst');
SELECT dp_agg.revoke_budget('regress_dp_reader');
DROP SCHEMA s CASCADE;
DROP SCHEMA w CASCADE;
DROP EXTENSION tsm_system_rows;
DROP OWNED BY regress_dp_analyst, regress_dp_helper, regress_dp_reader, regress_dp_readers,
  regress_dp_outsider, regress_dp_super;
DROP ROLE regress_dp_analyst;
DROP ROLE regress_dp_helper;
DROP ROLE regress_dp_reader;
DROP ROLE regress_dp_readers;
DROP ROLE regress_dp_outsider;
DROP ROLE regress_dp_super;
RESET client_min_messages;
