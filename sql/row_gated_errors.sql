-- Errors gated on one row: an error that fires only when a row reaches it
-- must not tell a restricted analyst whether the row exists. Each case runs one query twice as a restricted analyst: once gated (CASE)
-- on a row that exists or has one value, once on a row that is absent or
-- has another value. Secure means the two outcomes (ran / raised) are the
-- same: a refusal for both or a value for both. An outcome that differs is
-- the one-row oracle of the threat model. Only outcomes are printed, so the
-- expected output holds whether a case is refused or answered (NULL).
-- Found by: the adversarial review of issue 13's SQL surface.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS row_gated CASCADE;
DROP ROLE IF EXISTS regress_dp_row_gated;
RESET client_min_messages;

CREATE SCHEMA row_gated;
-- 300 rows, one a day from 2024-01-02 (UTC): ids up to 88 fall before the
-- last Sunday of March 2024, ids 150..300 after it.
CREATE TABLE row_gated.p (id int PRIMARY KEY, tz timestamptz NOT NULL, d date NOT NULL);
INSERT INTO row_gated.p
SELECT g, timestamptz '2024-01-01 00:00+00' + g * interval '1 day', date '2024-01-01' + g
FROM generate_series(1, 300) g;
-- The helper only reports whether the analyst's statement raised (it runs
-- with the caller's rights; the statement is judged as the analyst's own).
CREATE FUNCTION row_gated.outcome(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE statement;
  RETURN 'ran';
EXCEPTION WHEN OTHERS THEN
  RETURN 'raised';
END $$;
CREATE ROLE regress_dp_row_gated LOGIN;
GRANT USAGE ON SCHEMA row_gated TO regress_dp_row_gated;
GRANT EXECUTE ON FUNCTION row_gated.outcome(text) TO regress_dp_row_gated;
SELECT dp_agg.protect_table('row_gated.p');
SELECT dp_agg.restrict_role('regress_dp_row_gated');
SELECT dp_agg.set_budget('regress_dp_row_gated', 1000, 0.01);
SET SESSION AUTHORIZATION regress_dp_row_gated;

-- to_char(timestamptz, format) with TZ/tz raises "time zone format
-- value too long" when the time zone abbreviation is longer than 24 bytes
-- (DCH_to_char, since PostgreSQL 15.x), and TimeZone is the analyst's to SET
-- (a POSIX zone names its own abbreviations). Behind a CASE the error says
-- whether one row exists.
SET TimeZone = '<AAAAAAAAAAAAAAAAAAAAAAAAA>0';
SELECT row_gated.outcome($q$SELECT dp_count(1.0) FROM row_gated.p
         WHERE CASE WHEN id = 10 THEN to_char(tz, 'YYYY TZ') END IS NOT NULL$q$)
     = row_gated.outcome($q$SELECT dp_count(1.0) FROM row_gated.p
         WHERE CASE WHEN id = 1000 THEN to_char(tz, 'YYYY TZ') END IS NOT NULL$q$)
       AS tz_existence_same_outcome;
-- to_char(date, format) resolves to to_char(timestamptz, text): the same.
SELECT row_gated.outcome($q$SELECT dp_count(1.0) FROM row_gated.p
         WHERE CASE WHEN id = 10 THEN to_char(d, 'tz') END IS NOT NULL$q$)
     = row_gated.outcome($q$SELECT dp_count(1.0) FROM row_gated.p
         WHERE CASE WHEN id = 1000 THEN to_char(d, 'tz') END IS NOT NULL$q$)
       AS tz_date_existence_same_outcome;
-- With a short standard and a long daylight-saving abbreviation, the error
-- depends on the row's value (summer or winter), without any CASE: whether
-- any protected row falls in summer.
SET TimeZone = 'AAA5BBBBBBBBBBBBBBBBBBBBBBBBB,M3.5.0,M10.5.0';
SELECT row_gated.outcome($q$SELECT dp_count(1.0) FROM row_gated.p
         WHERE CASE WHEN id = 10 THEN to_char(tz, 'TZ') END IS NOT NULL$q$)
     = row_gated.outcome($q$SELECT dp_count(1.0) FROM row_gated.p
         WHERE CASE WHEN id = 150 THEN to_char(tz, 'TZ') END IS NOT NULL$q$)
       AS tz_value_same_outcome;
SELECT row_gated.outcome($q$SELECT dp_count(1.0) FROM row_gated.p
         WHERE id < 60 AND to_char(tz, 'TZ') IS NOT NULL$q$)
     = row_gated.outcome($q$SELECT dp_count(1.0) FROM row_gated.p
         WHERE id > 200 AND to_char(tz, 'TZ') IS NOT NULL$q$)
       AS tz_any_summer_row_same_outcome;
RESET TimeZone;

-- The same through a generic plan made under a short abbreviation and run
-- after SET TimeZone: a fix at judgement alone (refusing TZ only when the
-- session's abbreviations are long) would not hold.
SET plan_cache_mode = force_generic_plan;
PREPARE tz_present AS SELECT dp_count(1.0) FROM row_gated.p
  WHERE CASE WHEN id = 10 THEN to_char(tz, 'YYYY TZ') END IS NOT NULL;
PREPARE tz_absent AS SELECT dp_count(1.0) FROM row_gated.p
  WHERE CASE WHEN id = 1000 THEN to_char(tz, 'YYYY TZ') END IS NOT NULL;
SET TimeZone = '<AAAAAAAAAAAAAAAAAAAAAAAAA>0';
SELECT row_gated.outcome('EXECUTE tz_present') = row_gated.outcome('EXECUTE tz_absent')
       AS generic_plan_same_outcome;
RESET TimeZone;
DEALLOCATE tz_present;
DEALLOCATE tz_absent;
RESET plan_cache_mode;

RESET SESSION AUTHORIZATION;
SELECT dp_agg.revoke_budget('regress_dp_row_gated');
DROP SCHEMA row_gated CASCADE;
DROP ROLE regress_dp_row_gated;
