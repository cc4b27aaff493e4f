-- dp_sum(value, lower, upper, epsilon)
--
-- Tolerances: the noise is discrete Laplace with scale D / epsilon in grid
-- steps (D = max(|lower|, |upper|)), so P[|noise| >= 23 D / epsilon] <=
-- 2 e^-23 < 2.1e-10 per answer; float results add at most one grid step
-- (2^-40 of the scale).

-- result types follow sum()
SELECT pg_typeof(dp_sum(s, 0::smallint, 4::smallint, 1)) AS int2_sum,
       pg_typeof(dp_sum(x, 0, 10, 1)) AS int4_sum,
       pg_typeof(dp_sum(b, 0, 10, 1)) AS int8_sum,
       pg_typeof(dp_sum(r, 0, 1, 1)) AS float4_sum,
       pg_typeof(dp_sum(f, 0, 1, 1)) AS float8_sum,
       pg_typeof(dp_sum(n, 0, 1, 1)) AS numeric_sum
FROM numbers;
SELECT pg_typeof(sum(s)) AS int2_sum, pg_typeof(sum(x)) AS int4_sum, pg_typeof(sum(b)) AS int8_sum,
       pg_typeof(sum(r)) AS float4_sum, pg_typeof(sum(f)) AS float8_sum, pg_typeof(sum(n)) AS numeric_sum
FROM numbers;

-- accuracy at epsilon 10 for every input type (true sums: 2000, 500500, 500.5)
SELECT abs(dp_sum(s, 0::smallint, 4::smallint, 10) - 2000) <= 23 * 4 / 10.0 AS int2_ok,
       abs(dp_sum(x, 0, 1000, 10) - 500500) <= 23 * 1000 / 10.0 AS int4_ok,
       abs(dp_sum(b, 0, 1000, 10) - 500500) <= 23 * 1000 / 10.0 AS int8_ok,
       abs(dp_sum(r, 0, 1, 10) - 500.5) <= 23 * 1 / 10.0 + 0.001 AS float4_ok,
       abs(dp_sum(f, 0, 1, 10) - 500.5) <= 23 * 1 / 10.0 + 1e-9 AS float8_ok,
       abs(dp_sum(n, 0, 1, 10) - 500.5) <= 23 * 1 / 10.0 + 1e-9 AS numeric_ok
FROM numbers;

-- clamping: values above upper count as upper (unclamped sum 500500, clamped 95050)
SELECT abs(dp_sum(x, 0, 100, 10) - 95050) <= 23 * 100 / 10.0 AS clamped_high FROM numbers;
-- values below lower count as lower; negative bounds
SELECT abs(dp_sum(x, -50, -10, 10) - (-10000)) <= 23 * 50 / 10.0 AS clamped_negative FROM numbers;
SELECT abs(dp_sum(x - 500, -100, 100, 10) - sum(least(greatest(x - 500, -100), 100))) <= 23 * 100 / 10.0
  AS clamped_both FROM numbers;
SELECT abs(dp_sum(f * 1000, 100.5, 200.25, 10) - sum(least(greatest(f * 1000, 100.5), 200.25))) <= 23 * 200.25 / 10.0
  AS clamped_float FROM numbers;

-- exact accumulation: 1000 values at the bigint maximum sum far past the
-- bigint range without overflow (true sum 9223372036854775807000)
SELECT abs(dp_sum(9223372036854775807::bigint, '-9223372036854775808'::bigint, 9223372036854775807, 10)
           - 9223372036854775807000) <= 23 * 9223372036854775808 / 10.0 AS no_overflow
FROM numbers;
-- and integer sums past the int4 range give bigint answers
SELECT abs(dp_sum(2147483647, 0, 2147483647, 10) - 2147483647000) <= 23 * 2147483647::bigint / 10.0
  AS int4_no_overflow FROM numbers;

-- special values in the data never cause an error: infinities are clamped,
-- NaN is ignored (true clamped sum 1 + 0 + 0.5 = 1.5)
CREATE TABLE special_values (v float8, n numeric);
INSERT INTO special_values VALUES
  ('infinity', 'infinity'), ('-infinity', '-infinity'), ('NaN', 'NaN'), (0.5, 0.5);
SELECT abs(dp_sum(v, 0, 1, 10) - 1.5) <= 2.3 + 1e-9 AS float_special_ok,
       abs(dp_sum(n, 0, 1, 10) - 1.5) <= 2.3 + 1e-9 AS numeric_special_ok,
       abs(dp_count(v, 10) - 4) <= 3 AS nan_is_a_value_for_count
FROM special_values;
-- numeric values beyond the double range, or too small for it, are clamped
INSERT INTO special_values (n) VALUES (1e400), (-1e400), (1e-400);
SELECT abs(dp_sum(n, -1, 1, 10) - 1.5) <= 2.3 + 1e-9 AS huge_numeric_ok FROM special_values;

-- zero rows: a noisy value, never NULL, for every type
SELECT dp_sum(s, 0::smallint, 4::smallint, 1) IS NOT NULL AS int2,
       dp_sum(x, 0, 10, 1) IS NOT NULL AS int4,
       dp_sum(b, 0, 10, 1) IS NOT NULL AS int8,
       dp_sum(r, 0, 1, 1) IS NOT NULL AS float4,
       dp_sum(f, 0, 1, 1) IS NOT NULL AS float8,
       dp_sum(n, 0, 1, 1) IS NOT NULL AS numeric,
       abs(dp_sum(x, 0, 10, 10)) <= 23 AS near_zero
FROM empty_table;

-- GROUP BY: one release per group
SELECT grp, abs(dp_sum(x, 0, 1000, 10) - sum(x)) <= 2300 AS accurate
FROM numbers GROUP BY grp ORDER BY grp;

-- lower = upper = 0: nothing about the data can be learnt, and nothing is
SELECT dp_sum(x, 0, 0, 1) AS always_zero FROM numbers;

-- numeric values are read digit by digit (aggregates.cpp, NumericToDouble):
-- every value must become the same double as through the cast to double
-- precision, so that under the same test seed numeric and double sums agree
-- exactly, at every scale of the bounds (powers of two, so that the units keep
-- every bit of the doubles near the bound)
CREATE TABLE numeric_edges (id int, n numeric);
INSERT INTO numeric_edges VALUES
  (1, 0), (2, 123.45), (3, -999.99), (4, 0.1), (5, -0.3333333333333333), (6, 1e-5),
  (7, 9007199254740991), (8, 9007199254740993), (9, 1.23456789012345678901234567890),
  (10, 1e22), (11, 1e23), (12, -1e-22), (13, 1e-25), (14, 5e-324), (15, 1.7976931348623157e308),
  (16, 0.000000953674316406250000001), (17, 1024.0000000000000000000001), (18, -1048576.5),
  (19, 12345678901234567890), (20, 0.1e-3);
-- and many values whose doubles are inexact (division by powers of ten)
INSERT INTO numeric_edges SELECT 100 + k, (k * 7919) / 10.0 ^ (k % 12) FROM generate_series(1, 400) k;
CREATE FUNCTION numeric_vs_double(bound text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE numeric_sums numeric[]; double_sums float8[];
BEGIN
  -- epsilon 2^19 puts the noise grid 2^-59 below the bound: the last bit of
  -- every double near the bound shows in the answer
  SET LOCAL dp_agg.max_epsilon = 524288;
  SET LOCAL dp_agg.insecure_test_seed = 5;
  EXECUTE format('SELECT array_agg(s ORDER BY id) FROM (SELECT id, dp_sum(n, -%1$s, %1$s, 524288) s
                  FROM numeric_edges GROUP BY id) q', bound) INTO numeric_sums;
  SET LOCAL dp_agg.insecure_test_seed = 5;
  EXECUTE format('SELECT array_agg(s ORDER BY id) FROM (SELECT id, dp_sum(n::float8, -%1$s::float8, %1$s::float8, 524288) s
                  FROM numeric_edges GROUP BY id) q', bound) INTO double_sums;
  -- numeric answers are rounded to the decimal places their noise leaves
  -- meaningful (docs/privacy_guarantees.md "Secure noise"): each must be the double answer
  -- rounded to its scale (within half its last place, plus the shortest
  -- decimal's error of the double). This no longer sees the last bit of a
  -- double near the bound through the numeric output.
  RETURN bool_and(abs(ns - ds::text::numeric) <= 0.5 * 10::numeric ^ (-scale(ns))
                                                  + abs(ds::numeric) * 1e-15)
         FROM unnest(numeric_sums, double_sums) u(ns, ds);
END $$;
-- (a superuser of its own, whose budget pays for the large epsilons; the
-- test seed needs a superuser session)
DROP ROLE IF EXISTS regress_dp_numeric_check;
CREATE ROLE regress_dp_numeric_check SUPERUSER;
SELECT true AS done FROM dp_agg.set_budget('regress_dp_numeric_check', 2 * 12 * 524288, 0.5);
SET SESSION AUTHORIZATION regress_dp_numeric_check;
SELECT b AS bound, numeric_vs_double(b) AS same
FROM unnest(ARRAY['0.000000007450580596923828125', '0.00000095367431640625', '0.0001220703125',
                  '0.015625', '1', '2', '256', '1024', '32768', '4194304', '1125899906842624',
                  '1267650600228229401496703205376']) b;
RESET SESSION AUTHORIZATION;
DROP ROLE regress_dp_numeric_check;
-- beyond the double range: like +-infinity (clamped); below it: like zero
SET dp_agg.insecure_test_seed = 6;
SELECT dp_sum(n, -1, 1, 1)::float8 AS s FROM (VALUES (1e400), (-1e401), (1e-400), (-1e-400)) v(n) \gset huge_
SET dp_agg.insecure_test_seed = 6;
SELECT round(dp_sum(f, -1, 1, 1)::numeric, 1) = :huge_s AS huge_like_infinity
FROM (VALUES ('infinity'::float8), ('-infinity'), (0), (0)) v(f);
RESET dp_agg.insecure_test_seed;
