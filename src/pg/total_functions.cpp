// Total versions of the arithmetic operators, for expressions evaluated on
// protected rows (README "Restricted analysts", "Arithmetic that cannot
// fail"). The query rewrite (query_rewrites.cpp, kTotalArithmetic) replaces a
// built-in operator's function by dp_agg.total_<proname> with the same
// signature, so PostgreSQL's own function never runs on protected rows.
//
// Each function returns a value (possibly NULL) for every input and reaches
// no ereport: where the built-in raises, it returns
//   * integers: overflow saturates to the type's range (INT_MIN / -1 gives
//     INT_MAX); division or modulo by zero gives NULL;
//   * float4/float8: the IEEE result (overflow +-Infinity, underflow 0 or a
//     subnormal, NaN propagates); division by zero gives NULL;
//   * numeric: division or modulo by zero and results beyond numeric's range
//     give NULL (the *_opt_error variants of utils/numeric.h report instead
//     of raising);
//   * numeric -> float8: beyond the double range +-Infinity, below it 0 (the
//     built-in float8(numeric) raises for both);
//   * date +- integer: results beyond the date range give -infinity or
//     +infinity; infinite dates stay as they are;
//   * timestamp[tz] +- interval: see TotalTimestampShift;
//   * text functions (lower, upper, LIKE, ILIKE, length, substring): NULL for
//     a text (or pattern) that is not valid in the database encoding, or
//     longer than 64 KiB (see UsableText);
//   * floor/ceil/round/trunc of numeric: NULL for a magnitude of 1e130000
//     or more (see kNumericRoundingLimitDigits); NaN and +-Infinity pass;
//   * width_bucket: NULL for a NaN operand (bounds and count are constants
//     checked at judgement, constant_arguments.cpp);
//   * to_char of timestamps: NULL when lc_time changed after judgement
//     (see dp_total_to_char_timestamp).
//
// They also bound the work ONE call may do on one row (README "Work per
// row"): a row's value must not decide, through a slow call, how long the
// query takes (a CASE that reaches lower() of a 15 MB text only for a
// matching row took 1.5 s more; issue 26, finding 3). Texts over 64 KiB,
// LIKE/ILIKE whose text bytes times pattern bytes pass 2^20, and numeric
// operands of more than 1000 base-10000 digits (about 4000 decimal digits)
// give NULL without running the built-in. Every call adds what it did to
// total_work_units (total_functions.h), which the neighbour fuzzer compares.
//
// Plain C data only and no PostgreSQL call that can raise: no C++ object
// with a destructor is live anywhere here.
#include "pg_includes.h"

extern "C" {
#include "access/detoast.h"
#include "mb/pg_wchar.h"
#include "datatype/timestamp.h"
#include "utils/date.h"
#include "utils/pg_locale.h"
#include "utils/timestamp.h"
}

#include "settings.h"
#include "total_functions.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace {

template <typename T>
T Saturate(__int128 value) {
  if (value > static_cast<__int128>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  if (value < static_cast<__int128>(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  return static_cast<T>(value);
}

// Integer division truncates toward zero, like C and PostgreSQL; the only
// quotient out of range is INT_MIN / -1, which saturates.
template <typename T>
T SaturatingDivide(__int128 dividend, __int128 divisor) {
  return Saturate<T>(dividend / divisor);
}

// The most base-10000 digits (NumericDigit, 4 decimal digits each) a
// numeric operand of a total function may have: about 4000 decimal digits,
// four times numeric's largest declared precision (1000). Multiplication and
// division take time quadratic in the digits (mul_var, div_var): two
// operands at this cap cost about 0.3 ms, where two 100,000-digit operands
// took 1.44 s (issue 26, finding 3). Beyond it the total versions return
// NULL without running the built-in.
constexpr Size kMaxNumericBaseDigits = 1000;

// The operand's base-10000 digits, from its stored size without detoasting
// it: a numeric is a header and 2 bytes per digit. The header is 4 bytes
// (exact) except in the short format, 2 bytes, which PostgreSQL uses only
// for numbers of at most a few dozen digits (weight within +-63, display
// scale at most 63): for those this counts one digit less, far below the cap.
Size NumericBaseDigits(Datum value) {
  const Size payload = toast_raw_datum_size(value) - VARHDRSZ;
  return payload <= 4 ? 0 : (payload - 4) / 2;
}

bool NumericFits(Datum value) {
  return NumericBaseDigits(value) <= kMaxNumericBaseDigits ||
         dp_pg::TestFaultIs(dp_pg::TestFault::kUncappedTextWork);
}

// Work of a numeric operation, in the units of total_work_units: the
// product of the operands' digits for the quadratic ones, scaled so that one
// call at the cap (10^6 digit products) counts about as much as one text
// call at its cap (64 KiB).
void CountNumericWork(Datum left, Datum right, bool quadratic) {
  const Size a = NumericBaseDigits(left);
  const Size b = NumericBaseDigits(right);
  dp_pg::total_work_units += quadratic ? (a * b) / 16 + a + b : a + b;
}

Numeric NumericOrNull(Numeric result, bool failed, FunctionCallInfo fcinfo) {
  if (failed || result == nullptr) fcinfo->isnull = true;
  return result;
}

// Whether `timestamp` (finite) moved by at most `reach` microseconds stays
// two days inside the valid range. Two days cover any time zone offset (at
// most 16 hours in PostgreSQL) and a daylight-saving shift, which
// timestamptz arithmetic applies in the session's time zone.
bool FarFromRangeEnds(Timestamp timestamp, double reach) {
  const double margin = 2.0 * USECS_PER_DAY;
  return static_cast<double>(timestamp) - reach - margin > static_cast<double>(MIN_TIMESTAMP) &&
         static_cast<double>(timestamp) + reach + margin < static_cast<double>(END_TIMESTAMP);
}

// timestamp[tz] +- interval. Infinite timestamps stay as they are (as in
// PostgreSQL). A finite result is the built-in's whenever the timestamp is
// farther from the ends of the range (4714 BC, 294276 AD) than the
// interval's reach (months counted as 31 days) plus two days: there the
// built-in cannot raise "timestamp out of range" (and its month arithmetic
// cannot overflow). Closer to the ends the result is +infinity or -infinity
// by the sign of the interval's mean length (months of 30.436875 days, as
// the Gregorian calendar averages), or the timestamp itself for a length of
// zero.
Datum TotalTimestampShift(PGFunction builtin, Datum timestamp_datum, Interval* span, bool subtract,
                          FunctionCallInfo fcinfo) {
  const Timestamp timestamp = DatumGetTimestamp(timestamp_datum);
  if (TIMESTAMP_NOT_FINITE(timestamp)) return timestamp_datum;
  const double day = static_cast<double>(USECS_PER_DAY);
  const double reach = std::fabs(static_cast<double>(span->month)) * 31.0 * day +
                       std::fabs(static_cast<double>(span->day)) * day +
                       std::fabs(static_cast<double>(span->time));
  if (FarFromRangeEnds(timestamp, reach))
    return DirectFunctionCall2Coll(builtin, InvalidOid, timestamp_datum, PointerGetDatum(span));
  double length = static_cast<double>(span->month) * 30.436875 * day +
                  static_cast<double>(span->day) * day + static_cast<double>(span->time);
  if (subtract) length = -length;
  Timestamp result = timestamp;
  if (length > 0) TIMESTAMP_NOEND(result);
  if (length < 0) TIMESTAMP_NOBEGIN(result);
  return TimestampGetDatum(result);
}

DateADT TotalDateShift(DateADT date, int64 days) {
  if (DATE_NOT_FINITE(date)) return date;
  const int64 result = static_cast<int64>(date) + days;
  DateADT saturated;
  if (result < static_cast<int64>(DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE)) {
    DATE_NOBEGIN(saturated);
    return saturated;
  }
  if (result >= static_cast<int64>(DATE_END_JULIAN - POSTGRES_EPOCH_JDATE)) {
    DATE_NOEND(saturated);
    return saturated;
  }
  return static_cast<DateADT>(result);
}

}  // namespace

extern "C" {

// Integer + - * / and cross-width variants: PROC(name, left, right, result).
#define DP_INT_OPS(name, LT, RT, RESULT, GET_L, GET_R, RETURN)            \
  PG_FUNCTION_INFO_V1(dp_total_##name##pl);                               \
  Datum dp_total_##name##pl(PG_FUNCTION_ARGS) {                           \
    RETURN(Saturate<RESULT>(static_cast<__int128>(GET_L(0)) + GET_R(1))); \
  }                                                                       \
  PG_FUNCTION_INFO_V1(dp_total_##name##mi);                               \
  Datum dp_total_##name##mi(PG_FUNCTION_ARGS) {                           \
    RETURN(Saturate<RESULT>(static_cast<__int128>(GET_L(0)) - GET_R(1))); \
  }                                                                       \
  PG_FUNCTION_INFO_V1(dp_total_##name##mul);                              \
  Datum dp_total_##name##mul(PG_FUNCTION_ARGS) {                          \
    RETURN(Saturate<RESULT>(static_cast<__int128>(GET_L(0)) * GET_R(1))); \
  }                                                                       \
  PG_FUNCTION_INFO_V1(dp_total_##name##div);                              \
  Datum dp_total_##name##div(PG_FUNCTION_ARGS) {                          \
    if (GET_R(1) == 0) PG_RETURN_NULL();                                  \
    RETURN(SaturatingDivide<RESULT>(GET_L(0), GET_R(1)));                 \
  }

DP_INT_OPS(int2, int16, int16, int16, PG_GETARG_INT16, PG_GETARG_INT16, PG_RETURN_INT16)
DP_INT_OPS(int4, int32, int32, int32, PG_GETARG_INT32, PG_GETARG_INT32, PG_RETURN_INT32)
DP_INT_OPS(int8, int64, int64, int64, PG_GETARG_INT64, PG_GETARG_INT64, PG_RETURN_INT64)
DP_INT_OPS(int24, int16, int32, int32, PG_GETARG_INT16, PG_GETARG_INT32, PG_RETURN_INT32)
DP_INT_OPS(int42, int32, int16, int32, PG_GETARG_INT32, PG_GETARG_INT16, PG_RETURN_INT32)
DP_INT_OPS(int28, int16, int64, int64, PG_GETARG_INT16, PG_GETARG_INT64, PG_RETURN_INT64)
DP_INT_OPS(int82, int64, int16, int64, PG_GETARG_INT64, PG_GETARG_INT16, PG_RETURN_INT64)
DP_INT_OPS(int48, int32, int64, int64, PG_GETARG_INT32, PG_GETARG_INT64, PG_RETURN_INT64)
DP_INT_OPS(int84, int64, int32, int64, PG_GETARG_INT64, PG_GETARG_INT32, PG_RETURN_INT64)

// Modulo: x % 0 is NULL; INT_MIN % -1 is 0 (as in PostgreSQL; C's own
// operator would trap on it). Unary minus: -INT_MIN saturates to INT_MAX.
#define DP_INT_MOD_UM(name, T, GET, RETURN)              \
  PG_FUNCTION_INFO_V1(dp_total_##name##mod);             \
  Datum dp_total_##name##mod(PG_FUNCTION_ARGS) {         \
    const T divisor = GET(1);                            \
    if (divisor == 0) PG_RETURN_NULL();                  \
    if (divisor == -1) RETURN(0);                        \
    RETURN(static_cast<T>(GET(0) % divisor));            \
  }                                                      \
  PG_FUNCTION_INFO_V1(dp_total_##name##um);              \
  Datum dp_total_##name##um(PG_FUNCTION_ARGS) {          \
    RETURN(Saturate<T>(-static_cast<__int128>(GET(0)))); \
  }

DP_INT_MOD_UM(int2, int16, PG_GETARG_INT16, PG_RETURN_INT16)
DP_INT_MOD_UM(int4, int32, PG_GETARG_INT32, PG_RETURN_INT32)
DP_INT_MOD_UM(int8, int64, PG_GETARG_INT64, PG_RETURN_INT64)

// Floats: plain IEEE arithmetic, as PostgreSQL computes it before its
// overflow/underflow checks (float.h), without those checks.
#define DP_FLOAT_OPS(name, RESULT, GET_L, GET_R, RETURN)                   \
  PG_FUNCTION_INFO_V1(dp_total_##name##pl);                                \
  Datum dp_total_##name##pl(PG_FUNCTION_ARGS) {                            \
    RETURN(static_cast<RESULT>(GET_L(0)) + static_cast<RESULT>(GET_R(1))); \
  }                                                                        \
  PG_FUNCTION_INFO_V1(dp_total_##name##mi);                                \
  Datum dp_total_##name##mi(PG_FUNCTION_ARGS) {                            \
    RETURN(static_cast<RESULT>(GET_L(0)) - static_cast<RESULT>(GET_R(1))); \
  }                                                                        \
  PG_FUNCTION_INFO_V1(dp_total_##name##mul);                               \
  Datum dp_total_##name##mul(PG_FUNCTION_ARGS) {                           \
    RETURN(static_cast<RESULT>(GET_L(0)) * static_cast<RESULT>(GET_R(1))); \
  }                                                                        \
  PG_FUNCTION_INFO_V1(dp_total_##name##div);                               \
  Datum dp_total_##name##div(PG_FUNCTION_ARGS) {                           \
    if (GET_R(1) == 0) PG_RETURN_NULL();                                   \
    RETURN(static_cast<RESULT>(GET_L(0)) / static_cast<RESULT>(GET_R(1))); \
  }

DP_FLOAT_OPS(float4, float4, PG_GETARG_FLOAT4, PG_GETARG_FLOAT4, PG_RETURN_FLOAT4)
DP_FLOAT_OPS(float8, float8, PG_GETARG_FLOAT8, PG_GETARG_FLOAT8, PG_RETURN_FLOAT8)
DP_FLOAT_OPS(float48, float8, PG_GETARG_FLOAT4, PG_GETARG_FLOAT8, PG_RETURN_FLOAT8)
DP_FLOAT_OPS(float84, float8, PG_GETARG_FLOAT8, PG_GETARG_FLOAT4, PG_RETURN_FLOAT8)

// numeric: the *_opt_error functions report division by zero and overflow
// through `failed` instead of raising. For * / and % (quadratic: the
// built-in's time grows with the product of the operands' digits), operands
// over kMaxNumericBaseDigits give NULL. + and - take time linear in the
// digits their result spans (at most numeric's 131072 + 16383 decimal
// digits, some 50 microseconds), and dp_agg.unit_sum(numeric) adds with
// them: they keep every operand.
#define DP_NUMERIC_OP(name, builtin, quadratic)                                                \
  PG_FUNCTION_INFO_V1(dp_total_numeric_##name);                                                \
  Datum dp_total_numeric_##name(PG_FUNCTION_ARGS) {                                            \
    if ((quadratic) && (!NumericFits(PG_GETARG_DATUM(0)) || !NumericFits(PG_GETARG_DATUM(1)))) \
      PG_RETURN_NULL();                                                                        \
    CountNumericWork(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), quadratic);                       \
    bool failed = false;                                                                       \
    Numeric result = builtin(PG_GETARG_NUMERIC(0), PG_GETARG_NUMERIC(1), &failed);             \
    result = NumericOrNull(result, failed, fcinfo);                                            \
    if (fcinfo->isnull) return static_cast<Datum>(0);                                          \
    PG_RETURN_NUMERIC(result);                                                                 \
  }

DP_NUMERIC_OP(add, numeric_add_opt_error, false)
DP_NUMERIC_OP(sub, numeric_sub_opt_error, false)
DP_NUMERIC_OP(mul, numeric_mul_opt_error, true)
DP_NUMERIC_OP(div, numeric_div_opt_error, true)
DP_NUMERIC_OP(mod, numeric_mod_opt_error, true)

// numeric -> float8 through the decimal text, parsed by strtod, which
// saturates to +-HUGE_VAL (Infinity) and underflows to 0 or a subnormal
// without raising (float8in raises for both). numeric_out raises nothing for
// a valid numeric: it prints NaN, Infinity, -Infinity or the digits. Over
// kMaxNumericBaseDigits: NULL (strtod of a long digit string is slow).
PG_FUNCTION_INFO_V1(dp_total_float8_numeric);
Datum dp_total_float8_numeric(PG_FUNCTION_ARGS) {
  if (!NumericFits(PG_GETARG_DATUM(0))) PG_RETURN_NULL();
  dp_pg::total_work_units += NumericBaseDigits(PG_GETARG_DATUM(0));
  char* text = DatumGetCString(DirectFunctionCall1(numeric_out, PG_GETARG_DATUM(0)));
  if (strcmp(text, "NaN") == 0) PG_RETURN_FLOAT8(get_float8_nan());
  if (strcmp(text, "Infinity") == 0) PG_RETURN_FLOAT8(get_float8_infinity());
  if (strcmp(text, "-Infinity") == 0) PG_RETURN_FLOAT8(-get_float8_infinity());
  const double value = strtod(text, nullptr);
  pfree(text);
  PG_RETURN_FLOAT8(value);
}

PG_FUNCTION_INFO_V1(dp_total_date_pli);
Datum dp_total_date_pli(PG_FUNCTION_ARGS) {
  PG_RETURN_DATEADT(TotalDateShift(PG_GETARG_DATEADT(0), PG_GETARG_INT32(1)));
}

PG_FUNCTION_INFO_V1(dp_total_date_mii);
Datum dp_total_date_mii(PG_FUNCTION_ARGS) {
  PG_RETURN_DATEADT(TotalDateShift(PG_GETARG_DATEADT(0), -static_cast<int64>(PG_GETARG_INT32(1))));
}

PG_FUNCTION_INFO_V1(dp_total_timestamp_pl_interval);
Datum dp_total_timestamp_pl_interval(PG_FUNCTION_ARGS) {
  return TotalTimestampShift(timestamp_pl_interval, PG_GETARG_DATUM(0), PG_GETARG_INTERVAL_P(1),
                             false, fcinfo);
}

PG_FUNCTION_INFO_V1(dp_total_timestamp_mi_interval);
Datum dp_total_timestamp_mi_interval(PG_FUNCTION_ARGS) {
  return TotalTimestampShift(timestamp_mi_interval, PG_GETARG_DATUM(0), PG_GETARG_INTERVAL_P(1),
                             true, fcinfo);
}

PG_FUNCTION_INFO_V1(dp_total_timestamptz_pl_interval);
Datum dp_total_timestamptz_pl_interval(PG_FUNCTION_ARGS) {
  return TotalTimestampShift(timestamptz_pl_interval, PG_GETARG_DATUM(0), PG_GETARG_INTERVAL_P(1),
                             false, fcinfo);
}

PG_FUNCTION_INFO_V1(dp_total_timestamptz_mi_interval);
Datum dp_total_timestamptz_mi_interval(PG_FUNCTION_ARGS) {
  return TotalTimestampShift(timestamptz_mi_interval, PG_GETARG_DATUM(0), PG_GETARG_INTERVAL_P(1),
                             true, fcinfo);
}

}  // extern "C"

namespace {

// date_trunc moves a timestamp down by at most a millennium and a week (the
// ISO week of January 1st), and across a time zone offset: farther than
// this from the start of the range and two days from its end, the built-in
// cannot raise "timestamp out of range".
bool TruncationStaysInRange(Timestamp timestamp) {
  const double day = static_cast<double>(USECS_PER_DAY);
  return static_cast<double>(timestamp) >
             static_cast<double>(MIN_TIMESTAMP) + (1001.0 * 366.0 + 9.0) * day &&
         static_cast<double>(timestamp) < static_cast<double>(END_TIMESTAMP) - 2.0 * day;
}

}  // namespace

extern "C" {

// date_trunc(field, timestamp[tz]) with a field checked at judgement
// (constant_arguments.h): infinite timestamps stay as they are (as in the
// built-in); finite ones within 1001 years of the start of the range (before
// 3713 BC) or two days of its end give NULL.
PG_FUNCTION_INFO_V1(dp_total_date_trunc_timestamp);
Datum dp_total_date_trunc_timestamp(PG_FUNCTION_ARGS) {
  const Timestamp timestamp = PG_GETARG_TIMESTAMP(1);
  if (TIMESTAMP_NOT_FINITE(timestamp)) PG_RETURN_TIMESTAMP(timestamp);
  if (!TruncationStaysInRange(timestamp)) PG_RETURN_NULL();
  return DirectFunctionCall2(timestamp_trunc, PG_GETARG_DATUM(0), PG_GETARG_DATUM(1));
}

PG_FUNCTION_INFO_V1(dp_total_date_trunc_timestamptz);
Datum dp_total_date_trunc_timestamptz(PG_FUNCTION_ARGS) {
  const TimestampTz timestamp = PG_GETARG_TIMESTAMPTZ(1);
  if (TIMESTAMP_NOT_FINITE(timestamp)) PG_RETURN_TIMESTAMPTZ(timestamp);
  if (!TruncationStaysInRange(timestamp)) PG_RETURN_NULL();
  return DirectFunctionCall2(timestamptz_trunc, PG_GETARG_DATUM(0), PG_GETARG_DATUM(1));
}

// date -> timestamp[tz]: the *_opt_overflow conversions report a date
// beyond the timestamp range (or, for timestamptz, pushed beyond it by the
// session's time zone) as +-infinity instead of raising.
PG_FUNCTION_INFO_V1(dp_total_timestamp_date);
Datum dp_total_timestamp_date(PG_FUNCTION_ARGS) {
  int overflow = 0;
  const Timestamp result = date2timestamp_opt_overflow(PG_GETARG_DATEADT(0), &overflow);
  PG_RETURN_TIMESTAMP(result);
}

PG_FUNCTION_INFO_V1(dp_total_timestamptz_date);
Datum dp_total_timestamptz_date(PG_FUNCTION_ARGS) {
  int overflow = 0;
  const TimestampTz result = date2timestamptz_opt_overflow(PG_GETARG_DATEADT(0), &overflow);
  PG_RETURN_TIMESTAMPTZ(result);
}

}  // extern "C"

namespace {

// The longest text, in bytes, that a total text function reads: beyond it
// lower, upper, LIKE, ILIKE, length and substring return NULL without
// detoasting it. One call at the cap costs about 1 ms (lower() of 64 KiB of
// two-byte characters under libc's C.UTF-8: 0.7-0.9 ms; ICU 0.3 ms;
// length 0.08 ms, README "Work per row"), where lower() of a 15 MB text took
// 1.5-2 s (issue 26, finding 3). It also keeps lower()/upper()'s buffers of
// up to 4n+4 bytes far from the 1 GB allocation limit they raise at.
constexpr Size kMaxTotalTextBytes = 64 * 1024;

// LIKE and ILIKE (MatchText, like_match.c) take time up to the product of the
// text's and the pattern's length: each % retries the rest of the pattern
// from every position of the text. Beyond this product (a 64 KiB text with a
// 16-byte pattern, a 4 KiB text with a 256-byte one) they return NULL; at
// it one call costs at most about 10 ms (README "Work per row").
constexpr Size kMaxLikeWork = Size{1} << 20;

bool WorkCapped() { return !dp_pg::TestFaultIs(dp_pg::TestFault::kUncappedTextWork); }

// The one check every total text function makes of each text argument, or
// nullptr where the function returns NULL:
//   * longer than kMaxTotalTextBytes (from the stored size: not detoasted);
//   * not valid in the database encoding. Valid texts are all that client
//     input and stored data hold, but a query can make others: a
//     timestamptz printed under DateStyle Postgres in a time zone whose
//     abbreviation PostgreSQL cuts at 10 bytes inside a character
//     (TimeZone '<ABCDEFGHIé>+5') ends in a lone byte 0xc3. lower(),
//     upper(), ILIKE, length() and substring() raise "invalid byte
//     sequence" (22021) for such a text, only for the rows whose text
//     reaches them (issue 26, finding 1), and LIKE steps by
//     characters (pg_mblen) that could run past the end. Text comparisons
//     (texteq, text_lt, ... under libc and ICU, bpchar, name) compare bytes
//     or collate without checking, and need no check.
// The detoasted text is returned, to be passed to the built-in; its bytes
// are added to total_work_units.
text* UsableText(Datum value) {
  if (toast_raw_datum_size(value) - VARHDRSZ > kMaxTotalTextBytes && WorkCapped()) return nullptr;
  text* detoasted = DatumGetTextPP(value);
  const int length = VARSIZE_ANY_EXHDR(detoasted);
  dp_pg::total_work_units += static_cast<uint64>(length);
  if (!dp_pg::TestFaultIs(dp_pg::TestFault::kUncheckedTextEncoding) &&
      !pg_verifymbstr(VARDATA_ANY(detoasted), length, true))
    return nullptr;
  return detoasted;
}

// LIKE/ILIKE's two texts, or false where the total version returns NULL.
bool UsableLikeTexts(FunctionCallInfo fcinfo, text** value, text** pattern) {
  *value = UsableText(PG_GETARG_DATUM(0));
  if (*value == nullptr) return false;
  *pattern = UsableText(PG_GETARG_DATUM(1));
  if (*pattern == nullptr) return false;
  const Size work =
      static_cast<Size>(VARSIZE_ANY_EXHDR(*value)) * static_cast<Size>(VARSIZE_ANY_EXHDR(*pattern));
  return work <= kMaxLikeWork || !WorkCapped();
}

// numeric_floor, numeric_ceil, numeric_round and numeric_trunc raise "value
// overflows numeric format" only when the rounded value needs a weight
// beyond NUMERIC_WEIGHT_MAX (10^131072). Below 10^130000 (and with
// numeric_round's scale clamped to [-2000, 2000]) the result stays below
// 10^130001, so these call the built-in there and return NULL above.
constexpr int kNumericRoundingLimitDigits = 130000;

Numeric numeric_rounding_limit = nullptr;

// 10^130000 as a numeric, made once per backend from its decimal digits
// (numeric_in raises nothing for a well-formed number of that size).
Numeric NumericRoundingLimit() {
  if (numeric_rounding_limit != nullptr) return numeric_rounding_limit;
  char* digits = static_cast<char*>(palloc(kNumericRoundingLimitDigits + 2));
  digits[0] = '1';
  memset(digits + 1, '0', kNumericRoundingLimitDigits);
  digits[kNumericRoundingLimitDigits + 1] = '\0';
  Datum limit = DirectFunctionCall3(numeric_in, CStringGetDatum(digits),
                                    ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
  const Size size = VARSIZE(DatumGetPointer(limit));
  auto* kept = static_cast<Numeric>(MemoryContextAlloc(TopMemoryContext, size));
  memcpy(kept, DatumGetPointer(limit), size);
  pfree(digits);
  numeric_rounding_limit = kept;
  return kept;
}

// Whether rounding `value` (finite) cannot overflow.
bool RoundingStaysInRange(Datum value) {
  Datum magnitude = DirectFunctionCall1(numeric_abs, value);
  return DatumGetBool(
      DirectFunctionCall2(numeric_lt, magnitude, NumericGetDatum(NumericRoundingLimit())));
}

}  // namespace

extern "C" {

// lower() and upper() (str_tolower/str_toupper, formatting.c): for a valid
// text within the size cap, every ereport depends on the collation only (an
// undetermined one is refused at judgement, CollationIsTotal).
PG_FUNCTION_INFO_V1(dp_total_lower);
Datum dp_total_lower(PG_FUNCTION_ARGS) {
  text* value = UsableText(PG_GETARG_DATUM(0));
  if (value == nullptr) PG_RETURN_NULL();
  return DirectFunctionCall1Coll(lower, PG_GET_COLLATION(), PointerGetDatum(value));
}

PG_FUNCTION_INFO_V1(dp_total_upper);
Datum dp_total_upper(PG_FUNCTION_ARGS) {
  text* value = UsableText(PG_GETARG_DATUM(0));
  if (value == nullptr) PG_RETURN_NULL();
  return DirectFunctionCall1Coll(upper, PG_GET_COLLATION(), PointerGetDatum(value));
}

// LIKE / NOT LIKE (textlike, textnlike: GenericMatchText): for valid texts,
// they raise only for a nondeterministic collation (refused at judgement)
// and a pattern ending in the escape character (a constant checked at
// judgement, constant_arguments.cpp).
PG_FUNCTION_INFO_V1(dp_total_textlike);
Datum dp_total_textlike(PG_FUNCTION_ARGS) {
  text* value;
  text* pattern;
  if (!UsableLikeTexts(fcinfo, &value, &pattern)) PG_RETURN_NULL();
  return DirectFunctionCall2Coll(textlike, PG_GET_COLLATION(), PointerGetDatum(value),
                                 PointerGetDatum(pattern));
}

PG_FUNCTION_INFO_V1(dp_total_textnlike);
Datum dp_total_textnlike(PG_FUNCTION_ARGS) {
  text* value;
  text* pattern;
  if (!UsableLikeTexts(fcinfo, &value, &pattern)) PG_RETURN_NULL();
  return DirectFunctionCall2Coll(textnlike, PG_GET_COLLATION(), PointerGetDatum(value),
                                 PointerGetDatum(pattern));
}

// ILIKE (Generic_Text_IC_like, like.c) lowers the text and the pattern with
// lower() in a multibyte database or under ICU, then matches as LIKE does:
// total under the same constant-pattern rule as LIKE (constant_arguments.cpp)
// for valid texts within the caps. bpchar ILIKE runs the same C function.
PG_FUNCTION_INFO_V1(dp_total_texticlike);
Datum dp_total_texticlike(PG_FUNCTION_ARGS) {
  text* value;
  text* pattern;
  if (!UsableLikeTexts(fcinfo, &value, &pattern)) PG_RETURN_NULL();
  return DirectFunctionCall2Coll(texticlike, PG_GET_COLLATION(), PointerGetDatum(value),
                                 PointerGetDatum(pattern));
}

PG_FUNCTION_INFO_V1(dp_total_texticnlike);
Datum dp_total_texticnlike(PG_FUNCTION_ARGS) {
  text* value;
  text* pattern;
  if (!UsableLikeTexts(fcinfo, &value, &pattern)) PG_RETURN_NULL();
  return DirectFunctionCall2Coll(texticnlike, PG_GET_COLLATION(), PointerGetDatum(value),
                                 PointerGetDatum(pattern));
}

// length/char_length/character_length(text) (textlen: pg_mbstrlen_with_len):
// no error path for a valid text.
PG_FUNCTION_INFO_V1(dp_total_textlen);
Datum dp_total_textlen(PG_FUNCTION_ARGS) {
  text* value = UsableText(PG_GETARG_DATUM(0));
  if (value == nullptr) PG_RETURN_NULL();
  return DirectFunctionCall1(textlen, PointerGetDatum(value));
}

// substring/substr(text, start [, length]) (text_substr, text_substr_no_len):
// for a valid text, the only ereport is "negative substring length not
// allowed", and the length is a non-negative constant checked at judgement.
PG_FUNCTION_INFO_V1(dp_total_text_substr);
Datum dp_total_text_substr(PG_FUNCTION_ARGS) {
  text* value = UsableText(PG_GETARG_DATUM(0));
  if (value == nullptr) PG_RETURN_NULL();
  return DirectFunctionCall3(text_substr, PointerGetDatum(value), PG_GETARG_DATUM(1),
                             PG_GETARG_DATUM(2));
}

PG_FUNCTION_INFO_V1(dp_total_text_substr_no_len);
Datum dp_total_text_substr_no_len(PG_FUNCTION_ARGS) {
  text* value = UsableText(PG_GETARG_DATUM(0));
  if (value == nullptr) PG_RETURN_NULL();
  return DirectFunctionCall2(text_substr_no_len, PointerGetDatum(value), PG_GETARG_DATUM(1));
}

// NaN and +-Infinity: the built-ins return them unchanged. Over
// kMaxNumericBaseDigits: NULL, as for the arithmetic.
#define DP_NUMERIC_ROUNDING1(name, builtin)                                       \
  PG_FUNCTION_INFO_V1(dp_total_numeric_##name);                                   \
  Datum dp_total_numeric_##name(PG_FUNCTION_ARGS) {                               \
    Numeric value = PG_GETARG_NUMERIC(0);                                         \
    if (numeric_is_nan(value) || numeric_is_inf(value)) PG_RETURN_NUMERIC(value); \
    if (!NumericFits(PG_GETARG_DATUM(0))) PG_RETURN_NULL();                       \
    dp_pg::total_work_units += NumericBaseDigits(PG_GETARG_DATUM(0));             \
    if (!RoundingStaysInRange(PG_GETARG_DATUM(0))) PG_RETURN_NULL();              \
    return DirectFunctionCall1(builtin, PG_GETARG_DATUM(0));                      \
  }

#define DP_NUMERIC_ROUNDING2(name, builtin)                                       \
  PG_FUNCTION_INFO_V1(dp_total_numeric_##name);                                   \
  Datum dp_total_numeric_##name(PG_FUNCTION_ARGS) {                               \
    Numeric value = PG_GETARG_NUMERIC(0);                                         \
    if (numeric_is_nan(value) || numeric_is_inf(value)) PG_RETURN_NUMERIC(value); \
    if (!NumericFits(PG_GETARG_DATUM(0))) PG_RETURN_NULL();                       \
    dp_pg::total_work_units += NumericBaseDigits(PG_GETARG_DATUM(0));             \
    if (!RoundingStaysInRange(PG_GETARG_DATUM(0))) PG_RETURN_NULL();              \
    return DirectFunctionCall2(builtin, PG_GETARG_DATUM(0), PG_GETARG_DATUM(1));  \
  }

DP_NUMERIC_ROUNDING1(floor, numeric_floor)
DP_NUMERIC_ROUNDING1(ceil, numeric_ceil)
DP_NUMERIC_ROUNDING2(round, numeric_round)
DP_NUMERIC_ROUNDING2(trunc, numeric_trunc)

// width_bucket with bounds and count that the judge accepted
// (constant_arguments.cpp: finite, distinct, |bound| <= 1e15, count in
// [1, 100000]; an operand over kMaxNumericBaseDigits gives NULL): the
// built-ins then raise only for a NaN operand ("operand,
// lower bound, and upper bound cannot be NaN"), which gives NULL here. An
// infinite operand falls in bucket 0 or count + 1, as in the built-in.
PG_FUNCTION_INFO_V1(dp_total_width_bucket_numeric);
Datum dp_total_width_bucket_numeric(PG_FUNCTION_ARGS) {
  if (!NumericFits(PG_GETARG_DATUM(0))) PG_RETURN_NULL();
  dp_pg::total_work_units += NumericBaseDigits(PG_GETARG_DATUM(0));
  if (numeric_is_nan(PG_GETARG_NUMERIC(0))) PG_RETURN_NULL();
  return DirectFunctionCall4(width_bucket_numeric, PG_GETARG_DATUM(0), PG_GETARG_DATUM(1),
                             PG_GETARG_DATUM(2), PG_GETARG_DATUM(3));
}

PG_FUNCTION_INFO_V1(dp_total_width_bucket_float8);
Datum dp_total_width_bucket_float8(PG_FUNCTION_ARGS) {
  if (std::isnan(PG_GETARG_FLOAT8(0))) PG_RETURN_NULL();
  return DirectFunctionCall4(width_bucket_float8, PG_GETARG_DATUM(0), PG_GETARG_DATUM(1),
                             PG_GETARG_DATUM(2), PG_GETARG_DATUM(3));
}

}  // extern "C"

namespace {

// The lc_time for which cache_locale_time() last succeeded while a query
// was judged (PinLcTimeForToChar), or empty.
char verified_lc_time[256] = "";

// Whether the session's lc_time is the one verified at judgement: then
// cache_locale_time(), which DCH_to_char calls for every format, finds its
// cache valid or rebuilds it for a locale that already succeeded.
bool LcTimeVerified() {
  return verified_lc_time[0] != '\0' && locale_time != nullptr &&
         strcmp(locale_time, verified_lc_time) == 0;
}

}  // namespace

namespace dp_pg {

uint64 total_work_units = 0;

void PinLcTimeForToChar() {
  // Raises here, while planning and whatever the rows, if lc_time's names
  // cannot be cached (setlocale/strftime failures, names not convertible to
  // the database encoding).
  cache_locale_time();
  if (locale_time != nullptr && strlen(locale_time) < sizeof verified_lc_time)
    strlcpy(verified_lc_time, locale_time, sizeof verified_lc_time);
}

}  // namespace dp_pg

extern "C" {

// to_char(timestamp[tz], format) with a format checked at judgement
// (constant, no TM, at most 256 bytes). DCH_to_char first calls
// cache_locale_time(), which can raise for some lc_time values; the judge
// has run it for the session's lc_time (PinLcTimeForToChar). If lc_time was
// changed since (SET lc_time, then EXECUTE of a plan made before), the
// result is NULL for every row rather than a first call, reached only by
// the rows that get there, that could raise. PARALLEL RESTRICTED: a worker
// has not judged the query (its cache and this record are its own), so the
// leader evaluates these.
//
// The built-ins return NULL for an infinite timestamp or an empty format,
// which DirectFunctionCall would turn into an error ("function returned
// NULL"): they are called here with a call frame that passes the NULL on.
static Datum CallToChar(PGFunction builtin, FunctionCallInfo fcinfo) {
  if (!LcTimeVerified()) PG_RETURN_NULL();
  if (TIMESTAMP_NOT_FINITE(PG_GETARG_TIMESTAMP(0))) PG_RETURN_NULL();
  LOCAL_FCINFO(call, 2);
  InitFunctionCallInfoData(*call, nullptr, 2, PG_GET_COLLATION(), nullptr, nullptr);
  call->args[0].value = PG_GETARG_DATUM(0);
  call->args[0].isnull = false;
  call->args[1].value = PG_GETARG_DATUM(1);
  call->args[1].isnull = false;
  const Datum result = builtin(call);
  if (call->isnull) PG_RETURN_NULL();
  return result;
}

PG_FUNCTION_INFO_V1(dp_total_to_char_timestamp);
Datum dp_total_to_char_timestamp(PG_FUNCTION_ARGS) { return CallToChar(timestamp_to_char, fcinfo); }

PG_FUNCTION_INFO_V1(dp_total_to_char_timestamptz);
Datum dp_total_to_char_timestamptz(PG_FUNCTION_ARGS) {
  return CallToChar(timestamptz_to_char, fcinfo);
}

}  // extern "C"
