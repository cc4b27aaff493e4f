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
//
// It runs once per group and aggregate: a plain (4-byte header, not
// compressed, not external) state is copied straight into `out`, which makes
// the same checks as ReadStateCopy without its palloc and second copy; any
// other varlena goes through ReadStateCopy.
void ReadState(FunctionCallInfo fcinfo, int argument, AggregateState* out) {
  if (!PG_ARGISNULL(argument)) {
    const auto* plain = reinterpret_cast<const struct varlena*>(PG_GETARG_POINTER(argument));
    if (!VARATT_IS_EXTENDED(plain) && VARSIZE(plain) == sizeof(AggregateState)) {
      std::memcpy(out, plain, sizeof(AggregateState));
      if (out->format_version != kStateFormatVersion)
        ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dp_agg state")));
      return;
    }
  }
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
AggregateState* MutableState(FunctionCallInfo fcinfo, const char* function) {
  if (fcinfo->context == nullptr || !IsA(fcinfo->context, AggState))
    RequireAggregateContext(fcinfo, function);
  auto* state = reinterpret_cast<AggregateState*>(PG_GETARG_POINTER(0));
  if (state->initialized != kStatePrepared) {
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

inline std::int64_t ClampedInteger(const AggregateState* state, std::int64_t value) {
  if (value < state->lower_units) value = state->lower_units;
  if (value > state->upper_units) value = state->upper_units;
  return value;
}

inline void AddInteger(AggregateState* state, std::int64_t value) {
  AddUnits(state,
           __builtin_expect(state->skip_clamping == 0, 1) ? ClampedInteger(state, value) : value);
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

// The per-row path of a transition function, which runs once per row: the
// usual call is decided inline and does nothing else. A call from nodeAgg
// has an AggState as its context, which is the first case AggCheckCallContext
// accepts as AGG_CONTEXT_AGGREGATE (nodeAgg.c), and a prepared state whose
// clamping is not switched off by the test fault has, in the bytes after its
// varlena header (format_version, initialized, value_kind, skip_clamping),
// initialized == kStatePrepared and skip_clamping == 0: one 32-bit load and
// compare decides both. Every other call goes through the general path
// (MutableState, then `add` with the fault's broken clamping), out of line
// and reached by a tail call, so that the usual path saves no registers and
// sets up no frame: two out-of-line calls per row had cost about as much as
// sum(int4)'s whole transition function, and the saved registers and the
// separate checks of the general path about a tenth of what is left.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the flag word is read little-endian");
static_assert(offsetof(AggregateState, initialized) ==
                      offsetof(AggregateState, format_version) + 1 &&
                  offsetof(AggregateState, skip_clamping) ==
                      offsetof(AggregateState, format_version) + 3,
              "the flag bytes follow the varlena header");
constexpr std::uint32_t kFlagMask = 0xFF00FF00;  // initialized, skip_clamping
constexpr std::uint32_t kUsualFlags = std::uint32_t{kStatePrepared} << 8;

inline bool IsUsualCall(FunctionCallInfo fcinfo) {
  if (__builtin_expect(fcinfo->context == nullptr || !IsA(fcinfo->context, AggState), 0))
    return false;
  std::uint32_t flags;
  std::memcpy(&flags,
              reinterpret_cast<const char*>(PG_GETARG_POINTER(0)) +
                  offsetof(AggregateState, format_version),
              sizeof flags);
  return __builtin_expect((flags & kFlagMask) == kUsualFlags, 1);
}

// The general path: every check, then `add` (which clamps unless the test
// fault says not to).
template <typename Add>
__attribute__((noinline)) Datum GeneralTransition(FunctionCallInfo fcinfo, const char* function,
                                                  Add add) {
  AggregateState* state = MutableState(fcinfo, function);
  add(state);
  PG_RETURN_POINTER(state);
}

// usual: the row's work on a prepared state with clamping on, or false
// (having changed nothing) to leave the row to the general path; add: the
// row's work for the general path.
template <typename Usual, typename Add>
inline Datum Transition(FunctionCallInfo fcinfo, const char* function, Usual usual, Add add) {
  if (IsUsualCall(fcinfo)) {
    auto* state = reinterpret_cast<AggregateState*>(PG_GETARG_POINTER(0));
    if (__builtin_expect(usual(state), 1)) PG_RETURN_POINTER(state);
  }
  return GeneralTransition(fcinfo, function, add);
}

// (The lambdas capture by value: passed in registers, no stack frame.)
inline Datum IntegerTransition(FunctionCallInfo fcinfo, const char* function, std::int64_t value) {
  return Transition(
      fcinfo, function,
      [value](AggregateState* state) {
        AddUnits(state, ClampedInteger(state, value));
        return true;
      },
      [value](AggregateState* state) { AddInteger(state, value); });
}

inline Datum CountTransition(FunctionCallInfo fcinfo, const char* function) {
  return Transition(
      fcinfo, function,
      [](AggregateState* state) {
        state->count += 1;
        return true;
      },
      [](AggregateState* state) { state->count += 1; });
}

inline Datum DoubleTransition(FunctionCallInfo fcinfo, const char* function, double value) {
  return Transition(
      fcinfo, function,
      [value](AggregateState* state) {
        // Bounds whose unit is outside the normal double range convert
        // with ldexp (grid_value.h ToUnits): left to the general path.
        if (state->unit_scale == 0.0) return false;
        if (std::isnan(value)) return true;
        double clamped = value;
        if (clamped < state->lower) clamped = state->lower;
        if (clamped > state->upper) clamped = state->upper;
        AddUnits(state, dp::RoundToInt64(clamped * state->unit_scale));
        return true;
      },
      [value](AggregateState* state) { AddDouble(state, value); });
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

// The numeric argument of dp_numeric_transfn, added once the call is known
// to be an aggregate's.
void AddNumeric(FunctionCallInfo fcinfo, AggregateState* state) {
  AddDouble(state, NumericToDouble(PG_GETARG_DATUM(1)));
}

}  // namespace

}  // namespace dp_pg

using dp_pg::AggregateState;

extern "C" {

PG_FUNCTION_INFO_V1(dp_count_transfn);
Datum dp_count_transfn(PG_FUNCTION_ARGS) {
  // STRICT: NULL values never reach this function
  return dp_pg::CountTransition(fcinfo, "dp_count_transfn");
}

// dp_agg.group_selection(epsilon, delta) counts every row of its group; the
// planner hook puts it into HAVING of GROUP BY over protected rows.
PG_FUNCTION_INFO_V1(dp_group_selection_transfn);
Datum dp_group_selection_transfn(PG_FUNCTION_ARGS) {
  return dp_pg::CountTransition(fcinfo, "dp_group_selection_transfn");
}

PG_FUNCTION_INFO_V1(dp_int2_transfn);
Datum dp_int2_transfn(PG_FUNCTION_ARGS) {
  return dp_pg::IntegerTransition(fcinfo, "dp_int2_transfn", std::int64_t{PG_GETARG_INT16(1)});
}

PG_FUNCTION_INFO_V1(dp_int4_transfn);
Datum dp_int4_transfn(PG_FUNCTION_ARGS) {
  return dp_pg::IntegerTransition(fcinfo, "dp_int4_transfn", std::int64_t{PG_GETARG_INT32(1)});
}

PG_FUNCTION_INFO_V1(dp_int8_transfn);
Datum dp_int8_transfn(PG_FUNCTION_ARGS) {
  return dp_pg::IntegerTransition(fcinfo, "dp_int8_transfn", std::int64_t{PG_GETARG_INT64(1)});
}

PG_FUNCTION_INFO_V1(dp_float4_transfn);
Datum dp_float4_transfn(PG_FUNCTION_ARGS) {
  return dp_pg::DoubleTransition(fcinfo, "dp_float4_transfn", PG_GETARG_FLOAT4(1));
}

PG_FUNCTION_INFO_V1(dp_float8_transfn);
Datum dp_float8_transfn(PG_FUNCTION_ARGS) {
  return dp_pg::DoubleTransition(fcinfo, "dp_float8_transfn", PG_GETARG_FLOAT8(1));
}

// numeric_float8_no_overflow maps out-of-range values to +-infinity and tiny
// ones to zero instead of raising an error (float8in would raise one), so no
// value in the table can make the query fail. The conversion is monotone, so
// clamping after it is the same as clamping before it. It goes through text
// (numeric_out, then strtod): NumericToDouble below reads the digits directly
// and takes that path only for values it cannot convert exactly itself.
PG_FUNCTION_INFO_V1(dp_numeric_transfn);
Datum dp_numeric_transfn(PG_FUNCTION_ARGS) {
  // Converted only once the call is known to be an aggregate's (inside `add`).
  return dp_pg::Transition(
      fcinfo, "dp_numeric_transfn",
      [fcinfo](AggregateState* state) {
        dp_pg::AddNumeric(fcinfo, state);
        return true;
      },
      [fcinfo](AggregateState* state) { dp_pg::AddNumeric(fcinfo, state); });
}

}  // extern "C"
