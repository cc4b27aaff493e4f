// dp_variance and dp_stddev: the bounded variance of core/variance.h (a noisy
// count, centred sum and centred sum of squares, a third of the budget each).
// Per row the transition functions only clamp and add to exact integers; the
// three releases are drawn in the final function, once per group (on the
// coordinator under Citus). The state is a fixed-size varlena of its own
// type (dp_agg.variance_state) with text input/output, so that parallel
// workers and Citus move it like dp_avg's.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <type_traits>

#include "../core/grid_value.h"
#include "../core/variance.h"
#include "aggregate_state.h"
#include "citus/adapter.h"
#include "error_boundary.h"
#include "final_site_cache.h"
#include "initial_state.h"
#include "settings.h"
#include "site_plans.h"
#include "state_header.h"
#include "support_guard.h"
#include "variance_aggregates.h"

namespace dp_pg {

namespace {

constexpr std::uint8_t kVarianceFormatVersion = 1;

struct VarianceState {
  std::int32_t varlena_header;  // SET_VARSIZE
  std::uint8_t format_version;
  std::uint8_t initialized;  // StateOrigin
  std::uint8_t value_kind;  // ValueKind: kInteger or kFloat
  std::uint8_t reserved;
  std::int32_t unit_exponent;
  std::int32_t square_shift;  // core VarianceSquareShift of the bounds
  std::int64_t count;
  std::uint64_t sum_low;  // exact sum of clamped units (int128 in two halves)
  std::int64_t sum_high;
  std::uint64_t squares_low;  // exact sum of CentredSquare values (int128)
  std::int64_t squares_high;
  double epsilon;
  double delta;  // 0: Laplace
  double lower, upper;  // public bounds, as doubles for clamping
  std::int64_t lower_units, upper_units;
  double unit_scale;
};

static_assert(offsetof(VarianceState, format_version) == offsetof(StateHeader, format_version) &&
                  offsetof(VarianceState, initialized) == offsetof(StateHeader, initialized),
              "VarianceState starts with StateHeader");

dp::int128 Join(std::uint64_t low, std::int64_t high) {
  return static_cast<dp::int128>((static_cast<dp::uint128>(high) << 64) | low);
}

void Split(dp::int128 value, std::uint64_t* low, std::int64_t* high) {
  *low = static_cast<std::uint64_t>(value);
  *high = static_cast<std::int64_t>(value >> 64);
}

VarianceState* NewVarianceState() {
  auto* state = static_cast<VarianceState*>(palloc0(sizeof(VarianceState)));
  SET_VARSIZE(state, sizeof(VarianceState));
  state->format_version = kVarianceFormatVersion;
  return state;
}

// The transition state, updated in place (nodeAgg keeps it in the aggregate
// context); only a state the executor hook prepared accumulates rows.
inline VarianceState* MutableVarianceState(FunctionCallInfo fcinfo, const char* function) {
  if (__builtin_expect(fcinfo->context == nullptr || !IsA(fcinfo->context, AggState), 0))
    RequireAggregateContext(fcinfo, function);
  auto* state = reinterpret_cast<VarianceState*>(PG_GETARG_POINTER(0));
  if (__builtin_expect(state->initialized != kStatePrepared, 0)) {
    if (state->initialized == kStateUninitialized)  // dp_agg on Citus: agginitcond
      if (void* prepared = CitusPreparedState(fcinfo))
        state = static_cast<VarianceState*>(prepared);
    RequirePreparedState(state->initialized);
  }
  return state;
}

inline void AddUnits(VarianceState* state, std::int64_t units) {
  state->count += 1;
  Split(Join(state->sum_low, state->sum_high) + units, &state->sum_low, &state->sum_high);
  const std::uint64_t square =
      dp::CentredSquare(units, state->lower_units, state->upper_units, state->square_shift);
  Split(Join(state->squares_low, state->squares_high) + square, &state->squares_low,
        &state->squares_high);
}

inline void AddInteger(VarianceState* state, std::int64_t value) {
  value = std::clamp(value, state->lower_units, state->upper_units);
  AddUnits(state, value);
}

// NaN is ignored like NULL; infinities are clamped.
inline void AddDouble(VarianceState* state, double value) {
  if (std::isnan(value)) return;
  value = std::clamp(value, state->lower, state->upper);
  // ToUnits is monotone and maps the bounds to lower_units/upper_units, so a
  // clamped value lands between them; clamped again in units all the same.
  AddUnits(state, std::clamp(dp::ToUnits(value, state->unit_exponent, state->unit_scale),
                             state->lower_units, state->upper_units));
}

VarianceState* ReadVarianceState(FunctionCallInfo fcinfo, int argument) {
  auto* state = static_cast<VarianceState*>(ReadStateCopy(
      fcinfo, argument, sizeof(VarianceState), kVarianceFormatVersion, "dp_agg variance state"));
  if (VARSIZE(state) != sizeof(VarianceState) || state->count < 0)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dp_agg variance state")));
  return state;
}

bool SameVarianceParameters(const VarianceState* a, const VarianceState* b) {
  return a->value_kind == b->value_kind && a->unit_exponent == b->unit_exponent &&
         a->square_shift == b->square_shift && a->epsilon == b->epsilon && a->delta == b->delta &&
         a->lower == b->lower && a->upper == b->upper && a->lower_units == b->lower_units &&
         a->upper_units == b->upper_units;
}

unsigned long long BitsOf(double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

double DoubleFromBits(unsigned long long bits) {
  const std::uint64_t raw = bits;
  double value;
  std::memcpy(&value, &raw, sizeof value);
  return value;
}

// The final function's plans, computed once per call site and kept in
// fn_extra (trivially destructible, 16-byte aligned for int128).
struct VariancePlanCache {
  static constexpr std::uint32_t kTag = 0x64705650;  // "dpVP"
  bool valid = false;
  double epsilon = 0, delta = 0;
  std::int64_t lower_units = 0, upper_units = 0;
  dp::VarianceMechanisms plan;
};
static_assert(std::is_trivially_destructible_v<VariancePlanCache>,
              "VariancePlanCache lives in fn_extra");

VariancePlanCache* VarianceCacheOf(FunctionCallInfo fcinfo) {
  return FinalSiteCache<VariancePlanCache>(fcinfo);
}

// Builds the plans of `s`'s parameters into `cache`, unless it has them:
// true when it built them.
bool EnsureVariancePlans(VariancePlanCache* cache, const VarianceState& s) {
  return CallCore([&] {
    if (cache->valid && cache->epsilon == s.epsilon && cache->delta == s.delta &&
        cache->lower_units == s.lower_units && cache->upper_units == s.upper_units)
      return false;
    cache->valid = false;
    cache->plan = dp::PlanVariance(s.lower_units, s.upper_units, s.epsilon, s.delta);
    cache->epsilon = s.epsilon;
    cache->delta = s.delta;
    cache->lower_units = s.lower_units;
    cache->upper_units = s.upper_units;
    cache->valid = true;
    return true;
  });
}

// The released variance of a final function's state (in value units^2).
dp::VarianceRelease ReleaseVarianceOf(FunctionCallInfo fcinfo, VarianceState* out_state) {
  RequireAggregateContext(fcinfo, "dp_agg variance final function");
  RequireOwnAggregateCall(fcinfo, "dp_agg variance final function");
  VarianceState* state = ReadVarianceState(fcinfo, 0);
  if (state->initialized == kStateUninitialized) {  // dp_agg on Citus: no partial arrived
    if (void* prepared = CitusPreparedState(fcinfo)) state = static_cast<VarianceState*>(prepared);
  }
  RequirePreparedState(state->initialized);
  *out_state = *state;
  VariancePlanCache* cache = VarianceCacheOf(fcinfo);
  const VarianceState s = *state;
  if (EnsureVariancePlans(cache, s)) NoteLateSitePlan("a variance's plans");
  return CallCore([&] {
    return dp::ReleaseVariance(cache->plan, s.count, Join(s.sum_low, s.sum_high),
                               Join(s.squares_low, s.squares_high), s.lower_units, s.upper_units,
                               s.unit_exponent, NoiseSource());
  });
}

// The largest variance of values within the bounds, ((upper - lower) / 2)^2,
// in value units (as the double the core clamps to).
double HalfWidth(const VarianceState& state) {
  return std::ldexp(static_cast<double>(dp::int128{state.upper_units} - state.lower_units),
                    state.unit_exponent - 1);
}

// A released double as numeric: its exact value rounded to the decimal
// places its noise leaves meaningful (post-processing), clamped to
// [0, ceiling] in numeric.
Datum RoundedNumeric(double value, double noise_stddev, double ceiling) {
  Datum result = ExactNumericFromDouble(value);
  const int places = dp::MeaningfulDecimalPlaces(noise_stddev);
  if (places < 1100) result = DirectFunctionCall2(numeric_round, result, Int32GetDatum(places));
  const Datum upper = ExactNumericFromDouble(ceiling);
  if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, result, upper)) > 0) result = upper;
  return result;
}

}  // namespace

Datum PrepareVarianceInitialState(const PrivateAggregateKind& kind,
                                  const dp::PublicParameters& values,
                                  const dp::PrivacyParameters& effective, double* gaussian_rho) {
  VarianceState* state = NewVarianceState();
  state->initialized = kStatePrepared;
  state->value_kind = static_cast<std::uint8_t>(kind.value_kind);
  state->epsilon = StateEpsilon(effective);
  state->delta = effective.delta;
  if (values.integer_bounds) {
    state->unit_exponent = 0;
    state->unit_scale = 1;
    state->lower_units = values.lower_integer;
    state->upper_units = values.upper_integer;
  } else {
    state->unit_exponent = dp::ChooseUnitExponent(values.lower, values.upper);
    state->unit_scale = dp::UnitScale(state->unit_exponent);
    state->lower_units = dp::ToUnits(values.lower, state->unit_exponent, state->unit_scale);
    state->upper_units = dp::ToUnits(values.upper, state->unit_exponent, state->unit_scale);
  }
  state->lower = values.lower;
  state->upper = values.upper;
  const VarianceState prepared = *state;
  // Calibrated here as well: every failure is a parameter error before
  // anything is charged or read.
  *gaussian_rho = CallCore([&] {
    dp::ValidateVarianceBounds(prepared.lower_units, prepared.upper_units, prepared.unit_exponent);
    const dp::VarianceMechanisms plan = dp::PlanVariance(prepared.lower_units, prepared.upper_units,
                                                         prepared.epsilon, prepared.delta);
    return plan.rho;
  });
  state->square_shift = dp::VarianceSquareShift(state->lower_units, state->upper_units);
  return PointerGetDatum(state);
}

}  // namespace dp_pg

using dp_pg::VarianceState;

extern "C" {

PG_FUNCTION_INFO_V1(dp_variance_int2_transfn);
Datum dp_variance_int2_transfn(PG_FUNCTION_ARGS) {
  VarianceState* state = dp_pg::MutableVarianceState(fcinfo, "dp_variance_int2_transfn");
  dp_pg::AddInteger(state, PG_GETARG_INT16(1));
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_variance_int4_transfn);
Datum dp_variance_int4_transfn(PG_FUNCTION_ARGS) {
  VarianceState* state = dp_pg::MutableVarianceState(fcinfo, "dp_variance_int4_transfn");
  dp_pg::AddInteger(state, PG_GETARG_INT32(1));
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_variance_int8_transfn);
Datum dp_variance_int8_transfn(PG_FUNCTION_ARGS) {
  VarianceState* state = dp_pg::MutableVarianceState(fcinfo, "dp_variance_int8_transfn");
  dp_pg::AddInteger(state, PG_GETARG_INT64(1));
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_variance_float4_transfn);
Datum dp_variance_float4_transfn(PG_FUNCTION_ARGS) {
  VarianceState* state = dp_pg::MutableVarianceState(fcinfo, "dp_variance_float4_transfn");
  dp_pg::AddDouble(state, PG_GETARG_FLOAT4(1));
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_variance_float8_transfn);
Datum dp_variance_float8_transfn(PG_FUNCTION_ARGS) {
  VarianceState* state = dp_pg::MutableVarianceState(fcinfo, "dp_variance_float8_transfn");
  dp_pg::AddDouble(state, PG_GETARG_FLOAT8(1));
  PG_RETURN_POINTER(state);
}

// numeric_float8_no_overflow never raises (out-of-range values become
// +-infinity, which are clamped): no value in the table can make the query
// fail. It is monotone, so clamping after it equals clamping before.
PG_FUNCTION_INFO_V1(dp_variance_numeric_transfn);
Datum dp_variance_numeric_transfn(PG_FUNCTION_ARGS) {
  VarianceState* state = dp_pg::MutableVarianceState(fcinfo, "dp_variance_numeric_transfn");
  dp_pg::AddDouble(
      state, DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, PG_GETARG_DATUM(1))));
  PG_RETURN_POINTER(state);
}

// Merges a partial state into the first, in place.
PG_FUNCTION_INFO_V1(dp_variance_combine);
Datum dp_variance_combine(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_variance_combine");
  dp_pg::RequireOwnAggregateCall(fcinfo, "dp_variance_combine");
  auto* into = reinterpret_cast<VarianceState*>(PG_GETARG_POINTER(0));
  const VarianceState* partial = dp_pg::ReadVarianceState(fcinfo, 1);
  if (into->initialized == 0 && dp_pg::IsCitusWrapperCall(fcinfo))  // dp_agg on Citus
    into = static_cast<VarianceState*>(dp_pg::RequireCitusPreparedState(fcinfo));
  switch (dp_pg::DecideCombineStep(*reinterpret_cast<const dp_pg::StateHeader*>(into),
                                   *reinterpret_cast<const dp_pg::StateHeader*>(partial))) {
    case dp_pg::CombineStep::kKeepInto:
      PG_RETURN_POINTER(into);
    case dp_pg::CombineStep::kAdoptPartial:
      // A private copy (ReadVarianceState): nodeAgg moves it into the
      // aggregate context.
      PG_RETURN_POINTER(partial);
    case dp_pg::CombineStep::kMerge:
      break;
  }
  dp_pg::RequireSameParameters(dp_pg::SameVarianceParameters(into, partial), "dp_agg variance");
  into->count += partial->count;
  dp_pg::Split(
      dp_pg::Join(into->sum_low, into->sum_high) + dp_pg::Join(partial->sum_low, partial->sum_high),
      &into->sum_low, &into->sum_high);
  dp_pg::Split(dp_pg::Join(into->squares_low, into->squares_high) +
                   dp_pg::Join(partial->squares_low, partial->squares_high),
               &into->squares_low, &into->squares_high);
  PG_RETURN_POINTER(into);
}

// var_pop() of real and double precision returns double precision.
PG_FUNCTION_INFO_V1(dp_variance_final_float8);
Datum dp_variance_final_float8(PG_FUNCTION_ARGS) {
  VarianceState state;
  const dp::VarianceRelease release = dp_pg::ReleaseVarianceOf(fcinfo, &state);
  PG_RETURN_FLOAT8(release.variance);
}

// var_pop() of integers and numeric returns numeric.
PG_FUNCTION_INFO_V1(dp_variance_final_numeric);
Datum dp_variance_final_numeric(PG_FUNCTION_ARGS) {
  VarianceState state;
  const dp::VarianceRelease release = dp_pg::ReleaseVarianceOf(fcinfo, &state);
  const double half = dp_pg::HalfWidth(state);
  return dp_pg::RoundedNumeric(release.variance, release.noise_stddev, half * half);
}

PG_FUNCTION_INFO_V1(dp_stddev_final_float8);
Datum dp_stddev_final_float8(PG_FUNCTION_ARGS) {
  VarianceState state;
  const dp::VarianceRelease release = dp_pg::ReleaseVarianceOf(fcinfo, &state);
  PG_RETURN_FLOAT8(std::min(release.stddev, dp_pg::HalfWidth(state)));
}

PG_FUNCTION_INFO_V1(dp_stddev_final_numeric);
Datum dp_stddev_final_numeric(PG_FUNCTION_ARGS) {
  VarianceState state;
  const dp::VarianceRelease release = dp_pg::ReleaseVarianceOf(fcinfo, &state);
  const double half = dp_pg::HalfWidth(state);
  const double stddev = std::min(release.stddev, half);
  // The noise on the standard deviation, about that on the variance divided
  // by 2 sqrt(variance) (delta method), never below its value at h.
  const double noise = release.noise_stddev / (2 * std::max(stddev, half > 0 ? half * 1e-3 : 1.0));
  return dp_pg::RoundedNumeric(stddev, noise, half);
}

// Text form (Citus moves partial states as text): every field, doubles as
// the hexadecimal of their bits so that they read back exactly; a state typed as text is never
// released nor accumulates rows (support_guard.h).
PG_FUNCTION_INFO_V1(dp_variance_state_in);
Datum dp_variance_state_in(PG_FUNCTION_ARGS) {
  const char* text = PG_GETARG_CSTRING(0);
  VarianceState* state = dp_pg::NewVarianceState();
  if (std::strcmp(text, "uninitialized") == 0) PG_RETURN_POINTER(state);
  unsigned kind = 0;
  int exponent = 0, shift = 0, consumed = 0;
  long long count = 0, sum_high = 0, squares_high = 0, lower_units = 0, upper_units = 0;
  unsigned long long sum_low = 0, squares_low = 0;
  unsigned long long bits[4] = {0, 0, 0, 0};
  const int fields = std::sscanf(
      text, "v1 %u %d %d %lld %lld:%llu %lld:%llu %llx %llx %llx %llx %lld %lld%n", &kind,
      &exponent, &shift, &count, &sum_high, &sum_low, &squares_high, &squares_low, &bits[0],
      &bits[1], &bits[2], &bits[3], &lower_units, &upper_units, &consumed);
  const double epsilon = dp_pg::DoubleFromBits(bits[0]);
  const double delta = dp_pg::DoubleFromBits(bits[1]);
  const double lower = dp_pg::DoubleFromBits(bits[2]);
  const double upper = dp_pg::DoubleFromBits(bits[3]);
  const bool valid = fields == 14 && text[consumed] == '\0' &&
                     (kind == static_cast<unsigned>(dp_pg::ValueKind::kInteger) ||
                      kind == static_cast<unsigned>(dp_pg::ValueKind::kFloat)) &&
                     count >= 0 && epsilon > 0 && std::isfinite(epsilon) && delta >= 0 &&
                     delta < 1 && std::isfinite(lower) && std::isfinite(upper) && lower <= upper &&
                     lower_units <= upper_units && exponent >= -1100 && exponent <= 1100 &&
                     shift == dp::VarianceSquareShift(lower_units, upper_units);
  if (!valid)
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid input syntax for type dp_agg.variance_state: \"%s\"", text)));
  state->initialized = dp_pg::kStateFromText;
  state->value_kind = static_cast<std::uint8_t>(kind);
  state->unit_exponent = exponent;
  state->square_shift = shift;
  state->count = count;
  state->sum_high = sum_high;
  state->sum_low = sum_low;
  state->squares_high = squares_high;
  state->squares_low = squares_low;
  state->epsilon = epsilon;
  state->delta = delta;
  state->lower = lower;
  state->upper = upper;
  state->lower_units = lower_units;
  state->upper_units = upper_units;
  state->unit_scale = dp::UnitScale(exponent);
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_variance_state_out);
Datum dp_variance_state_out(PG_FUNCTION_ARGS) {
  const VarianceState* state = dp_pg::ReadVarianceState(fcinfo, 0);
  if (state->initialized == 0) PG_RETURN_CSTRING(pstrdup("uninitialized"));
  PG_RETURN_CSTRING(psprintf(
      "v1 %u %d %d %lld %lld:%llu %lld:%llu %llx %llx %llx %llx %lld %lld",
      static_cast<unsigned>(state->value_kind), state->unit_exponent, state->square_shift,
      static_cast<long long>(state->count), static_cast<long long>(state->sum_high),
      static_cast<unsigned long long>(state->sum_low), static_cast<long long>(state->squares_high),
      static_cast<unsigned long long>(state->squares_low), dp_pg::BitsOf(state->epsilon),
      dp_pg::BitsOf(state->delta), dp_pg::BitsOf(state->lower), dp_pg::BitsOf(state->upper),
      static_cast<long long>(state->lower_units), static_cast<long long>(state->upper_units)));
}

}  // extern "C"

namespace dp_pg {

// The final functions above, which all keep a VariancePlanCache (site_plans.h).
bool PlanVarianceFinalSite(PGFunction final_function, void** slot, MemoryContext context,
                           Datum initial) {
  if (final_function != dp_variance_final_float8 && final_function != dp_variance_final_numeric &&
      final_function != dp_stddev_final_float8 && final_function != dp_stddev_final_numeric)
    return false;
  const auto* prepared = reinterpret_cast<const VarianceState*>(DatumGetPointer(initial));
  if (VARSIZE(prepared) != sizeof(VarianceState) ||
      prepared->format_version != kVarianceFormatVersion)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dp_agg variance state")));
  VariancePlanCache* cache = SiteCacheIn<VariancePlanCache>(slot, context);
  EnsureVariancePlans(cache, *prepared);
  // The samplers' constants too: the first draws would compute them.
  CallCore([&] { dp::PrepareVarianceSampling(cache->plan); });
  return true;
}

}  // namespace dp_pg
