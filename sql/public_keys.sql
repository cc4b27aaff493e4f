-- Public key sets (issue 29, item 2): a restricted role's GROUP BY over
-- columns whose keys an administrator declared public releases exactly those
-- keys, every one (empty ones with noise), without group selection, and rows
-- with other values count for nothing. Noisy answers are printed as
-- properties; each states its false-failure probability (at most 1e-9).
-- Discrete Laplace noise with epsilon e: P(|Z| >= k) = 2 q^k / (1 + q),
-- q = exp(-e); at e = 1, P(|Z| >= 25) < 2e-11.
\set VERBOSITY terse

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS pk CASCADE;
DROP ROLE IF EXISTS regress_pk_analyst;
DROP ROLE IF EXISTS regress_pk_zcdp;
DROP ROLE IF EXISTS regress_pk_outsider;
DROP SCHEMA IF EXISTS pk_evil CASCADE;
DROP ROLE IF EXISTS regress_pk_mallory;
RESET client_min_messages;

CREATE SCHEMA pk;
CREATE TYPE pk.tier AS ENUM ('basic', 'plus', 'gold');
-- 3000 people in north, south and east (1000 each; none in west), and 500 in
-- 'atlantis', a region that is not declared: it must never appear.
CREATE TABLE pk.patients (id int PRIMARY KEY, region text NOT NULL, sex text NOT NULL,
                          age int NOT NULL, clinic int NOT NULL, tier pk.tier NOT NULL,
                          score float8 NOT NULL);
INSERT INTO pk.patients
SELECT g, CASE WHEN g > 3000 THEN 'atlantis' WHEN g % 3 = 0 THEN 'north'
               WHEN g % 3 = 1 THEN 'south' ELSE 'east' END,
       CASE WHEN g % 2 = 0 THEN 'f' ELSE 'm' END, g % 90, g % 4,
       CASE WHEN g % 3 = 0 THEN 'gold'::pk.tier ELSE 'basic' END, g
FROM generate_series(1, 3500) g;
CREATE TABLE pk.clinics (id int PRIMARY KEY, kind text NOT NULL);
INSERT INTO pk.clinics VALUES (0, 'a'), (1, 'a'), (2, 'b'), (3, 'b');
-- The same people without atlantis: the neighbouring database of the 500.
CREATE TABLE pk.neighbours AS SELECT * FROM pk.patients WHERE region <> 'atlantis';
-- Visits with a privacy unit (patient_id): up to 3 visits a patient.
CREATE TABLE pk.visits (patient_id int NOT NULL, region text NOT NULL, cost int NOT NULL);
INSERT INTO pk.visits SELECT id, region, v FROM pk.patients, generate_series(1, 3) v;
CREATE TABLE pk.empty (LIKE pk.patients);
-- Partitioned by sex: its partitions inherit the parent's public keys.
CREATE TABLE pk.by_sex (id int NOT NULL, region text NOT NULL, sex text NOT NULL)
  PARTITION BY LIST (sex);
CREATE TABLE pk.by_sex_f PARTITION OF pk.by_sex FOR VALUES IN ('f');
CREATE TABLE pk.by_sex_m PARTITION OF pk.by_sex FOR VALUES IN ('m');
INSERT INTO pk.by_sex SELECT id, region, sex FROM pk.patients;

CREATE ROLE regress_pk_analyst LOGIN;
CREATE ROLE regress_pk_zcdp LOGIN;
CREATE ROLE regress_pk_outsider LOGIN;
CREATE ROLE regress_pk_mallory LOGIN;
GRANT USAGE ON SCHEMA pk TO regress_pk_analyst, regress_pk_zcdp, regress_pk_outsider;
GRANT SELECT ON pk.clinics TO regress_pk_analyst;
SELECT dp_agg.protect_table(t) FROM unnest(ARRAY['pk.patients', 'pk.neighbours', 'pk.visits',
                                                 'pk.empty', 'pk.by_sex']::regclass[]) t;
SELECT dp_agg.set_privacy_unit('pk.visits', 'patient_id');
SELECT dp_agg.restrict_role('regress_pk_analyst');
SELECT dp_agg.restrict_role('regress_pk_zcdp');
SELECT dp_agg.set_budget('regress_pk_analyst', 1000, 0.001);
-- A zCDP budget without delta: group selection is refused, public keys are not.
SELECT dp_agg.set_budget_zcdp('regress_pk_zcdp', 100);

-- ---------------------------------------------------------------------------
-- Administration.
-- ---------------------------------------------------------------------------
SELECT dp_agg.set_public_keys('pk.patients', 'region', ARRAY['north', 'south', 'east', 'west']);
SELECT dp_agg.set_public_keys('pk.neighbours', 'region', ARRAY['north', 'south', 'east', 'west']);
SELECT dp_agg.set_public_keys('pk.visits', 'region', ARRAY['north', 'south', 'east', 'west']);
SELECT dp_agg.set_public_keys('pk.empty', 'region', ARRAY['north', 'south', 'east', 'west']);
SELECT dp_agg.set_public_keys('pk.by_sex', 'region', ARRAY['north', 'south', 'east', 'west']);
-- Duplicates are one key; integers and enums are given as their values.
SELECT dp_agg.set_public_keys('pk.patients', 'sex', ARRAY['f', 'm', 'f']);
SELECT dp_agg.set_public_keys('pk.patients', 'clinic', ARRAY[0, 1, 2, 3, 4]);
SELECT dp_agg.set_public_keys('pk.patients', 'tier', ARRAY['basic', 'plus', 'gold']::pk.tier[]);
SELECT * FROM dp_agg.public_keys ORDER BY table_name::text, column_name;
-- Refused: unknown column, unsupported type, NULL, empty, bad values, non-admins.
SELECT dp_agg.set_public_keys('pk.patients', 'nope', ARRAY['a']);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.set_public_keys('pk.patients', 'score', ARRAY[1.5]);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.set_public_keys('pk.patients', 'region', ARRAY['north', NULL]);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.set_public_keys('pk.patients', 'region', ARRAY[]::text[]);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.set_public_keys('pk.patients', 'tier', ARRAY['platinum']);
\echo :LAST_ERROR_SQLSTATE
SET SESSION AUTHORIZATION regress_pk_outsider;
SELECT dp_agg.set_public_keys('pk.patients', 'region', ARRAY['atlantis']);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.unset_public_keys('pk.patients', 'region');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS public_key_sets FROM dp_agg.public_keys;  -- everyone may read them
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Exactly the declared keys, every one, in key order, without selection.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_pk_analyst;
-- Each noisy count is printed in thousands: (n + 500) / 1000 is 1 for a
-- group of 1000 rows and 0 for an empty one unless |noise| >= 500
-- (probability < 1e-200 each).
SELECT region, (dp_count(1.0) + 500) / 1000 AS thousands FROM pk.patients GROUP BY region;
SELECT region, (dp_count(id, 1.0) + 500) / 1000 AS thousands FROM pk.patients
WHERE age >= 0 GROUP BY region ORDER BY region DESC;
-- Empty groups get noise, not 0: eight counts at epsilon 0.1 of west's no
-- rows are all 0 with probability tanh(0.05)^8 < 4e-11. Means stay within
-- their bounds, also for no rows.
SELECT region, greatest(abs(dp_count(0.10)), abs(dp_count(0.11)), abs(dp_count(0.12)),
                        abs(dp_count(0.13)), abs(dp_count(0.14)), abs(dp_count(0.15)),
                        abs(dp_count(0.16)), abs(dp_count(0.17))) > 0 AS noisy,
       dp_avg(age, 0, 100, 1.0) BETWEEN 0 AND 100 AS mean_in_bounds,
       (dp_median(age, 0, 100, 1.0) BETWEEN 0 AND 100) AS median_in_bounds
FROM pk.patients GROUP BY region;
-- An empty table: every key, with noise around 0 (|noise| < 25 at
-- epsilon 1: 4 groups, < 1e-10 in all).
SELECT region, abs(dp_count(1.0)) < 25 AS near_zero FROM pk.empty GROUP BY region;
-- Several declared columns: their cross product, ordered by the keys.
SELECT region, sex, (dp_count(1.0) + 250) / 500 AS five_hundreds FROM pk.patients
GROUP BY region, sex;
SELECT tier, clinic, dp_count(1.0) IS NOT NULL AS released FROM pk.patients
GROUP BY tier, clinic;
-- The analyst's own FILTER and HAVING still apply (HAVING on noisy values:
-- west's count is below 100 unless |noise| >= 100).
SELECT region, (dp_count(1.0) FILTER (WHERE sex = 'f') + 250) / 500 AS five_hundreds
FROM pk.patients GROUP BY region HAVING dp_count(1.0) > 100;
-- A public lookup table joined by its key, inner join or comma join with WHERE.
SELECT p.region, (dp_count(1.0) + 250) / 500 AS five_hundreds
FROM pk.patients p JOIN pk.clinics c ON c.id = p.clinic WHERE c.kind = 'a' GROUP BY p.region;
SELECT p.region, (dp_count(1.0) + 250) / 500 AS five_hundreds
FROM pk.patients p, pk.clinics c WHERE c.id = p.clinic AND c.kind = 'b' GROUP BY p.region;
-- In a subquery, and in a prepared statement.
SELECT region, n > -1000 AS released
FROM (SELECT region, dp_count(1.0) AS n FROM pk.patients GROUP BY region) q;
PREPARE by_region(float8) AS SELECT region, (dp_count($1) + 500) / 1000 AS thousands
FROM pk.patients GROUP BY region;
EXECUTE by_region(1.0);
EXECUTE by_region(0.5);
DEALLOCATE by_region;
-- Listing the declared keys asks for nothing private and costs nothing.
SELECT region FROM pk.patients GROUP BY region;

-- ---------------------------------------------------------------------------
-- Keys outside the set never appear, whatever the key expression: atlantis's
-- 500 rows would pass group selection, but they count for nothing.
-- ---------------------------------------------------------------------------
SELECT lower(region) AS key, (dp_count(1.0) + 500) / 1000 AS thousands FROM pk.patients
GROUP BY 1;
SELECT region COLLATE "C" AS key, (dp_count(1.0) + 500) / 1000 AS thousands FROM pk.patients
GROUP BY 1;
SELECT region::varchar AS key, (dp_count(1.0) + 500) / 1000 AS thousands FROM pk.patients
GROUP BY 1;
SELECT CASE WHEN region = 'atlantis' THEN 'x' ELSE 'y' END AS key,
       (dp_count(1.0) + 500) / 1000 AS thousands
FROM pk.patients GROUP BY 1;
SELECT substring(region FROM 1 FOR 1) AS initial, (dp_count(1.0) + 500) / 1000 AS thousands
FROM pk.patients GROUP BY 1;
-- Through a subquery or a WITH query that passes the column on: the same
-- declared keys. A key computed from the column below the grouping level is
-- refused before any charge (rows outside the keys could not be left out).
SELECT region, (dp_count(1.0) + 500) / 1000 AS thousands
FROM (SELECT region, age FROM pk.patients WHERE age >= 0) s GROUP BY region;
WITH w AS (SELECT * FROM pk.patients) SELECT lower(region) AS key,
  (dp_count(1.0) + 500) / 1000 AS thousands FROM w GROUP BY 1;
SELECT key, dp_count(1.0) FROM (SELECT lower(region) AS key FROM pk.patients) s GROUP BY key;
\echo :LAST_ERROR_SQLSTATE
-- A WITH query named in a subquery below the level that holds it
-- (ctelevelsup > 0) passes the column on too: exactly the declared keys
-- without selection, and atlantis never, not even through group selection.
WITH w AS (SELECT * FROM pk.patients)
SELECT region, (n + 500) / 1000 AS thousands
FROM (SELECT region, dp_count(1.0) AS n FROM w GROUP BY region) s;
WITH w AS (SELECT * FROM pk.patients)
SELECT key, (n + 500) / 1000 AS thousands
FROM (SELECT lower(region) AS key, dp_count(1.0) AS n FROM w GROUP BY 1) s;
WITH w AS (SELECT lower(region) AS key FROM pk.patients)
SELECT * FROM (SELECT key, dp_count(1.0) FROM w GROUP BY key) s;
\echo :LAST_ERROR_SQLSTATE
SELECT epsilon, delta FROM dp_agg.query_cost(
  'WITH w AS (SELECT * FROM pk.patients) SELECT * FROM (SELECT region, dp_count(1.0) FROM w GROUP BY region) s');
-- A partition read by name is covered by its parent's declaration.
SELECT region, (dp_count(1.0) + 250) / 500 AS five_hundreds FROM pk.by_sex_f GROUP BY region;
-- A declared column beside one that is not: group selection, on declared
-- values only (no group of atlantis, with 250 rows each).
SELECT region, age / 45 AS half, (dp_count(1.0) + 250) / 500 AS five_hundreds
FROM pk.patients GROUP BY region, age / 45;
-- The neighbouring database without atlantis answers with the same rows.
SELECT region, (dp_count(1.0) + 500) / 1000 AS thousands FROM pk.neighbours GROUP BY region;
-- Sums see the declared rows only: atlantis's ids are 3001..3500, so a sum
-- of (id > 3000) over the declared rows is 0 + noise (|noise| < 25).
SELECT region, abs(dp_sum(CASE WHEN id > 3000 THEN 1 ELSE 0 END, 0, 1, 1.0)) < 25 AS none
FROM pk.patients GROUP BY region;
SELECT abs(dp_count(1.0) FILTER (WHERE id > 3000)) < 25 AS none_of_atlantis
FROM pk.patients GROUP BY lower(region) HAVING dp_agg.group_selection(1.0, 1e-6);

-- ---------------------------------------------------------------------------
-- Keys the analyst supplies: a VALUES list or an array of constants, LEFT
-- JOINed (Tumult's KeySet, BigQuery's public groups). Its keys are the
-- query's own: every one is released (here atlantis too, which the analyst
-- named), without selection. A key without rows aggregates no rows (its
-- NULL-extended row is left out: see the end of this file).
-- ---------------------------------------------------------------------------
SELECT k.region, (dp_count(p.id, 1.0) + 250) / 500 AS five_hundreds
FROM (VALUES ('north'), ('west'), ('atlantis')) k(region)
LEFT JOIN pk.patients p ON p.region = k.region GROUP BY k.region;
SELECT k.region, (dp_count(p.id, 1.0) + 250) / 500 AS five_hundreds
FROM unnest(ARRAY['south', 'nowhere']) k(region)
LEFT JOIN pk.patients p ON p.region = k.region AND p.age >= 45 GROUP BY k.region;
SELECT epsilon, delta, aggregates FROM dp_agg.query_cost(
  $$SELECT k.r, dp_count(p.id, 1.0) FROM (VALUES ('north'), ('west')) k(r)
    LEFT JOIN pk.patients p ON p.region = k.r GROUP BY k.r$$);
-- Refused before any charge: repeated keys (a row would count twice), a
-- NULL key, a key computed from a query, a join on an expression of the key.
SELECT k.r, dp_count(p.id, 1.0) FROM unnest(ARRAY['north', 'north']) k(r)
LEFT JOIN pk.patients p ON p.region = k.r GROUP BY k.r;
\echo :LAST_ERROR_SQLSTATE
SELECT k.r, dp_count(p.id, 1.0) FROM (VALUES ('north'), (NULL)) k(r)
LEFT JOIN pk.patients p ON p.region = k.r GROUP BY k.r;
\echo :LAST_ERROR_SQLSTATE
SELECT k.r, dp_count(p.id, 1.0) FROM (VALUES ('north'), ((SELECT 'x'))) k(r)
LEFT JOIN pk.patients p ON p.region = k.r GROUP BY k.r;
\echo :LAST_ERROR_SQLSTATE
SELECT k.r, dp_count(p.id, 1.0) FROM (VALUES ('north'), ('North')) k(r)
LEFT JOIN pk.patients p ON p.region = lower(k.r) GROUP BY k.r;
\echo :LAST_ERROR_SQLSTATE
SELECT k.r, dp_count(p.id, 1.0) FROM generate_series(1, 3) k(r)
LEFT JOIN pk.patients p ON p.id = k.r GROUP BY k.r;
\echo :LAST_ERROR_SQLSTATE
-- More than 1,000 keys: refused with the limit named, before any charge
-- (1,000 distinct keys are accepted).
SELECT '{' || string_agg('k' || g, ',') || '}' AS keys_1001,
       '{' || string_agg('k' || g, ',') FILTER (WHERE g <= 1000) || '}' AS keys_1000
FROM generate_series(1, 1001) g \gset
SELECT k.r, dp_count(p.id, 1.0) FROM unnest(:'keys_1001'::text[]) k(r)
LEFT JOIN pk.patients p ON p.region = k.r GROUP BY k.r;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS keys FROM (SELECT k.r, dp_count(p.id, 1.0) FROM unnest(:'keys_1000'::text[]) k(r)
  LEFT JOIN pk.patients p ON p.region = k.r GROUP BY k.r) s;

-- ---------------------------------------------------------------------------
-- The saving: no delta, no group selection.
-- ---------------------------------------------------------------------------
SELECT epsilon, delta, aggregates FROM dp_agg.query_cost(
  'SELECT region, dp_count(1.0) FROM pk.patients GROUP BY region');
SELECT epsilon, delta, aggregates FROM dp_agg.query_cost(
  'SELECT region, sex, dp_count(0.5), dp_sum(age, 0, 100, 0.5) FROM pk.patients GROUP BY 1, 2');
SELECT epsilon, delta, aggregates FROM dp_agg.query_cost(
  'SELECT lower(region), dp_count(1.0) FROM pk.patients GROUP BY 1');
SELECT epsilon, delta, aggregates FROM dp_agg.query_cost(
  'SELECT region FROM pk.patients GROUP BY region');
RESET SESSION AUTHORIZATION;
SELECT epsilon, delta, aggregates FROM dp_agg.ledger
WHERE role = 'regress_pk_analyst' AND kind = 'charge' ORDER BY id LIMIT 1;

-- ---------------------------------------------------------------------------
-- A zCDP budget without delta: public keys need none.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_pk_zcdp;
SELECT region, (dp_count(1.0) + 500) / 1000 AS thousands FROM pk.patients GROUP BY region;
SELECT lower(region), dp_count(1.0) FROM pk.patients GROUP BY 1;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;
-- One dp_count at epsilon 1 charged (rho 1/2), the refusal nothing, no delta.
SELECT budget_kind, rho_spent, zcdp_delta_spent FROM dp_agg.budgets
WHERE role = 'regress_pk_zcdp';

-- ---------------------------------------------------------------------------
-- Privacy units: each patient's visits bounded, then every declared key.
-- (3 visits per patient, max_groups_contributed 1: counts of units' rows
-- clamp to the unit's bound; the released rows are the declared keys.)
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_pk_analyst;
SELECT region, (dp_count(DISTINCT patient_id, 1.0) + 500) / 1000 AS thousands
FROM pk.visits GROUP BY region;
SELECT region, dp_sum(cost, 0, 3, 1.0) IS NOT NULL AS released FROM pk.visits GROUP BY region;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Unrestricted roles group as before (their keys are not released by DP),
-- and removing the keys brings group selection back.
-- ---------------------------------------------------------------------------
SELECT region, dp_count(1.0) > 0 AS counted FROM pk.patients GROUP BY region ORDER BY region;
-- A prepared statement (a generic plan: it has no parameters) is planned
-- again when the key set changes (a relcache invalidation of the table).
SET SESSION AUTHORIZATION regress_pk_analyst;
PREPARE listing AS SELECT region, dp_count(1.0) > 250 AS counted FROM pk.patients
GROUP BY region;
EXECUTE listing;
RESET SESSION AUTHORIZATION;
SELECT dp_agg.unset_public_keys('pk.patients', 'region');
-- (atlantis's 500 rows pass selection; every count is above 250 unless
-- |noise| >= 250.)
SET SESSION AUTHORIZATION regress_pk_analyst;
SELECT region, dp_count(1.0) > 250 AS counted FROM pk.patients GROUP BY region;
EXECUTE listing;
RESET SESSION AUTHORIZATION;
SELECT dp_agg.set_public_keys('pk.patients', 'region', ARRAY['north', 'south', 'east', 'west']);
SET SESSION AUTHORIZATION regress_pk_analyst;
EXECUTE listing;
DEALLOCATE listing;
RESET SESSION AUTHORIZATION;

-- The planted fault: without the join to the key set, only the keys present
-- in the data appear (west's absence would reveal that no row has it).
SET dp_agg.insecure_test_fault = public_keys_without_join;
SET SESSION AUTHORIZATION regress_pk_analyst;
SELECT region FROM pk.patients GROUP BY region HAVING dp_count(1.0) > -1000;
RESET SESSION AUTHORIZATION;
RESET dp_agg.insecure_test_fault;

-- ---------------------------------------------------------------------------
-- Columns that are neither group keys nor aggregated. Grouped by a primary
-- key, PostgreSQL lets the select list, HAVING and ORDER BY read the table's
-- other columns from each group's row (functional dependency); with public
-- keys declared on the key every group is released, and with it each row's
-- exact value. Refused before any charge (also under group selection); a
-- public table's key still carries its own (public) columns.
-- ---------------------------------------------------------------------------
CREATE TABLE pk.stores (store_id int PRIMARY KEY, revenue int NOT NULL);
INSERT INTO pk.stores SELECT g, g * 100 FROM generate_series(1, 4) g;
SELECT dp_agg.protect_table('pk.stores');
SELECT dp_agg.set_public_keys('pk.stores', 'store_id', ARRAY[1, 2, 3, 4]);
SET SESSION AUTHORIZATION regress_pk_analyst;
SELECT store_id, revenue, dp_count(1.0) IS NOT NULL AS released FROM pk.stores
GROUP BY store_id;
\echo :LAST_ERROR_SQLSTATE
SELECT store_id, dp_count(1.0) IS NOT NULL AS released FROM pk.stores GROUP BY store_id
HAVING revenue > 200;
\echo :LAST_ERROR_SQLSTATE
SELECT store_id, dp_count(1.0) IS NOT NULL AS released FROM pk.stores GROUP BY store_id
ORDER BY revenue DESC;
\echo :LAST_ERROR_SQLSTATE
SELECT id, age, dp_count(1.0) FROM pk.patients GROUP BY id;
\echo :LAST_ERROR_SQLSTATE
-- (each clinic has 875 rows: (n + 250) / 500 is 2 unless |noise| >= 125)
SELECT c.id, c.kind, (dp_count(1.0) + 250) / 500 AS five_hundreds
FROM pk.clinics c JOIN pk.patients p ON p.clinic = c.id GROUP BY c.id;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Keys LEFT JOINed to protected rows (a constant list or a public table): a
-- key without protected rows aggregates no rows, not its NULL-extended row.
-- Otherwise the first protected row to arrive would replace that row: a sum
-- of coalesce(p.age, 50) over [-50, 50] would move by 100, twice the 50 its
-- noise is calibrated to. At epsilon 100 a count's noise is 0 except with
-- probability 2 e^-100, and a sum's (scale 0.5) reaches 25 with
-- probability e^-50.
-- ---------------------------------------------------------------------------
SELECT dp_agg.set_budget('regress_pk_analyst', 100000, 0.001);
SET dp_agg.max_epsilon = 1000;
SET SESSION AUTHORIZATION regress_pk_analyst;
SELECT k.region, dp_count(100.0) AS rows,
       abs(dp_sum(coalesce(p.age, 50), -50, 50, 100.0)) < 25 AS sum_of_no_rows
FROM (VALUES ('west'), ('nowhere')) k(region)
LEFT JOIN pk.patients p ON p.region = k.region GROUP BY k.region;
SELECT c.id, dp_count(100.0) AS rows,
       abs(dp_sum(coalesce(e.age, 50), -50, 50, 100.0)) < 25 AS sum_of_no_rows
FROM pk.clinics c LEFT JOIN pk.empty e ON e.clinic = c.id GROUP BY c.id;
-- The protected side as a subquery (its whole row: a PlaceHolderVar).
SELECT c.id, dp_count(100.0) AS rows
FROM pk.clinics c LEFT JOIN (SELECT clinic, age FROM pk.empty WHERE age >= 0) e
  ON e.clinic = c.id GROUP BY c.id;
-- Matched rows are all counted: north's 1000, and the analyst's own FILTER
-- still applies (its 500 women).
SELECT k.region, (dp_count(1.0) + 250) / 500 AS five_hundreds,
       (dp_count(1.0) FILTER (WHERE p.sex = 'f') + 250) / 500 AS women
FROM (VALUES ('north'), ('west')) k(region)
LEFT JOIN pk.patients p ON p.region = k.region GROUP BY k.region;
RESET SESSION AUTHORIZATION;
RESET dp_agg.max_epsilon;

-- ---------------------------------------------------------------------------
-- A WHERE that no row meets, written as a constant (issue 29, review 2): the
-- planner leaves the protected table unscanned, and every declared key is
-- released with noise around 0, as for any other GROUP BY over them (it was
-- refused with 0A000). Also through an analyst's key list and a public
-- table LEFT JOINed to the protected one. |noise| < 25 at epsilon 1: < 1e-9
-- for the 14 counts below.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_pk_analyst;
SELECT region, abs(dp_count(1.0)) < 25 AS near_zero FROM pk.patients WHERE false
GROUP BY region;
SELECT region, abs(dp_count(id, 1.0)) < 25 AS near_zero FROM pk.patients
WHERE 1 = 0 AND age > 10 GROUP BY region;
SELECT k.region, abs(dp_count(p.id, 1.0)) < 25 AS near_zero
FROM (VALUES ('north'), ('west')) k(region)
LEFT JOIN pk.patients p ON p.region = k.region AND false GROUP BY k.region;
SELECT c.id, abs(dp_count(p.id, 1.0)) < 25 AS near_zero
FROM pk.clinics c LEFT JOIN (SELECT * FROM pk.patients WHERE false) p ON p.clinic = c.id
GROUP BY c.id;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Key sets follow their columns (issue 29, review 2): RENAME COLUMN keeps
-- the declaration (on the table and on the partitions the rename reaches);
-- a type change is refused (0A000, nothing changed) until the keys are
-- removed; an enum label renamed is renamed in the keys; DROP COLUMN removes
-- the declaration with a NOTICE, so a later column of the same name does
-- not inherit it.
-- ---------------------------------------------------------------------------
ALTER TABLE pk.patients RENAME COLUMN region TO area;
ALTER TABLE pk.by_sex RENAME COLUMN region TO area;
-- By a table owner who may not write dp_agg's tables.
ALTER TABLE pk.empty OWNER TO regress_pk_outsider;
SET SESSION AUTHORIZATION regress_pk_outsider;
ALTER TABLE pk.empty RENAME COLUMN region TO area;
RESET SESSION AUTHORIZATION;
SELECT table_name, column_name, key_count FROM dp_agg.public_keys
WHERE column_name IN ('region', 'area') ORDER BY table_name::text;
SET SESSION AUTHORIZATION regress_pk_analyst;
SELECT area, (dp_count(1.0) + 500) / 1000 AS thousands FROM pk.patients GROUP BY area;
SELECT area, (dp_count(1.0) + 250) / 500 AS five_hundreds FROM pk.by_sex_f GROUP BY area;
SELECT * FROM dp_agg.query_cost('SELECT area, dp_count(1.0) FROM pk.patients GROUP BY area');
RESET SESSION AUTHORIZATION;
ALTER TABLE pk.patients ALTER COLUMN area TYPE varchar;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE pk.by_sex ALTER COLUMN area TYPE varchar(20);
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE pk.patients ALTER COLUMN clinic TYPE int8;
\echo :LAST_ERROR_SQLSTATE
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'pk.patients'::regclass AND attname = 'area';
ALTER TABLE pk.patients ALTER COLUMN area TYPE text;  -- the same type: allowed
ALTER TYPE pk.tier RENAME VALUE 'plus' TO 'premium';
SELECT keys FROM dp_agg.public_keys WHERE table_name = 'pk.patients'::regclass
  AND column_name = 'tier';
SET SESSION AUTHORIZATION regress_pk_analyst;
SELECT tier, dp_count(1.0) IS NOT NULL AS released FROM pk.patients GROUP BY tier;
RESET SESSION AUTHORIZATION;
ALTER TABLE pk.patients DROP COLUMN sex;
ALTER TABLE pk.patients ADD COLUMN sex text;
SELECT column_name FROM dp_agg.public_keys WHERE table_name = 'pk.patients'::regclass
ORDER BY 1;
-- Removed, the type can change; declared again, the keys are read in it.
SELECT dp_agg.unset_public_keys('pk.patients', 'clinic');
ALTER TABLE pk.patients ALTER COLUMN clinic TYPE int8;
SELECT dp_agg.set_public_keys('pk.patients', 'clinic', ARRAY[0, 1, 2, 3, 4]);
SET SESSION AUTHORIZATION regress_pk_analyst;
SELECT clinic, (dp_count(1.0) + 375) / 750 AS seven_hundred_fifties FROM pk.patients
WHERE area <> 'atlantis' GROUP BY clinic;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- The key-set updates run as dp_agg.public_key_set's owner, never under the
-- ALTER's search_path (review of i29minor): a table or enum owner who puts
-- a schema of theirs before pg_catalog, with an `=` operator there, had that
-- operator run as the superuser (ALTER TYPE ... RENAME VALUE of any enum
-- reached it). The operator says as whom it ran: no NOTICE is expected.
-- ---------------------------------------------------------------------------
CREATE SCHEMA pk_evil AUTHORIZATION regress_pk_mallory;
CREATE TABLE pk_evil.mine (id int, region text);
ALTER TABLE pk_evil.mine OWNER TO regress_pk_mallory;
SELECT dp_agg.set_public_keys('pk_evil.mine', 'region', ARRAY['north', 'south']);
SET SESSION AUTHORIZATION regress_pk_mallory;
CREATE FUNCTION pk_evil.oid_eq(oid, oid) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF current_user <> 'regress_pk_mallory' THEN
    RAISE NOTICE 'pk_evil.= ran as %', current_user;
  END IF;
  RETURN $1 OPERATOR(pg_catalog.=) $2;
END $$;
CREATE OPERATOR pk_evil.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = pk_evil.oid_eq);
CREATE TYPE pk_evil.colour AS ENUM ('red', 'blue');
SET search_path = pk_evil, pg_catalog;
ALTER TYPE pk_evil.colour RENAME VALUE 'red' TO 'green';
ALTER TABLE pk_evil.mine RENAME COLUMN region TO area;
ALTER TABLE pk_evil.mine DROP COLUMN area;
SHOW search_path;
RESET search_path;
RESET SESSION AUTHORIZATION;
SELECT count(*) FROM dp_agg.public_key_set WHERE relation = 'pk_evil.mine'::regclass;

-- ---------------------------------------------------------------------------
-- A column dropped and added again under its name in one ALTER TABLE is
-- another column (review of i29minor): its set goes, as for DROP COLUMN
-- alone. It stayed, on an integer column with the text keys, and GROUP BY
-- over it failed with 22P02 (invalid input syntax for type integer).
-- ---------------------------------------------------------------------------
ALTER TABLE pk.neighbours DROP COLUMN region, ADD COLUMN region int NOT NULL DEFAULT 0;
SELECT column_name FROM dp_agg.public_keys WHERE table_name = 'pk.neighbours'::regclass;
SET SESSION AUTHORIZATION regress_pk_analyst;
SELECT count(*) >= 0 AS answered FROM (SELECT region, dp_count(1.0) FROM pk.neighbours
                                        GROUP BY region) released;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Typed tables (CREATE TABLE ... OF type) and their children follow ALTER
-- TYPE ... ATTRIBUTE ... CASCADE (review of i29minor): a rename moves their
-- sets, a type change is refused, a drop removes them (the sets stayed under
-- the old name, the type changed under them).
-- ---------------------------------------------------------------------------
CREATE TYPE pk.visit AS (id int, region text);
CREATE TABLE pk.typed_visits OF pk.visit;
CREATE TABLE pk.typed_child () INHERITS (pk.typed_visits);
SELECT dp_agg.protect_table('pk.typed_visits');
SELECT dp_agg.set_public_keys('pk.typed_visits', 'region', ARRAY['north', 'south']);
SELECT dp_agg.set_public_keys('pk.typed_child', 'region', ARRAY['east']);
ALTER TYPE pk.visit RENAME ATTRIBUTE region TO area CASCADE;
SELECT table_name, column_name, keys FROM dp_agg.public_keys
WHERE table_name IN ('pk.typed_visits'::regclass, 'pk.typed_child'::regclass) ORDER BY 1;
ALTER TYPE pk.visit ALTER ATTRIBUTE area TYPE varchar(20) CASCADE;
\echo :LAST_ERROR_SQLSTATE
ALTER TYPE pk.visit DROP ATTRIBUTE area CASCADE, ADD ATTRIBUTE area int CASCADE;
SELECT table_name, column_name, keys FROM dp_agg.public_keys
WHERE table_name IN ('pk.typed_visits'::regclass, 'pk.typed_child'::regclass) ORDER BY 1;

-- Clean up.
SET client_min_messages = warning;
DROP SCHEMA pk CASCADE;
DROP SCHEMA pk_evil CASCADE;
DELETE FROM dp_agg.public_key_set;
SELECT dp_agg.revoke_budget(r) FROM unnest(ARRAY['regress_pk_analyst', 'regress_pk_zcdp']::regrole[]) r;
DROP ROLE regress_pk_analyst;
DROP ROLE regress_pk_zcdp;
DROP ROLE regress_pk_outsider;
DROP ROLE regress_pk_mallory;
RESET client_min_messages;
