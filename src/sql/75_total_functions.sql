-- Total versions of built-in arithmetic (src/pg/total_functions.cpp): for each
-- built-in function F listed there, dp_agg.total_F has F's signature and returns
-- a value (or NULL) where F raises. A restricted role's expressions over
-- protected rows call them instead of F (query_rewrites.cpp, kTotalArithmetic);
-- README "Arithmetic that cannot fail" states what each returns where F raises.

CREATE FUNCTION dp_agg.total_int2pl(int2, int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2mi(int2, int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2mul(int2, int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2div(int2, int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4pl(int4, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4mi(int4, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4mul(int4, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4div(int4, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8pl(int8, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8mi(int8, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8mul(int8, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8div(int8, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int24pl(int2, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int24pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int24mi(int2, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int24mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int24mul(int2, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int24mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int24div(int2, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int24div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int42pl(int4, int2) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int42pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int42mi(int4, int2) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int42mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int42mul(int4, int2) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int42mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int42div(int4, int2) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int42div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int28pl(int2, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int28pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int28mi(int2, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int28mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int28mul(int2, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int28mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int28div(int2, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int28div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int82pl(int8, int2) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int82pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int82mi(int8, int2) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int82mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int82mul(int8, int2) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int82mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int82div(int8, int2) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int82div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int48pl(int4, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int48pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int48mi(int4, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int48mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int48mul(int4, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int48mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int48div(int4, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int48div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int84pl(int8, int4) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int84pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int84mi(int8, int4) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int84mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int84mul(int8, int4) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int84mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int84div(int8, int4) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int84div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2mod(int2, int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2um(int2) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2um' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4mod(int4, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4um(int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4um' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8mod(int8, int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8um(int8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8um' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float4pl(float4, float4) RETURNS float4
  AS 'MODULE_PATHNAME', 'dp_total_float4pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float4mi(float4, float4) RETURNS float4
  AS 'MODULE_PATHNAME', 'dp_total_float4mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float4mul(float4, float4) RETURNS float4
  AS 'MODULE_PATHNAME', 'dp_total_float4mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float4div(float4, float4) RETURNS float4
  AS 'MODULE_PATHNAME', 'dp_total_float4div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float8pl(float8, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float8pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float8mi(float8, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float8mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float8mul(float8, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float8mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float8div(float8, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float8div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float48pl(float4, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float48pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float48mi(float4, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float48mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float48mul(float4, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float48mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float48div(float4, float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float48div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float84pl(float8, float4) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float84pl' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float84mi(float8, float4) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float84mi' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float84mul(float8, float4) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float84mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float84div(float8, float4) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float84div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_numeric_add(numeric, numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_add' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_numeric_sub(numeric, numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_sub' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_numeric_mul(numeric, numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_mul' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_numeric_div(numeric, numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_numeric_mod(numeric, numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_mod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float8(numeric) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_total_float8_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_date_pli(date, int4) RETURNS date
  AS 'MODULE_PATHNAME', 'dp_total_date_pli' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_date_mii(date, int4) RETURNS date
  AS 'MODULE_PATHNAME', 'dp_total_date_mii' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamp_pl_interval(timestamp, interval) RETURNS timestamp
  AS 'MODULE_PATHNAME', 'dp_total_timestamp_pl_interval' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamp_mi_interval(timestamp, interval) RETURNS timestamp
  AS 'MODULE_PATHNAME', 'dp_total_timestamp_mi_interval' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamptz_pl_interval(timestamptz, interval) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_timestamptz_pl_interval' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamptz_mi_interval(timestamptz, interval) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_timestamptz_mi_interval' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION dp_agg.total_int2pl(int2, int2) IS
  'total version of int2pl(int2, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int2mi(int2, int2) IS
  'total version of int2mi(int2, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int2mul(int2, int2) IS
  'total version of int2mul(int2, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int2div(int2, int2) IS
  'total version of int2div(int2, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4pl(int4, int4) IS
  'total version of int4pl(int4, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4mi(int4, int4) IS
  'total version of int4mi(int4, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4mul(int4, int4) IS
  'total version of int4mul(int4, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4div(int4, int4) IS
  'total version of int4div(int4, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8pl(int8, int8) IS
  'total version of int8pl(int8, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8mi(int8, int8) IS
  'total version of int8mi(int8, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8mul(int8, int8) IS
  'total version of int8mul(int8, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8div(int8, int8) IS
  'total version of int8div(int8, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int24pl(int2, int4) IS
  'total version of int24pl(int2, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int24mi(int2, int4) IS
  'total version of int24mi(int2, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int24mul(int2, int4) IS
  'total version of int24mul(int2, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int24div(int2, int4) IS
  'total version of int24div(int2, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int42pl(int4, int2) IS
  'total version of int42pl(int4, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int42mi(int4, int2) IS
  'total version of int42mi(int4, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int42mul(int4, int2) IS
  'total version of int42mul(int4, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int42div(int4, int2) IS
  'total version of int42div(int4, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int28pl(int2, int8) IS
  'total version of int28pl(int2, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int28mi(int2, int8) IS
  'total version of int28mi(int2, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int28mul(int2, int8) IS
  'total version of int28mul(int2, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int28div(int2, int8) IS
  'total version of int28div(int2, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int82pl(int8, int2) IS
  'total version of int82pl(int8, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int82mi(int8, int2) IS
  'total version of int82mi(int8, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int82mul(int8, int2) IS
  'total version of int82mul(int8, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int82div(int8, int2) IS
  'total version of int82div(int8, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int48pl(int4, int8) IS
  'total version of int48pl(int4, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int48mi(int4, int8) IS
  'total version of int48mi(int4, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int48mul(int4, int8) IS
  'total version of int48mul(int4, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int48div(int4, int8) IS
  'total version of int48div(int4, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int84pl(int8, int4) IS
  'total version of int84pl(int8, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int84mi(int8, int4) IS
  'total version of int84mi(int8, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int84mul(int8, int4) IS
  'total version of int84mul(int8, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int84div(int8, int4) IS
  'total version of int84div(int8, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int2mod(int2, int2) IS
  'total version of int2mod(int2, int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int2um(int2) IS
  'total version of int2um(int2) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4mod(int4, int4) IS
  'total version of int4mod(int4, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int4um(int4) IS
  'total version of int4um(int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8mod(int8, int8) IS
  'total version of int8mod(int8, int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_int8um(int8) IS
  'total version of int8um(int8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float4pl(float4, float4) IS
  'total version of float4pl(float4, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float4mi(float4, float4) IS
  'total version of float4mi(float4, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float4mul(float4, float4) IS
  'total version of float4mul(float4, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float4div(float4, float4) IS
  'total version of float4div(float4, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float8pl(float8, float8) IS
  'total version of float8pl(float8, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float8mi(float8, float8) IS
  'total version of float8mi(float8, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float8mul(float8, float8) IS
  'total version of float8mul(float8, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float8div(float8, float8) IS
  'total version of float8div(float8, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float48pl(float4, float8) IS
  'total version of float48pl(float4, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float48mi(float4, float8) IS
  'total version of float48mi(float4, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float48mul(float4, float8) IS
  'total version of float48mul(float4, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float48div(float4, float8) IS
  'total version of float48div(float4, float8) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float84pl(float8, float4) IS
  'total version of float84pl(float8, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float84mi(float8, float4) IS
  'total version of float84mi(float8, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float84mul(float8, float4) IS
  'total version of float84mul(float8, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_float84div(float8, float4) IS
  'total version of float84div(float8, float4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_numeric_add(numeric, numeric) IS
  'total version of numeric_add(numeric, numeric) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_numeric_sub(numeric, numeric) IS
  'total version of numeric_sub(numeric, numeric) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_numeric_mul(numeric, numeric) IS
  'total version of numeric_mul(numeric, numeric) for expressions over protected rows: NULL for an operand of over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_numeric_div(numeric, numeric) IS
  'total version of numeric_div(numeric, numeric) for expressions over protected rows: NULL for an operand of over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_numeric_mod(numeric, numeric) IS
  'total version of numeric_mod(numeric, numeric) for expressions over protected rows: NULL for an operand of over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_float8(numeric) IS
  'total version of float8(numeric) for expressions over protected rows: NULL for an operand of over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_date_pli(date, int4) IS
  'total version of date_pli(date, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_date_mii(date, int4) IS
  'total version of date_mii(date, int4) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_timestamp_pl_interval(timestamp, interval) IS
  'total version of timestamp_pl_interval(timestamp, interval) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_timestamp_mi_interval(timestamp, interval) IS
  'total version of timestamp_mi_interval(timestamp, interval) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_timestamptz_pl_interval(timestamptz, interval) IS
  'total version of timestamptz_pl_interval(timestamptz, interval) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_timestamptz_mi_interval(timestamptz, interval) IS
  'total version of timestamptz_mi_interval(timestamptz, interval) for expressions over protected rows: never raises';

CREATE FUNCTION dp_agg.total_timestamp(date) RETURNS timestamp
  AS 'MODULE_PATHNAME', 'dp_total_timestamp_date' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamptz(date) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_timestamptz_date' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_date_trunc(text, timestamp) RETURNS timestamp
  AS 'MODULE_PATHNAME', 'dp_total_date_trunc_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_date_trunc(text, timestamptz) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_date_trunc_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.total_timestamp(date) IS
  'total version of timestamp(date) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_timestamptz(date) IS
  'total version of timestamptz(date) for expressions over protected rows: never raises';
COMMENT ON FUNCTION dp_agg.total_date_trunc(text, timestamp) IS
  'total version of date_trunc(text, timestamp) for expressions over protected rows: never raises for the fields dp_agg accepts';
COMMENT ON FUNCTION dp_agg.total_date_trunc(text, timestamptz) IS
  'total version of date_trunc(text, timestamptz) for expressions over protected rows: never raises for the fields dp_agg accepts';

-- dp_agg.unit_sum(x): the sum of one privacy unit's rows in a group, for the
-- privacy-unit rewrite (src/pg/unit_rewrite.cpp), which clamps it to the
-- call's bounds. PostgreSQL's sum(float4/float8/numeric) raises on overflow,
-- and how many rows a unit has is protected data, so a unit's total is
-- summed with the total additions instead: float overflow gives +-Infinity
-- (clamped to a bound), a numeric total beyond numeric's range gives NULL
-- (the unit adds nothing to that aggregate).
CREATE AGGREGATE dp_agg.unit_sum(float4) (
  SFUNC = dp_agg.total_float4pl, STYPE = float4, COMBINEFUNC = dp_agg.total_float4pl,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_agg.unit_sum(float8) (
  SFUNC = dp_agg.total_float8pl, STYPE = float8, COMBINEFUNC = dp_agg.total_float8pl,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_agg.unit_sum(numeric) (
  SFUNC = dp_agg.total_numeric_add, STYPE = numeric, COMBINEFUNC = dp_agg.total_numeric_add,
  PARALLEL = SAFE);
COMMENT ON AGGREGATE dp_agg.unit_sum(float4) IS
  'sum that never raises (overflow gives +-Infinity), for one privacy unit''s rows (internal: used by the privacy-unit rewrite)';
COMMENT ON AGGREGATE dp_agg.unit_sum(float8) IS
  'sum that never raises (overflow gives +-Infinity), for one privacy unit''s rows (internal: used by the privacy-unit rewrite)';
COMMENT ON AGGREGATE dp_agg.unit_sum(numeric) IS
  'sum that never raises (NULL beyond numeric''s range), for one privacy unit''s rows (internal: used by the privacy-unit rewrite)';
-- Text, rounding and bucketing for restricted roles (issue 13), each total
-- where the built-in can raise (total_functions.cpp says what it returns).
CREATE FUNCTION dp_agg.total_lower(text) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_lower' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_upper(text) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_upper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_texticlike(text, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_texticlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_texticnlike(text, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_texticnlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_bpchariclike(bpchar, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_texticlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_bpcharicnlike(bpchar, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_texticnlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_textlike(text, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_textlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_textnlike(text, text) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_total_textnlike' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_textlen(text) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_textlen' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_length(text) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_textlen' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_char_length(text) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_textlen' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_character_length(text) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_textlen' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_substr(text, int4, int4) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_text_substr' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_substr(text, int4) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_text_substr_no_len' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_substring(text, int4, int4) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_text_substr' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_substring(text, int4) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_text_substr_no_len' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_floor(numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_floor' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_ceil(numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_ceil' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_ceiling(numeric) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_ceil' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_round(numeric, int4) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_round' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_trunc(numeric, int4) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_total_numeric_trunc' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_width_bucket(numeric, numeric, numeric, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_width_bucket_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_width_bucket(float8, float8, float8, int4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_width_bucket_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.total_lower(text) IS
  'total version of lower(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_upper(text) IS
  'total version of upper(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_texticlike(text, text) IS
  'total version of ILIKE (texticlike) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_texticnlike(text, text) IS
  'total version of NOT ILIKE (texticnlike) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_bpchariclike(bpchar, text) IS
  'total version of ILIKE (bpchariclike) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_bpcharicnlike(bpchar, text) IS
  'total version of NOT ILIKE (bpcharicnlike) for expressions over protected rows: NULL for a text that is not valid in the database encoding, over 64 KiB, or (ILIKE) text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_textlike(text, text) IS
  'total version of LIKE (textlike) for expressions over protected rows: NULL for a text or pattern that is not valid in the database encoding, a text over 64 KiB or text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_textnlike(text, text) IS
  'total version of NOT LIKE (textnlike) for expressions over protected rows: NULL for a text or pattern that is not valid in the database encoding, a text over 64 KiB or text bytes times pattern bytes over 2^20, never raises';
COMMENT ON FUNCTION dp_agg.total_textlen(text) IS
  'total version of textlen(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_length(text) IS
  'total version of length(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_char_length(text) IS
  'total version of char_length(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_character_length(text) IS
  'total version of character_length(text) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_substr(text, int4, int4) IS
  'total version of substr(text, int4, int4) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises for the constant lengths dp_agg accepts';
COMMENT ON FUNCTION dp_agg.total_substr(text, int4) IS
  'total version of substr(text, int4) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_substring(text, int4, int4) IS
  'total version of substring(text, int4, int4) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises for the constant lengths dp_agg accepts';
COMMENT ON FUNCTION dp_agg.total_substring(text, int4) IS
  'total version of substring(text, int4) for expressions over protected rows: NULL for a text that is not valid in the database encoding or is over 64 KiB, never raises';
COMMENT ON FUNCTION dp_agg.total_floor(numeric) IS
  'total version of floor(numeric) for expressions over protected rows: NULL beyond 1e130000 or over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_ceil(numeric) IS
  'total version of ceil(numeric) for expressions over protected rows: NULL beyond 1e130000 or over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_ceiling(numeric) IS
  'total version of ceiling(numeric) for expressions over protected rows: NULL beyond 1e130000 or over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_round(numeric, int4) IS
  'total version of round(numeric, int4) for expressions over protected rows: NULL beyond 1e130000 or over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_trunc(numeric, int4) IS
  'total version of trunc(numeric, int4) for expressions over protected rows: NULL beyond 1e130000 or over 1000 base-10000 digits, never raises';
COMMENT ON FUNCTION dp_agg.total_width_bucket(numeric, numeric, numeric, int4) IS
  'total version of width_bucket(numeric, numeric, numeric, int4) for expressions over protected rows: NULL for NaN or an operand of over 1000 base-10000 digits, never raises for the constant bounds dp_agg accepts';
COMMENT ON FUNCTION dp_agg.total_width_bucket(float8, float8, float8, int4) IS
  'total version of width_bucket(float8, float8, float8, int4) for expressions over protected rows: NULL for NaN, never raises for the constant bounds dp_agg accepts';
CREATE FUNCTION dp_agg.total_to_char(timestamp, text) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_to_char_timestamp' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
CREATE FUNCTION dp_agg.total_to_char(timestamptz, text) RETURNS text
  AS 'MODULE_PATHNAME', 'dp_total_to_char_timestamptz' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION dp_agg.total_to_char(timestamp, text) IS
  'total version of to_char(timestamp, text) for expressions over protected rows: NULL when lc_time changed since the query was judged, never raises for the formats dp_agg accepts';
COMMENT ON FUNCTION dp_agg.total_to_char(timestamptz, text) IS
  'total version of to_char(timestamptz, text) for expressions over protected rows: NULL when lc_time changed since the query was judged, never raises for the formats dp_agg accepts';
