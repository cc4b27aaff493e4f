-- The statements Metabase, Superset and Tableau generate for five everyday questions
-- (count by category, count by month, average by category, distinct count, sum by
-- category ordered by the sum), and psqlODBC's {fn YEAR()} escape, as each tool writes
-- them (quoted identifiers, aliases, GROUP BY ordinals, ORDER BY the aggregate, LIMIT,
-- CAST of date_trunc, its time filters), run by every client of run_clients.sh (psql,
-- pgjdbc, psycopg2, psqlODBC) as the restricted analyst against the fixture of
-- run_clients.sh: clinic.patients, 600 rows, regions north/south/east (200 each, ages
-- summing to 10520, 10490 and 10470), age 18..87, last_visit within the 730 days
-- before the fixture, admitted within 1500 days.
--
-- Same format as shapes.sql (one block per statement, "-- shape: NAME" and its
-- expectations), plus:
--   -- source: WHERE            the tool source the statement was derived from (a comment)
--   -- escape: odbc jdbc        the SQL uses ODBC/JDBC escapes ({fn ...}): run only by
--                               those clients, which translate them
--   -- plain: SQL               (one line) the same question as the tool sends it, with
--                               the built-in aggregates: run as shape NAME_plain with the
--                               same expectations: the restricted analyst of the client
--                               suites has dp_agg.plain_aggregate_epsilon = 1.0 and the
--                               columns summed or averaged have declared bounds, so the
--                               plain statement is answered as its dp_ form (README
--                               "Plain aggregates for BI tools").
--
-- Each statement is also in its dp_ form: the tool's aggregate replaced by the
-- private one, everything else as the tool writes it.
--
-- Value bounds (failure probability at most 1e-9 each): a dp_count at epsilon 1 is off
-- by more than 25 with probability below 1e-10 (discrete Laplace, P[|X| >= 25] <=
-- 2 exp(-25)); a dp_sum of ages clamped to [0, 110] at epsilon 1 by more than 2310
-- (Laplace of scale 110, exp(-21) < 1e-9); dp_avg at epsilon 1 stays within [15, 90]
-- for a region of 200 rows with mean age 52.4 (its sum and count halves, each with a
-- tail below 1e-9 at that distance) and always within its bounds [0, 110]. Grouped
-- statements: every released group must be within the bounds; groups of 200 rows are
-- always released (group selection at epsilon 1, delta 1e-6 releases every group of 28+ rows).
-- Month groups (about 25 rows for last_visit, 12 for admitted) may or may not pass
-- selection: rows 0..N, each released month within its truth +- 25.

-- ---- Metabase (MBQL compiled by the postgres driver) ----------------------------

-- shape: metabase_count_by_category
-- source: metabase/metabase src/metabase/driver/sql/query_processor.clj (breakout and
-- source:   :count aggregation: "count(*) AS \"count\"", fully qualified quoted
-- source:   identifiers, ORDER BY the breakout ASC) and the GUI row limit 2000
-- expect: works
-- rows: 3 3
-- values: 175 225
-- plain: SELECT "@SCHEMA@"."patients"."region" AS "region", count(*) AS "count" FROM "@SCHEMA@"."patients" GROUP BY "@SCHEMA@"."patients"."region" ORDER BY "@SCHEMA@"."patients"."region" ASC LIMIT 2000
SELECT "@SCHEMA@"."patients"."region" AS "region", dp_count(1.0) AS "count"
FROM "@SCHEMA@"."patients"
GROUP BY "@SCHEMA@"."patients"."region"
ORDER BY "@SCHEMA@"."patients"."region" ASC
LIMIT 2000

-- shape: metabase_count_by_month
-- source: metabase/metabase src/metabase/driver/postgres.clj (date-trunc: a timestamptz
-- source:   column is truncated with date_trunc('month', col), not cast)
-- expect: works
-- rows: 0 26
-- values: -25 60
-- plain: SELECT date_trunc('month', "@SCHEMA@"."patients"."last_visit") AS "last_visit", count(*) AS "count" FROM "@SCHEMA@"."patients" GROUP BY date_trunc('month', "@SCHEMA@"."patients"."last_visit") ORDER BY date_trunc('month', "@SCHEMA@"."patients"."last_visit") ASC LIMIT 2000
SELECT date_trunc('month', "@SCHEMA@"."patients"."last_visit") AS "last_visit", dp_count(1.0) AS "count"
FROM "@SCHEMA@"."patients"
GROUP BY date_trunc('month', "@SCHEMA@"."patients"."last_visit")
ORDER BY date_trunc('month', "@SCHEMA@"."patients"."last_visit") ASC
LIMIT 2000

-- shape: metabase_count_by_month_of_date_column
-- source: metabase/metabase src/metabase/driver/postgres.clj (date-trunc of a date
-- source:   column: (h2x/cast "date" [:date_trunc unit expr]), i.e. CAST(date_trunc(...) AS date))
-- expect: works
-- rows: 0 52
-- values: -25 45
-- plain: SELECT CAST(date_trunc('month', "@SCHEMA@"."patients"."admitted") AS date) AS "admitted", count(*) AS "count" FROM "@SCHEMA@"."patients" GROUP BY CAST(date_trunc('month', "@SCHEMA@"."patients"."admitted") AS date) ORDER BY CAST(date_trunc('month', "@SCHEMA@"."patients"."admitted") AS date) ASC LIMIT 2000
SELECT CAST(date_trunc('month', "@SCHEMA@"."patients"."admitted") AS date) AS "admitted",
       dp_count(1.0) AS "count"
FROM "@SCHEMA@"."patients"
GROUP BY CAST(date_trunc('month', "@SCHEMA@"."patients"."admitted") AS date)
ORDER BY CAST(date_trunc('month', "@SCHEMA@"."patients"."admitted") AS date) ASC
LIMIT 2000

-- shape: metabase_avg_by_category
-- source: metabase/metabase src/metabase/driver/sql/query_processor.clj (:avg
-- source:   aggregation: "avg(col) AS \"avg\"")
-- expect: works
-- rows: 3 3
-- values: 15 90
-- plain: SELECT "@SCHEMA@"."patients"."region" AS "region", avg("@SCHEMA@"."patients"."age") AS "avg" FROM "@SCHEMA@"."patients" GROUP BY "@SCHEMA@"."patients"."region" ORDER BY "@SCHEMA@"."patients"."region" ASC LIMIT 2000
SELECT "@SCHEMA@"."patients"."region" AS "region", dp_avg("@SCHEMA@"."patients"."age", 0, 110, 1.0) AS "avg"
FROM "@SCHEMA@"."patients"
GROUP BY "@SCHEMA@"."patients"."region"
ORDER BY "@SCHEMA@"."patients"."region" ASC
LIMIT 2000

-- shape: metabase_distinct_count
-- source: metabase/metabase src/metabase/driver/sql/query_processor.clj (:distinct
-- source:   aggregation: "count(distinct col) AS \"count\"")
-- expect: works
-- rows: 1 1
-- values: -22 28
-- plain: SELECT count(distinct "@SCHEMA@"."patients"."region") AS "count" FROM "@SCHEMA@"."patients"
SELECT dp_count(distinct "@SCHEMA@"."patients"."region", 1.0) AS "count"
FROM "@SCHEMA@"."patients"

-- shape: metabase_sum_by_category_ordered_by_sum
-- source: metabase/metabase src/metabase/driver/sql/query_processor.clj (:sum
-- source:   aggregation, order-by an aggregation reference: ORDER BY "sum" DESC)
-- expect: works
-- rows: 3 3
-- values: 8150 12850
-- plain: SELECT "@SCHEMA@"."patients"."region" AS "region", sum("@SCHEMA@"."patients"."age") AS "sum" FROM "@SCHEMA@"."patients" GROUP BY "@SCHEMA@"."patients"."region" ORDER BY "sum" DESC, "@SCHEMA@"."patients"."region" ASC LIMIT 2000
SELECT "@SCHEMA@"."patients"."region" AS "region", dp_sum("@SCHEMA@"."patients"."age", 0, 110, 1.0) AS "sum"
FROM "@SCHEMA@"."patients"
GROUP BY "@SCHEMA@"."patients"."region"
ORDER BY "sum" DESC, "@SCHEMA@"."patients"."region" ASC
LIMIT 2000

-- shape: metabase_relative_date_filter
-- source: metabase/metabase src/metabase/driver/postgres.clj (add-interval-honeysql-form:
-- source:   now() + INTERVAL '-30 day', cast to date for a day-bucketed filter, "previous
-- source:   30 days"); 24 to 25 rows of the fixture fall in it
-- expect: works
-- rows: 1 1
-- values: -1 50
-- plain: SELECT count(*) AS "count" FROM "@SCHEMA@"."patients" WHERE ("@SCHEMA@"."patients"."last_visit" >= CAST((now() + INTERVAL '-30 day') AS date) AND "@SCHEMA@"."patients"."last_visit" < CAST(now() AS date))
SELECT dp_count(1.0) AS "count"
FROM "@SCHEMA@"."patients"
WHERE ("@SCHEMA@"."patients"."last_visit" >= CAST((now() + INTERVAL '-30 day') AS date)
   AND "@SCHEMA@"."patients"."last_visit" < CAST(now() AS date))

-- shape: metabase_month_of_year
-- source: metabase/metabase src/metabase/driver/postgres.clj (extract-integer:
-- source:   CAST(extract(month from col) AS integer))
-- expect: works
-- rows: 12 12
-- values: 0 110
-- plain: SELECT CAST(extract(month from "@SCHEMA@"."patients"."last_visit") AS integer) AS "last_visit", count(*) AS "count" FROM "@SCHEMA@"."patients" GROUP BY CAST(extract(month from "@SCHEMA@"."patients"."last_visit") AS integer) ORDER BY CAST(extract(month from "@SCHEMA@"."patients"."last_visit") AS integer) ASC LIMIT 2000
SELECT CAST(extract(month from "@SCHEMA@"."patients"."last_visit") AS integer) AS "last_visit",
       dp_count(1.0) AS "count"
FROM "@SCHEMA@"."patients"
GROUP BY CAST(extract(month from "@SCHEMA@"."patients"."last_visit") AS integer)
ORDER BY CAST(extract(month from "@SCHEMA@"."patients"."last_visit") AS integer) ASC
LIMIT 2000

-- ---- Superset (explore charts, SQLAlchemy with the postgres engine spec) -----------

-- shape: superset_count_by_category
-- source: apache/superset superset/models/helpers.py (get_sqla_query: metric label
-- source:   "count", ORDER BY the first metric DESC, row_limit 10000)
-- expect: works
-- rows: 3 3
-- values: 175 225
-- plain: SELECT region AS region, COUNT(*) AS count FROM @SCHEMA@.patients GROUP BY region ORDER BY count DESC LIMIT 10000
SELECT region AS region, dp_count(1.0) AS count
FROM @SCHEMA@.patients GROUP BY region ORDER BY count DESC
LIMIT 10000

-- shape: superset_count_by_month
-- source: apache/superset superset/db_engine_specs/postgres.py (_time_grain_expressions:
-- source:   DATE_TRUNC('month', {col}); convert_dttm: TO_TIMESTAMP('...', 'YYYY-MM-DD
-- source:   HH24:MI:SS.US') bounds of the time range)
-- expect: works
-- rows: 0 26
-- values: -25 60
-- plain: SELECT DATE_TRUNC('month', last_visit) AS last_visit, COUNT(*) AS count FROM @SCHEMA@.patients WHERE last_visit >= TO_TIMESTAMP('2000-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND last_visit < TO_TIMESTAMP('2100-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY DATE_TRUNC('month', last_visit) LIMIT 10000
SELECT DATE_TRUNC('month', last_visit) AS last_visit, dp_count(1.0) AS count
FROM @SCHEMA@.patients
WHERE last_visit >= TO_TIMESTAMP('2000-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
  AND last_visit < TO_TIMESTAMP('2100-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
GROUP BY DATE_TRUNC('month', last_visit)
LIMIT 10000

-- shape: superset_avg_by_category
-- source: apache/superset superset/models/helpers.py (adhoc metric label "AVG(age)",
-- source:   ORDER BY the metric DESC)
-- expect: works
-- rows: 3 3
-- values: 15 90
-- plain: SELECT region AS region, AVG(age) AS "AVG(age)" FROM @SCHEMA@.patients GROUP BY region ORDER BY "AVG(age)" DESC LIMIT 10000
SELECT region AS region, dp_avg(age, 0, 110, 1.0) AS "AVG(age)"
FROM @SCHEMA@.patients GROUP BY region ORDER BY "AVG(age)" DESC
LIMIT 10000

-- shape: superset_distinct_count
-- source: apache/superset superset/models/helpers.py (adhoc metric COUNT_DISTINCT:
-- source:   COUNT(DISTINCT region) AS "COUNT_DISTINCT(region)"); a date range on a date
-- source:   column: convert_dttm's TO_DATE('...', 'YYYY-MM-DD')
-- expect: works
-- rows: 1 1
-- values: -22 28
-- plain: SELECT COUNT(DISTINCT region) AS "COUNT_DISTINCT(region)" FROM @SCHEMA@.patients WHERE admitted >= TO_DATE('2000-01-01', 'YYYY-MM-DD') LIMIT 50000
SELECT dp_count(DISTINCT region, 1.0) AS "COUNT_DISTINCT(region)"
FROM @SCHEMA@.patients WHERE admitted >= TO_DATE('2000-01-01', 'YYYY-MM-DD')
LIMIT 50000

-- shape: superset_sum_by_category_ordered_by_sum
-- source: apache/superset superset/models/helpers.py (metric "SUM(age)", ORDER BY it DESC)
-- expect: works
-- rows: 3 3
-- values: 8150 12850
-- plain: SELECT region AS region, SUM(age) AS "SUM(age)" FROM @SCHEMA@.patients GROUP BY region ORDER BY "SUM(age)" DESC LIMIT 10000
SELECT region AS region, dp_sum(age, 0, 110, 1.0) AS "SUM(age)"
FROM @SCHEMA@.patients GROUP BY region ORDER BY "SUM(age)" DESC
LIMIT 10000

-- ---- Tableau (connector-plugin-sdk postgres dialect) ---------------------------
-- Tableau aliases every column "<aggregation>:<field>:ok" and groups by ordinals; the
-- functions are those of its PostgreSQL dialect.

-- shape: tableau_count_by_category
-- source: tableau/connector-plugin-sdk samples/plugins/postgres_jdbc/dialect.tdd
-- source:   (format-select: GROUP BY %1 with ordinals; COUNT(%1)); the table alias
-- source:   "patients" as Tableau writes it
-- expect: works
-- rows: 3 3
-- values: 175 225
-- plain: SELECT "patients"."region" AS "region", COUNT(1) AS "cnt:patients:ok" FROM "@SCHEMA@"."patients" "patients" GROUP BY 1
SELECT "patients"."region" AS "region", dp_count(1.0) AS "cnt:patients:ok"
FROM "@SCHEMA@"."patients" "patients"
GROUP BY 1

-- shape: tableau_count_by_month
-- source: tableau/connector-plugin-sdk samples/plugins/postgres_jdbc/dialect.tdd
-- source:   (DATETRUNC: DATE_TRUNC( '%1', CAST(%2 AS TIMESTAMP) ) with part MONTH;
-- source:   format-datetime-literal: (TIMESTAMP '%1'))
-- expect: works
-- rows: 0 26
-- values: -25 60
-- plain: SELECT DATE_TRUNC( 'MONTH', CAST("patients"."last_visit" AS TIMESTAMP) ) AS "tmn:last_visit:ok", COUNT(1) AS "cnt:patients:ok" FROM "@SCHEMA@"."patients" "patients" WHERE ("patients"."last_visit" >= (TIMESTAMP '2000-01-01 00:00:00.000')) GROUP BY 1
SELECT DATE_TRUNC( 'MONTH', CAST("patients"."last_visit" AS TIMESTAMP) ) AS "tmn:last_visit:ok",
       dp_count(1.0) AS "cnt:patients:ok"
FROM "@SCHEMA@"."patients" "patients"
WHERE ("patients"."last_visit" >= (TIMESTAMP '2000-01-01 00:00:00.000'))
GROUP BY 1

-- shape: tableau_avg_by_category
-- source: tableau/connector-plugin-sdk samples/plugins/postgres_jdbc/dialect.tdd
-- source:   (AVG(%1) of a real: FLOAT casts CAST(%1 AS DOUBLE PRECISION))
-- expect: works
-- rows: 3 3
-- values: 15 90
-- plain: SELECT "patients"."region" AS "region", AVG(CAST("patients"."age" AS DOUBLE PRECISION)) AS "avg:age:ok" FROM "@SCHEMA@"."patients" "patients" GROUP BY 1
SELECT "patients"."region" AS "region",
       dp_avg(CAST("patients"."age" AS DOUBLE PRECISION), 0, 110, 1.0) AS "avg:age:ok"
FROM "@SCHEMA@"."patients" "patients"
GROUP BY 1

-- shape: tableau_distinct_count_by_year
-- source: tableau/connector-plugin-sdk samples/plugins/postgres_jdbc/dialect.tdd
-- source:   (COUNTD: COUNT(DISTINCT %1); YEAR: CAST(EXTRACT(YEAR FROM %1) AS INTEGER))
-- expect: works
-- rows: 1 5
-- values: -22 28
-- plain: SELECT CAST(EXTRACT(YEAR FROM "patients"."admitted") AS INTEGER) AS "yr:admitted:ok", COUNT(DISTINCT "patients"."region") AS "ctd:region:ok" FROM "@SCHEMA@"."patients" "patients" GROUP BY 1
SELECT CAST(EXTRACT(YEAR FROM "patients"."admitted") AS INTEGER) AS "yr:admitted:ok",
       dp_count(DISTINCT "patients"."region", 1.0) AS "ctd:region:ok"
FROM "@SCHEMA@"."patients" "patients"
GROUP BY 1

-- shape: tableau_sum_by_category_ordered_by_sum
-- source: tableau/connector-plugin-sdk samples/plugins/postgres_jdbc/dialect.tdd
-- source:   (SUM(%1); format-order-by; ORDER BY the aggregate's ordinal)
-- expect: works
-- rows: 3 3
-- values: 8150 12850
-- plain: SELECT "patients"."region" AS "region", SUM("patients"."age") AS "sum:age:ok" FROM "@SCHEMA@"."patients" "patients" GROUP BY 1 ORDER BY 2 DESC
SELECT "patients"."region" AS "region", dp_sum("patients"."age", 0, 110, 1.0) AS "sum:age:ok"
FROM "@SCHEMA@"."patients" "patients"
GROUP BY 1
ORDER BY 2 DESC

-- ---- Discovery through information_schema (dbt, Looker, generic connectors) -------

-- shape: information_schema_tables
-- source: dbt-labs/dbt-postgres (postgres__list_relations_without_caching and
-- source:   get_columns_in_relation read information_schema.tables/columns); the
-- source:   restricted analyst holds no privilege on the table (issue 27)
-- expect: works
-- rows: 1 1
SELECT table_schema, table_name, table_type FROM information_schema.tables
WHERE table_schema = '@SCHEMA@' AND table_name = 'patients'

-- shape: information_schema_columns
-- expect: works
-- rows: 6 6
SELECT column_name, data_type FROM information_schema.columns
WHERE table_schema = '@SCHEMA@' AND table_name = 'patients' ORDER BY ordinal_position

-- shape: odbc_sqltables
-- source: psqlODBC's SQLTables (info.c, reads pg_catalog): how Excel, Power BI and
-- source:   Tableau list tables over ODBC
-- expect: works
-- only: odbc
-- rows: 1 1
SQLTables(schema @SCHEMA@, table patients)

-- shape: odbc_sqlcolumns
-- source: psqlODBC's SQLColumns (info.c, reads pg_catalog)
-- expect: works
-- only: odbc
-- rows: 6 6
SQLColumns(schema @SCHEMA@, table patients)

-- ---- psqlODBC (Excel, Power BI, Tableau over ODBC) and pgjdbc escapes ------------

-- shape: odbc_fn_year_count
-- source: postgresql-interfaces/psqlodbc convert.c (mapFunction: {fn YEAR(x)} becomes
-- source:   cast(extract(year from x) as integer)); pgjdbc's EscapedFunctions2 translates
-- source:   it to extract(year from x)
-- escape: odbc jdbc
-- expect: works
-- rows: 1 5
-- values: -25 172
-- plain: SELECT {fn YEAR(admitted)} AS "year", COUNT(*) AS "count" FROM @SCHEMA@.patients GROUP BY {fn YEAR(admitted)}
SELECT {fn YEAR(admitted)} AS "year", dp_count(1.0) AS "count"
FROM @SCHEMA@.patients GROUP BY {fn YEAR(admitted)}
