-- Total versions of the casts and conversions BI tools write into their SQL
-- (issue 27; src/pg/total_casts.cpp, src/pg/verified_calls.cpp). A restricted
-- role's expressions over protected rows call them in place of the built-in
-- (query_rewrites.cpp); README "Restricted analysts" states what each returns
-- where the built-in raises.

CREATE FUNCTION dp_agg.total_int4(numeric) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8(numeric) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2(numeric) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4(float8) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2(float8) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8(float8) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4(float4) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4_float4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2(float4) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2_float4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int8(float4) RETURNS int8
  AS 'MODULE_PATHNAME', 'dp_total_int8_float4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int4(int8) RETURNS int4
  AS 'MODULE_PATHNAME', 'dp_total_int4_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2(int8) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_int2(int4) RETURNS int2
  AS 'MODULE_PATHNAME', 'dp_total_int2_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_float4(float8) RETURNS float4
  AS 'MODULE_PATHNAME', 'dp_total_float4_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_date(timestamptz) RETURNS date
  AS 'MODULE_PATHNAME', 'dp_total_date_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamp(timestamptz) RETURNS timestamp
  AS 'MODULE_PATHNAME', 'dp_total_timestamp_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_timestamptz(timestamp) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_timestamptz_timestamp' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_to_timestamp(float8) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_to_timestamp_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_to_timestamp(text, text, timestamptz, text) RETURNS timestamptz
  AS 'MODULE_PATHNAME', 'dp_total_verified_call' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.total_to_date(text, text, date, text) RETURNS date
  AS 'MODULE_PATHNAME', 'dp_total_verified_call' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION dp_agg.total_int4(numeric) IS
  'total version of int4(numeric) for expressions over protected rows: NULL where the cast raises (NaN, infinity, out of range)';
COMMENT ON FUNCTION dp_agg.total_int8(numeric) IS
  'total version of int8(numeric) for expressions over protected rows: NULL where the cast raises (NaN, infinity, out of range)';
COMMENT ON FUNCTION dp_agg.total_int2(numeric) IS
  'total version of int2(numeric) for expressions over protected rows: NULL where the cast raises (NaN, infinity, out of range)';
COMMENT ON FUNCTION dp_agg.total_int4(float8) IS
  'total version of int4(float8) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int2(float8) IS
  'total version of int2(float8) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int8(float8) IS
  'total version of int8(float8) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int4(float4) IS
  'total version of int4(float4) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int2(float4) IS
  'total version of int2(float4) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int8(float4) IS
  'total version of int8(float4) for expressions over protected rows: NULL where the cast raises (NaN, out of range)';
COMMENT ON FUNCTION dp_agg.total_int4(int8) IS
  'total version of int4(int8) for expressions over protected rows: NULL where the cast raises (out of range)';
COMMENT ON FUNCTION dp_agg.total_int2(int8) IS
  'total version of int2(int8) for expressions over protected rows: NULL where the cast raises (out of range)';
COMMENT ON FUNCTION dp_agg.total_int2(int4) IS
  'total version of int2(int4) for expressions over protected rows: NULL where the cast raises (out of range)';
COMMENT ON FUNCTION dp_agg.total_float4(float8) IS
  'total version of float4(float8) for expressions over protected rows: the IEEE result where the cast raises (overflow, underflow)';
COMMENT ON FUNCTION dp_agg.total_date(timestamptz) IS
  'total version of date(timestamptz) for expressions over protected rows: -infinity for a local date before the first valid date';
COMMENT ON FUNCTION dp_agg.total_timestamp(timestamptz) IS
  'total version of timestamp(timestamptz) for expressions over protected rows: +-infinity where the local time leaves the range';
COMMENT ON FUNCTION dp_agg.total_timestamptz(timestamp) IS
  'total version of timestamptz(timestamp) for expressions over protected rows: +-infinity where the time zone moves the instant out of the range';
COMMENT ON FUNCTION dp_agg.total_to_timestamp(float8) IS
  'total version of to_timestamp(float8) for expressions over protected rows: NULL for NaN, +-infinity beyond the range';
COMMENT ON FUNCTION dp_agg.total_to_timestamp(text, text, timestamptz, text) IS
  'to_timestamp(text, format) of constants, computed while planning: the recorded result while TimeZone and lc_time are unchanged, NULL otherwise; never raises';
COMMENT ON FUNCTION dp_agg.total_to_date(text, text, date, text) IS
  'to_date(text, format) of constants, computed while planning: the recorded result while TimeZone and lc_time are unchanged, NULL otherwise; never raises';
