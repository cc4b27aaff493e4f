-- ===========================================================================
-- dp_percentile(value, fraction, lower, upper, epsilon) and
-- dp_median(value, lower, upper, epsilon): Smith's exponential mechanism
-- (2011) over the fixed-point lattice between the public bounds, sampled
-- exactly, utility sensitivity max(f, 1 - f). The state keeps every row (8
-- bytes each, like percentile_cont); the answer always lies in
-- [lower, upper], also on empty input.
-- ===========================================================================
CREATE TYPE dp_agg.quantile_state;
CREATE FUNCTION dp_agg.quantile_state_in(cstring) RETURNS dp_agg.quantile_state
  AS 'MODULE_PATHNAME', 'dp_quantile_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.quantile_state_out(dp_agg.quantile_state) RETURNS cstring
  AS 'MODULE_PATHNAME', 'dp_quantile_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE dp_agg.quantile_state (
  INPUT = dp_agg.quantile_state_in, OUTPUT = dp_agg.quantile_state_out,
  INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = plain
);
CREATE FUNCTION dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8, float8)
  RETURNS dp_agg.quantile_state AS 'MODULE_PATHNAME', 'dp_quantile_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8)
  RETURNS dp_agg.quantile_state AS 'MODULE_PATHNAME', 'dp_quantile_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.quantile_combine(dp_agg.quantile_state, dp_agg.quantile_state)
  RETURNS dp_agg.quantile_state AS 'MODULE_PATHNAME', 'dp_quantile_combine'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.quantile_final(dp_agg.quantile_state) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_quantile_final' LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE AGGREGATE dp_percentile(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.quantile_transfn, STYPE = dp_agg.quantile_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.quantile_final, COMBINEFUNC = dp_agg.quantile_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_median(float8, float8, float8, float8) (
  SFUNC = dp_agg.quantile_transfn, STYPE = dp_agg.quantile_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.quantile_final, COMBINEFUNC = dp_agg.quantile_combine, PARALLEL = SAFE
);

COMMENT ON TYPE dp_agg.quantile_state IS
  'Transition state of dp_percentile and dp_median (every row''s exact value: never shown to analysts)';
COMMENT ON AGGREGATE dp_percentile(float8, float8, float8, float8, float8) IS
  'dp_percentile(value, fraction, lower, upper, epsilon): epsilon-DP quantile by Smith''s exponential mechanism over [lower, upper] (no grid floor; keeps the group''s rows)';
COMMENT ON AGGREGATE dp_median(float8, float8, float8, float8) IS
  'dp_median(value, lower, upper, epsilon): epsilon-DP median by Smith''s exponential mechanism over [lower, upper] (no grid floor; keeps the group''s rows)';
