-- dp_agg demo: true vs differentially private answers on the patients table.
--   test/scripts/cluster.sh start && eval "$(test/scripts/cluster.sh env)"
--   psql -X -f test/demo/demo.sql
-- Every dp_ call below is paid from the session user's privacy budget, which
-- the script grants first. GROUP BY keys (regions, cholesterol levels) are
-- treated as public.
\set ON_ERROR_STOP 1
\set QUIET 1
\set SHOW_CONTEXT never
\pset null '(null)'
\pset footer off
\pset border 2

SELECT NOT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'dp_count') AS need_ext,
       to_regclass('patients') IS NULL AS need_patients \gset
\if :need_ext
CREATE EXTENSION dp_agg;
\endif
\if :need_patients
\echo 'loading patients (70,000 rows) ...'
\o /dev/null
\ir patients.sql
\o
\endif

\echo
\echo '== 0. An administrator grants this role a privacy budget of epsilon 8'
SELECT dp_agg.set_budget(session_user::regrole, 8);
SELECT role, epsilon_total, epsilon_spent, epsilon_remaining FROM dp_agg.budgets;

\echo
\echo '== 1. How many patients? Smaller epsilon = more privacy = more noise'
SELECT count(id)           AS true_count,
       dp_count(id, 0.1)   AS dp_count_eps_0_1,
       dp_count(id, 1.0)   AS dp_count_eps_1
FROM patients;

\echo '== 2. Average age and systolic pressure by region (epsilon 0.5 each)'
SELECT region,
       count(id)                             AS true_n,
       dp_count(id, 0.5)                     AS dp_n,
       round(avg(age), 2)                    AS true_avg_age,
       round(dp_avg(age, 0, 110, 0.5), 2)    AS dp_avg_age,
       round(avg(ap_hi), 1)                  AS true_avg_systolic,
       round(dp_avg(ap_hi, 60, 240, 0.5), 1) AS dp_avg_systolic
FROM patients
GROUP BY region
ORDER BY region;

\echo '== 3. Total yearly income (NULLs ignored; each income clamped to [0, 200000])'
SELECT true_sum, dp_sum, dp_sum - true_sum AS difference,
       round(100 * (dp_sum - true_sum) / true_sum, 4) AS rel_error_pct
FROM (SELECT sum(income)                       AS true_sum,
             round(dp_sum(income, 0, 200000, 1.0), 2) AS dp_sum
      FROM patients) s;

\echo '== 4. Share of patients with cardiovascular disease by cholesterol level (%)'
SELECT cholesterol,
       CASE cholesterol WHEN 1 THEN 'normal' WHEN 2 THEN 'above normal'
                        ELSE 'well above normal' END AS level,
       round(100 * avg(cardio::int), 1)                AS true_pct,
       round(100 * dp_avg(cardio::int, 0, 1, 0.5), 1)  AS dp_pct
FROM patients
GROUP BY cholesterol
ORDER BY cholesterol;

\echo '== 5. The same query three times: the answer released first is reused, free'
\echo '   (the release cache: the same question in the same hour, docs/analyst_guide.md "Reusing released answers")'
SELECT round(avg(weight_kg)::numeric, 3)                  AS true_avg_weight,
       round(dp_avg(weight_kg, 30, 200, 0.1)::numeric, 3) AS dp_avg_weight
FROM patients;
\g
\g
\echo '   ... and with the cache off (dp_agg.release_cache_period = 0): fresh noise, charged, on every run'
SET dp_agg.release_cache_period = 0;
SELECT round(avg(weight_kg)::numeric, 3)                  AS true_avg_weight,
       round(dp_avg(weight_kg, 30, 200, 0.1)::numeric, 3) AS dp_avg_weight
FROM patients;
\g
RESET dp_agg.release_cache_period;

\echo '== 5b. Medians, the most common value, and error bars at no extra cost'
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ap_hi) AS true_median_systolic,
       round(dp_median(ap_hi, 60, 240, 0.3)::numeric, 1)  AS dp_median_systolic,
       mode() WITHIN GROUP (ORDER BY region)             AS true_largest_region,
       dp_select(region, ARRAY['North', 'South', 'East', 'West', 'Central'], 0.3) AS dp_largest_region
FROM patients;
SELECT count(*) FILTER (WHERE smoker) AS true_smokers, dp_count(id, 0.2) FILTER (WHERE smoker) AS dp_smokers,
       dp_count_margin(0.2) AS plus_minus_95pct
FROM patients;
SELECT round((e).value::numeric, 2) AS dp_avg_weight, round((e).low::numeric, 2) AS low_95,
       round((e).high::numeric, 2) AS high_95
FROM (SELECT dp_avg_interval(weight_kg, 30, 200, 0.2, 0.95) AS e FROM patients) q;

\echo '== 6. Bad parameters are rejected (epsilon = 0):'
\set ON_ERROR_STOP 0
SELECT dp_count(id, 0) FROM patients;
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1

\echo
\echo '== 7. The budget at work: every query above was charged before it ran (a reuse: 0)'
SELECT role, epsilon_total, epsilon_spent, epsilon_remaining FROM dp_agg.budgets;
SELECT id, kind, epsilon, aggregates FROM dp_agg.ledger ORDER BY id;

\echo
\echo '== 8. When the budget is spent, the data says no more (and nothing is charged):'
\set ON_ERROR_STOP 0
SELECT dp_avg(age, 0, 110, 5) FROM patients;
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1
\echo 'A refused join (one patient could be counted many times) costs nothing either:'
\set ON_ERROR_STOP 0
SELECT p.region, dp_count(p.id, 0.1) FROM patients p JOIN patients q ON p.region = q.region GROUP BY p.region;
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1

\echo
\echo '== 9. A restricted analyst: the table is protected, the role sees it only through dp_ aggregates'
\echo 'SELECT dp_agg.protect_table(''patients''); SELECT dp_agg.restrict_role(''demo_analyst'');'
\o /dev/null
SET client_min_messages = warning;
DROP ROLE IF EXISTS demo_analyst;
RESET client_min_messages;
CREATE ROLE demo_analyst;
GRANT USAGE ON SCHEMA public TO demo_analyst;     -- and no SELECT on patients
SELECT dp_agg.protect_table('patients');
SELECT dp_agg.restrict_role('demo_analyst');
SELECT dp_agg.set_budget('demo_analyst', 10, 1e-4);
\o
SET SESSION AUTHORIZATION demo_analyst;
\echo 'Refused, each with why (DETAIL) and what to write instead (HINT); nothing is charged:'
\set ON_ERROR_STOP 0
\echo '- raw rows: a restricted role reads a protected table only through dp_ aggregates'
SELECT * FROM patients LIMIT 1;
\echo '- an exact count: count() adds no noise, so it is not differentially private'
SELECT count(*) FROM patients;
\echo '- EXPLAIN: a plan shows what the planner knows about the protected rows'
EXPLAIN SELECT dp_count(id, 0.5) FROM patients;
\set ON_ERROR_STOP 1
\echo 'Private answers work, also wrapped the way BI tools do. Groups come from protected'
\echo 'rows, so each must pass DP partition selection (epsilon 1, delta 1e-6, charged too):'
SELECT * FROM (SELECT region, dp_count(id, 0.5) AS patients, dp_avg(age, 0, 110, 0.5) AS avg_age
               FROM patients GROUP BY region) q ORDER BY region LIMIT 2000;
\echo 'Arithmetic on protected rows cannot fail, so no error can tell that a row exists:'
\echo '100 / (age - 40) is NULL for patients aged 40 (no division-by-zero error), and they'
\echo 'are simply not counted:'
SELECT dp_count(id, 0.5) AS aged_over_40 FROM patients WHERE 100 / (age - 40) > 0;
\echo 'A group of one patient does not show (group selection shows it with probability 1e-6):'
RESET SESSION AUTHORIZATION;
INSERT INTO patients (id, region, age, sex) VALUES (999999, 'Atlantis', 30, 'F');
SET SESSION AUTHORIZATION demo_analyst;
SELECT region, dp_count(id, 0.5) AS patients FROM patients GROUP BY region ORDER BY region;
SELECT epsilon_spent, delta_spent FROM dp_agg.budgets;
RESET SESSION AUTHORIZATION;
DELETE FROM patients WHERE id = 999999;

\echo
\echo '== 10. Privacy units: a visits table with many rows per patient'
\echo 'Patients 1..20000 have 1 to 10 visits each, every 1000th patient 200 visits.'
\o /dev/null
SELECT dp_agg.add_budget(session_user::regrole, 3, 0);
SET client_min_messages = warning;
DROP TABLE IF EXISTS visits;
RESET client_min_messages;
CREATE TABLE visits AS
SELECT p.id AS patient_id,
       CASE p.cholesterol WHEN 1 THEN 'checkup' WHEN 2 THEN 'lipids' ELSE 'cardiology' END
         AS diagnosis,
       50 + (p.id * 7 + n) % 150 AS cost
FROM patients p,
     generate_series(1, CASE WHEN p.id % 1000 = 0 THEN 200 ELSE 1 + p.id % 10 END) n
WHERE p.id <= 20000;
ANALYZE visits;
\o
\echo 'Row level (no unit declared): dp_count counts visits, a heavy patient weighs 200 rows.'
CREATE TEMP TABLE row_level AS
SELECT diagnosis, dp_count(1, 0.5) AS dp_visits, dp_sum(cost, 0, 200, 0.5) AS dp_spent_rows
FROM visits GROUP BY diagnosis;
\echo 'SECURITY LABEL FOR dp_agg ON COLUMN visits.patient_id IS ''privacy_unit'';'
SECURITY LABEL FOR dp_agg ON COLUMN visits.patient_id IS 'privacy_unit';
\echo 'Unit level: dp_count counts patients; dp_sum clamps each patient''s total to [0, 2000];'
\echo 'each patient contributes to dp_agg.max_groups_contributed = 1 diagnosis, chosen at random.'
CREATE TEMP TABLE unit_level AS
SELECT diagnosis, dp_count(1, 0.5) AS dp_patients, dp_sum(cost, 0, 2000, 0.5) AS dp_spent_units
FROM visits GROUP BY diagnosis;
SELECT t.diagnosis,
       t.true_visits, r.dp_visits AS dp_row_level,
       t.true_patients, u.dp_patients AS dp_unit_level,
       t.true_spent, r.dp_spent_rows, u.dp_spent_units
FROM (SELECT diagnosis, count(*) AS true_visits, count(DISTINCT patient_id) AS true_patients,
             sum(cost) AS true_spent
      FROM visits GROUP BY diagnosis) t
JOIN row_level r USING (diagnosis)
JOIN unit_level u USING (diagnosis)
ORDER BY t.diagnosis;
