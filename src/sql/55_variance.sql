-- ===========================================================================
-- dp_variance(value, lower, upper, epsilon [, delta]) and dp_stddev(...):
-- population variance (and its square root) of values clamped to
-- [lower, upper], from a noisy count, a noisy sum and a noisy sum of squares
-- of the values re-centred at the midpoint of the bounds, a third of the
-- budget each (Google's BoundedVariance; core/variance.h states the
-- estimator and its error). Always within [0, ((upper - lower) / 2)^2]
-- (dp_stddev: [0, (upper - lower) / 2]), also on empty input. Result types
-- follow var_pop() / stddev_pop(). With delta: discrete Gaussian noise,
-- charged as zCDP its rho.
-- ===========================================================================
CREATE TYPE dp_agg.variance_state;
CREATE FUNCTION dp_agg.variance_state_in(cstring) RETURNS dp_agg.variance_state
  AS 'MODULE_PATHNAME', 'dp_variance_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_state_out(dp_agg.variance_state) RETURNS cstring
  AS 'MODULE_PATHNAME', 'dp_variance_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE dp_agg.variance_state (
  INPUT = dp_agg.variance_state_in, OUTPUT = dp_agg.variance_state_out,
  INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = plain
);

CREATE FUNCTION dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int2_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int2_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_int8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_float4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_float4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_float8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_float8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_numeric_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8, float8)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_numeric_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_combine(dp_agg.variance_state, dp_agg.variance_state)
  RETURNS dp_agg.variance_state AS 'MODULE_PATHNAME', 'dp_variance_combine'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_final_float8(dp_agg.variance_state) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_variance_final_float8' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.variance_final_numeric(dp_agg.variance_state) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_variance_final_numeric' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.stddev_final_float8(dp_agg.variance_state) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_stddev_final_float8' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.stddev_final_numeric(dp_agg.variance_state) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_stddev_final_numeric' LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE AGGREGATE dp_variance(smallint, smallint, smallint, float8) (
  SFUNC = dp_agg.variance_int2_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(smallint, smallint, smallint, float8, float8) (
  SFUNC = dp_agg.variance_int2_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(integer, integer, integer, float8) (
  SFUNC = dp_agg.variance_int4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(integer, integer, integer, float8, float8) (
  SFUNC = dp_agg.variance_int4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(bigint, bigint, bigint, float8) (
  SFUNC = dp_agg.variance_int8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(bigint, bigint, bigint, float8, float8) (
  SFUNC = dp_agg.variance_int8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(real, real, real, float8) (
  SFUNC = dp_agg.variance_float4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(real, real, real, float8, float8) (
  SFUNC = dp_agg.variance_float4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(float8, float8, float8, float8) (
  SFUNC = dp_agg.variance_float8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.variance_float8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(numeric, numeric, numeric, float8) (
  SFUNC = dp_agg.variance_numeric_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_variance(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.variance_numeric_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.variance_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(smallint, smallint, smallint, float8) (
  SFUNC = dp_agg.variance_int2_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(smallint, smallint, smallint, float8, float8) (
  SFUNC = dp_agg.variance_int2_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(integer, integer, integer, float8) (
  SFUNC = dp_agg.variance_int4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(integer, integer, integer, float8, float8) (
  SFUNC = dp_agg.variance_int4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(bigint, bigint, bigint, float8) (
  SFUNC = dp_agg.variance_int8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(bigint, bigint, bigint, float8, float8) (
  SFUNC = dp_agg.variance_int8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(real, real, real, float8) (
  SFUNC = dp_agg.variance_float4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(real, real, real, float8, float8) (
  SFUNC = dp_agg.variance_float4_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(float8, float8, float8, float8) (
  SFUNC = dp_agg.variance_float8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.variance_float8_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_float8, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(numeric, numeric, numeric, float8) (
  SFUNC = dp_agg.variance_numeric_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_stddev(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.variance_numeric_transfn, STYPE = dp_agg.variance_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.stddev_final_numeric, COMBINEFUNC = dp_agg.variance_combine, PARALLEL = SAFE
);

COMMENT ON TYPE dp_agg.variance_state IS
  'Transition state of dp_variance and dp_stddev (exact partial sums: never shown to analysts)';
COMMENT ON AGGREGATE dp_variance(smallint, smallint, smallint, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(smallint, smallint, smallint, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(integer, integer, integer, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(integer, integer, integer, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(bigint, bigint, bigint, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(bigint, bigint, bigint, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(real, real, real, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(real, real, real, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(float8, float8, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(float8, float8, float8, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(numeric, numeric, numeric, float8) IS
  'dp_variance(value, lower, upper, epsilon): epsilon-DP population variance of values clamped to [lower, upper], within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_variance(numeric, numeric, numeric, float8, float8) IS
  'dp_variance(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population variance of values clamped to [lower, upper] (discrete Gaussian), within [0, ((upper - lower) / 2)^2]';
COMMENT ON AGGREGATE dp_stddev(smallint, smallint, smallint, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(smallint, smallint, smallint, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(integer, integer, integer, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(integer, integer, integer, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(bigint, bigint, bigint, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(bigint, bigint, bigint, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(real, real, real, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(real, real, real, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(float8, float8, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(float8, float8, float8, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(numeric, numeric, numeric, float8) IS
  'dp_stddev(value, lower, upper, epsilon): epsilon-DP population standard deviation of values clamped to [lower, upper], within [0, (upper - lower) / 2]';
COMMENT ON AGGREGATE dp_stddev(numeric, numeric, numeric, float8, float8) IS
  'dp_stddev(value, lower, upper, epsilon, delta): (epsilon, delta)-DP population standard deviation of values clamped to [lower, upper] (discrete Gaussian), within [0, (upper - lower) / 2]';

-- Comments for the support functions (granted in 90_privileges.sql).
COMMENT ON FUNCTION dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_combine(dp_agg.variance_state, dp_agg.variance_state) IS
  'Support function of dp_agg''s aggregates (combine function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_final_float8(dp_agg.variance_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.variance_final_numeric(dp_agg.variance_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.stddev_final_float8(dp_agg.variance_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.stddev_final_numeric(dp_agg.variance_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
