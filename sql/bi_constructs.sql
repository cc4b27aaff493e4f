-- What BI tools send, for a restricted analyst (issue 27): the casts and time
-- filters of Metabase, Superset, Tableau and psqlODBC are total on protected
-- rows under every setting the analyst may choose; to_timestamp/to_date take
-- constants only and are run once while planning; a key listing without a
-- private aggregate (Metabase's field-values sync) is refused before any
-- charge; refusals name what the query wrote and say the fix.
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_dp_bi_analyst;
DROP SCHEMA IF EXISTS bi CASCADE;
RESET client_min_messages;
CREATE ROLE regress_dp_bi_analyst;
SELECT dp_agg.restrict_role('regress_dp_bi_analyst');
SELECT dp_agg.set_budget('regress_dp_bi_analyst', 10000, 0.1);
CREATE SCHEMA bi;
GRANT USAGE ON SCHEMA bi TO regress_dp_bi_analyst;
-- Ordinary rows, and rows at the ends of every range (ids 1-9).
CREATE TABLE bi.events (id int, category text, ts timestamptz, lts timestamp, d date,
                        income numeric, score float8, big int8, age int);
INSERT INTO bi.events
SELECT g, (ARRAY['north', 'south', 'east'])[1 + g % 3],
       timestamptz '2024-01-01 00:00+00' + g * interval '7 hours',
       timestamp '2024-01-01 00:00' + g * interval '5 hours',
       date '2024-01-01' + g % 700, (g * 37 % 1000)::numeric, g / 7.0::float8, g, g % 90
FROM generate_series(100, 2099) g;
INSERT INTO bi.events VALUES
  (1, 'edge', '4714-11-24 00:00:00+00 BC', '4714-11-24 00:00:00 BC', '4714-11-24 BC',
   'NaN', 'NaN', 9223372036854775807, 2147483647),
  (2, 'edge', '294276-12-31 23:59:59.999999+00', '294276-12-31 23:59:59.999999',
   '5874897-12-31', 'Infinity', 'Infinity', -9223372036854775808, -2147483648),
  (3, 'edge', '-infinity', '-infinity', '-infinity', '-Infinity', '-Infinity', 32768, 32768),
  (4, 'edge', 'infinity', 'infinity', 'infinity', 1e300, 1e300, -32769, -32769),
  (5, 'edge', '4714-11-24 05:00:00+00 BC', '4714-11-24 05:00:00 BC', '294276-12-31',
   -9223372036854775808.5, 9.3e18, 2147483648, 0),
  (6, 'edge', '294276-12-31 20:00:00+00', '294276-12-31 20:00:00', '4714-11-25 BC',
   9223372036854775807.5, -9.3e18, -2147483649, 0),
  (7, 'edge', '2024-06-01 00:00+00', '2024-06-01 00:00', '2024-06-01',
   32767.5, 3.5e38, 0, 0),
  (8, 'edge', '2024-06-01 00:00+00', '2024-06-01 00:00', '2024-06-01',
   -32768.5, 1e-320, 0, 0),
  (9, 'edge', '2024-06-01 00:00+00', '2024-06-01 00:00', '2024-06-01', 1e-1000, -1e300, 0, 0);
ALTER TABLE bi.events ADD PRIMARY KEY (id);
SELECT dp_agg.protect_table('bi.events');

-- 1. PostgreSQL's own casts raise at these ends, for an unrestricted role:
-- what the total versions replace.
SET TimeZone = 'America/New_York';
SELECT (ts::date)::timestamp FROM bi.events WHERE id = 1;
SELECT ts::timestamp FROM bi.events WHERE id = 1;
SELECT lts::timestamptz FROM bi.events WHERE id = 2;
SELECT income::int8 FROM bi.events WHERE id = 6;
SELECT score::int4 FROM bi.events WHERE id = 1;
SELECT score::float4 FROM bi.events WHERE id = 9;
SELECT to_timestamp(score) FROM bi.events WHERE id = 4;
-- The total versions return a value or NULL there (-infinity/+infinity beyond
-- the range, NULL for NaN and integers out of range, the IEEE float).
SELECT id, dp_agg.total_date(ts) AS date_of_tz, dp_agg.total_timestamp(ts) AS local_time,
       dp_agg.total_timestamptz(lts) AS as_tz
FROM bi.events WHERE id <= 9 ORDER BY id;
SELECT id, dp_agg.total_int4(income) AS i4, dp_agg.total_int8(income) AS i8,
       dp_agg.total_int2(income) AS i2, dp_agg.total_int4(score) AS f_i4,
       dp_agg.total_int8(score) AS f_i8, dp_agg.total_int2(score) AS f_i2,
       dp_agg.total_float4(score) AS f4, dp_agg.total_int4(big) AS b_i4,
       dp_agg.total_int2(big) AS b_i2, dp_agg.total_int2(age) AS a_i2,
       dp_agg.total_to_timestamp(score) AS epoch
FROM bi.events WHERE id <= 9 ORDER BY id;
RESET TimeZone;

-- 2. Every construct, as the restricted analyst, under every setting it may
-- choose, on each edge row and on a row that does not exist (id -1): no
-- combination raises.
CREATE TEMP TABLE bi_failures (setting text, expression text, id int, state text, message text);
GRANT INSERT, SELECT ON bi_failures TO regress_dp_bi_analyst;
CREATE TEMP TABLE bi_runs (n int);
GRANT INSERT, SELECT ON bi_runs TO regress_dp_bi_analyst;
SET SESSION AUTHORIZATION regress_dp_bi_analyst;
DO $sweep$
DECLARE
  settings text[] := ARRAY[
    $$TimeZone = 'UTC'$$, $$TimeZone = 'America/New_York'$$, $$TimeZone = 'Asia/Tokyo'$$,
    $$TimeZone = 'Pacific/Kiritimati'$$, $$TimeZone = 'Etc/GMT+12'$$,
    $$TimeZone = '<ABCDEFGHIé>+5'$$, $$TimeZone = '<X>-15<Y>,M3.2.0,M11.1.0'$$,
    $$DateStyle = 'Postgres, DMY'$$, $$DateStyle = 'German'$$,
    $$IntervalStyle = sql_standard$$, $$extra_float_digits = -15$$,
    $$plan_cache_mode = force_generic_plan$$];
  expressions text[] := ARRAY[
    $$CAST(date_trunc('month', ts) AS date)$$, $$CAST(date_trunc('month', d) AS date)$$,
    'ts::date', 'lts::date', 'CAST(ts AS timestamp)', 'CAST(lts AS timestamptz)',
    $$date_trunc('MONTH', CAST(ts AS TIMESTAMP))$$, $$date_trunc('day', ts)::date$$,
    'extract(year FROM (ts::date)::timestamp)', 'extract(year FROM ts::timestamp)',
    $$ts >= CAST((now() + INTERVAL '-30 day') AS date)$$, 'd < ts', 'd = lts', 'lts > ts',
    'ts <> d', 'lts >= d', $$ts >= TIMESTAMP '2026-01-01 00:00:00'$$,
    $$ts >= TO_TIMESTAMP('2026-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')$$,
    $$d >= TO_DATE('2026-01-01', 'YYYY-MM-DD')$$,
    'extract(year FROM ts)::int4', 'CAST(EXTRACT(YEAR FROM lts) AS INTEGER)',
    'CAST(TRUNC(EXTRACT(MONTH FROM ts)) AS INTEGER)', '(1 + CAST(EXTRACT(DOW FROM ts) AS INTEGER))',
    'income::int4', 'income::int8', 'income::int2', 'score::int4', 'score::int8', 'score::int2',
    'score::real::int4', 'score::float4', 'big::int4', 'big::int2', 'age::int2',
    'CAST(FLOOR(score) AS BIGINT)', 'CAST(TRUNC(score) AS BIGINT)', 'score::numeric',
    'to_timestamp(score)', 'to_timestamp(score)::date', 'extract(epoch FROM ts)::int8'];
  setting text;
  expression text;
  target int;
  runs int := 0;
BEGIN
  FOREACH setting IN ARRAY settings LOOP
    EXECUTE 'SET ' || setting;
    FOREACH expression IN ARRAY expressions LOOP
      FOREACH target IN ARRAY ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 9, -1] LOOP
        BEGIN
          EXECUTE format('SELECT dp_count(CASE WHEN id = %s AND (%s) IS NOT NULL THEN 1 END, '
                         '0.0001) FROM bi.events', target, expression);
          runs := runs + 1;
        EXCEPTION WHEN OTHERS THEN
          INSERT INTO bi_failures VALUES (setting, expression, target, SQLSTATE, SQLERRM);
        END;
      END LOOP;
    END LOOP;
    RESET TimeZone; RESET DateStyle; RESET IntervalStyle; RESET extra_float_digits;
    RESET plan_cache_mode;
  END LOOP;
  INSERT INTO bi_runs VALUES (runs);
END
$sweep$;
SELECT n AS combinations_answered FROM bi_runs;
SELECT * FROM bi_failures ORDER BY 1, 2, 3;

-- 3. The statements themselves answer (epsilon 1: a count is off by more than
-- 25 with probability below 1e-10). Metabase's month buckets of a timestamptz
-- column, as dates: the full months (2024-02 .. 2025-08) hold 96 to 106 rows
-- each; the partial first and last months (about 7 and 11 rows) pass group
-- selection only now and then, so they are not compared with 103.
SET TimeZone = 'UTC';
SELECT count(*) BETWEEN 10 AND 30 AS months,
       bool_and(abs(n - 103) < 60)
         FILTER (WHERE m BETWEEN date '2024-02-01' AND date '2025-08-01') AS near_truth
FROM (SELECT CAST(date_trunc('month', ts) AS date) AS m, dp_count(1.0) AS n
      FROM bi.events WHERE id >= 100 GROUP BY 1) q;
-- Superset's time range (rows 100..2099 cover 2024-01-05 .. 2025-08-07):
SELECT abs(dp_count(1.0) - 2000) < 25 AS superset_range FROM bi.events
WHERE ts >= TO_TIMESTAMP('2024-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
  AND ts < TO_TIMESTAMP('2026-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US');
-- Tableau's literal, compared with a timestamptz column:
SELECT abs(dp_count(1.0) - 2000) < 25 AS tableau_literal FROM bi.events
WHERE ts >= (TIMESTAMP '2024-01-01 00:00:00.000') AND id >= 100;
-- psqlODBC's {fn YEAR(ts)}: the keys are integers.
SELECT CAST(EXTRACT(YEAR FROM ts) AS INTEGER) AS year, pg_typeof(CAST(EXTRACT(YEAR FROM ts) AS INTEGER))
FROM bi.events WHERE id >= 100 GROUP BY 1 HAVING dp_count(1.0) > 100 ORDER BY 1;
RESET TimeZone;

-- 4. to_timestamp and to_date take constants only; a bad constant fails
-- while planning, for every table alike, before anything is charged.
SELECT dp_count(1.0) FROM bi.events WHERE ts >= to_timestamp(category, 'YYYY');
SELECT dp_count(1.0) FROM bi.events WHERE d >= to_date('2026-13-45', 'YYYY-MM-DD');
-- A plan kept by PREPARE answers with the value computed under the TimeZone
-- it was planned in while that is unchanged, and NULL (no row) after SET
-- TimeZone: it never parses at run time.
SET TimeZone = 'UTC';
SET plan_cache_mode = force_generic_plan;
PREPARE since AS
SELECT CASE WHEN abs(n - 2000) < 25 THEN 'every row' WHEN abs(n) < 25 THEN 'no row' END AS matched
FROM (SELECT dp_count(1.0) AS n FROM bi.events
      WHERE ts >= to_timestamp('2024-01-01 00:00:00', 'YYYY-MM-DD HH24:MI:SS') AND id >= 100) q;
EXECUTE since;
SET TimeZone = 'Asia/Tokyo';
EXECUTE since;
RESET TimeZone;
RESET plan_cache_mode;
DEALLOCATE since;
RESET SESSION AUTHORIZATION;
-- The replacement itself: the recorded value under the recorded settings,
-- NULL under others.
SET TimeZone = 'UTC';
SET lc_time = 'C';
SELECT dp_agg.total_to_timestamp('x', 'y', '2026-01-01 00:00+00', E'UTC\nC') AS recorded,
       dp_agg.total_to_timestamp('x', 'y', '2026-01-01 00:00+00', E'Asia/Tokyo\nC') AS other_zone;
RESET lc_time;
RESET TimeZone;

-- 5. Metabase's field-values sync lists a category column's keys with no
-- aggregate: refused before any charge. Asked for explicitly (the gate, or
-- a count), it is answered and charged.
SELECT epsilon_spent AS spent_before, delta_spent AS delta_before FROM dp_agg.budgets
WHERE role = 'regress_dp_bi_analyst' \gset
SET SESSION AUTHORIZATION regress_dp_bi_analyst;
SELECT "bi"."events"."category" AS "category" FROM "bi"."events"
GROUP BY "bi"."events"."category" ORDER BY "bi"."events"."category" ASC LIMIT 1000;
RESET SESSION AUTHORIZATION;
SELECT epsilon_spent = :spent_before AND delta_spent = :delta_before AS nothing_charged FROM dp_agg.budgets
WHERE role = 'regress_dp_bi_analyst';
SET SESSION AUTHORIZATION regress_dp_bi_analyst;
SELECT category FROM bi.events WHERE id >= 100 GROUP BY category
HAVING dp_agg.group_selection(1.0, 1e-6) ORDER BY category;
RESET SESSION AUTHORIZATION;
SELECT epsilon_spent > :spent_before AS explicit_listing_charged FROM dp_agg.budgets
WHERE role = 'regress_dp_bi_analyst';

-- 6. Refusals name what the query wrote and give the fix for that construct.
SET SESSION AUTHORIZATION regress_dp_bi_analyst;
\set VERBOSITY default
SELECT count(*) AS "count" FROM bi.events;
SELECT category, count(DISTINCT age) FROM bi.events GROUP BY category;
SELECT avg(age) FROM bi.events;
SELECT max(ts) FROM bi.events;
SELECT dp_count(1.0) FROM bi.events WHERE category::int = 1;
SELECT dp_count(1.0) FROM bi.events WHERE CAST(income AS numeric(5, 2)) > 1;
SELECT dp_count(1.0) FROM bi.events WHERE category || 'x' = 'northx';
SELECT dp_count(1.0) FROM bi.events WHERE d - date '2024-01-01' > 30;
SELECT dp_count(1.0) FROM bi.events WHERE (timestamp 'epoch' + score * interval '1 second') > now();
SELECT * FROM bi.events LIMIT 100;
RESET SESSION AUTHORIZATION;

-- 7. information_schema lists the protected table and its columns to the
-- restricted analyst (dbt, Looker, generic connectors discover tables there),
-- without any privilege on it: REFERENCES (a foreign key to it would test
-- whether a key exists) and TRIGGER stay refused.
SET SESSION AUTHORIZATION regress_dp_bi_analyst;
SELECT table_schema, table_name, table_type FROM information_schema.tables
WHERE table_schema = 'bi' ORDER BY table_name;
SELECT column_name, data_type, ordinal_position FROM information_schema.columns
WHERE table_schema = 'bi' AND table_name = 'events' ORDER BY ordinal_position;
SELECT has_table_privilege('bi.events', 'SELECT') AS sel,
       has_table_privilege('bi.events', 'REFERENCES') AS refs,
       has_table_privilege('bi.events', 'TRIGGER') AS trig,
       has_any_column_privilege('bi.events', 'SELECT, INSERT, UPDATE, REFERENCES') AS any_column;
SELECT count(*) AS grants_listed FROM information_schema.table_privileges
WHERE table_schema = 'bi';
RESET SESSION AUTHORIZATION;
CREATE SCHEMA bi_own AUTHORIZATION regress_dp_bi_analyst;
SET SESSION AUTHORIZATION regress_dp_bi_analyst;
CREATE TABLE bi_own.probe (id int REFERENCES bi.events (id));
RESET SESSION AUTHORIZATION;
DROP SCHEMA bi_own CASCADE;
-- An unrestricted role without privileges sees it in neither view, as in
-- PostgreSQL.
CREATE ROLE regress_dp_bi_other;
GRANT USAGE ON SCHEMA bi TO regress_dp_bi_other;
SET SESSION AUTHORIZATION regress_dp_bi_other;
SELECT count(*) AS tables_listed FROM information_schema.tables WHERE table_schema = 'bi';
SELECT count(*) AS columns_listed FROM information_schema.columns WHERE table_schema = 'bi';
RESET SESSION AUTHORIZATION;
DROP OWNED BY regress_dp_bi_other;
DROP ROLE regress_dp_bi_other;

SET client_min_messages = warning;
DROP SCHEMA bi CASCADE;
SELECT true AS done FROM dp_agg.revoke_budget('regress_dp_bi_analyst');
DROP OWNED BY regress_dp_bi_analyst;
DROP ROLE regress_dp_bi_analyst;
RESET client_min_messages;
