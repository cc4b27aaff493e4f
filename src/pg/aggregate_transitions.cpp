// dp_count, dp_sum and dp_avg: their state (allocation, reading) and
// transition functions. Per row the transition functions only clamp and add
// to exact integers; all noise is drawn in the final functions
// (aggregates.cpp), which run once per group (and, under Citus, once on the
// coordinator).
#include <algorithm>
#include <cstdint>
#include <new>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "../core/confidence.h"
#include "../core/gaussian_mechanism.h"
#include "../core/grid_value.h"
#include "../core/mean_interval.h"
#include "../core/noise_mechanism.h"
#include "../core/numeric_digits.h"
#include "../core/partition_selection.h"
#include "../core/private_statistics.h"
#include "../core/state_text.h"
#include "aggregate_functions.h"
#include "aggregate_state.h"
#include "citus/adapter.h"
#include "error_boundary.h"
#include "settings.h"
#include "state_header.h"
#include "support_guard.h"

namespace dp_pg {

static_assert(offsetof(AggregateState, format_version) == offsetof(StateHeader, format_version) &&
                  offsetof(AggregateState, initialized) == offsetof(StateHeader, initialized),
              "AggregateState starts with StateHeader");

void RequireAggregateContext(FunctionCallInfo fcinfo, const char* function) {
  if (AggCheckCallContext(fcinfo, nullptr) != AGG_CONTEXT_AGGREGATE)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s can only be called as part of a private aggregate", function),
                    errhint("Use the dp_ functions as aggregates, not as window functions or "
                            "plain functions.")));
}

// A read-only state argument (final functions; the second combine input,
// which may come from a tuple). Copies it out so alignment never matters.
// (aggregate_state.h)
void ReadState(FunctionCallInfo fcinfo, int argument, AggregateState* out) {
  const void* raw =
      ReadStateCopy(fcinfo, argument, sizeof(AggregateState), kStateFormatVersion, "dp_agg state");
  if (VARSIZE(raw) != sizeof(AggregateState))
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dp_agg state")));
  std::memcpy(out, raw, sizeof(AggregateState));
}

AggregateState* NewAggregateState() {
  auto* state = static_cast<AggregateState*>(palloc0(sizeof(AggregateState)));
  SET_VARSIZE(state, sizeof(AggregateState));
  state->format_version = kStateFormatVersion;
  return state;
}

namespace {

// The state argument of a transition or combine function, which may be
// updated in place: nodeAgg keeps it in the aggregate memory context.
// Calling the support functions outside an aggregate is refused, so the exact
// sums inside a state can never be read out directly.
//
// It runs once per row, so the usual case is decided inline: a call from
// nodeAgg has an AggState as its context, which is the first case
// AggCheckCallContext accepts as AGG_CONTEXT_AGGREGATE (nodeAgg.c); every
// other call goes through RequireAggregateContext, which refuses it. Two
// out-of-line calls per row had cost about as much as sum(int4)'s whole
// transition function.
inline AggregateState* MutableState(FunctionCallInfo fcinfo, const char* function) {
  if (__builtin_expect(fcinfo->context == nullptr || !IsA(fcinfo->context, AggState), 0))
    RequireAggregateContext(fcinfo, function);
  auto* state = reinterpret_cast<AggregateState*>(PG_GETARG_POINTER(0));
  if (__builtin_expect(state->initialized != kStatePrepared, 0)) {
    // dp_agg on Citus: states start from agginitcond
    if (state->initialized == kStateUninitialized)
      if (void* prepared = CitusPreparedState(fcinfo))
        state = static_cast<AggregateState*>(prepared);
    // A state read from text (INITCOND of an aggregate someone else built)
    // never accumulates rows (support_guard.h).
    RequirePreparedState(state->initialized);
  }
  return state;
}

inline void AddUnits(AggregateState* state, std::int64_t units) {
  state->count += 1;
  SetSum(state, GetSum(state) + units);
}

inline void AddInteger(AggregateState* state, std::int64_t value) {
  if (__builtin_expect(state->skip_clamping == 0, 1)) {
    if (value < state->lower_units) value = state->lower_units;
    if (value > state->upper_units) value = state->upper_units;
  }
  AddUnits(state, value);
}

// NaN has no place between the bounds: it is ignored like NULL. Infinities
// are clamped like any other value.
inline void AddDouble(AggregateState* state, double value) {
  if (std::isnan(value)) return;
  if (__builtin_expect(state->skip_clamping == 0, 1)) {
    if (value < state->lower) value = state->lower;
    if (value > state->upper) value = state->upper;
  } else {
    // Broken on purpose, but still within the range the units can hold.
    const double limit = std::ldexp(1.0, state->unit_exponent + 62);
    value = std::clamp(value, -limit, limit);
  }
  AddUnits(state, dp::ToUnits(value, state->unit_exponent, state->unit_scale));
}

// The on-disk format of numeric (src/backend/utils/adt/numeric.c, PostgreSQL
// 14 and later; utils/numeric.h does not export it). After the varlena header
// comes a uint16 n_header:
//   - 0xC000 in the top two bits: a special value, 0xC000 NaN, 0xD000
//     +Infinity, 0xF000 -Infinity (top four bits);
//   - 0x8000 in the top two bits: the short form; sign in 0x2000, display
//     scale in 0x1F80, weight in the low 7 bits (sign 0x0040, 6 bits 0x003F);
//   - otherwise the long form: sign in 0x4000 (0x0000 positive), display scale
//     in the low 14 bits, followed by an int16 weight.
// Then the digits, int16 each in [0, 9999] (NBASE 10000), most significant
// first; the value is sum digit[i] * 10000^(weight - i). The display scale
// does not change the value. Digits may be unaligned in a short (1-byte
// header) varlena, so they are copied out with memcpy.
// sql/sum.sql checks the decoding against the cast to double precision.
constexpr std::uint16_t kNumericSignMask = 0xC000;
constexpr std::uint16_t kNumericNegative = 0x4000;
constexpr std::uint16_t kNumericShort = 0x8000;
constexpr std::uint16_t kNumericSpecial = 0xC000;
constexpr std::uint16_t kNumericSpecialMask = 0xF000;
constexpr std::uint16_t kNumericNaN = 0xC000;
constexpr std::uint16_t kNumericPlusInfinity = 0xD000;
constexpr std::uint16_t kNumericShortSign = 0x2000;
constexpr std::uint16_t kNumericShortWeightSign = 0x0040;
constexpr std::uint16_t kNumericShortWeightMask = 0x003F;
// Base10000ToDouble never answers for more significant digits than this;
// longer values go to the text path without being copied.
constexpr int kMaxFastDigits = 8;

// The value of a numeric datum as the double numeric_float8_no_overflow
// returns, bit for bit: NaN, +-infinity, or the nearest double.
double NumericToDouble(Datum datum) {
  // Packed: a short varlena is read in place (no copy); a compressed or
  // external one is expanded.
  struct varlena* raw = PG_DETOAST_DATUM_PACKED(datum);
  const auto* data = reinterpret_cast<const unsigned char*>(VARDATA_ANY(raw));
  const std::size_t size = VARSIZE_ANY_EXHDR(raw);
  if (size >= sizeof(std::uint16_t)) {
    std::uint16_t header;
    std::memcpy(&header, data, sizeof header);
    const std::uint16_t flags = header & kNumericSignMask;
    if (flags == kNumericSpecial) {
      if ((header & kNumericSpecialMask) == kNumericNaN) return std::nan("");
      return (header & kNumericSpecialMask) == kNumericPlusInfinity
                 ? std::numeric_limits<double>::infinity()
                 : -std::numeric_limits<double>::infinity();
    }
    bool negative;
    int weight;
    std::size_t offset = sizeof(std::uint16_t);
    if (flags == kNumericShort) {
      negative = (header & kNumericShortSign) != 0;
      weight = (header & kNumericShortWeightMask);
      if ((header & kNumericShortWeightSign) != 0) weight |= ~int{kNumericShortWeightMask};
    } else {
      negative = flags == kNumericNegative;
      std::int16_t long_weight = 0;
      if (size >= offset + sizeof long_weight)
        std::memcpy(&long_weight, data + offset, sizeof long_weight);
      weight = long_weight;
      offset += sizeof long_weight;
    }
    if (size >= offset && (size - offset) % sizeof(std::uint16_t) == 0 &&
        (size - offset) / sizeof(std::uint16_t) <= static_cast<std::size_t>(kMaxFastDigits)) {
      const int count = static_cast<int>((size - offset) / sizeof(std::uint16_t));
      std::uint16_t digits[kMaxFastDigits];
      std::memcpy(digits, data + offset, count * sizeof(std::uint16_t));
      double value;
      if (dp::Base10000ToDouble(digits, count, weight, negative, &value)) return value;
    }
  }
  return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, datum));
}

}  // namespace

}  // namespace dp_pg

using dp_pg::AggregateState;

extern "C" {

PG_FUNCTION_INFO_V1(dp_count_transfn);
Datum dp_count_transfn(PG_FUNCTION_ARGS) {
  AggregateState* state = dp_pg::MutableState(fcinfo, "dp_count_transfn");
  state->count += 1;  // STRICT: NULL values never reach this function
  PG_RETURN_POINTER(state);
}

// dp_agg.group_selection(epsilon, delta) counts every row of its group; the
// planner hook puts it into HAVING of GROUP BY over protected rows.
PG_FUNCTION_INFO_V1(dp_group_selection_transfn);
Datum dp_group_selection_transfn(PG_FUNCTION_ARGS) {
  AggregateState* state = dp_pg::MutableState(fcinfo, "dp_group_selection_transfn");
  state->count += 1;
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_int2_transfn);
Datum dp_int2_transfn(PG_FUNCTION_ARGS) {
  AggregateState* state = dp_pg::MutableState(fcinfo, "dp_int2_transfn");
  dp_pg::AddInteger(state, PG_GETARG_INT16(1));
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_int4_transfn);
Datum dp_int4_transfn(PG_FUNCTION_ARGS) {
  AggregateState* state = dp_pg::MutableState(fcinfo, "dp_int4_transfn");
  dp_pg::AddInteger(state, PG_GETARG_INT32(1));
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_int8_transfn);
Datum dp_int8_transfn(PG_FUNCTION_ARGS) {
  AggregateState* state = dp_pg::MutableState(fcinfo, "dp_int8_transfn");
  dp_pg::AddInteger(state, PG_GETARG_INT64(1));
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_float4_transfn);
Datum dp_float4_transfn(PG_FUNCTION_ARGS) {
  AggregateState* state = dp_pg::MutableState(fcinfo, "dp_float4_transfn");
  dp_pg::AddDouble(state, PG_GETARG_FLOAT4(1));
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_float8_transfn);
Datum dp_float8_transfn(PG_FUNCTION_ARGS) {
  AggregateState* state = dp_pg::MutableState(fcinfo, "dp_float8_transfn");
  dp_pg::AddDouble(state, PG_GETARG_FLOAT8(1));
  PG_RETURN_POINTER(state);
}

// numeric_float8_no_overflow maps out-of-range values to +-infinity and tiny
// ones to zero instead of raising an error (float8in would raise one), so no
// value in the table can make the query fail. The conversion is monotone, so
// clamping after it is the same as clamping before it. It goes through text
// (numeric_out, then strtod): NumericToDouble below reads the digits directly
// and takes that path only for values it cannot convert exactly itself.
PG_FUNCTION_INFO_V1(dp_numeric_transfn);
Datum dp_numeric_transfn(PG_FUNCTION_ARGS) {
  AggregateState* state = dp_pg::MutableState(fcinfo, "dp_numeric_transfn");
  dp_pg::AddDouble(state, dp_pg::NumericToDouble(PG_GETARG_DATUM(1)));
  PG_RETURN_POINTER(state);
}

}  // extern "C"
