-- Properties of the released values: the binary grid, the noise
-- distribution, exactness of the accumulation, and the catalog markings.

-- 3000 groups of the same 10 rows: one query gives 3000 independent releases
-- (each group is its own release).
CREATE TABLE ten_rows AS
SELECT i, g AS x, (g / 10.0)::float8 AS f, (g / 10.0)::real AS r, (g / 10.0)::numeric AS n
FROM generate_series(1, 3000) i, generate_series(1, 10) g;

-- 1. Every float and numeric answer is an exact multiple of the mechanism's
-- power-of-two grid. For bounds [0, 1] the sum is kept in units of 2^-61,
-- the sensitivity is 2^61 units, and at epsilon 1 the grid step is
-- 2^21 units = 2^-40: every answer times 2^40 is an integer. Checked on 200
-- answers of each type (certain, not probabilistic).
SELECT bool_and(v * 2^40 = trunc(v * 2^40)) AS float8_on_grid,
       count(DISTINCT v) > 1 AS noisy
FROM (SELECT i, dp_sum(f, 0, 1, 1) AS v FROM ten_rows WHERE i <= 200 GROUP BY i) q;
SELECT bool_and(v::float8 * 2^40 = trunc(v::float8 * 2^40)) AS float4_on_grid
FROM (SELECT i, dp_sum(r, 0, 1, 1) AS v FROM ten_rows WHERE i <= 200 GROUP BY i) q;
-- numeric answers are that grid value rounded (exact decimal arithmetic) to
-- the decimal places its noise leaves meaningful, down to
-- 10^floor(log10(stddev / 10)): Laplace noise of scale 1/epsilon has stddev
-- sqrt(2)/epsilon, so 1 decimal place at epsilon 1 and 2 at epsilon 10
-- (certain: numeric_round pads to exactly that scale)
SELECT bool_and(scale(v) = 1) AS numeric_one_place, count(DISTINCT v) > 1 AS noisy
FROM (SELECT i, dp_sum(n, 0, 1, 1) AS v FROM ten_rows WHERE i <= 200 GROUP BY i) q;
SELECT bool_and(scale(v) = 2) AS numeric_two_places
FROM (SELECT i, dp_sum(n, 0, 1, 10) AS v FROM ten_rows WHERE i <= 200 GROUP BY i) q;
-- a numeric mean too (about 3 places here, instead of the 40-odd of the
-- exact binary expansion of a double)
SELECT bool_and(scale(v) BETWEEN 1 AND 6) AS numeric_mean_rounded
FROM (SELECT i, dp_avg(n, 0, 1, 10) AS v FROM ten_rows WHERE i <= 200 GROUP BY i) q;
-- with bounds [0, 1000] the units are 2^-52 and the grid step 2^22 units =
-- 2^-30; a true sum that is not on the grid is rounded to it first
SELECT bool_and(v * 2^30 = trunc(v * 2^30)) AS coarser_grid
FROM (SELECT i, dp_sum(f * 0.1, 0, 1000, 1) AS v FROM ten_rows WHERE i <= 200 GROUP BY i) q;
-- integer answers are integers of the true count plus integer noise
SELECT bool_and(v = trunc(v)) AS integer_answers
FROM (SELECT i, dp_sum(x, 0, 10, 1)::numeric AS v FROM ten_rows WHERE i <= 200 GROUP BY i) q;

-- 2. The noise of dp_count at epsilon 1 is discrete Laplace with q = e^-1:
-- P[noise = 0] = (1 - q) / (1 + q) = 0.4621 and P[noise > 0] = q / (1 + q)
-- = 0.2689. Over 3000 answers, Hoeffding's bound puts each observed
-- frequency within sqrt(ln(2e9) / 6000) = 0.0597 of its probability with
-- probability 1 - 1e-9. This catches a doubled P[0] (0.92), epsilon 2
-- (0.76) or 0.5 (0.245), a biased sign, and missing noise.
WITH draws AS (SELECT i, dp_count(x, 1) - 10 AS noise FROM ten_rows GROUP BY i)
SELECT abs(avg((noise = 0)::int) - 0.4621) < 0.0597 AS zero_frequency_ok,
       abs(avg((noise > 0)::int) - 0.2689) < 0.0597 AS positive_frequency_ok,
       abs(avg((noise < 0)::int) - 0.2689) < 0.0597 AS negative_frequency_ok
FROM draws;

-- 3. Every call draws fresh noise: 50 answers at epsilon 1 that were all
-- equal would happen with probability below 0.47^49 < 1e-16.
SELECT count(DISTINCT v) > 1 AS fresh_noise
FROM (SELECT i, dp_count(x, 1) AS v FROM ten_rows WHERE i <= 50 GROUP BY i) q;

-- 4. The accumulation is exact and order-independent: with the superuser-only
-- test generator the noise sequence is fixed, so equal answers mean equal true
-- sums. Sorting the input differently must not change a float sum.
SET dp_agg.insecure_test_seed = 4242;
SELECT dp_sum(f, 0, 1, 1) AS ascending FROM (SELECT f FROM numbers ORDER BY f) q \gset
SET dp_agg.insecure_test_seed = 4242;
SELECT dp_sum(f, 0, 1, 1) AS descending FROM (SELECT f FROM numbers ORDER BY f DESC) q \gset
SELECT :ascending = :descending AS order_independent;
-- and the seed really fixes the answer; reset, it no longer does
SET dp_agg.insecure_test_seed = 4242;
SELECT dp_avg(f, 0, 1, 1) AS first FROM numbers \gset
SET dp_agg.insecure_test_seed = 4242;
SELECT dp_avg(f, 0, 1, 1) = :first AS seeded_reproducible FROM numbers;
RESET dp_agg.insecure_test_seed;
SELECT count(DISTINCT v) > 1 AS secure_noise_again
FROM (SELECT i, dp_avg(f, 0, 1, 1) AS v FROM ten_rows WHERE i <= 20 GROUP BY i) q;

-- 5. Catalog markings: the support functions of every private aggregate are
-- VOLATILE and PARALLEL SAFE; every private aggregate is marked VOLATILE,
-- has a combine function and a real (not pseudo) state type. (The privacy
-- unit rewrite's dp_agg.unit_sum is not private: a plain sum of one unit's
-- rows whose additions never raise, with IMMUTABLE support functions; nor are
-- dp_rr_proportion and dp_rr_proportion_se: deterministic estimates over
-- answers randomized when they were collected, which add no noise.)
SELECT DISTINCT p.oid::regprocedure AS support_function, p.provolatile, p.proparallel
FROM pg_aggregate a
JOIN pg_proc p ON p.oid IN (a.aggtransfn, a.aggfinalfn, a.aggcombinefn)
WHERE a.aggtransfn::regproc::text LIKE 'dp_agg.%'
  AND a.aggfnoid::regproc::text NOT IN ('dp_agg.unit_sum', 'dp_rr_proportion', 'dp_rr_proportion_se')
  AND (p.provolatile <> 'v' OR p.proparallel <> 's');
SELECT ap.proname AS aggregate, count(*) AS signatures,
       bool_and(ap.provolatile = 'v') AS volatile,
       bool_and(a.aggcombinefn <> 0) AS has_combine,
       bool_and(t.typtype = 'b') AS real_state_type
FROM pg_aggregate a JOIN pg_proc ap ON ap.oid = a.aggfnoid JOIN pg_type t ON t.oid = a.aggtranstype
WHERE a.aggtransfn::regproc::text LIKE 'dp_agg.%'
  AND a.aggfnoid::regproc::text NOT IN ('dp_agg.unit_sum', 'dp_rr_proportion', 'dp_rr_proportion_se')
GROUP BY ap.proname ORDER BY ap.proname;

-- 6. The state's text form round-trips (Citus moves partial states as text)
SELECT 'v1 kind=2 count=3 sum=-170141183460469231731687303715884105728 epsilon=0x1p-1 lower=-0x1p+0 upper=0x1.8p+1 lower_units=-1 upper_units=3 unit_exponent=-61 delta=0x1p-20 confidence=0x0p+0'::dp_agg.aggregate_state;
SELECT 'uninitialized'::dp_agg.aggregate_state;
SELECT 'v1 kind=2 count=x'::dp_agg.aggregate_state;
