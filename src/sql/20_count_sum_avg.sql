
-- dp_count(value, epsilon): noisy number of non-NULL values. To count rows,
-- count a NOT NULL column or a constant: dp_count(1, 0.5).
CREATE AGGREGATE dp_count(anyelement, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

-- dp_sum(value, lower, upper, epsilon): noisy sum of values clamped to
-- [lower, upper]. Result types follow sum().
CREATE AGGREGATE dp_sum(smallint, smallint, smallint, float8) (
  SFUNC = dp_agg.int2_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_int8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(integer, integer, integer, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_int8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(bigint, bigint, bigint, float8) (
  SFUNC = dp_agg.int8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(real, real, real, float8) (
  SFUNC = dp_agg.float4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_float4, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(numeric, numeric, numeric, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

-- dp_avg(value, lower, upper, epsilon): noisy mean of values clamped to
-- [lower, upper]; always within [lower, upper]. Result types follow avg().
CREATE AGGREGATE dp_avg(smallint, smallint, smallint, float8) (
  SFUNC = dp_agg.int2_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(integer, integer, integer, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(bigint, bigint, bigint, float8) (
  SFUNC = dp_agg.int8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(real, real, real, float8) (
  SFUNC = dp_agg.float4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(numeric, numeric, numeric, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);


CREATE AGGREGATE dp_count(anyelement, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(smallint, smallint, smallint, float8, float8) (
  SFUNC = dp_agg.int2_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_int8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(smallint, smallint, smallint, float8, float8) (
  SFUNC = dp_agg.int2_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(integer, integer, integer, float8, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_int8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(integer, integer, integer, float8, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(bigint, bigint, bigint, float8, float8) (
  SFUNC = dp_agg.int8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(bigint, bigint, bigint, float8, float8) (
  SFUNC = dp_agg.int8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(real, real, real, float8, float8) (
  SFUNC = dp_agg.float4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_float4, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(real, real, real, float8, float8) (
  SFUNC = dp_agg.float4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

COMMENT ON AGGREGATE dp_count(anyelement, float8) IS
  'dp_count(value, epsilon): epsilon-DP noisy count of non-NULL values, charged to the session user''s budget';
COMMENT ON AGGREGATE dp_count(anyelement, float8, float8) IS
  'dp_count(value, epsilon, delta): (epsilon, delta)-DP count of non-NULL values (discrete Gaussian noise)';
COMMENT ON AGGREGATE dp_sum(smallint, smallint, smallint, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(integer, integer, integer, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(bigint, bigint, bigint, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(real, real, real, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(float8, float8, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(numeric, numeric, numeric, float8) IS
  'dp_sum(value, lower, upper, epsilon): epsilon-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(smallint, smallint, smallint, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(integer, integer, integer, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(bigint, bigint, bigint, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(real, real, real, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(float8, float8, float8, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_sum(numeric, numeric, numeric, float8, float8) IS
  'dp_sum(value, lower, upper, epsilon, delta): (epsilon, delta)-DP sum of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(smallint, smallint, smallint, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(integer, integer, integer, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(bigint, bigint, bigint, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(real, real, real, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(float8, float8, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(numeric, numeric, numeric, float8) IS
  'dp_avg(value, lower, upper, epsilon): epsilon-DP mean of values clamped to [lower, upper], always within them';
COMMENT ON AGGREGATE dp_avg(smallint, smallint, smallint, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(integer, integer, integer, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(bigint, bigint, bigint, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(real, real, real, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(float8, float8, float8, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';
COMMENT ON AGGREGATE dp_avg(numeric, numeric, numeric, float8, float8) IS
  'dp_avg(value, lower, upper, epsilon, delta): (epsilon, delta)-DP mean of values clamped to [lower, upper]';

-- dp_count(epsilon): noisy number of rows, read like count(*). dp_agg's
-- planner hook writes every call as dp_count(true, epsilon) before it judges
-- or plans the query (row_count.cpp), so this aggregate is charged, bounded
-- and rewritten (privacy units, Citus) exactly as dp_count(1, epsilon); its
-- own support function only refuses, in case a call ever reached it.
CREATE FUNCTION dp_agg.count_rows_transfn(dp_agg.aggregate_state, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_count_rows_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE AGGREGATE dp_count(float8) (
  SFUNC = dp_agg.count_rows_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
COMMENT ON AGGREGATE dp_count(float8) IS
  'dp_count(epsilon): noisy number of rows, like count(*); run as dp_count(true, epsilon)';
