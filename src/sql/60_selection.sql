-- ===========================================================================
-- dp_select(value, candidates, epsilon): the private mode among candidates
-- given in the query; dp_select(value, weight, lower, upper, candidates,
-- epsilon): the candidate with the largest total of clamped weights.
-- Permute-and-flip, sampled exactly; any type with an equality operator.
-- ===========================================================================
CREATE TYPE dp_agg.selection_state;
CREATE FUNCTION dp_agg.selection_state_in(cstring) RETURNS dp_agg.selection_state
  AS 'MODULE_PATHNAME', 'dp_selection_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.selection_state_out(dp_agg.selection_state) RETURNS cstring
  AS 'MODULE_PATHNAME', 'dp_selection_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE dp_agg.selection_state (
  INPUT = dp_agg.selection_state_in, OUTPUT = dp_agg.selection_state_out,
  INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = plain
);
CREATE FUNCTION dp_agg.select_transfn(dp_agg.selection_state, anyelement, anyarray, float8)
  RETURNS dp_agg.selection_state AS 'MODULE_PATHNAME', 'dp_select_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.select_transfn(dp_agg.selection_state, anyelement, float8, float8, float8,
                                      anyarray, float8)
  RETURNS dp_agg.selection_state AS 'MODULE_PATHNAME', 'dp_select_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.select_combine(dp_agg.selection_state, dp_agg.selection_state)
  RETURNS dp_agg.selection_state AS 'MODULE_PATHNAME', 'dp_select_combine'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
-- FINALFUNC_EXTRA: the extra (NULL) arguments only resolve the result type.
CREATE FUNCTION dp_agg.select_final(dp_agg.selection_state, anyelement, anyarray, float8)
  RETURNS anyelement AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.select_final(dp_agg.selection_state, anyelement, float8, float8, float8,
                                    anyarray, float8)
  RETURNS anyelement AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE AGGREGATE dp_select(anyelement, anyarray, float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE AGGREGATE dp_select(anyelement, float8, float8, float8, anyarray, float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);

COMMENT ON TYPE dp_agg.selection_state IS
  'Transition state of dp_select (exact candidate scores: never shown to analysts)';
COMMENT ON AGGREGATE dp_select(anyelement, anyarray, float8) IS
  'dp_select(value, candidates, epsilon): epsilon-DP most frequent value among the candidates given in the query';
COMMENT ON AGGREGATE dp_select(anyelement, float8, float8, float8, anyarray, float8) IS
  'dp_select(value, weight, lower, upper, candidates, epsilon): epsilon-DP candidate with the largest total of weights clamped to [lower, upper]';
