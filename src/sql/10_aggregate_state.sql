-- Transition state: a real type with text input/output (not `internal`), so
-- that Citus can push partial aggregation down to its workers.
CREATE TYPE dp_agg.aggregate_state;

CREATE FUNCTION dp_agg.aggregate_state_in(cstring) RETURNS dp_agg.aggregate_state
  AS 'MODULE_PATHNAME', 'dp_aggregate_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.aggregate_state_out(dp_agg.aggregate_state) RETURNS cstring
  AS 'MODULE_PATHNAME', 'dp_aggregate_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE dp_agg.aggregate_state (
  INPUT = dp_agg.aggregate_state_in,
  OUTPUT = dp_agg.aggregate_state_out,
  INTERNALLENGTH = VARIABLE,
  ALIGNMENT = double,
  STORAGE = plain
);

-- Support functions. All are VOLATILE (the final functions draw noise), STRICT
-- transition functions skip NULL values, and none may be called directly: the
-- states hold exact sums. PUBLIC may EXECUTE them (Citus checks that on every
-- node), which is harmless because they run only inside dp_agg's own
-- aggregates, on states its executor hook prepared (src/pg/support_guard.h).
CREATE FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_count_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int2_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_float4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_float8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_numeric_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION dp_agg.combine(dp_agg.aggregate_state, dp_agg.aggregate_state)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_combine'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION dp_agg.count_final(dp_agg.aggregate_state) RETURNS bigint
  AS 'MODULE_PATHNAME', 'dp_count_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.sum_final_int8(dp_agg.aggregate_state) RETURNS bigint
  AS 'MODULE_PATHNAME', 'dp_sum_final_int8' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.sum_final_numeric(dp_agg.aggregate_state) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_sum_final_numeric' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.sum_final_float4(dp_agg.aggregate_state) RETURNS real
  AS 'MODULE_PATHNAME', 'dp_sum_final_float4' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.sum_final_float8(dp_agg.aggregate_state) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_sum_final_float8' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.avg_final_numeric(dp_agg.aggregate_state) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_avg_final_numeric' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.avg_final_float8(dp_agg.aggregate_state) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_avg_final_float8' LANGUAGE C VOLATILE PARALLEL SAFE;
-- ===========================================================================
-- (epsilon, delta) variants: discrete Gaussian noise calibrated exactly (see
-- core/gaussian_mechanism.h). delta must lie in (0, 1) and not above the
-- superuser setting dp_agg.max_delta; it is charged to the delta budget.
-- The support functions take the extra argument and ignore it per row; the
-- executor hook reads it once, like epsilon.
-- ===========================================================================
-- The same C transition functions, declared once more for each extra
-- argument (delta, confidence): CREATE AGGREGATE needs exact signatures.
CREATE FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_count_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_count_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int2_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_float4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_float8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_numeric_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_float8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_numeric_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON TYPE dp_agg.aggregate_state IS
  'Transition state of dp_count, dp_sum, dp_avg and their interval forms (exact partial sums: never shown to analysts)';
