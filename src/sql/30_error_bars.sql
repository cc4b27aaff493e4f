-- ===========================================================================
-- Error bars, at no privacy cost.
--  * dp_count_margin / dp_sum_margin: the half-width of a confidence interval
--    for dp_count / dp_sum, from the public parameters alone.
--  * dp_count_interval / dp_sum_interval / dp_avg_interval: the same single
--    release as dp_count / dp_sum / dp_avg (same cost), returned with its
--    interval as a dp_agg.estimate (value, low, high, confidence). Read the
--    fields from a subquery so that the aggregate is computed once:
--      SELECT (e).value, (e).low, (e).high
--      FROM (SELECT dp_avg_interval(age, 0, 110, 0.5, 0.95) AS e FROM patients) q;
-- ===========================================================================
CREATE TYPE dp_agg.estimate AS (
  value double precision, low double precision, high double precision,
  confidence double precision
);

CREATE FUNCTION dp_count_margin(epsilon float8, delta float8 DEFAULT 0,
                                confidence float8 DEFAULT 0.95) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_count_margin' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_sum_margin(lower float8, upper float8, epsilon float8, delta float8 DEFAULT 0,
                              confidence float8 DEFAULT 0.95) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_sum_margin' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION dp_agg.count_interval_final(dp_agg.aggregate_state) RETURNS dp_agg.estimate
  AS 'MODULE_PATHNAME', 'dp_count_interval_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.sum_interval_final(dp_agg.aggregate_state) RETURNS dp_agg.estimate
  AS 'MODULE_PATHNAME', 'dp_sum_interval_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.avg_interval_final(dp_agg.aggregate_state) RETURNS dp_agg.estimate
  AS 'MODULE_PATHNAME', 'dp_avg_interval_final' LANGUAGE C VOLATILE PARALLEL SAFE;

-- (value, epsilon, confidence) and (value, epsilon, delta, confidence); sums
-- and means of numeric values read their digits as dp_sum(numeric) and
-- dp_avg(numeric) do (numeric bounds rounded inward), of the other number
-- types through double precision.
CREATE AGGREGATE dp_count_interval(anyelement, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_count_interval(anyelement, float8, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum_interval(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum_interval(float8, float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg_interval(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg_interval(float8, float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

-- The numeric forms: no cast to double precision per row (issue 31).
CREATE AGGREGATE dp_sum_interval(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum_interval(numeric, numeric, numeric, float8, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg_interval(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg_interval(numeric, numeric, numeric, float8, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

COMMENT ON TYPE dp_agg.estimate IS
  'A noisy release with its confidence interval: value, low, high, confidence';
COMMENT ON FUNCTION dp_count_margin(float8, float8, float8) IS
  'dp_count_margin(epsilon, delta, confidence): half-width of the confidence interval of dp_count, from public parameters only (no privacy cost)';
COMMENT ON FUNCTION dp_sum_margin(float8, float8, float8, float8, float8) IS
  'dp_sum_margin(lower, upper, epsilon, delta, confidence): half-width of the confidence interval of dp_sum, from public parameters only (no privacy cost)';
COMMENT ON AGGREGATE dp_count_interval(anyelement, float8, float8) IS
  'dp_count_interval(value, epsilon, confidence): dp_count with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_count_interval(anyelement, float8, float8, float8) IS
  'dp_count_interval(value, epsilon, delta, confidence): dp_count with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_sum_interval(float8, float8, float8, float8, float8) IS
  'dp_sum_interval(value, lower, upper, epsilon, confidence): dp_sum with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_sum_interval(float8, float8, float8, float8, float8, float8) IS
  'dp_sum_interval(value, lower, upper, epsilon, delta, confidence): dp_sum with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_avg_interval(float8, float8, float8, float8, float8) IS
  'dp_avg_interval(value, lower, upper, epsilon, confidence): dp_avg with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_avg_interval(float8, float8, float8, float8, float8, float8) IS
  'dp_avg_interval(value, lower, upper, epsilon, delta, confidence): dp_avg with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_sum_interval(numeric, numeric, numeric, float8, float8) IS
  'dp_sum_interval(value, lower, upper, epsilon, confidence): dp_sum with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_sum_interval(numeric, numeric, numeric, float8, float8, float8) IS
  'dp_sum_interval(value, lower, upper, epsilon, delta, confidence): dp_sum with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_avg_interval(numeric, numeric, numeric, float8, float8) IS
  'dp_avg_interval(value, lower, upper, epsilon, confidence): dp_avg with its confidence interval (same single release and cost)';
COMMENT ON AGGREGATE dp_avg_interval(numeric, numeric, numeric, float8, float8, float8) IS
  'dp_avg_interval(value, lower, upper, epsilon, delta, confidence): dp_avg with its confidence interval (same single release and cost)';
