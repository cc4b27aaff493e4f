-- Plain count/sum/avg of a restricted role, answered privately (issue 27):
-- administrator-declared column bounds, dp_agg.plain_aggregate_epsilon, the
-- rewrite into dp_count/dp_sum/dp_avg with the types and names tools expect,
-- and the refusals that say what to declare.
--
-- Tolerances (each false-failure probability <= 1e-9): a count at epsilon
-- 0.5 has discrete Laplace noise, P(|Z| >= 42) = 2 e^-21 / (1 + e^-0.5) <
-- 9.5e-10; a sum with bounds [0, 110] at epsilon 0.5 has P(|Z| >= 23 * 110 /
-- 0.5 = 5060) <= 2 e^-23 < 2.1e-10 (sum.sql); a mean within 10 of the truth
-- needs a noisy sum off by about 40,000 (more than 180 scales), so fails
-- with probability far below 1e-30.
\set VERBOSITY default
SELECT current_user AS admin \gset
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS hr CASCADE;
DROP ROLE IF EXISTS regress_plain_analyst;
DROP ROLE IF EXISTS regress_plain_plain;
DROP ROLE IF EXISTS regress_plain_outsider;
RESET client_min_messages;

CREATE SCHEMA hr;
-- 4000 patients, 1000 per region; age = 20 + id % 60, weight = 50 + id % 40.
CREATE TABLE hr.patients (id int PRIMARY KEY, region text NOT NULL, age int, weight float8,
                          income numeric, small smallint, big bigint);
INSERT INTO hr.patients
SELECT g, (ARRAY['north', 'south', 'east', 'west'])[1 + g % 4], 20 + g % 60, 50 + g % 40,
       1000 + g, g % 5, g
FROM generate_series(1, 4000) g;
CREATE TABLE hr.regions (name text PRIMARY KEY, country text NOT NULL);
INSERT INTO hr.regions VALUES ('north', 'a'), ('south', 'a'), ('east', 'b'), ('west', 'b');
CREATE VIEW hr.region_counts AS SELECT region, count(*) AS patients FROM hr.patients GROUP BY region;
CREATE ROLE regress_plain_analyst LOGIN;   -- restricted, with the setting
CREATE ROLE regress_plain_plain LOGIN;     -- restricted, without it
CREATE ROLE regress_plain_outsider;        -- neither administrator nor restricted
GRANT USAGE ON SCHEMA hr TO regress_plain_analyst, regress_plain_plain, regress_plain_outsider;
GRANT SELECT ON hr.regions, hr.region_counts TO regress_plain_analyst, regress_plain_plain;
SELECT dp_agg.protect_table('hr.patients');
SELECT dp_agg.restrict_role('regress_plain_analyst');
SELECT dp_agg.restrict_role('regress_plain_plain');
SELECT dp_agg.set_budget('regress_plain_analyst', 1000, 1e-3);
SELECT dp_agg.set_budget('regress_plain_plain', 1000, 1e-3);
ALTER ROLE regress_plain_analyst SET dp_agg.plain_aggregate_epsilon = 0.5;

-- ---------------------------------------------------------------------------
-- Declaring bounds: numeric columns only, finite, lower <= upper, integers
-- for integer columns; one label per column; administrators only.
-- ---------------------------------------------------------------------------
SELECT dp_agg.set_column_bounds('hr.patients', 'age', 0, 110);
SELECT dp_agg.set_column_bounds('hr.patients', 'weight', 0, 300.5);
SELECT dp_agg.set_column_bounds('hr.patients', 'small', 0, 10);
SELECT dp_agg.set_column_bounds('hr.patients', 'big', 0, 5000);
SELECT * FROM dp_agg.column_bounds ORDER BY column_name;
\set VERBOSITY sqlstate
SELECT dp_agg.set_column_bounds('hr.patients', 'region', 0, 1);
SELECT dp_agg.set_column_bounds('hr.patients', 'age', 0.5, 110);
SELECT dp_agg.set_column_bounds('hr.patients', 'age', 10, 1);
SELECT dp_agg.set_column_bounds('hr.patients', 'age', 'NaN', 1);
SELECT dp_agg.set_column_bounds('hr.patients', 'small', 0, 40000);
SELECT dp_agg.set_column_bounds('hr.patients', 'nope', 0, 1);
SECURITY LABEL FOR dp_agg ON COLUMN hr.patients.age IS 'bounds [0; 110]';
SECURITY LABEL FOR dp_agg ON COLUMN hr.patients.age IS 'bounds [0, 1e99999]';
-- Review 27, finding 3: bounds of a double precision column are values of
-- its type (else every plain sum or avg of it failed with 22003).
SECURITY LABEL FOR dp_agg ON COLUMN hr.patients.weight IS 'bounds [0, 1e309]';
SECURITY LABEL FOR dp_agg ON COLUMN hr.patients.weight IS 'bounds [-1e-320, 1]';
\set VERBOSITY default
-- A column is a privacy unit or has bounds, never silently both.
SELECT dp_agg.set_privacy_unit('hr.patients', 'age');
SET SESSION AUTHORIZATION regress_plain_outsider;
SELECT dp_agg.set_column_bounds('hr.patients', 'income', 0, 1);
RESET SESSION AUTHORIZATION;
SELECT dp_agg.set_column_bounds('hr.patients', 'income', 0, 1);
SELECT dp_agg.unset_column_bounds('hr.patients', 'income');
SELECT count(*) AS income_bounds FROM dp_agg.column_bounds WHERE column_name = 'income';
SELECT obj_description('dp_agg.column_bounds'::regclass) IS NOT NULL AS view_commented,
       obj_description('dp_agg.set_column_bounds(regclass, name, numeric, numeric)'::regprocedure)
         IS NOT NULL AS set_commented;

-- Exact answers, for the tolerances below (computed as the administrator).
SELECT count(*) AS true_count, sum(age) AS true_age_sum, avg(age) AS true_age_avg,
       sum(weight) AS true_weight_sum, sum(small) AS true_small_sum, sum(big) AS true_big_sum
FROM hr.patients \gset

-- ---------------------------------------------------------------------------
-- Without the setting: refused exactly as before (fail closed).
-- ---------------------------------------------------------------------------
\c - regress_plain_plain
SHOW dp_agg.plain_aggregate_epsilon;
SELECT count(*) FROM hr.patients;
SELECT region, avg(age) FROM hr.patients GROUP BY region;

-- ---------------------------------------------------------------------------
-- With the setting (ALTER ROLE ... SET, applied at login).
-- ---------------------------------------------------------------------------
\c - regress_plain_analyst
SHOW dp_agg.plain_aggregate_epsilon;
-- The analyst cannot change it, by SET or for their own role.
SET dp_agg.plain_aggregate_epsilon = 5;
ALTER ROLE regress_plain_analyst SET dp_agg.plain_aggregate_epsilon = 5;

-- The result columns keep their names and PostgreSQL's types.
SELECT count(*), count(age), count(DISTINCT age), sum(age), avg(age), sum(weight), avg(weight),
       sum(small), avg(small), sum(big), avg(big)
FROM hr.patients \gdesc
SELECT pg_typeof(c) AS count_type, pg_typeof(s) AS sum_int4, pg_typeof(a) AS avg_int4,
       pg_typeof(sf) AS sum_float8, pg_typeof(af) AS avg_float8, pg_typeof(s2) AS sum_int2,
       pg_typeof(s8) AS sum_int8, pg_typeof(a8) AS avg_int8
FROM (SELECT count(*) AS c, sum(age) AS s, avg(age) AS a, sum(weight) AS sf, avg(weight) AS af,
             sum(small) AS s2, sum(big) AS s8, avg(big) AS a8
      FROM hr.patients) q;

-- Noisy answers within the stated tolerances.
SELECT abs(c - :true_count) < 42 AS count_ok,
       abs(cv - :true_count) < 42 AS count_values_ok,
       abs(s - :true_age_sum) < 5060 AS sum_ok,
       abs(a - :true_age_avg) < 10 AS avg_ok, a BETWEEN 0 AND 110 AS avg_within_bounds,
       abs(d - 60) < 42 AS distinct_ok
FROM (SELECT count(*) AS c, count(age) AS cv, sum(age) AS s, avg(age) AS a,
             count(DISTINCT age) AS d
      FROM hr.patients) q;

-- What a BI tool sends: quoted identifiers, aliases, GROUP BY ordinals,
-- ORDER BY the aggregate, LIMIT, a nested "source" query (Metabase), a WITH
-- query, HAVING and FILTER. Every region has 1000 rows, so each is released
-- (group selection at the default settings keeps a 1000-row group except
-- with probability far below 1e-9).
SELECT "source"."region" AS "region", count(*) AS "count"
FROM (SELECT "hr"."patients"."region" AS "region" FROM "hr"."patients") AS "source"
GROUP BY "source"."region" ORDER BY "source"."region" ASC LIMIT 2000 \gdesc
SELECT region, abs(n - 1000) < 42 AS count_ok
FROM (SELECT "region", COUNT(1) AS n FROM "hr"."patients" GROUP BY 1) q ORDER BY 1;
SELECT region, abs(a - 49.5) < 10 AS avg_ok, abs(s - 49500) < 5060 AS sum_ok
FROM (SELECT "region", avg("age") AS a, sum("age") AS s FROM "hr"."patients"
      GROUP BY "region" ORDER BY 3 DESC LIMIT 10) q ORDER BY 1;
WITH adults AS (SELECT region, age FROM hr.patients WHERE age >= 18)
SELECT count(*) = 4 AS four_regions
FROM (SELECT region, count(*) AS n FROM adults GROUP BY region HAVING count(*) > 100) q;
SELECT abs(n - 1000) < 42 AS filtered_ok
FROM (SELECT count(*) FILTER (WHERE region = 'north') AS n FROM hr.patients) q;
-- Tableau casts before averaging: a widening cast of a bounded column keeps
-- its bounds (as double precision here); a narrowing one does not.
SELECT region, abs(a - 49.5) < 10 AS avg_ok, pg_typeof(a) AS avg_type
FROM (SELECT "patients"."region" AS "region",
             AVG(CAST("patients"."age" AS DOUBLE PRECISION)) AS a
      FROM "hr"."patients" "patients" GROUP BY 1) q ORDER BY 1;
SELECT abs(s - :true_age_sum) < 5060 AS sum_ok, pg_typeof(s) AS sum_type
FROM (SELECT sum(age::bigint) AS s FROM hr.patients) q;
SELECT sum(weight::int) FROM hr.patients;
-- A public table joined on its unique key.
SELECT country, abs(n - 2000) < 42 AS count_ok
FROM (SELECT r.country, count(*) AS n FROM hr.patients p JOIN hr.regions r ON r.name = p.region
      GROUP BY r.country) q ORDER BY 1;
-- A view that aggregates protected rows with plain count(*).
SELECT region, abs(patients - 1000) < 42 AS count_ok FROM hr.region_counts ORDER BY 1;
-- An outer count of released groups is post-processing: it stays count.
SELECT count(*) AS released_groups
FROM (SELECT region, count(*) FROM hr.patients GROUP BY region) q;
-- Review 27, finding 4: a subquery in a VALUES list or a function's argument
-- in FROM is a level of its own, rewritten like the others (it was left
-- plain, and refused as not private).
SELECT abs(c - :true_count) < 42 AS values_ok
FROM (VALUES ((SELECT count(*) FROM hr.patients))) AS v(c);
SELECT abs(count(*) - :true_count) < 42 AS function_argument_ok
FROM generate_series(1, (SELECT count(*) FROM hr.patients));
-- Prepared statements (the extended protocol of pgjdbc, psycopg2, ...).
PREPARE by_region AS SELECT region, count(*) AS n FROM hr.patients WHERE age > $1 GROUP BY region;
EXECUTE by_region(0) \gdesc
DEALLOCATE by_region;

-- What they cost: the plain epsilon per call, plus group selection.
SELECT epsilon FROM dp_agg.query_cost('SELECT count(*) FROM hr.patients');
SELECT epsilon FROM dp_agg.query_cost('SELECT count(*), sum(age), avg(weight) FROM hr.patients');
SELECT epsilon FROM dp_agg.query_cost(
  'SELECT region, count(*), avg(age) FROM hr.patients GROUP BY region');
-- A dashboard's cost: the sum over its tiles' queries.
SELECT sum(c.epsilon) AS dashboard_epsilon, sum(c.delta) AS dashboard_delta
FROM unnest(ARRAY['SELECT count(*) FROM hr.patients',
                  'SELECT region, avg(age) FROM hr.patients GROUP BY region',
                  'SELECT region, count(DISTINCT age) FROM hr.patients GROUP BY 1']) AS tile(q),
     dp_agg.query_cost(tile.q) AS c;
-- And the ledger charges exactly that.
SELECT epsilon AS before FROM dp_agg.remaining_budget() \gset
SELECT count(*) >= 0 AS answered FROM hr.patients;
SELECT :before - epsilon AS charged FROM dp_agg.remaining_budget();

-- Refusals that say what to declare, before anything is charged.
SELECT epsilon AS before FROM dp_agg.remaining_budget() \gset
SELECT sum(income) FROM hr.patients;
SELECT avg(age * 2) FROM hr.patients;
SELECT max(age) FROM hr.patients;
SELECT region, min(weight) FROM hr.patients GROUP BY region;
SELECT sum(DISTINCT age) FROM hr.patients;
SELECT stddev(age) FROM hr.patients;
SELECT :before - epsilon AS charged_by_refusals FROM dp_agg.remaining_budget();

-- Review 27, finding 1: a recursive WITH query's reference to itself ended
-- the server process (the rewrite followed it without end, SIGSEGV). A
-- count over public rows stays count; over protected rows, refused as before.
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3)
SELECT count(*) FROM r;
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3)
SELECT count(*) FROM r, hr.patients;
WITH RECURSIVE r(a) AS (SELECT age FROM hr.patients UNION ALL SELECT a + 1 FROM r WHERE a < 3)
SELECT count(*), sum(a) FROM r;
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3),
     s(m) AS (SELECT n FROM r UNION ALL SELECT m + 1 FROM s, r WHERE m < n)
SELECT count(*) FROM s;

\c - :admin
-- Unrestricted roles keep PostgreSQL's own aggregates (exact answers).
SET dp_agg.plain_aggregate_epsilon = 0.5;
SELECT count(*) = :true_count AS exact, sum(age) = :true_age_sum AS exact_sum FROM hr.patients;
RESET dp_agg.plain_aggregate_epsilon;

DROP SCHEMA hr CASCADE;
SELECT dp_agg.revoke_budget('regress_plain_analyst');
SELECT dp_agg.revoke_budget('regress_plain_plain');
ALTER ROLE regress_plain_analyst RESET ALL;
DROP ROLE regress_plain_analyst;
DROP ROLE regress_plain_plain;
DROP ROLE regress_plain_outsider;
