-- Issue 26, findings 1 and 3: what a restricted analyst's expression does on
-- one protected row may depend neither in its errors nor in its work on
-- that row's values (docs/administrator_guide.md "Text that cannot fail", "Work per row").
--   1. A query can make text that is not valid UTF-8 (a timestamptz printed
--      under DateStyle Postgres in a time zone whose abbreviation is cut at
--      10 bytes inside a character); lower(), upper(), ILIKE, length() and
--      substring() raised 22021 on it, so `CASE WHEN ssn = '...' THEN
--      lower(last_visit::text) END` raised exactly when that row existed.
--      Their total versions now return NULL for such a text.
--   2. lower() of a 15 MB text, an 8 MiB ILIKE pattern, or multiplying a
--      100,000-digit numeric made only the rows that reached them cost
--      seconds. Texts over 64 KiB and numeric operands over 1000 base-10000
--      digits give NULL; longer patterns, larger expressions and more
--      expensive calls are refused from the query text, before any charge.
-- Every probe runs without and then with the secret row, and must show the
-- same outcome both times; the work the total functions did is read from
-- dp_agg.insecure_test_work_units (superuser-only), a count, not a clock.
\set VERBOSITY terse

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS wb CASCADE;
DROP ROLE IF EXISTS regress_wb_analyst;
RESET client_min_messages;

CREATE SCHEMA wb;
CREATE TABLE wb.people (id int PRIMARY KEY, ssn text NOT NULL, last_visit timestamptz NOT NULL,
                        num numeric NOT NULL, note text NOT NULL);
INSERT INTO wb.people
SELECT g, '000-00-' || lpad(g::text, 4, '0'), timestamptz '2024-01-01 08:00+00' + g * interval '1 hour',
       g, 'note ' || g
FROM generate_series(1, 300) g;
-- The analyst's own public table, with a 15 MiB text.
CREATE TABLE wb.blobs (id int PRIMARY KEY, body text);
INSERT INTO wb.blobs VALUES (1, repeat('Ab', 15 * 512 * 1024));
ANALYZE wb.people, wb.blobs;
CREATE ROLE regress_wb_analyst LOGIN;
GRANT USAGE ON SCHEMA wb TO regress_wb_analyst;
GRANT SELECT ON wb.blobs TO regress_wb_analyst;
SELECT dp_agg.set_budget('regress_wb_analyst', 1000, 0.001);
SELECT dp_agg.protect_table('wb.people');
SELECT dp_agg.restrict_role('regress_wb_analyst');

-- The probes: queries the analyst runs, each under DateStyle Postgres and
-- TimeZone '<ABCDEFGHIé>+5' (where timestamptz text ends in a lone byte
-- 0xc3). Run with \gexec as the analyst, without and then with the secret
-- row; each prints ran = t or an error.
CREATE TABLE wb.probes (n int PRIMARY KEY, sql text NOT NULL);
GRANT SELECT ON wb.probes TO regress_wb_analyst;
INSERT INTO wb.probes VALUES
  -- finding 1: lower/upper/ILIKE/LIKE/length/substring of an invalid text
  (1, $q$SELECT 1 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people
         WHERE CASE WHEN ssn = '123-45-6789' THEN lower(last_visit::text) = 'x' ELSE true END$q$),
  (2, $q$SELECT 2 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people
         WHERE CASE WHEN ssn = '123-45-6789' THEN upper(last_visit::text) = 'x' ELSE true END$q$),
  (3, $q$SELECT 3 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people
         WHERE CASE WHEN ssn = '123-45-6789' THEN last_visit::text ILIKE '%x%' ELSE true END$q$),
  (4, $q$SELECT 4 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people
         WHERE CASE WHEN ssn = '123-45-6789' THEN last_visit::text NOT LIKE '%x%' ELSE true END$q$),
  (5, $q$SELECT 5 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people
         WHERE CASE WHEN ssn = '123-45-6789' THEN length(last_visit::text) > 0 ELSE true END$q$),
  (6, $q$SELECT 6 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people
         WHERE CASE WHEN ssn = '123-45-6789' THEN char_length(last_visit::text) > 0 ELSE true END$q$),
  (7, $q$SELECT 7 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people
         WHERE CASE WHEN ssn = '123-45-6789' THEN substr(last_visit::text, 2) = 'x' ELSE true END$q$),
  (8, $q$SELECT 8 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people
         WHERE CASE WHEN ssn = '123-45-6789' THEN last_visit::text ~ 'x$' ELSE true END$q$),
  (9, $q$SELECT 9 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people
         WHERE CASE WHEN ssn = '123-45-6789'
                    THEN lower(last_visit::text COLLATE "C.utf8") = 'x' ELSE true END$q$),
  -- finding 3: a 15 MiB text of the analyst's own table, a large numeric
  (10, $q$SELECT 10 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people p JOIN wb.blobs b ON b.id = 1
          WHERE CASE WHEN p.ssn = '123-45-6789' THEN lower(b.body) = 'x' ELSE true END$q$),
  (11, $q$SELECT 11 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people p JOIN wb.blobs b ON b.id = 1
          WHERE CASE WHEN p.ssn = '123-45-6789' THEN b.body ILIKE '%x%' ELSE true END$q$),
  (12, $q$SELECT 12 AS probe, dp_count(1.0) IS NOT NULL AS ran FROM wb.people WHERE num * num > 0$q$);

-- The timestamptz text is not valid UTF-8 in this time zone: the built-ins
-- raise for it (as superuser: no protected rows involved).
SET DateStyle = 'Postgres';
SET TimeZone = '<ABCDEFGHIé>+5';
SELECT lower(timestamptz '2024-06-01 12:00+00'::text);
SELECT length(timestamptz '2024-06-01 12:00+00'::text);
RESET DateStyle;
RESET TimeZone;

-- Without the secret row.
SELECT current_setting('dp_agg.insecure_test_work_units')::numeric AS work0 \gset
SET SESSION AUTHORIZATION regress_wb_analyst;
SET DateStyle = 'Postgres';
SET TimeZone = '<ABCDEFGHIé>+5';
SELECT sql FROM wb.probes ORDER BY n \gexec
RESET DateStyle;
RESET TimeZone;
RESET SESSION AUTHORIZATION;
SELECT current_setting('dp_agg.insecure_test_work_units')::numeric - :work0 AS work_without \gset

-- With it: a 100,000-digit numeric, a ssn the probes ask about.
INSERT INTO wb.people VALUES (0, '123-45-6789', timestamptz '2024-06-01 12:00+00',
                              repeat('9', 100000)::numeric, 'the secret');
SELECT current_setting('dp_agg.insecure_test_work_units')::numeric AS work0 \gset
SET SESSION AUTHORIZATION regress_wb_analyst;
SET DateStyle = 'Postgres';
SET TimeZone = '<ABCDEFGHIé>+5';
SELECT sql FROM wb.probes ORDER BY n \gexec
RESET DateStyle;
RESET TimeZone;
RESET SESSION AUTHORIZATION;
-- The row made the total functions read its invalid texts (about 40 bytes
-- each), and nothing of the 15 MiB text or the 100,000-digit numeric: far
-- less than one call's cap of 64 KiB.
SELECT current_setting('dp_agg.insecure_test_work_units')::numeric - :work0 - :work_without
       BETWEEN 1 AND 65535 AS secret_row_work_bounded;

-- The caps, on the total versions directly.
SET DateStyle = 'Postgres';
SET TimeZone = '<ABCDEFGHIé>+5';
SELECT dp_agg.total_lower(timestamptz '2024-06-01 12:00+00'::text) IS NULL AS lower_invalid,
       dp_agg.total_upper(timestamptz '2024-06-01 12:00+00'::text) IS NULL AS upper_invalid,
       dp_agg.total_length(timestamptz '2024-06-01 12:00+00'::text) IS NULL AS length_invalid,
       dp_agg.total_substr(timestamptz '2024-06-01 12:00+00'::text, 2) IS NULL AS substr_invalid,
       dp_agg.total_textlike(timestamptz '2024-06-01 12:00+00'::text, '%') IS NULL AS like_invalid,
       dp_agg.total_texticlike(timestamptz '2024-06-01 12:00+00'::text, '%') IS NULL AS ilike_invalid;
RESET DateStyle;
RESET TimeZone;
SELECT length(dp_agg.total_lower(repeat('A', 65536))) AS lower_at_cap,
       dp_agg.total_lower(repeat('A', 65537)) IS NULL AS lower_over_cap,
       dp_agg.total_length(repeat('é', 32768)) AS length_at_cap,
       dp_agg.total_length(repeat('é', 32769)) IS NULL AS length_over_cap,
       dp_agg.total_substring(repeat('a', 65537), 1, 1) IS NULL AS substring_over_cap,
       dp_agg.total_textlike(repeat('a', 65536), '%a%a%a%a%a%a%a%a') AS like_at_work_cap,
       dp_agg.total_textlike(repeat('a', 65536), '%a%a%a%a%a%a%a%a%') IS NULL AS like_over_work_cap,
       dp_agg.total_textnlike(repeat('a', 4096), repeat('a', 256)) AS nlike_at_work_cap;
SELECT dp_agg.total_numeric_mul(repeat('7', 4000)::numeric, 2) IS NOT NULL AS mul_at_cap,
       dp_agg.total_numeric_mul(repeat('7', 4001)::numeric, 2) IS NULL AS mul_over_cap,
       dp_agg.total_numeric_div(2, repeat('7', 4001)::numeric) IS NULL AS div_over_cap,
       dp_agg.total_numeric_mod(repeat('7', 4001)::numeric, 7) IS NULL AS mod_over_cap,
       dp_agg.total_float8(repeat('7', 4001)::numeric) IS NULL AS float8_over_cap,
       dp_agg.total_floor(repeat('7', 4001)::numeric) IS NULL AS floor_over_cap,
       dp_agg.total_numeric_add(repeat('7', 4001)::numeric, 1) IS NOT NULL AS add_keeps;

-- Refused from the query text, before any charge: a LIKE/ILIKE pattern (or
-- a simple regular expression run as LIKE) over 256 bytes, more than 1000
-- expression nodes, more than 16 calls of capped functions.
SELECT '^' || repeat('x', 256) AS long_regex,
       '{' || string_agg(g::text, ',') || '}' AS long_array
FROM generate_series(1, 1000) g \gset
SELECT epsilon_spent AS spent_before FROM dp_agg.budgets WHERE role = 'regress_wb_analyst' \gset
SELECT count(*) AS charges_before FROM dp_agg.ledger WHERE role = 'regress_wb_analyst' \gset
SET SESSION AUTHORIZATION regress_wb_analyst;
\set VERBOSITY default
SELECT dp_count(1.0) FROM wb.people WHERE note ILIKE '%' || repeat('x', 256) || '%';
SELECT dp_count(1.0) FROM wb.people WHERE note ~ :'long_regex';
SELECT dp_count(1.0) FROM wb.people WHERE id = ANY (:'long_array'::int[]);
\set VERBOSITY terse
SELECT dp_count(1.0) FROM wb.people
WHERE lower(note) = 'a' OR lower(note) = 'b' OR lower(note) = 'c' OR lower(note) = 'd'
   OR lower(note) = 'e' OR lower(note) = 'f' OR lower(note) = 'g' OR lower(note) = 'h'
   OR lower(note) = 'i' OR lower(note) = 'j' OR lower(note) = 'k' OR lower(note) = 'l'
   OR lower(note) = 'm' OR lower(note) = 'n' OR lower(note) = 'o' OR lower(note) = 'p'
   OR lower(note) = 'q';
-- At the limits: accepted.
SELECT dp_count(1.0) IS NOT NULL AS pattern_at_cap FROM wb.people WHERE note NOT ILIKE repeat('x', 256);
SELECT dp_count(1.0) IS NOT NULL AS sixteen_calls FROM wb.people
WHERE lower(note) = 'a' OR lower(note) = 'b' OR lower(note) = 'c' OR lower(note) = 'd'
   OR lower(note) = 'e' OR lower(note) = 'f' OR lower(note) = 'g' OR lower(note) = 'h'
   OR lower(note) = 'i' OR lower(note) = 'j' OR lower(note) = 'k' OR lower(note) = 'l'
   OR lower(note) = 'm' OR lower(note) = 'n' OR lower(note) = 'o' OR lower(note) = 'p';
RESET SESSION AUTHORIZATION;
-- Only the two accepted queries were charged (each dp_count 1.0).
SELECT epsilon_spent - :spent_before AS epsilon_charged
FROM dp_agg.budgets WHERE role = 'regress_wb_analyst';
SELECT count(*) - :charges_before AS new_charges FROM dp_agg.ledger WHERE role = 'regress_wb_analyst';

-- The work counter is for superusers (and pg_read_all_settings) only.
SET SESSION AUTHORIZATION regress_wb_analyst;
SHOW dp_agg.insecure_test_work_units;
RESET SESSION AUTHORIZATION;

SET client_min_messages = warning;
SELECT dp_agg.revoke_budget('regress_wb_analyst');
DROP SCHEMA wb CASCADE;
DROP OWNED BY regress_wb_analyst;
DROP ROLE regress_wb_analyst;
RESET client_min_messages;
