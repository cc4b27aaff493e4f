-- A restricted session's settings, its planner settings and its time are
-- not channels (issue 26, findings 1-3): every setting a restricted role may
-- change leaves every allowed function total, a private query's plan is a
-- function of the query and public information, and the session's own
-- timeouts do not turn a data-dependent duration into an error.
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_dp_channel_analyst;
DROP SCHEMA IF EXISTS ch CASCADE;
RESET client_min_messages;
CREATE ROLE regress_dp_channel_analyst;
SELECT dp_agg.restrict_role('regress_dp_channel_analyst');
SELECT dp_agg.set_budget('regress_dp_channel_analyst', 1000, 0.1);
CREATE SCHEMA ch;
GRANT USAGE ON SCHEMA ch TO regress_dp_channel_analyst;
CREATE TABLE ch.visits AS
SELECT g AS id, 'name' || g AS name, g % 100 AS age, (g * 37 % 1000)::numeric AS income,
       timestamptz '2024-01-01 00:00+00' + g * interval '7 hours' AS last_visit,
       g * interval '90 minutes' AS stay, g / 7.0::float8 AS score
FROM generate_series(1, 2000) g;
SELECT dp_agg.protect_table('ch.visits');

-- 1. Every setting a restricted role may change, against every function and
-- cast it may use in a private query, on the row that exists (id 7) and on
-- one that does not (id -1): no combination raises. Before the fix,
-- DateStyle Postgres with a time zone whose abbreviation is cut into
-- invalid UTF-8 made lower(), upper(), length() and ILIKE raise only for the
-- row (a whole record was read in 166 probes).
CREATE TEMP TABLE sweep_failures (setting text, expression text, id int, state text, message text);
GRANT INSERT, SELECT ON sweep_failures TO regress_dp_channel_analyst;
CREATE TEMP TABLE sweep_runs (n int);
GRANT INSERT, SELECT ON sweep_runs TO regress_dp_channel_analyst;
SET SESSION AUTHORIZATION regress_dp_channel_analyst;
DO $sweep$
DECLARE
  settings text[] := ARRAY[
    $$DateStyle = 'Postgres, DMY'$$, $$DateStyle = 'SQL, DMY'$$, $$DateStyle = 'German'$$,
    $$TimeZone = '<ABCDEFGHIé>+5'$$, $$TimeZone = 'America/St_Johns'$$,
    $$TimeZone = '<ABCDEFGHIé>+5<ABCDEFGHIé>,M3.2.0,M11.1.0'$$,
    $$IntervalStyle = sql_standard$$, $$IntervalStyle = iso_8601$$,
    $$extra_float_digits = -15$$, $$extra_float_digits = 3$$,
    $$standard_conforming_strings = off$$, $$bytea_output = escape$$,
    $$lc_monetary = 'C'$$, $$plan_cache_mode = force_generic_plan$$];
  expressions text[] := ARRAY[
    'lower(name)', 'upper(name)', 'length(name)', $$name ILIKE '%AmE%'$$, $$name LIKE 'n%'$$,
    'substring(name FROM 1 FOR 3)', $$name ~ '^na'$$,
    'last_visit::text', 'lower(last_visit::text)', 'upper(last_visit::text)',
    'length(last_visit::text)', $$last_visit::text ILIKE '%abc%'$$,
    $$last_visit::text LIKE '%2%'$$, 'substring(last_visit::text FROM 1 FOR 30)',
    $$date_trunc('month', last_visit)$$, 'extract(year FROM last_visit)',
    $$date_part('dow', last_visit)$$, $$to_char(last_visit, 'YYYY-MM')$$,
    $$lower(to_char(last_visit, 'YYYY-MM HH24'))$$,
    $$last_visit - interval '1 year'$$, 'age::text', '(age / 10) * 10', 'income / age',
    'round(income, -2)', 'width_bucket(age, 0, 100, 10)', 'score::text', 'upper(score::text)', 'income::text'];
  setting text;
  expression text;
  target int;
  runs int := 0;
BEGIN
  FOREACH setting IN ARRAY settings LOOP
    EXECUTE 'SET ' || setting;
    FOREACH expression IN ARRAY expressions LOOP
      FOREACH target IN ARRAY ARRAY[7, -1] LOOP
        BEGIN
          EXECUTE format('SELECT dp_count(CASE WHEN id = %s AND (%s) IS NOT NULL THEN 1 END, '
                         '0.0001) FROM ch.visits', target, expression);
          runs := runs + 1;
        EXCEPTION WHEN OTHERS THEN
          INSERT INTO sweep_failures VALUES (setting, expression, target, SQLSTATE, SQLERRM);
        END;
      END LOOP;
    END LOOP;
    RESET DateStyle; RESET TimeZone; RESET IntervalStyle; RESET extra_float_digits;
    RESET standard_conforming_strings; RESET bytea_output; RESET lc_monetary;
    RESET plan_cache_mode;
  END LOOP;
  INSERT INTO sweep_runs VALUES (runs);
END
$sweep$;
SELECT n AS combinations_answered FROM sweep_runs;
SELECT * FROM sweep_failures ORDER BY 1, 2, 3;

-- Output settings are pinned while the private query runs: a released
-- timestamp prints in ISO form whatever DateStyle the session chose.
SET DateStyle = 'Postgres, DMY';
SET TimeZone = '<ABCDEFGHIé>+5';
SELECT current_setting('DateStyle') AS datestyle_while_private, dp_count(0.001) > -1e9 AS answered
FROM ch.visits;
SELECT current_setting('DateStyle') AS datestyle_after;
RESET DateStyle;
RESET TimeZone;
RESET SESSION AUTHORIZATION;

-- 2. Planner settings the session chose (here with SET before becoming the
-- analyst, as a connection option would: both are the session's own) are
-- not honoured while its private query is planned and run; jit is off.
SET jit = on;
SET jit_above_cost = 0;
SET enable_seqscan = off;
SET work_mem = '64kB';
SET random_page_cost = 1000;
SET SESSION AUTHORIZATION regress_dp_channel_analyst;
SELECT current_setting('jit') AS jit, current_setting('jit_above_cost') AS jit_above_cost,
       current_setting('enable_seqscan') AS enable_seqscan,
       current_setting('work_mem') AS work_mem,
       current_setting('random_page_cost') AS random_page_cost,
       (SELECT dp_count(0.001) FROM ch.visits) > -1e9 AS answered;
-- A query that reads no protected table keeps them.
SELECT current_setting('jit_above_cost') AS jit_above_cost, current_setting('work_mem') AS work_mem;
RESET SESSION AUTHORIZATION;
RESET jit;
RESET jit_above_cost;
RESET enable_seqscan;
RESET work_mem;
RESET random_page_cost;

-- 3. The plan of a restricted session's private query comes from public
-- estimates: two protected tables with the same columns, one of 20 rows
-- and one of 20,000 whose statistics say that 'cold' is a tenth of them,
-- get the same plan with the same row estimates and costs (EXPLAIN as an
-- administrator with dp_agg.plan_as_restricted; restricted roles may not
-- EXPLAIN). Without it, the estimates differ.
CREATE TABLE ch.few AS SELECT g AS id, (CASE WHEN g % 10 = 0 THEN 'cold' ELSE 'warm' END) AS diag,
  g % 90 AS age FROM generate_series(1, 20) g;
CREATE TABLE ch.many AS SELECT * FROM ch.few WHERE false;
INSERT INTO ch.many SELECT g, CASE WHEN g % 10 = 0 THEN 'cold' ELSE 'warm' END, g % 90
  FROM generate_series(1, 20000) g;
CREATE INDEX ON ch.few (age);
CREATE INDEX ON ch.many (age);
CREATE STATISTICS ch.many_stats (ndistinct) ON diag, age FROM ch.many;
ANALYZE ch.few;
ANALYZE ch.many;
SELECT dp_agg.protect_table('ch.few');
SELECT dp_agg.protect_table('ch.many');
CREATE FUNCTION ch.plan_of(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS ON) ' || query LOOP
    RETURN NEXT regexp_replace(line, 'ch\.(few|many)|(few|many)(_age_idx)?', 'T', 'g');
  END LOOP;
END $$;
SET dp_agg.plan_as_restricted = on;
SET enable_seqscan = off;  -- the session's, not honoured
SELECT (SELECT array_agg(l) FROM ch.plan_of($$SELECT dp_count(0.5) FROM ch.few WHERE diag = 'cold'$$) l)
     = (SELECT array_agg(l) FROM ch.plan_of($$SELECT dp_count(0.5) FROM ch.many WHERE diag = 'cold'$$) l)
  AS same_plan_filter;
SELECT (SELECT array_agg(l) FROM ch.plan_of('SELECT dp_count(0.5) FROM ch.few WHERE age = 89') l)
     = (SELECT array_agg(l) FROM ch.plan_of('SELECT dp_count(0.5) FROM ch.many WHERE age = 89') l)
  AS same_plan_index;
SELECT (SELECT array_agg(l) FROM ch.plan_of('SELECT diag, age, dp_count(0.5) FROM ch.few GROUP BY 1, 2') l)
     = (SELECT array_agg(l) FROM ch.plan_of('SELECT diag, age, dp_count(0.5) FROM ch.many GROUP BY 1, 2') l)
  AS same_plan_groups;
SELECT * FROM ch.plan_of($$SELECT dp_count(0.5) FROM ch.many WHERE diag = 'cold'$$);
RESET enable_seqscan;
SET dp_agg.plan_as_restricted = off;
-- The administrator's own plans still read the statistics.
SELECT (SELECT array_agg(l) FROM ch.plan_of($$SELECT dp_count(0.5) FROM ch.few WHERE diag = 'cold'$$) l)
     = (SELECT array_agg(l) FROM ch.plan_of($$SELECT dp_count(0.5) FROM ch.many WHERE diag = 'cold'$$) l)
  AS same_plan_unrestricted;
-- Restricted roles may not set it.
SET SESSION AUTHORIZATION regress_dp_channel_analyst;
SET dp_agg.plan_as_restricted = on;
SET dp_agg.protected_rows_estimate = 10;
RESET SESSION AUTHORIZATION;

-- 4. The session's statement_timeout does not cancel a restricted private
-- query (it would turn a duration that rows decide into an error the session
-- can catch): a private count over 2,000,000 rows (about 250 ms) outlives a
-- 50 ms timeout set by the session (parsing and judging take far less).
-- An unrestricted role's query under the same timeout is cancelled, which
-- shows that the query does take longer than the timeout.
CREATE TABLE ch.long AS SELECT g AS id FROM generate_series(1, 2000000) g;
SELECT dp_agg.protect_table('ch.long');
SET SESSION AUTHORIZATION regress_dp_channel_analyst;
SET statement_timeout = '50ms';
SELECT dp_count(id, 0.001) > -1e9 AS answered FROM ch.long WHERE lower(id::text) LIKE '%9%';
RESET statement_timeout;
RESET SESSION AUTHORIZATION;
SET statement_timeout = '50ms';
SELECT dp_count(id, 0.001) > -1e9 AS answered FROM ch.long WHERE lower(id::text) LIKE '%9%';
RESET statement_timeout;

SET client_min_messages = warning;
DROP SCHEMA ch CASCADE;
SELECT true AS done FROM dp_agg.revoke_budget('regress_dp_channel_analyst');
DROP OWNED BY regress_dp_channel_analyst;
DROP ROLE regress_dp_channel_analyst;
RESET client_min_messages;
