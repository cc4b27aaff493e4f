-- dp_agg 0.1.0: differentially private aggregates.
\echo Use "CREATE EXTENSION dp_agg" to load this file. \quit

-- Internal objects live in schema dp_agg; the aggregates themselves go to the
-- schema the extension is created in (public by default), so that analysts
-- can write dp_avg(...) like avg(...).
CREATE SCHEMA dp_agg;
GRANT USAGE ON SCHEMA dp_agg TO PUBLIC;

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
-- states hold exact sums, so EXECUTE is revoked from PUBLIC below. The
-- aggregates still work for everyone, because PostgreSQL checks the support
-- functions' privileges against the aggregate's owner.
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

REVOKE ALL ON FUNCTION
  dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8),
  dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8),
  dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8),
  dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8),
  dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8),
  dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8),
  dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8),
  dp_agg.combine(dp_agg.aggregate_state, dp_agg.aggregate_state),
  dp_agg.count_final(dp_agg.aggregate_state),
  dp_agg.sum_final_int8(dp_agg.aggregate_state),
  dp_agg.sum_final_numeric(dp_agg.aggregate_state),
  dp_agg.sum_final_float4(dp_agg.aggregate_state),
  dp_agg.sum_final_float8(dp_agg.aggregate_state),
  dp_agg.avg_final_numeric(dp_agg.aggregate_state),
  dp_agg.avg_final_float8(dp_agg.aggregate_state)
FROM PUBLIC;

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

-- CREATE AGGREGATE has no volatility option and records aggregates as
-- immutable, so the planner would treat two identical calls as one, or copy a
-- call into several places when it flattens a subquery, drawing noise a
-- different number of times than the query says. Every call is a separate
-- noisy release: mark the aggregates VOLATILE like their support functions.
UPDATE pg_catalog.pg_proc SET provolatile = 'v'
WHERE pronamespace = '@extschema@'::regnamespace
  AND proname IN ('dp_count', 'dp_sum', 'dp_avg') AND prokind = 'a';
