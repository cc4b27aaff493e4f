-- Privacy units (issue 12): a column labelled 'privacy_unit' makes all rows
-- of one value one person, protected as a whole. Noisy answers are printed
-- as properties; each states its false-failure probability (at most 1e-9).
-- Discrete Laplace noise with epsilon e: P(|Z| >= k) = 2 q^k / (1 + q),
-- q = exp(-e).

-- ---------------------------------------------------------------------------
-- Fixtures (superuser).
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS units CASCADE;
DROP ROLE IF EXISTS regress_unit_analyst;
DROP ROLE IF EXISTS regress_unit_outsider;
RESET client_min_messages;
CREATE SCHEMA units;
-- 1000 patients with one visit each ('cold' or 'flu' by parity), patient 1
-- with 40 more 'flu' visits, and patients 2001..2100 with one visit in each
-- of 'a', 'b' and 'c' (they contribute to three groups).
CREATE TABLE units.visits (patient_id int, diagnosis text NOT NULL, cost int NOT NULL);
INSERT INTO units.visits
  SELECT g, CASE WHEN g % 2 = 0 THEN 'flu' ELSE 'cold' END, 10 FROM generate_series(1, 1000) g;
INSERT INTO units.visits SELECT 1, 'flu', 100 FROM generate_series(1, 40);
CREATE TABLE units.spread (patient_id int, grp text NOT NULL, cost int NOT NULL);
INSERT INTO units.spread
  SELECT p, g, 1 FROM generate_series(2001, 2100) p, unnest(ARRAY['a', 'b', 'c']) g;
-- 100 patients with one 'cold' visit costing 10, and patient 0 with 1000
-- 'flu' visits costing 90 (a heavy unit: most rows, one person).
CREATE TABLE units.heavy (patient_id int, diagnosis text NOT NULL, cost int NOT NULL);
INSERT INTO units.heavy SELECT g, 'cold', 10 FROM generate_series(1, 100) g;
INSERT INTO units.heavy SELECT 0, 'flu', 90 FROM generate_series(1, 1000);
CREATE TABLE units.kinds (diagnosis text PRIMARY KEY, kind int NOT NULL);
INSERT INTO units.kinds VALUES ('cold', 1), ('flu', 1);
ANALYZE units.visits, units.spread, units.heavy, units.kinds;
CREATE ROLE regress_unit_analyst LOGIN;
CREATE ROLE regress_unit_outsider;
GRANT USAGE ON SCHEMA units TO regress_unit_analyst, regress_unit_outsider;
GRANT SELECT ON units.kinds TO regress_unit_analyst;
SELECT dp_agg.set_budget('regress_unit_analyst', 1000, 0.001);

-- ---------------------------------------------------------------------------
-- Declaring the unit.
-- ---------------------------------------------------------------------------
SECURITY LABEL FOR dp_agg ON COLUMN units.visits.patient_id IS 'privacy_unit';
SELECT dp_agg.set_privacy_unit('units.spread', 'patient_id');
-- One unit column per table.
SECURITY LABEL FOR dp_agg ON COLUMN units.visits.cost IS 'privacy_unit';
-- The only column label.
SECURITY LABEL FOR dp_agg ON COLUMN units.visits.cost IS 'person';
-- Administrators only.
SET SESSION AUTHORIZATION regress_unit_outsider;
SELECT dp_agg.unset_privacy_unit('units.visits', 'patient_id');
RESET SESSION AUTHORIZATION;
SELECT objoid::regclass, objsubid, label FROM pg_seclabel
WHERE provider = 'dp_agg' AND objsubid > 0 ORDER BY 1::text;
SELECT dp_agg.protect_table('units.visits');
SELECT dp_agg.protect_table('units.spread');
SELECT dp_agg.set_privacy_unit('units.heavy', 'patient_id');
SELECT dp_agg.protect_table('units.heavy');
SELECT dp_agg.restrict_role('regress_unit_analyst');

-- ---------------------------------------------------------------------------
-- Unit-level answers for a restricted role.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_unit_analyst;
-- U1. A patient with 40 visits counts once: 1000 units, 1040 rows.
-- |Z| < 25 at epsilon 1 fails with probability 2 e^-25 / (1 + e^-1) < 1e-10.
SELECT abs(dp_count(1, 1.0) - 1000) < 25 AS counts_people FROM units.visits;
-- U1b. The row count dp_count(epsilon) is dp_count(true, epsilon): it counts units too.
SELECT abs(dp_count(1.0) - 1000) < 25 AS counts_people FROM units.visits;
-- U2. dp_count of a column counts the units with a non-NULL value.
SELECT abs(dp_count(cost, 1.0) - 1000) < 25 AS counts_people FROM units.visits;
-- U3. dp_sum clamps each unit's total to [lower, upper]: patient 1 spends
-- 4000 in 'flu' (and 10 in 'cold'; one of the two groups is kept) but
-- contributes at most 200, so the flu sum is 5000 or 5200, not 9000.
-- Noise: Laplace scale 200 / 10: |Z| < 20 * 21 fails with probability
-- e^-21 < 1e-9.
SELECT abs(dp_sum(cost, 0, 200, 10.0) - 5100) < 100 + 20 * 21 AS clamped_per_unit
FROM units.visits WHERE diagnosis = 'flu';
-- U4. dp_avg averages per-unit means (patient 1's flu mean is 100, clamped
-- to 20): the flu mean is 10 or (500 * 10 + 20) / 501 = 10.04, far from the
-- row-level mean (500 * 10 + 4000) / 540 = 16.7 (the noisy mean of 500
-- values in [0, 20] at epsilon 10 is within 2 of the truth except with
-- probability below 1e-10).
SELECT abs(dp_avg(cost, 0, 20, 10.0) - 10) < 2 AS mean_of_units
FROM units.visits WHERE diagnosis = 'flu';
-- U5. Joins to a public table on its key, WHERE and HAVING work as before.
SELECT k.kind, abs(dp_count(1, 1.0) - 1000) < 25 AS counts_people
FROM units.visits v JOIN units.kinds k ON k.diagnosis = v.diagnosis
WHERE v.cost > 0 GROUP BY k.kind ORDER BY k.kind;

-- ---------------------------------------------------------------------------
-- max_groups_contributed: 100 patients in each of three groups.
-- ---------------------------------------------------------------------------
-- U6. Default 1: each patient keeps one group, chosen at random, so the
-- three counts add up to 100 (not 300). At epsilon 10 per group each count
-- is within 2 of its truth except with probability 2 e^-20 / (1 + e^-10) <
-- 5e-9; the sum within 6. Group selection runs at epsilon 3 here (U6-U8):
-- it releases every group of 11 units or more (the optimal rule at
-- (3, 1e-6); 21 at (3 / 2, 5e-7), 30 at (1, 3.3e-7)), so a group of
-- Binomial(100, 1/3) units is withheld with probability below 1e-11 (U7:
-- Binomial(100, 2/3) units, below 1e-27; U8: 100 units, never). (At the
-- default epsilon 1 a group of fewer than 28 units is withheld now and then:
-- about 5e-5 for the three groups of U6.)
SET dp_agg.group_selection_epsilon = 3;
SELECT abs(sum(n) - 100) <= 6 AS one_group_per_unit
FROM (SELECT grp, dp_count(1, 10.0) AS n FROM units.spread GROUP BY grp) x;
-- U7. 2 groups per unit: counts add up to 200; noise at epsilon 10 / 2 per
-- group: each within 5 except with probability 2 e^-25 < 1e-10.
SET dp_agg.max_groups_contributed = 2;
SELECT abs(sum(n) - 200) <= 15 AS two_groups_per_unit
FROM (SELECT grp, dp_count(1, 10.0) AS n FROM units.spread GROUP BY grp) x;
-- U8. 3 groups per unit: every visit kept (300).
SET dp_agg.max_groups_contributed = 3;
SELECT abs(sum(n) - 300) <= 24 AS three_groups_per_unit
FROM (SELECT grp, dp_count(1, 10.0) AS n FROM units.spread GROUP BY grp) x;
RESET dp_agg.max_groups_contributed;
RESET dp_agg.group_selection_epsilon;
-- U9. The charge does not depend on max_groups_contributed: epsilon per call
-- site (plus group selection), as for rows.
RESET SESSION AUTHORIZATION;
SELECT epsilon_spent AS before FROM dp_agg.budgets WHERE role = 'regress_unit_analyst' \gset
SET SESSION AUTHORIZATION regress_unit_analyst;
SET dp_agg.max_groups_contributed = 3;
SELECT count(*) FROM (SELECT grp, dp_count(1, 2.0) FROM units.spread GROUP BY grp) x;
RESET dp_agg.max_groups_contributed;
RESET SESSION AUTHORIZATION;
SELECT epsilon_spent - :before AS charged FROM dp_agg.budgets
WHERE role = 'regress_unit_analyst';

-- ---------------------------------------------------------------------------
-- DISTINCT over the unit, quantiles, dp_select and the _interval forms.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_unit_analyst;
-- D1. dp_count(DISTINCT unit, e) counts people: patient 1's 41 visits count
-- once (1000, not 1040; |Z| < 25 as in U1).
SELECT abs(dp_count(DISTINCT patient_id, 1.0) - 1000) < 25 AS distinct_units
FROM units.visits;
-- D2. ... with FILTER: the units with a visit costing 100 (patient 1 only).
SELECT abs(dp_count(DISTINCT patient_id, 1.0) FILTER (WHERE cost = 100) - 1) < 25
  AS filtered_units
FROM units.visits;
-- D3. ... and within max_groups_contributed: each of the 100 patients of
-- units.spread keeps one of its three groups (sum 100 +- 6 as in U6), which a
-- distinct count per group would not bound (300).
SELECT abs(sum(n) - 100) <= 6 AS distinct_one_group_per_unit
FROM (SELECT grp, dp_count(DISTINCT patient_id, 10.0) AS n FROM units.spread GROUP BY grp) x;
-- D4. DISTINCT over anything but the unit column itself is refused: one unit
-- alone can hold any number of distinct values of another column.
SELECT dp_count(DISTINCT diagnosis, 1.0) FROM units.visits;
SELECT dp_count(DISTINCT cost, 1.0) FROM units.visits GROUP BY diagnosis;
SELECT dp_count(DISTINCT patient_id + 0, 1.0) FROM units.visits;
SELECT dp_count(DISTINCT patient_id::text, 1.0) FROM units.visits;
SELECT dp_count(DISTINCT (patient_id, cost), 1.0) FROM units.visits;
-- D5. ORDER BY inside a private aggregate, and DISTINCT in other aggregates.
SELECT dp_count(1, 1.0 ORDER BY cost) FROM units.visits;
SELECT dp_sum(DISTINCT cost, 0, 100, 1.0) FROM units.visits;
SELECT dp_median(DISTINCT patient_id, 0, 100, 1.0) FROM units.visits;

-- Q1. dp_median over units: each unit contributes its own lower median
-- once, so patient 0's 1000 visits at 90 weigh as one value against 100
-- patients at 10: the median of units is 10 (of rows, 90). Smith's
-- mechanism at epsilon 10 (rate 10 after the cap at 64): every lattice
-- point in (50, 100] has utility <= -49.5 and weight <= e^-64, and the
-- lattice of [0, 100] has fewer than 2^62 points, so an answer >= 50 has
-- probability below 2^62 e^-64 < 8e-10.
SELECT dp_median(cost, 0, 100, 10.0) < 50 AS median_of_units FROM units.heavy;
-- Q2. The same for other fractions: the 0.25 quantile of the 101 units is
-- 10 (rank 0.25 * 101 = 25.25). Every point in (50, 100] is above 100 units:
-- utility <= -(100 - 25.25) = -74.75, at rate 10 / (2 * 0.75) beyond the
-- cap of 64, so again below 8e-10.
SELECT dp_percentile(cost, 0.25, 0, 100, 10.0) < 50 AS percentile_of_units
FROM units.heavy;
-- Q3. Grouped, with the unit's median taken in each of its groups.
SELECT diagnosis, dp_median(cost, 0, 100, 1.0) IS NOT NULL AS answered
FROM units.visits GROUP BY diagnosis ORDER BY diagnosis;

-- S1. dp_select over units: each unit votes once (its most frequent value),
-- so the 100 'cold' patients beat patient 0's 1000 'flu' visits. Scores 100
-- and 1 (monotonic, sensitivity 1): permute-and-flip accepts 'flu' with
-- probability at most e^-(3 * 99) < 1e-100.
SELECT dp_select(diagnosis, ARRAY['cold', 'flu'], 3.0) AS mode_of_units FROM units.heavy;
SELECT dp_select(diagnosis COLLATE "C", ARRAY['cold', 'flu'], 3.0) AS mode_of_units
FROM units.heavy;
-- S2. The weighted form has no per-unit semantics yet: refused.
SELECT dp_select(diagnosis, cost, 0, 100, ARRAY['cold', 'flu'], 1.0) FROM units.heavy;

-- I1. The _interval forms: the released value counts units, and the
-- interval is the noise's at epsilon / max_groups_contributed.
SELECT abs((dp_count_interval(1, 1.0, 0.95)).value - 1000) < 25 AS interval_counts_people
FROM units.visits;
SELECT abs((dp_avg_interval(cost, 0, 20, 10.0, 0.95)).value - 10) < 2 AS interval_mean_of_units
FROM units.visits WHERE diagnosis = 'flu';
SELECT (dp_sum_interval(cost, 0, 200, 10.0, 0.95)).value IS NOT NULL AS interval_sum
FROM units.visits GROUP BY diagnosis;

-- C1. The charge of the new aggregates does not depend on
-- max_groups_contributed either: 1 + 2 + 3, and group selection its 1.
RESET SESSION AUTHORIZATION;
SELECT epsilon_spent AS before FROM dp_agg.budgets WHERE role = 'regress_unit_analyst' \gset
SET SESSION AUTHORIZATION regress_unit_analyst;
SET dp_agg.max_groups_contributed = 3;
SELECT count(*) FROM (SELECT grp, dp_median(cost, 0, 10, 1.0), dp_count(DISTINCT patient_id, 2.0),
                             dp_select(grp, ARRAY['a'], 3.0)
                      FROM units.spread GROUP BY grp) x;
RESET dp_agg.max_groups_contributed;
RESET SESSION AUTHORIZATION;
SELECT epsilon_spent - :before AS charged FROM dp_agg.budgets
WHERE role = 'regress_unit_analyst';
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Through a subquery in FROM that projects and filters the unit table (the
-- unit is carried out of it, never visible, and bounded as for the table).
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_unit_analyst;
-- F1. Patient 1's 41 visits still count once (as U1).
SELECT abs(dp_count(1, 1.0) - 1000) < 25 AS counts_people
FROM (SELECT diagnosis, cost FROM units.visits WHERE cost > 0) v;
-- F2. Grouped, with the sums clamped per unit (as U3).
SELECT diagnosis, abs(dp_sum(c, 0, 200, 10.0) - 5100) < 100 + 20 * 21 AS clamped_per_unit
FROM (SELECT diagnosis, cost AS c FROM units.visits) v
WHERE diagnosis = 'flu' GROUP BY diagnosis;
-- F3. A join to a public table on its key inside the subquery (as U5).
SELECT kind, abs(dp_count(1, 1.0) - 1000) < 25 AS counts_people
FROM (SELECT k.kind FROM units.visits v JOIN units.kinds k ON k.diagnosis = v.diagnosis) x
GROUP BY kind ORDER BY kind;
-- F4. The unit under another name: dp_count(DISTINCT) of it counts units,
-- and max_groups_contributed holds (as D3).
SELECT abs(dp_count(DISTINCT pid, 1.0) - 1000) < 25 AS distinct_units
FROM (SELECT patient_id AS pid FROM units.visits) v;
SELECT abs(sum(n) - 100) <= 6 AS one_group_per_unit
FROM (SELECT grp, dp_count(1, 10.0) AS n
      FROM (SELECT grp FROM units.spread WHERE cost = 1) s GROUP BY grp) x;
-- F5. The quantiles and dp_select (as Q1 and S1).
SELECT dp_median(c, 0, 100, 10.0) < 50 AS median_of_units,
       dp_select(d, ARRAY['cold', 'flu'], 3.0) AS mode_of_units
FROM (SELECT cost AS c, diagnosis AS d FROM units.heavy) h;
-- F6. A WITH query referenced once that projects and filters the unit
-- table is inlined and bounded the same way (also MATERIALIZED, which
-- changes no row); the unit stays no key under its WITH name.
WITH v AS (SELECT diagnosis, cost FROM units.visits WHERE cost > 0)
SELECT abs(dp_count(1, 1.0) - 1000) < 25 AS counts_people FROM v;
WITH v AS MATERIALIZED (SELECT patient_id AS pid FROM units.visits)
SELECT abs(dp_count(DISTINCT pid, 1.0) - 1000) < 25 AS distinct_units FROM v;
SET dp_agg.group_selection_delta = 1e-10;
WITH h AS (SELECT diagnosis FROM units.heavy) SELECT diagnosis FROM h GROUP BY diagnosis
  HAVING dp_agg.group_selection(1.0, 1e-10);
RESET dp_agg.group_selection_delta;
-- F7. Refused: the unit as a key; a WITH query referenced twice (a unit's
-- rows would meet themselves), or from a nested level, or not plain.
WITH v AS (SELECT patient_id AS p FROM units.visits) SELECT p, dp_count(1, 1.0) FROM v GROUP BY p;
WITH v AS (SELECT * FROM units.visits)
SELECT dp_count(1, 1.0) FROM v a JOIN v b USING (patient_id);
WITH v AS (SELECT * FROM units.visits)
SELECT (SELECT dp_count(1, 1.0) FROM v), (SELECT dp_count(1, 1.0) FROM v);
WITH v AS (SELECT * FROM units.visits)
SELECT (SELECT dp_count(1, 1.0) FROM v);
WITH v AS (SELECT * FROM units.visits ORDER BY cost) SELECT dp_count(1, 1.0) FROM v;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Refusals.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_unit_analyst;
-- R1. The unit is never a group key, nor output.
SELECT patient_id, dp_count(1, 1.0) FROM units.visits GROUP BY patient_id;
-- R2. Aggregates without unit-level semantics yet are refused, not released
-- at row level (the weighted dp_select, S2).
SELECT dp_select(diagnosis COLLATE "C", cost, 0, 100, ARRAY['flu', 'cold'], 1.0)
FROM units.visits;
-- R3. A private level over unit rows from a subquery that is more than a
-- projection and filter of the unit table (LIMIT, DISTINCT, ORDER BY,
-- aggregates, window functions, volatile functions, a nested subquery, an
-- outer join, a set-returning function): each could repeat, choose or drop
-- a unit's rows depending on other rows.
SELECT dp_count(1, 1.0) FROM (SELECT * FROM units.visits LIMIT 10) x;
SELECT dp_count(1, 1.0) FROM (SELECT DISTINCT diagnosis FROM units.visits) x;
SELECT dp_count(1, 1.0) FROM (SELECT * FROM units.visits ORDER BY cost) x;
SELECT dp_count(1, 1.0) FROM (SELECT * FROM units.visits WHERE random() < 0.5) x;
SELECT dp_count(1, 1.0) FROM (SELECT * FROM (SELECT * FROM units.visits) a) b;
SELECT dp_count(1, 1.0)
FROM (SELECT v.* FROM units.visits v LEFT JOIN units.kinds k ON k.diagnosis = v.diagnosis) x;
SELECT dp_count(1, 1.0) FROM (SELECT generate_series(1, 3) AS n, * FROM units.visits) x;
SELECT dp_count(1, 1.0)
FROM (SELECT * FROM units.visits WHERE cost IN (SELECT cost FROM units.visits)) x;
-- R3b. A subquery cannot smuggle the unit out as a key, under any name or
-- expression, nor count distinct values of an expression of it, nor join a
-- second unit table.
SELECT pid, dp_count(1, 1.0) FROM (SELECT patient_id AS pid FROM units.visits) x GROUP BY pid;
SELECT p, dp_count(1, 1.0)
FROM (SELECT patient_id % 10 AS p FROM units.visits) x GROUP BY p;
SELECT p, dp_count(1, 1.0)
FROM (SELECT v.patient_id AS p FROM units.visits v JOIN units.kinds k USING (diagnosis)) x
GROUP BY p;
SELECT dp_count(DISTINCT p, 1.0) FROM (SELECT patient_id + 0 AS p FROM units.visits) x;
SELECT dp_count(1, 1.0)
FROM (SELECT * FROM units.visits) a JOIN units.spread b USING (patient_id);
-- R3c. GROUP BY without private aggregates releases its keys through
-- partition selection, which must count units, not rows: the unit itself is
-- refused as a key, and patient 0's 1000 'flu' visits (one unit) do not
-- release 'flu'. At group_selection_delta 1e-10 a group of one unit is shown
-- with probability at most 1e-10; 'cold' (100 units) is always released
-- (the optimal rule at (1, 1e-10) releases every group of 46 units or more).
SELECT patient_id FROM units.heavy GROUP BY patient_id;
SELECT pid FROM (SELECT patient_id AS pid FROM units.visits) x GROUP BY pid;
SET dp_agg.group_selection_delta = 1e-10;
-- (A key listing asks for the gate explicitly: issue 27.)
SELECT diagnosis FROM units.heavy GROUP BY diagnosis
  HAVING dp_agg.group_selection(1.0, 1e-10) ORDER BY diagnosis;
SELECT d FROM (SELECT diagnosis AS d FROM units.heavy WHERE cost > 0) h GROUP BY d
  HAVING dp_agg.group_selection(1.0, 1e-10) ORDER BY d;
RESET dp_agg.group_selection_delta;
-- R4. An outer join at a unit level.
SELECT k.kind, dp_count(1, 1.0)
FROM units.kinds k LEFT JOIN units.visits v ON k.diagnosis = v.diagnosis GROUP BY k.kind;
-- R5. Two unit tables in one level.
SELECT dp_count(1, 1.0) FROM units.visits v JOIN units.spread s USING (patient_id);

-- ---------------------------------------------------------------------------
-- The analyst cannot write the per-unit level by hand to skip the bounds.
-- ---------------------------------------------------------------------------
-- B1. Built-in aggregates over protected rows.
SELECT dp_sum(c, 0, 1000, 1.0)
FROM (SELECT patient_id, count(*) AS c FROM units.visits GROUP BY patient_id) x;
-- B2. The rewrite's marker, the sampling window function (also over a
-- public table).
SELECT dp_count(1, 1.0) FROM (SELECT kind, dp_agg.unit_group_sample(1) OVER (PARTITION BY kind) k
                              FROM units.kinds) x WHERE k;
SELECT dp_count(1, 1.0) FROM (SELECT diagnosis, dp_agg.unit_group_sample(1)
                                OVER (PARTITION BY patient_id) k FROM units.visits) x WHERE k;
-- B3. The sampler's window function.
SELECT dp_count(1, 1.0) FROM (SELECT diagnosis, row_number() OVER (PARTITION BY patient_id) r
                              FROM units.visits) x WHERE r <= 1;
RESET SESSION AUTHORIZATION;
-- B4. The executor accepts aggregates below a private one only under the
-- rewrite's sampler (here an unrestricted role over an unlabelled table).
SELECT dp_sum(c, 0, 200, 1.0) FROM (SELECT x % 7, count(*) AS c FROM numbers GROUP BY 1) t;
SELECT dp_count(1, 1.0)
FROM (SELECT x, row_number() OVER (PARTITION BY x % 7 ORDER BY x) r FROM numbers) t
WHERE r <= 1;
-- S1. The sampler alone (superuser): dp_agg.unit_group_sample(m) OVER
-- (PARTITION BY p) keeps exactly min(m, rows) rows of every partition, and
-- each row with probability m / rows, whatever the rows' order.
-- 20,000 partitions of 5 rows at m = 2 (Floyd's algorithm): row i is kept
-- Binomial(20000, 0.4) times, mean 8000, sd 69.3; |x - 8000| < 7 sd = 485
-- fails for one of the 5 rows with probability below 5 x 2.6e-12.
WITH s AS (SELECT p, i, dp_agg.unit_group_sample(2) OVER (PARTITION BY p) AS k
           FROM generate_series(1, 20000) p, generate_series(0, 4) i)
SELECT (SELECT count(*) FROM (SELECT p FROM s GROUP BY p
                              HAVING count(*) FILTER (WHERE k) <> 2) x) AS not_two,
       (SELECT max(abs(c - 8000)) FROM (SELECT i, count(*) FILTER (WHERE k) AS c
                                        FROM s GROUP BY i) y) < 485 AS uniform;
-- 2,000 partitions of 100 rows at m = 70 (selection sampling): row i is
-- kept Binomial(2000, 0.7) times, sd 20.5; |x - 1400| < 7 sd = 144 fails for
-- one of the 100 rows with probability below 100 x 2.6e-12. Partitions of
-- at most m rows keep every row.
WITH s AS (SELECT p, i, dp_agg.unit_group_sample(70) OVER (PARTITION BY p) AS k
           FROM generate_series(1, 2000) p, generate_series(0, 99) i)
SELECT (SELECT count(*) FROM (SELECT p FROM s GROUP BY p
                              HAVING count(*) FILTER (WHERE k) <> 70) x) AS not_seventy,
       (SELECT max(abs(c - 1400)) FROM (SELECT i, count(*) FILTER (WHERE k) AS c
                                        FROM s GROUP BY i) y) < 144 AS uniform;
SELECT bool_and(k) AS small_partitions_keep_all
FROM (SELECT dp_agg.unit_group_sample(3) OVER (PARTITION BY p) AS k
      FROM generate_series(1, 100) p, generate_series(1, 3) i) s;
SELECT dp_agg.unit_group_sample(0) OVER () FROM generate_series(1, 2);
-- The sampler over something other than a per-unit Agg: refused too.
SELECT dp_count(1, 1.0)
FROM (SELECT x, dp_agg.unit_group_sample(1) OVER (PARTITION BY x % 7) k FROM numbers) t
WHERE k;

-- ---------------------------------------------------------------------------
-- Unrestricted roles: a unit column applies to their private aggregates too.
-- ---------------------------------------------------------------------------
SELECT abs(dp_count(1, 1.0) - 1000) < 25 AS counts_people FROM units.visits;
SELECT count(*) AS rows_for_the_owner FROM units.visits;
-- A whole-row key holds the unit (also of a subquery, which carries it).
SELECT count(*) FROM (SELECT dp_count(1, 1.0) FROM units.visits v GROUP BY v) x;
SELECT count(*) FROM (SELECT dp_count(1, 1.0) FROM (SELECT diagnosis FROM units.visits) s
                      GROUP BY s) x;
-- A type without a btree ordering (xid) cannot be combined per unit (for a
-- restricted role the cast is refused first).
SELECT dp_select(cost::text::xid, ARRAY['10'::xid], 1.0) FROM units.heavy;

-- Parallel plans keep the per-unit level and charge once.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT diagnosis, abs(dp_count(1, 1.0) - 500) < 25 AS counts_people
FROM units.visits GROUP BY diagnosis ORDER BY diagnosis;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- ---------------------------------------------------------------------------
-- Errors that the per-unit level must not raise (neighbour fuzzer finding
-- and review, session 6): whether a query fails may not depend on how many
-- rows a unit has, or on a row that a CASE reaches.
-- ---------------------------------------------------------------------------
-- E1. Unit 1 has two float rows of 1e308 and two numeric rows near numeric's
-- limit: PostgreSQL's own sum and avg raise on their totals, dp_agg.unit_sum
-- does not (float overflow gives Infinity, clamped to the upper bound; a
-- numeric total beyond the range is NULL: the unit adds nothing there).
CREATE TABLE units.big (patient_id int, x float8 NOT NULL, r real NOT NULL, n numeric NOT NULL);
INSERT INTO units.big VALUES (1, 1e308, 3e38, 9e131071), (1, 1e308, 3e38, 9e131071),
                             (2, 1, 1, 1);
SELECT dp_agg.set_privacy_unit('units.big', 'patient_id');
SELECT dp_agg.protect_table('units.big');
GRANT SELECT ON units.big TO regress_unit_outsider;
-- As an unrestricted role and as the restricted analyst: no error, answers
-- within the bounds after clamping each unit ([0, 1] for means and medians).
SELECT dp_sum(x, 0, 1, 1.0) IS NOT NULL AS sum_float8, dp_sum(r, 0, 1, 1.0) IS NOT NULL AS sum_real,
       dp_sum(n, 0, 1, 1.0) IS NOT NULL AS sum_numeric,
       dp_avg(x, 0, 1, 1.0) BETWEEN 0 AND 1 AS avg_float8,
       dp_avg(n, 0, 1, 1.0) BETWEEN 0 AND 1 AS avg_numeric,
       dp_avg(r, 0, 1, 1.0) BETWEEN 0 AND 1 AS avg_real
FROM units.big;
SET SESSION AUTHORIZATION regress_unit_analyst;
SELECT dp_sum(x, 0, 1, 1.0) IS NOT NULL AS sum_float8, dp_avg(x, 0, 1, 1.0) BETWEEN 0 AND 1 AS avg_float8,
       dp_sum(n * 1, 0, 1, 1.0) IS NOT NULL AS sum_numeric,
       dp_avg(x * 1e-200, 0, 1, 1.0) BETWEEN 0 AND 1 AS avg_small
FROM units.big;
-- E2. Arithmetic on unit rows is total for a restricted role, also in the
-- WHERE and the keys that the rewrite moves into the per-unit level:
-- x * 10 overflows only for unit 1's rows, and only the CASE reaches them.
SELECT dp_count(1, 1.0) IS NOT NULL AS no_error FROM units.big
WHERE CASE WHEN patient_id = 1 THEN x * 10 > 0 ELSE true END;
SELECT count(*) >= 0 AS no_error
FROM (SELECT x * 10 > 0 AS k, dp_count(1, 1.0) FROM units.big GROUP BY 1) s;
SELECT dp_sum(n * 10, 0, 1, 1.0) IS NOT NULL AS no_error FROM units.big;
RESET SESSION AUTHORIZATION;
-- E3. The per-unit sums are dp_agg.unit_sum (float and numeric values) and
-- the float8 mean their total over the count. (compute_query_id = regress:
-- dp_agg computes query identifiers, which VERBOSE would print and which
-- differ between installations.)
SET compute_query_id = regress;
EXPLAIN (VERBOSE, COSTS OFF) SELECT dp_avg(x, 0, 1, 1.0) FROM units.big;
RESET compute_query_id;

-- Removing the label restores row-level semantics for unrestricted roles
-- (units.visits and units.heavy keep theirs).
SECURITY LABEL FOR dp_agg ON COLUMN units.spread.patient_id IS NULL;
SELECT count(*) FROM pg_seclabel WHERE provider = 'dp_agg' AND objsubid > 0;

SET client_min_messages = warning;
DROP SCHEMA units CASCADE;
DROP OWNED BY regress_unit_analyst, regress_unit_outsider;
DROP ROLE regress_unit_analyst;
DROP ROLE regress_unit_outsider;

-- ===========================================================================
-- Privacy units of partitions and inheritance children.
-- Found by: the second privacy review.
-- ===========================================================================
\set VERBOSITY terse

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS unit_parts CASCADE;
DROP ROLE IF EXISTS regress_unit_parts_analyst;
RESET client_min_messages;
CREATE SCHEMA unit_parts;
CREATE ROLE regress_unit_parts_analyst LOGIN;
SELECT dp_agg.restrict_role('regress_unit_parts_analyst');
GRANT USAGE ON SCHEMA unit_parts TO regress_unit_parts_analyst;
SELECT dp_agg.set_budget('regress_unit_parts_analyst', 1000, 0.001);

-- ---------------------------------------------------------------------------
-- The privacy unit of a partitioned or inherited table is read
-- from the queried relation only (PrivacyUnitColumn, restriction.cpp), while
-- protection is inherited (IsProtectedRelation walks the partition ancestors,
-- PropagateProtection labels INHERITS children). A restricted role that
-- names a partition or child directly gets row-level semantics: one unit
-- with 500 rows counts 500 times.
-- Patient 7 has 503 rows in partition part_low (and 500 in child
-- inh_child): at unit level the count of patient 7 is 1 + Z, and |Z| < 25
-- at epsilon 1 fails with probability 2 e^-25 / (1 + e^-1) < 1e-10.
-- ---------------------------------------------------------------------------
CREATE TABLE unit_parts.part (patient_id int, cost int NOT NULL) PARTITION BY RANGE (patient_id);
CREATE TABLE unit_parts.part_low PARTITION OF unit_parts.part FOR VALUES FROM (0) TO (500);
CREATE TABLE unit_parts.part_high PARTITION OF unit_parts.part FOR VALUES FROM (500) TO (2000);
INSERT INTO unit_parts.part SELECT g % 1000, 1 FROM generate_series(1, 3000) g;
INSERT INTO unit_parts.part SELECT 7, 1 FROM generate_series(1, 500);
SELECT dp_agg.protect_table('unit_parts.part');
SELECT dp_agg.set_privacy_unit('unit_parts.part', 'patient_id');
CREATE TABLE unit_parts.inh_parent (patient_id int, cost int NOT NULL);
SELECT dp_agg.protect_table('unit_parts.inh_parent');
SELECT dp_agg.set_privacy_unit('unit_parts.inh_parent', 'patient_id');
CREATE TABLE unit_parts.inh_child () INHERITS (unit_parts.inh_parent);
INSERT INTO unit_parts.inh_child SELECT 7, 1 FROM generate_series(1, 500);
SET SESSION AUTHORIZATION regress_unit_parts_analyst;
-- Through the parent the unit holds (control).
SELECT abs(dp_count(1, 1.0) - 1) < 25 AS one_unit_via_parent
FROM unit_parts.part WHERE patient_id = 7;
-- The partition itself: must be unit level too (or refused).
SELECT abs(dp_count(1, 1.0) - 1) < 25 AS one_unit_via_partition
FROM unit_parts.part_low WHERE patient_id = 7;
SELECT abs(dp_count(1, 1.0) - 1) < 25 AS one_unit_via_inheritance_child
FROM unit_parts.inh_child WHERE patient_id = 7;
RESET SESSION AUTHORIZATION;

SET client_min_messages = warning;
DROP SCHEMA unit_parts CASCADE;
DROP OWNED BY regress_unit_parts_analyst;
DROP ROLE regress_unit_parts_analyst;
RESET client_min_messages;

-- ===========================================================================
-- Unit-level answers over grouped subqueries, per-call limits under the unit
-- rewrite, units whose totals are NULL.
-- ===========================================================================

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS unit_levels CASCADE;
DROP ROLE IF EXISTS regress_unit_levels_analyst;
DROP ROLE IF EXISTS regress_unit_levels_reader;
RESET client_min_messages;
CREATE SCHEMA unit_levels;
CREATE ROLE regress_unit_levels_analyst LOGIN;
CREATE ROLE regress_unit_levels_reader LOGIN;
SELECT dp_agg.restrict_role('regress_unit_levels_analyst');
GRANT USAGE ON SCHEMA unit_levels TO regress_unit_levels_analyst, regress_unit_levels_reader;
SELECT dp_agg.set_budget('regress_unit_levels_analyst', 100000, 0.1);
SELECT dp_agg.set_budget('regress_unit_levels_reader', 1000, 0.001);

-- How a statement ends: 'ok', or the SQLSTATE of its error. An analyst sees
-- exactly this (and more), so two neighbouring databases must give the same.
CREATE FUNCTION unit_levels.outcome(statement text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE statement;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
-- The first value of a statement's first row as float8, or NULL if it is
-- refused (any error).
CREATE FUNCTION unit_levels.answer(statement text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE result float8;
BEGIN
  EXECUTE statement INTO result;
  RETURN result;
EXCEPTION WHEN OTHERS THEN
  RETURN NULL;
END $$;
GRANT EXECUTE ON FUNCTION unit_levels.outcome(text), unit_levels.answer(text)
  TO regress_unit_levels_analyst, regress_unit_levels_reader;

-- 200 patients with one visit each; patient 5 exists, patient 5000 does not.
CREATE TABLE unit_levels.visits (patient_id int, diagnosis text NOT NULL, cost int NOT NULL);
INSERT INTO unit_levels.visits
  SELECT g, CASE WHEN g % 2 = 0 THEN 'flu' ELSE 'cold' END, 10 FROM generate_series(1, 200) g;
SELECT dp_agg.set_privacy_unit('unit_levels.visits', 'patient_id');
SELECT dp_agg.protect_table('unit_levels.visits');
-- One patient (0) with 500 visits, each with a different code; an
-- unprotected unit table that regress_unit_levels_reader may read.
CREATE TABLE unit_levels.codes (patient_id int, code int NOT NULL);
INSERT INTO unit_levels.codes SELECT 0, g FROM generate_series(1, 500) g;
SELECT dp_agg.set_privacy_unit('unit_levels.codes', 'patient_id');
GRANT SELECT ON unit_levels.codes TO regress_unit_levels_reader;

-- ---------------------------------------------------------------------------
-- An unrestricted role's private aggregate over a
-- GROUP BY subquery of a unit table is answered at row level: the subquery
-- is an aggregation level without private aggregates, so JudgePrivacyUnits
-- neither rewrites it nor records it in unit_row_levels, and the outer level
-- does not see the unit table at all (the executor accepts grouping without
-- aggregates, and aggregates under a hand-written dp_agg.unit_group_sample
-- partitioned by anything). Patient 0 alone then counts 500 times. At unit
-- level the answer is within noise of 1 (or of 0, the database without
-- patient 0); |Z| >= 25 at epsilon 1 has probability
-- 2 e^-25 / (1 + e^-1) < 1e-10. Refusing is fine too (NULL here).
-- Found by: the third privacy review of privacy units (severity medium).
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_unit_levels_reader;
SELECT coalesce(abs(unit_levels.answer($q$
  SELECT dp_count(1, 1.0) FROM (SELECT patient_id, code FROM unit_levels.codes
                                GROUP BY patient_id, code) q
$q$)) < 26, true) AS unit_level_count_over_grouped_subquery;
SELECT coalesce(abs(unit_levels.answer($q$
  SELECT dp_count(1, 1.0) FROM (SELECT code FROM unit_levels.codes GROUP BY code) q
$q$)) < 26, true) AS unit_level_count_over_keys_subquery;
-- The same with built-in aggregates under a sampler the query writes itself
-- (partitioned by the code, not the unit): per-unit sums in [0, 10] give
-- at most 10 + Z, Laplace scale 10, |Z| >= 230 with probability e^-23 < 1e-9.
SELECT coalesce(unit_levels.answer($q$
  SELECT dp_sum(c, 0, 10, 1.0)
  FROM (SELECT code, count(*)::int AS c,
               dp_agg.unit_group_sample(1) OVER (PARTITION BY code) AS s
        FROM unit_levels.codes GROUP BY code) q
$q$) < 240, true) AS unit_level_sum_over_sampled_subquery;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- dp_agg.max_epsilon and dp_agg.max_delta (superuser
-- settings: "largest epsilon one aggregate call may use") are checked
-- against the per-group epsilon / m and delta / m of the unit rewrite, not
-- against the call's epsilon and delta, which the call site is charged. Any
-- role may SET dp_agg.max_groups_contributed up to 1000000, so one call may
-- use epsilon up to 10^7 and delta up to 10 (capped only by the budget).
-- Both calls must be refused with 22023 as at row level.
-- Found by: the third privacy review of privacy units (severity medium).
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_unit_levels_analyst;
SET dp_agg.max_groups_contributed = 1000;
SELECT unit_levels.outcome($q$ SELECT dp_count(1, 5000.0) FROM unit_levels.visits $q$)
  AS epsilon_above_max_epsilon;
SELECT unit_levels.outcome($q$ SELECT dp_sum(cost, 0, 10, 1.0, 0.001) FROM unit_levels.visits $q$)
  AS delta_above_max_delta;
RESET dp_agg.max_groups_contributed;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- dp_sum over privacy units clamps each unit's
-- total with GREATEST(sum, lower) and LEAST(..., upper), which skip NULLs: a
-- unit whose values in the group are all NULL, or whose numeric total is
-- beyond numeric's range (dp_agg.unit_sum gives NULL), adds the lower bound,
-- not nothing (docs/analyst_guide.md "Privacy units": "a numeric total beyond numeric's
-- range is NULL, so that unit adds nothing"; dp_sum skips NULL rows at row
-- level). 100 units with only NULL values, and 100 units whose two values
-- overflow numeric, summed with bounds [5, 10]: the answer must be 0 + Z,
-- Laplace scale 10 / 5 = 2, |Z| >= 42 with probability e^-21 < 1e-9 (today
-- about 100 x 5 = 500 before the fix).
-- Found by: the third privacy review of privacy units (accuracy).
-- ---------------------------------------------------------------------------
CREATE TABLE unit_levels.empty_values (patient_id int, x int, big numeric);
INSERT INTO unit_levels.empty_values SELECT g, NULL, NULL FROM generate_series(1, 100) g;
INSERT INTO unit_levels.empty_values
  SELECT g, NULL, ('9' || repeat('0', 131071))::numeric
  FROM generate_series(101, 200) g, generate_series(1, 2);
SELECT dp_agg.set_privacy_unit('unit_levels.empty_values', 'patient_id');
GRANT SELECT ON unit_levels.empty_values TO regress_unit_levels_reader;
SET SESSION AUTHORIZATION regress_unit_levels_reader;
SELECT abs(dp_sum(x, 5, 10, 5.0)) < 42 AS null_units_add_nothing
FROM unit_levels.empty_values WHERE patient_id <= 100;
SELECT abs(dp_sum(big, 5, 10, 5.0)) < 42 AS overflowing_units_add_nothing
FROM unit_levels.empty_values WHERE patient_id > 100;
RESET SESSION AUTHORIZATION;

SET client_min_messages = warning;
DROP SCHEMA unit_levels CASCADE;
DROP OWNED BY regress_unit_levels_analyst;
DROP OWNED BY regress_unit_levels_reader;
DROP ROLE regress_unit_levels_analyst;
DROP ROLE regress_unit_levels_reader;
RESET client_min_messages;
\set VERBOSITY default
