// Total versions of the casts and date/time conversions that BI tools write
// into the SQL they generate (issue 27): Metabase's CAST(date_trunc('month',
// ts) AS date) and CAST(extract(month FROM ts) AS integer), Tableau's
// CAST(EXTRACT(YEAR FROM ts) AS INTEGER), CAST(ts AS TIMESTAMP) and
// CAST(FLOOR(x) AS BIGINT), psqlODBC's {fn YEAR(ts)}, Metabase's
// to_timestamp(epoch_column). The query rewrite (query_rewrites.cpp) puts
// dp_agg.total_<proname> in place of the built-in on protected rows, as for
// the arithmetic (total_functions.cpp).
//
// Each returns a value (possibly NULL) for every valid input and reaches no
// ereport. Read in PostgreSQL 15's source (utils/adt/numeric.c, float.c,
// int.c, int8.c, date.c, timestamp.c):
//   * narrowing casts to int2/int4/int8 (from numeric, float8, float4 and
//     the wider integers): "integer out of range", "cannot convert NaN to
//     integer" and "cannot convert infinity to integer" become NULL. The
//     value is rounded as the built-in rounds it (numeric: half away from
//     zero; floats: rint) and NULL only where the built-in raises;
//   * float4(float8): "value out of range: overflow/underflow" become the
//     IEEE result (+-Infinity, 0 or a subnormal), as for the float
//     arithmetic;
//   * date(timestamptz): timestamp2tm cannot fail for a valid timestamp, but
//     the local date of the first hours of the range (4714-11-24 BC) in a
//     zone west of Greenwich is 4714-11-23 BC, before the first valid date.
//     PostgreSQL returns that invalid date, and a later cast back to
//     timestamp or extract() of it raises "timestamp out of range" (found
//     while auditing this cast): the total version returns -infinity there,
//     like the other conversions beyond the range;
//   * timestamp(timestamptz): the local time of the last or first hours of
//     the range can fall outside it ("timestamp out of range"): +infinity or
//     -infinity by the side of the range;
//   * timestamptz(timestamp): timestamp2timestamptz_opt_overflow reports the
//     same overflow as +-infinity instead of raising;
//   * to_timestamp(float8): NaN ("timestamp cannot be NaN") gives NULL;
//     seconds beyond the range give +-infinity.
// date(timestamp), numeric(float8), numeric(float4) and the cross-type
// date/timestamp/timestamptz comparisons are total as PostgreSQL 15 computes
// them and are on the allow-list itself (allow_list.cpp).
//
// Plain C data only and no PostgreSQL call that can raise: no C++ object
// with a destructor is live anywhere here.
#include "pg_includes.h"

extern "C" {
#include "datatype/timestamp.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
}

#include <cmath>

namespace {

// numeric_int8 and numeric_int2 round half away from zero (round_var), then
// raise beyond the type's range: a finite value strictly between these
// bounds rounds into the range.
Numeric int8_low = nullptr;
Numeric int8_high = nullptr;
Numeric int2_low = nullptr;
Numeric int2_high = nullptr;

Numeric KeptNumeric(const char* digits) {
  Datum value = DirectFunctionCall3(numeric_in, CStringGetDatum(digits),
                                    ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
  const Size size = VARSIZE(DatumGetPointer(value));
  auto* kept = static_cast<Numeric>(MemoryContextAlloc(TopMemoryContext, size));
  memcpy(kept, DatumGetPointer(value), size);
  return kept;
}

// Whether finite `value` lies strictly between `low` and `high`.
bool StrictlyBetween(Datum value, Numeric low, Numeric high) {
  return DatumGetBool(DirectFunctionCall2(numeric_gt, value, NumericGetDatum(low))) &&
         DatumGetBool(DirectFunctionCall2(numeric_lt, value, NumericGetDatum(high)));
}

bool NumericIsFinite(Datum value) {
  Numeric number = DatumGetNumeric(value);
  return !numeric_is_nan(number) && !numeric_is_inf(number);
}

}  // namespace

extern "C" {

// int4(numeric): numeric_int4_opt_error reports NaN, infinity and values out
// of range through its flag instead of raising.
PG_FUNCTION_INFO_V1(dp_total_int4_numeric);
Datum dp_total_int4_numeric(PG_FUNCTION_ARGS) {
  bool failed = false;
  const int32 result = numeric_int4_opt_error(PG_GETARG_NUMERIC(0), &failed);
  if (failed) PG_RETURN_NULL();
  PG_RETURN_INT32(result);
}

PG_FUNCTION_INFO_V1(dp_total_int8_numeric);
Datum dp_total_int8_numeric(PG_FUNCTION_ARGS) {
  if (!NumericIsFinite(PG_GETARG_DATUM(0))) PG_RETURN_NULL();
  if (int8_low == nullptr) {
    int8_low = KeptNumeric("-9223372036854775808.5");
    int8_high = KeptNumeric("9223372036854775807.5");
  }
  if (!StrictlyBetween(PG_GETARG_DATUM(0), int8_low, int8_high)) PG_RETURN_NULL();
  return DirectFunctionCall1(numeric_int8, PG_GETARG_DATUM(0));
}

PG_FUNCTION_INFO_V1(dp_total_int2_numeric);
Datum dp_total_int2_numeric(PG_FUNCTION_ARGS) {
  if (!NumericIsFinite(PG_GETARG_DATUM(0))) PG_RETURN_NULL();
  if (int2_low == nullptr) {
    int2_low = KeptNumeric("-32768.5");
    int2_high = KeptNumeric("32767.5");
  }
  if (!StrictlyBetween(PG_GETARG_DATUM(0), int2_low, int2_high)) PG_RETURN_NULL();
  return DirectFunctionCall1(numeric_int2, PG_GETARG_DATUM(0));
}

// Floats to integers: rint, then NULL where the built-in (dtoi4, dtoi2,
// dtoi8, ftoi4, ftoi2, ftoi8) raises: NaN or outside the integer type.
#define DP_FLOAT_TO_INT(name, GET, FITS, T, RETURN)          \
  PG_FUNCTION_INFO_V1(dp_total_##name);                      \
  Datum dp_total_##name(PG_FUNCTION_ARGS) {                  \
    const auto value = rint(GET(0));                         \
    if (std::isnan(value) || !FITS(value)) PG_RETURN_NULL(); \
    RETURN(static_cast<T>(value));                           \
  }

DP_FLOAT_TO_INT(int4_float8, PG_GETARG_FLOAT8, FLOAT8_FITS_IN_INT32, int32, PG_RETURN_INT32)
DP_FLOAT_TO_INT(int2_float8, PG_GETARG_FLOAT8, FLOAT8_FITS_IN_INT16, int16, PG_RETURN_INT16)
DP_FLOAT_TO_INT(int8_float8, PG_GETARG_FLOAT8, FLOAT8_FITS_IN_INT64, int64, PG_RETURN_INT64)
DP_FLOAT_TO_INT(int4_float4, PG_GETARG_FLOAT4, FLOAT4_FITS_IN_INT32, int32, PG_RETURN_INT32)
DP_FLOAT_TO_INT(int2_float4, PG_GETARG_FLOAT4, FLOAT4_FITS_IN_INT16, int16, PG_RETURN_INT16)
DP_FLOAT_TO_INT(int8_float4, PG_GETARG_FLOAT4, FLOAT4_FITS_IN_INT64, int64, PG_RETURN_INT64)

// Narrower integers: NULL outside the target type ("integer out of range",
// "smallint out of range").
PG_FUNCTION_INFO_V1(dp_total_int4_int8);
Datum dp_total_int4_int8(PG_FUNCTION_ARGS) {
  const int64 value = PG_GETARG_INT64(0);
  if (value < PG_INT32_MIN || value > PG_INT32_MAX) PG_RETURN_NULL();
  PG_RETURN_INT32(static_cast<int32>(value));
}

PG_FUNCTION_INFO_V1(dp_total_int2_int8);
Datum dp_total_int2_int8(PG_FUNCTION_ARGS) {
  const int64 value = PG_GETARG_INT64(0);
  if (value < PG_INT16_MIN || value > PG_INT16_MAX) PG_RETURN_NULL();
  PG_RETURN_INT16(static_cast<int16>(value));
}

PG_FUNCTION_INFO_V1(dp_total_int2_int4);
Datum dp_total_int2_int4(PG_FUNCTION_ARGS) {
  const int32 value = PG_GETARG_INT32(0);
  if (value < PG_INT16_MIN || value > PG_INT16_MAX) PG_RETURN_NULL();
  PG_RETURN_INT16(static_cast<int16>(value));
}

// float4(float8) (dtof): the IEEE conversion, without the built-in's
// overflow and underflow errors.
PG_FUNCTION_INFO_V1(dp_total_float4_float8);
Datum dp_total_float4_float8(PG_FUNCTION_ARGS) {
  PG_RETURN_FLOAT4(static_cast<float4>(PG_GETARG_FLOAT8(0)));
}

// date(timestamptz): the built-in's local date, or -infinity for a local
// date before the first valid date (see the top of this file).
PG_FUNCTION_INFO_V1(dp_total_date_timestamptz);
Datum dp_total_date_timestamptz(PG_FUNCTION_ARGS) {
  const DateADT date = DatumGetDateADT(DirectFunctionCall1(timestamptz_date, PG_GETARG_DATUM(0)));
  if (!DATE_NOT_FINITE(date) && !IS_VALID_DATE(date)) {
    DateADT before;
    DATE_NOBEGIN(before);
    PG_RETURN_DATEADT(before);
  }
  PG_RETURN_DATEADT(date);
}

// timestamp(timestamptz): the local time, or +-infinity where it leaves the
// range (timestamptz2timestamp's tm2timestamp fails).
PG_FUNCTION_INFO_V1(dp_total_timestamp_timestamptz);
Datum dp_total_timestamp_timestamptz(PG_FUNCTION_ARGS) {
  const TimestampTz value = PG_GETARG_TIMESTAMPTZ(0);
  if (TIMESTAMP_NOT_FINITE(value)) PG_RETURN_TIMESTAMP(value);
  struct pg_tm parts;
  fsec_t fraction = 0;
  int zone = 0;
  Timestamp result = 0;
  if (timestamp2tm(value, &zone, &parts, &fraction, nullptr, nullptr) != 0 ||
      tm2timestamp(&parts, fraction, nullptr, &result) != 0) {
    if (value < 0)
      TIMESTAMP_NOBEGIN(result);
    else
      TIMESTAMP_NOEND(result);
  }
  PG_RETURN_TIMESTAMP(result);
}

// timestamptz(timestamp): +-infinity where the time zone's offset moves the
// instant out of the range.
PG_FUNCTION_INFO_V1(dp_total_timestamptz_timestamp);
Datum dp_total_timestamptz_timestamp(PG_FUNCTION_ARGS) {
  int overflow = 0;
  PG_RETURN_TIMESTAMPTZ(timestamp2timestamptz_opt_overflow(PG_GETARG_TIMESTAMP(0), &overflow));
}

// to_timestamp(float8) (float8_timestamptz): NULL for NaN, +-infinity for
// seconds beyond the range (and for +-Infinity, as the built-in).
PG_FUNCTION_INFO_V1(dp_total_to_timestamp_float8);
Datum dp_total_to_timestamp_float8(PG_FUNCTION_ARGS) {
  const float8 seconds = PG_GETARG_FLOAT8(0);
  if (std::isnan(seconds)) PG_RETURN_NULL();
  TimestampTz result;
  const float8 low = static_cast<float8>(SECS_PER_DAY) * (DATETIME_MIN_JULIAN - UNIX_EPOCH_JDATE);
  const float8 high = static_cast<float8>(SECS_PER_DAY) * (TIMESTAMP_END_JULIAN - UNIX_EPOCH_JDATE);
  if (seconds < low) {
    TIMESTAMP_NOBEGIN(result);
    PG_RETURN_TIMESTAMPTZ(result);
  }
  if (seconds >= high) {
    TIMESTAMP_NOEND(result);
    PG_RETURN_TIMESTAMPTZ(result);
  }
  const float8 shifted =
      rint((seconds - static_cast<float8>(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY) *
           USECS_PER_SEC);
  result = static_cast<int64>(shifted);
  // The built-in rechecks after rounding.
  if (!IS_VALID_TIMESTAMP(result)) {
    if (result < 0)
      TIMESTAMP_NOBEGIN(result);
    else
      TIMESTAMP_NOEND(result);
  }
  PG_RETURN_TIMESTAMPTZ(result);
}

}  // extern "C"
