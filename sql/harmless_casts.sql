-- Casts between booleans and numbers on protected rows (issue 29, review
-- 2): a cast that cannot raise for any value is admitted (flag::int, the
-- widening integer and float casts, numbers to numeric, int to bool); a cast
-- that can raise is refused (42501) unless dp_agg puts a total version in
-- its place (narrowing casts, numeric to float: NULL where the built-in
-- raises). The census below runs every cast PostgreSQL has between these
-- types, as a restricted analyst writes it, in an aggregate's value and in
-- its FILTER, on rows at the ends of each type's range.
\set VERBOSITY terse
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_dp_cast_analyst;
DROP SCHEMA IF EXISTS hc CASCADE;
RESET client_min_messages;
CREATE ROLE regress_dp_cast_analyst;
SELECT dp_agg.restrict_role('regress_dp_cast_analyst');
SELECT dp_agg.set_budget('regress_dp_cast_analyst', 100000, 0.1);
CREATE SCHEMA hc;
GRANT USAGE ON SCHEMA hc TO regress_dp_cast_analyst;
CREATE TABLE hc.t (b bool, s int2, i int4, l int8, r float4, d float8, n numeric);
INSERT INTO hc.t SELECT g % 3 = 0, g % 100, g, g, g, g, g FROM generate_series(1, 1000) g;
INSERT INTO hc.t VALUES
  (true, 32767, 2147483647, 9223372036854775807, 'Infinity', 'Infinity', 'Infinity'),
  (false, -32768, -2147483648, -9223372036854775808, '-Infinity', '-Infinity', '-Infinity'),
  (NULL, NULL, NULL, NULL, 'NaN', 'NaN', 'NaN'),
  (true, 1, 1, 1, 3.4e38, 1.7e308, 1e300);
SELECT dp_agg.protect_table('hc.t');

SET SESSION AUTHORIZATION regress_dp_cast_analyst;
-- What analysts write: count or sum a condition. 335 rows are true and
-- 1003 have a nonzero i; each noisy answer below is within 25 of its true
-- value except with probability < 1e-10 (discrete Laplace, epsilon 1,
-- sensitivity 1).
SELECT abs(dp_sum(b::int, 0, 1, 1.0) - 335) < 25 AS sum_of_flag,
       abs(dp_count(1.0) FILTER (WHERE b::int = 1) - 335) < 25 AS count_of_flag,
       abs(dp_sum(b::int::float8, 0, 1, 1.0) - 335) < 25 AS sum_of_flag_as_float
FROM hc.t;
SELECT abs(dp_count(1.0) FILTER (WHERE i::bool) - 1003) < 25 AS count_of_nonzero FROM hc.t;
-- The census: each cast in a sum's value and in a count's FILTER; "admitted"
-- is true when both ran (a noisy answer, never NULL), an error otherwise.
SELECT format('SELECT %L AS cast, dp_count(10.0) FILTER (WHERE (%s::%s) IS NOT NULL) '
              '> -1e9 AND dp_sum(CASE WHEN (%s::%s) IS NULL THEN 0 ELSE 1 END, 0, 1, 10.0) '
              '> -1e9 AS admitted FROM hc.t',
              format('%s -> %s', format_type(c.castsource, NULL), format_type(c.casttarget, NULL)),
              col, format_type(c.casttarget, NULL), col, format_type(c.casttarget, NULL))
FROM pg_cast c
JOIN (VALUES ('bool'::regtype, 'b'), ('int2', 's'), ('int4', 'i'), ('int8', 'l'),
             ('float4', 'r'), ('float8', 'd'), ('numeric', 'n')) v(type, col)
  ON v.type = c.castsource
WHERE c.casttarget = ANY('{bool,int2,int4,int8,float4,float8,numeric}'::regtype[])
  AND c.castsource <> c.casttarget
ORDER BY c.castsource, c.casttarget
\gexec
RESET SESSION AUTHORIZATION;

SET client_min_messages = warning;
DROP SCHEMA hc CASCADE;
SELECT dp_agg.revoke_budget('regress_dp_cast_analyst');
DROP ROLE regress_dp_cast_analyst;
RESET client_min_messages;
