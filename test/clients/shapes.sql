-- Query shapes a BI tool (Metabase, Superset, Tableau, Power BI, DBeaver) sends first,
-- run by every real client of test/clients (psql, JDBC, psycopg2, ODBC) as the
-- restricted analyst, against the fixture of run_clients.sh: @TABLE@ = clinic.patients,
-- 600 rows, regions north/south/east (200 each), age 18..87, income numeric (12 NULL),
-- admitted date and last_visit timestamptz within the 4 / 2 years before the fixture.
--
-- One block per shape:
--   -- shape: NAME
--   -- expect: works                     or   -- expect: refused SQLSTATE
--   -- rows: MIN MAX                     how many rows it must return when it works
--   -- values: LO HI                     (optional) every row's last column is a number in [LO, HI]
--   -- only: jdbc|odbc                   (optional) a driver metadata call, not SQL
--   -- guidance: hint-only               (optional, refused shapes) the advice on what
--                                        to write instead is only in the HINT today
--   SQL (one statement, no trailing semicolon needed)
-- Both ways are checked: a "works" shape that is refused fails, and so does a
-- "refused" shape that answers (or is refused with another SQLSTATE). Shapes marked
-- "TODO(issue 13)" are refused today and become "works" when the allow-list is
-- widened: flip their expect line. "guidance: hint-only" is checked both ways too
-- (by psycopg2, which sees message, DETAIL and HINT); delete the line when the
-- server puts its advice into the message or DETAIL, which psqlODBC (Excel, Power BI,
-- Tableau) shows; it drops the HINT.
--
-- Value ranges: every private value uses epsilon 1, so a dp_count is off by more than
-- 25 with probability below 1e-10 (discrete Laplace: P[|X| >= 25] <= 2 exp(-25)).
-- Ranges are the true count (run_clients.sh's fixture) +- 25, or cover every
-- possible true value +- 25 where that count moves with the calendar. Grouped
-- shapes: every released group must be in range; groups of at least 100 rows are
-- always released (group selection at epsilon 1, delta 1e-6 releases every group of 28+ rows).

-- ---- works today -----------------------------------------------------------

-- shape: row_count
-- expect: works
-- rows: 1 1
-- values: 575 625
SELECT dp_count(id, 1.0) AS patients FROM @TABLE@

-- shape: group_by_text_column
-- expect: works
-- rows: 3 3
-- values: 175 225
SELECT region, dp_count(id, 1.0) FROM @TABLE@ GROUP BY region

-- shape: numeric_comparison
-- expect: works
-- rows: 1 1
-- values: 337 387
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE income > 50000

-- shape: numeric_between
-- expect: works
-- rows: 1 1
-- values: 198 248
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE income BETWEEN 30000 AND 60000

-- shape: in_list
-- expect: works
-- rows: 1 1
-- values: 1 51
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE age IN (30, 40, 50)

-- shape: coalesce
-- expect: works
-- rows: 1 1
-- values: 337 387
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE COALESCE(income, 0) > 50000

-- shape: nullif
-- expect: works
-- rows: 1 1
-- values: 375 425
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE NULLIF(region, 'east') IS NOT NULL

-- shape: searched_case_group
-- expect: works
-- rows: 2 2
-- values: 164 436
SELECT CASE WHEN age < 40 THEN 'under 40' ELSE '40 and over' END AS age_band, dp_count(id, 1.0)
FROM @TABLE@ GROUP BY 1

-- shape: simple_case_sum
-- expect: works
-- rows: 1 1
-- values: 175 225
SELECT dp_sum(CASE region WHEN 'north' THEN 1 ELSE 0 END, 0, 1, 1.0) FROM @TABLE@

-- shape: dp_avg_numeric
-- expect: works
-- rows: 1 1
-- values: 0 200000
SELECT dp_avg(income, 0, 200000, 1.0) FROM @TABLE@

-- shape: subquery_limit_0
-- expect: works
-- rows: 0 0
SELECT * FROM (SELECT region, dp_count(id, 1.0) AS n FROM @TABLE@ GROUP BY region) s LIMIT 0

-- shape: subquery_where_false
-- expect: works
-- rows: 0 0
SELECT * FROM (SELECT region, dp_count(id, 1.0) AS n FROM @TABLE@ GROUP BY region) s WHERE false

-- shape: where_false
-- expect: works
-- rows: 1 1
-- values: -25 25
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE false

-- shape: odbc_sqlstatistics
-- expect: works
-- only: odbc
-- rows: 1 10
SQLStatistics(schema @SCHEMA@, table patients)

-- ---- widened by issue 13 ---------------------------------------------------

-- shape: now_comparison
-- expect: works
-- rows: 1 1
-- values: 250 350
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE last_visit >= now() - interval '1 year'

-- shape: current_date_minus_days
-- expect: works
-- rows: 1 1
-- values: 139 189
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE admitted >= CURRENT_DATE - 365

-- shape: date_arithmetic
-- expect: works
-- rows: 1 1
-- values: 561 611
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE admitted + 30 <= CURRENT_DATE

-- shape: date_trunc_month
-- expect: works
-- rows: 0 26
-- values: -25 125
SELECT date_trunc('month', last_visit) AS month, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: extract_year
-- expect: works
-- rows: 1 6
-- values: -25 625
SELECT extract(year FROM admitted) AS year, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: date_part_dow
-- expect: works
-- rows: 5 7
-- values: -25 625
SELECT date_part('dow', last_visit) AS weekday, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: to_char_month
-- expect: works
-- rows: 0 25
-- values: -25 125
SELECT to_char(last_visit, 'YYYY-MM') AS month, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: width_bucket
-- expect: works
-- rows: 0 12
-- values: -25 225
SELECT width_bucket(income, 0, 100000, 10) AS bucket, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: floor_division
-- expect: works
-- rows: 6 9
-- values: -25 225
SELECT floor(income / 10000) AS band, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: round_numeric
-- expect: works
-- rows: 0 10
-- values: -25 225
SELECT round(income, -4) AS band, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: age_decade
-- expect: works
-- rows: 6 8
-- values: -25 125
SELECT (age / 10) * 10 AS decade, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: ratio_expression
-- expect: works
-- rows: 1 1
-- values: 0 10000
SELECT dp_avg(income / age, 0, 10000, 1.0) FROM @TABLE@

-- shape: dp_median_numeric
-- expect: works
-- rows: 1 1
-- values: 0 200000
SELECT dp_median(income, 0, 200000, 1.0) FROM @TABLE@

-- shape: like_prefix
-- expect: works
-- rows: 1 1
-- values: 175 225
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE region LIKE 'n%'

-- shape: ilike
-- expect: works
-- rows: 1 1
-- values: 175 225
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE region ILIKE 'N%'

-- shape: regex_match
-- expect: works  -- a simple pattern runs as LIKE (docs/administrator_guide.md "Regular expressions")
-- rows: 1 1
-- values: 175 225
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE region ~ '^s'

-- shape: regex_complex
-- expect: refused 42501  -- other regular expressions stay refused (docs/administrator_guide.md "Regular expressions")
-- rows: 1 1
-- values: 175 225
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE region ~ '^(s|n)'

-- shape: lower_group
-- expect: works
-- rows: 3 3
-- values: 175 225
SELECT lower(region) AS region, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: upper_group
-- expect: works
-- rows: 3 3
-- values: 175 225
SELECT upper(region) AS region, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: length_filter
-- expect: works
-- rows: 1 1
-- values: 375 425
SELECT dp_count(id, 1.0) FROM @TABLE@ WHERE length(region) = 5

-- shape: substring_group
-- expect: works
-- rows: 3 3
-- values: 175 225
SELECT substring(region FROM 1 FOR 1) AS initial, dp_count(id, 1.0) FROM @TABLE@ GROUP BY 1

-- shape: count_distinct
-- expect: works
-- rows: 1 1
-- values: -22 28
SELECT dp_count(DISTINCT region, 1.0) FROM @TABLE@

-- shape: row_count_without_column
-- expect: works
-- rows: 1 1
-- values: 575 625
SELECT dp_count(1.0) FROM @TABLE@

-- shape: jdbc_get_index_info
-- expect: works
-- only: jdbc
-- rows: 1 10
getIndexInfo(schema @SCHEMA@, table patients)
