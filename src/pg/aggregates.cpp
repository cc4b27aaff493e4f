// dp_count, dp_sum and dp_avg: the final functions, which make the releases
// (noise drawn once per group; under Citus once, on the coordinator), with
// their plan cache and the exact numeric results. The state and transition
// functions are aggregate_transitions.cpp, the partial states (combine, text
// input/output) aggregate_partials.cpp.
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
#include "final_site_cache.h"
#include "settings.h"
#include "site_plans.h"
#include "state_header.h"
#include "support_guard.h"

namespace dp_pg {
namespace {

const FmgrInfo** OwnCallMarkOf(FunctionCallInfo fcinfo);

// The state of a final function, which must have its parameters.
//
// Whether the call belongs to one of dp_agg's own aggregates is decided by
// its Aggref, which is the same for every group of a call site (nodeAgg keeps
// one FmgrInfo per final function of a plan node): once it passed, the call
// site's cache in fn_extra remembers the FmgrInfo it passed for, and later
// groups of that site skip the catalog lookup. A call whose cache is not in
// fn_extra (Citus: a new FmgrInfo per group) is checked every time.
void ReadFinalState(FunctionCallInfo fcinfo, AggregateState* out) {
  RequireAggregateContext(fcinfo, "dp_agg final function");
  const FmgrInfo** own_call = OwnCallMarkOf(fcinfo);
  if (own_call == nullptr || *own_call != fcinfo->flinfo) {
    RequireOwnAggregateCall(fcinfo, "dp_agg final function");
    if (own_call != nullptr) *own_call = fcinfo->flinfo;
  }
  ReadState(fcinfo, 0, out);
  if (out->initialized == kStateUninitialized) {  // dp_agg on Citus: no partial state arrived
    if (void* prepared = CitusPreparedState(fcinfo)) {
      std::memcpy(out, prepared, sizeof(AggregateState));
      pfree(prepared);
    }
  }
  RequirePreparedState(out->initialized);
}

// Everything about a release that depends only on public parameters: the
// noise plans (the Gaussian calibration takes milliseconds) and the interval
// widths. Built when the query starts (site_plans.h), once per call site,
// kept in fn_extra of the final function.
struct PlanCache {
  static constexpr std::uint32_t kTag = 0x64705043;  // "dpPC"
  const FmgrInfo* own_call = nullptr;  // passed RequireOwnAggregateCall (ReadFinalState)
  bool valid = false;
  bool is_count = false;
  double epsilon = 0, delta = 0, confidence = 0;
  std::int64_t lower_units = 0, upper_units = 0;
  int unit_exponent = 0;
  dp::NoiseMechanism mechanism;  // count or sum
  double margin = 0;  // count/sum interval half-width at `confidence`
  // The noise's standard deviation in value units (count or sum), and that
  // of the mean's centred sum: per-key constants, used by every group's
  // rounding.
  double noise_stddev = 0;
  double centred_sum_stddev = 0;
  dp::MeanMechanisms mean;
  // The mean interval's noise laws (mean_interval.h), built on the first
  // group and shared by the others; their tables are allocated in `context`.
  bool mean_laws_ready = false;  // decided for this key (and built if tractable)
  bool mean_test_tractable = false;
  dp::MeanTestLaws mean_laws;
  MemoryContext context = nullptr;  // the cache's own memory context
};

bool SameKey(const PlanCache& cache, const AggregateState& state, bool is_count) {
  return cache.valid && cache.is_count == is_count && cache.epsilon == state.epsilon &&
         cache.delta == state.delta && cache.confidence == state.confidence &&
         cache.lower_units == state.lower_units && cache.upper_units == state.upper_units &&
         cache.unit_exponent == state.unit_exponent;
}

// Placed in fn_extra and never destroyed; the fields read by the state
// functions live across calls that may raise a PostgreSQL ERROR.
static_assert(std::is_trivially_destructible_v<PlanCache>, "PlanCache must need no destructor");
static_assert(std::is_trivially_destructible_v<dp::PartialStateFields>,
              "PartialStateFields lives across PostgreSQL calls");

// The cache of this final function call site (final_site_cache.h); it
// remembers the memory context it lives in, where its noise tables are built.
PlanCache* CacheOf(FunctionCallInfo fcinfo) {
  MemoryContext created_in = nullptr;
  PlanCache* cache = FinalSiteCache<PlanCache>(fcinfo, &created_in);
  if (created_in != nullptr) cache->context = created_in;
  return cache;
}

// dp_agg.group_selection's plan, per call site (dp_group_selection_final).
struct SelectionSiteCache {
  static constexpr std::uint32_t kTag = 0x64705353;  // "dpSS"
  const FmgrInfo* own_call = nullptr;  // passed RequireOwnAggregateCall (ReadFinalState)
  bool valid = false;
  bool one_sided = false;
  double epsilon = 0, delta = 0;  // as requested (the state's)
  dp::PartitionSelectionWords plan;
};
static_assert(std::is_trivially_destructible_v<SelectionSiteCache>,
              "SelectionSiteCache lives in fn_extra");

SelectionSiteCache* SelectionCacheOf(FunctionCallInfo fcinfo) {
  return FinalSiteCache<SelectionSiteCache>(fcinfo);
}

// Where the cache in fn_extra (if any: site_plans.h makes it when the query
// starts) remembers the FmgrInfo that passed RequireOwnAggregateCall. Only
// SiteCacheIn fills fn_extra of these final functions, each cache tagged.
const FmgrInfo** OwnCallMarkOf(FunctionCallInfo fcinfo) {
  void* extra = fcinfo->flinfo->fn_extra;
  if (extra == nullptr) return nullptr;
  const std::uint32_t tag = *reinterpret_cast<const std::uint32_t*>(static_cast<char*>(extra) - 16);
  if (tag == PlanCache::kTag) return &static_cast<PlanCache*>(extra)->own_call;
  if (tag == SelectionSiteCache::kTag) return &static_cast<SelectionSiteCache*>(extra)->own_call;
  return nullptr;
}

// Builds group selection's plan for `state`'s parameters into `cache`,
// unless it has it: true when it built it.
bool EnsureSelectionPlan(SelectionSiteCache* cache, const AggregateState& state, bool one_sided) {
  return CallCore([&] {
    if (cache->valid && cache->epsilon == state.epsilon && cache->delta == state.delta &&
        cache->one_sided == one_sided)
      return false;
    cache->valid = false;
    dp::CopyPartitionSelectionPlan(
        dp::PlanPartitionSelection(state.epsilon, state.delta, one_sided), &cache->plan);
    cache->epsilon = state.epsilon;
    cache->delta = state.delta;
    cache->one_sided = one_sided;
    cache->valid = true;
    return true;
  });
}

void FillKey(PlanCache* cache, const AggregateState& state, bool is_count) {
  cache->valid = true;
  cache->mean_laws_ready = false;  // built for the new key when first needed
  cache->is_count = is_count;
  cache->epsilon = state.epsilon;
  cache->delta = state.delta;
  cache->confidence = state.confidence;
  cache->lower_units = state.lower_units;
  cache->upper_units = state.upper_units;
  cache->unit_exponent = state.unit_exponent;
}

// A released count or sum, and the half-width of its confidence interval
// at state.confidence (0 when the aggregate asked for none). The interval
// comes from the public parameters only, so it costs no privacy.
struct Release {
  dp::GridValue value;
  double margin = 0;
  double noise_stddev = 0;  // of the noise, in value units (public)
};

// Builds the count or sum plans of `state`'s key into `cache`, unless it
// has them: true when it built them.
bool EnsureReleasePlans(PlanCache* cache, const AggregateState& state, bool is_count) {
  // Every group after the first: only comparisons, which cannot throw.
  if (SameKey(*cache, state, is_count)) return false;
  return CallCore([&] {
    const int unit_exponent = is_count ? 0 : state.unit_exponent;
    if (SameKey(*cache, state, is_count)) return false;
    cache->valid = false;
    cache->margin = 0;
    // The state holds effective parameters (initial_state.h), validated
    // when the call was prepared; building again rounds nothing.
    cache->mechanism = dp::MechanismBuilder()
                           .SetEpsilon(state.epsilon)
                           .SetDelta(state.delta)
                           .SetSensitivityUnits(
                               is_count ? dp::uint128{1}
                                        : dp::SumSensitivity(state.lower_units, state.upper_units))
                           .Build();
    if (state.confidence > 0)
      cache->margin = cache->mechanism.Interval(unit_exponent, state.confidence).half_width_value;
    cache->noise_stddev = cache->mechanism.NoiseStddev(unit_exponent);
    FillKey(cache, state, is_count);
    return true;
  });
}

Release ReleaseOf(FunctionCallInfo fcinfo, const AggregateState& state, bool is_count) {
  PlanCache* cache = CacheOf(fcinfo);
  if (EnsureReleasePlans(cache, state, is_count)) NoteLateSitePlan("a noise plan");
  return CallCore([&] {
    const int unit_exponent = is_count ? 0 : state.unit_exponent;
    Release release;
    const dp::int128 value = is_count ? dp::int128{state.count} : GetSum(&state);
    release.value = cache->mechanism.AddNoise(value, unit_exponent, NoiseSource());
    release.margin = cache->margin;
    release.noise_stddev = cache->noise_stddev;
    return release;
  });
}

dp::GridValue ReleaseSumOf(FunctionCallInfo fcinfo, const AggregateState& state) {
  return ReleaseOf(fcinfo, state, false).value;
}

// The mean and, if asked for, its (conservative) confidence interval.
struct MeanResult {
  double mean = 0;
  dp::ConfidenceInterval interval;
  // About the noise's standard deviation on the mean: the centred sum's,
  // divided by the released count (at least 1). It ignores the count's own
  // noise, so it errs toward keeping more digits. Released values and public
  // parameters only.
  double noise_stddev = 0;
};

// The mean's plans for this call site's key, and how many doubles the
// interval's noise tables still need (0: none, or already built).
std::size_t PrepareMeanPlans(PlanCache* cache, const AggregateState& state, bool* built) {
  if (!SameKey(*cache, state, false)) {
    *built = true;
    cache->valid = false;
    // Effective parameters, validated when the call was prepared; the
    // split between the mean's two releases happens in BuildMean.
    cache->mean = dp::MechanismBuilder()
                      .SetEpsilon(state.epsilon)
                      .SetDelta(state.delta)
                      .BuildMean(state.lower_units, state.upper_units);
    cache->centred_sum_stddev = cache->mean.centred_sum.NoiseStddev(state.unit_exponent - 1);
    FillKey(cache, state, false);
  }
  if (!(state.confidence > 0) || cache->mean_laws_ready) return 0;
  // The interval: inversion of the exact test on the two releases
  // (mean_interval.h), nominal coverage without a union bound; the
  // union-bound interval where the test's sum would be too long (decided
  // by the public plans alone).
  const dp::MeanMechanisms& mean = cache->mean;
  const dp::GaussianMeanPlans gaussian{mean.count.gaussian_plan(),
                                       mean.centred_sum.gaussian_plan()};
  const dp::MeanPlans laplace{mean.count.laplace_plan(), mean.centred_sum.laplace_plan()};
  const bool is_gaussian = mean.count.kind() == dp::NoiseKind::kGaussian;
  cache->mean_test_tractable = is_gaussian ? dp::GaussianMeanTestIsTractable(gaussian)
                                           : dp::LaplaceMeanTestIsTractable(laplace);
  if (!cache->mean_test_tractable) {
    cache->mean_laws_ready = true;
    return 0;
  }
  return is_gaussian ? dp::GaussianMeanTestStorageDoubles(gaussian)
                     : dp::LaplaceMeanTestStorageDoubles(laplace);
}

// The interval's noise laws into `storage` (public parameters only).
void BuildMeanLaws(PlanCache* cache, const AggregateState& state, double* storage,
                   std::size_t doubles) {
  const dp::MeanMechanisms& mean = cache->mean;
  if (mean.count.kind() == dp::NoiseKind::kGaussian) {
    const dp::GaussianMeanPlans gaussian{mean.count.gaussian_plan(),
                                         mean.centred_sum.gaussian_plan()};
    cache->mean_laws = dp::GaussianMeanTestLaws(gaussian, state.unit_exponent, storage, doubles);
  } else {
    const dp::MeanPlans laplace{mean.count.laplace_plan(), mean.centred_sum.laplace_plan()};
    cache->mean_laws = dp::LaplaceMeanTestLaws(laplace, state.unit_exponent, storage, doubles);
  }
  cache->mean_laws_ready = true;
}

// Builds the mean's plans of `state`'s key into `cache` (and the interval's
// noise tables, when it asks for an interval), unless it has them: true when
// it built any.
bool EnsureMeanPlans(PlanCache* cache, const AggregateState& state) {
  // Every group after the first: only comparisons, which cannot throw.
  if (SameKey(*cache, state, false) && (!(state.confidence > 0) || cache->mean_laws_ready))
    return false;
  bool built = false;
  const std::size_t table_doubles =
      CallCore([&] { return PrepareMeanPlans(cache, state, &built); });
  if (table_doubles == 0) return built;
  // The tables live as long as the cache (its memory context): allocated
  // here, outside the core, once per call site and key.
  auto* storage =
      static_cast<double*>(MemoryContextAlloc(cache->context, table_doubles * sizeof(double)));
  CallCore([&] { BuildMeanLaws(cache, state, storage, table_doubles); });
  return true;
}

MeanResult ReleaseMeanOf(FunctionCallInfo fcinfo, const AggregateState& state) {
  PlanCache* cache = CacheOf(fcinfo);
  if (EnsureMeanPlans(cache, state)) NoteLateSitePlan("a mean's plans");
  return CallCore([&] {
    const dp::MeanRelease release =
        cache->mean.AddNoise(state.count, GetSum(&state), state.lower_units, state.upper_units,
                             state.unit_exponent, NoiseSource());
    MeanResult result;
    result.mean = release.mean;
    result.noise_stddev =
        cache->centred_sum_stddev / std::max(1.0, dp::ToDouble(release.noisy_count));
    if (state.confidence > 0) {
      if (cache->mean_test_tractable) {
        result.interval =
            dp::MeanTestInterval(cache->mean_laws, release, state.lower_units, state.upper_units,
                                 state.unit_exponent, state.confidence);
      } else {
        const dp::MeanNoiseIntervals noise =
            cache->mean.Intervals(state.unit_exponent, state.confidence);
        result.interval =
            dp::MeanConfidenceInterval(release, state.lower_units, state.upper_units,
                                       state.unit_exponent, noise.count, noise.centred_sum);
      }
    }
    return result;
  });
}

// A dp_agg.estimate row: (value, low, high, confidence).
Datum EstimateDatum(FunctionCallInfo fcinfo, double value, double low, double high,
                    double confidence) {
  TupleDesc descriptor;
  if (get_call_result_type(fcinfo, nullptr, &descriptor) != TYPEFUNC_COMPOSITE)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dp_agg interval aggregates must return dp_agg.estimate")));
  descriptor = BlessTupleDesc(descriptor);
  Datum values[4] = {Float8GetDatum(value), Float8GetDatum(low), Float8GetDatum(high),
                     Float8GetDatum(confidence)};
  bool nulls[4] = {false, false, false, false};
  return HeapTupleGetDatum(heap_form_tuple(descriptor, values, nulls));
}

// The exact decimal text of a grid value, palloc'd (numeric_in's input).
char* ExactDecimalText(const dp::GridValue& value) {
  char buffer[2048];
  const bool fits = CallCore([&] {
    const std::string text = dp::ToExactDecimal(value);
    if (text.size() >= sizeof buffer) return false;
    std::memcpy(buffer, text.c_str(), text.size() + 1);
    return true;
  });
  if (!fits) ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("dp_agg result too long")));
  return pstrdup(buffer);
}

Datum NumericFromText(const char* text) {
  return DirectFunctionCall3(numeric_in, CStringGetDatum(text), ObjectIdGetDatum(InvalidOid),
                             Int32GetDatum(-1));
}

// `value` rounded to the decimal places that its noise leaves meaningful
// (dp::MeaningfulDecimalPlaces): a deterministic function of a released
// value and the public noise scale, i.e. post-processing. numeric_round is
// exact decimal arithmetic (half away from zero), so no low bits of a binary
// value survive beyond the kept places.
Datum RoundedToNoise(Datum value, double noise_stddev) {
  const int places = dp::MeaningfulDecimalPlaces(noise_stddev);
  if (places >= 1100) return value;
  return DirectFunctionCall2(numeric_round, value, Int32GetDatum(places));
}

}  // namespace

Datum ExactNumeric(const dp::GridValue& value) { return NumericFromText(ExactDecimalText(value)); }

Datum ExactNumericFromDouble(double value) {
  return ExactNumeric(CallCore([&] { return dp::FromDouble(value); }));
}

}  // namespace dp_pg

using dp_pg::AggregateState;

extern "C" {

PG_FUNCTION_INFO_V1(dp_count_final);
Datum dp_count_final(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  PG_RETURN_INT64(dp::ToInt64Saturating(dp_pg::ReleaseOf(fcinfo, state, true).value));
}

// Whether the group is released: with the optimal rule's probability for
// its row count (partition_selection.h). One 64-bit draw for every group,
// released or not.
PG_FUNCTION_INFO_V1(dp_group_selection_final);
Datum dp_group_selection_final(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  // Test fault (superuser-only): the optimal rule without its second inequality.
  const bool one_sided = dp_pg::TestFaultIs(dp_pg::TestFault::kOptimalOneSided);
  // The plan of this call site, copied once per execution into its own
  // cache (partition_selection.h PartitionSelectionWords): every group is
  // then decided with the same work, whatever the per-process table cache
  // holds (more distinct parameters than it keeps made each group compute
  // its table again).
  dp_pg::SelectionSiteCache* cache = dp_pg::SelectionCacheOf(fcinfo);
  if (dp_pg::EnsureSelectionPlan(cache, state, one_sided))
    dp_pg::NoteLateSitePlan("group selection's plan");
  const bool released = dp_pg::CallCore(
      [&] { return dp::ReleasePartition(state.count, cache->plan, dp_pg::NoiseSource()); });
  PG_RETURN_BOOL(released);
}

// dp_sum of smallint and integer returns bigint, like sum().
PG_FUNCTION_INFO_V1(dp_sum_final_int8);
Datum dp_sum_final_int8(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  PG_RETURN_INT64(dp::ToInt64Saturating(dp_pg::ReleaseSumOf(fcinfo, state)));
}

// dp_sum of bigint and numeric returns numeric: the released grid value,
// exactly, rounded to the decimal places its noise leaves meaningful.
PG_FUNCTION_INFO_V1(dp_sum_final_numeric);
Datum dp_sum_final_numeric(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  const dp_pg::Release released = dp_pg::ReleaseOf(fcinfo, state, false);
  // The usual case rounds in integer arithmetic straight to the rounded text
  // (numeric_digits.h RoundedDecimalText: the same numeric as numeric_round
  // of the exact value), the others in numeric.
  const int places = dp::MeaningfulDecimalPlaces(released.noise_stddev);
  char rounded_text[64];
  if (places <= dp::kMaxRoundedPlaces &&
      dp::RoundedDecimalText(released.value, places, rounded_text, sizeof rounded_text))
    return dp_pg::NumericFromText(rounded_text);
  return dp_pg::RoundedToNoise(dp_pg::ExactNumeric(released.value), released.noise_stddev);
}

PG_FUNCTION_INFO_V1(dp_sum_final_float4);
Datum dp_sum_final_float4(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  PG_RETURN_FLOAT4(static_cast<float>(dp::ToDouble(dp_pg::ReleaseSumOf(fcinfo, state))));
}

PG_FUNCTION_INFO_V1(dp_sum_final_float8);
Datum dp_sum_final_float8(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  PG_RETURN_FLOAT8(dp::ToDouble(dp_pg::ReleaseSumOf(fcinfo, state)));
}

PG_FUNCTION_INFO_V1(dp_avg_final_float8);
Datum dp_avg_final_float8(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  PG_RETURN_FLOAT8(dp_pg::ReleaseMeanOf(fcinfo, state).mean);
}

// avg() of integers and numeric returns numeric. The mean is post-processing
// of two released values, computed in double; its exact value is returned
// (float8_numeric would keep 15 digits and could step past a bound) and
// clamped in numeric to bounds that lie within the ones given: the integers
// themselves, or numeric bounds rounded inward to doubles by the executor
// hook.
PG_FUNCTION_INFO_V1(dp_avg_final_numeric);
Datum dp_avg_final_numeric(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  const dp_pg::MeanResult released = dp_pg::ReleaseMeanOf(fcinfo, state);
  // Rounded to the places its noise leaves meaningful, then clamped (a
  // bound is exact, so the clamped answer is too). The usual case rounds in
  // integer arithmetic straight to the rounded text (numeric_digits.h
  // RoundedDecimalText: the same numeric as numeric_round of the exact
  // expansion), the others in numeric.
  const int places = dp::MeaningfulDecimalPlaces(released.noise_stddev);
  char rounded_text[64];
  const bool fast_rounding =
      places <= dp::kMaxRoundedPlaces &&
      dp::RoundedDecimalText(released.mean, places, rounded_text, sizeof rounded_text);
  Datum result = fast_rounding ? dp_pg::NumericFromText(rounded_text)
                               : dp_pg::RoundedToNoise(dp_pg::ExactNumericFromDouble(released.mean),
                                                       released.noise_stddev);
  const bool integer = state.value_kind == static_cast<std::uint8_t>(dp_pg::ValueKind::kInteger);
  // Equal non-integer bounds: the answer is that constant, written as the
  // shortest decimal that reads back as the same double (0.1, not its exact
  // binary expansion).
  if (!integer && state.lower == state.upper)
    return DirectFunctionCall1(float8_numeric, Float8GetDatum(state.lower));
  // The numeric clamp below keeps a mean that lies between the bounds, and
  // comparing doubles decides that exactly when the bounds are doubles
  // exactly (always for real bounds; integers up to 2^53): the usual case
  // skips building and comparing two numerics per group.
  constexpr std::int64_t kTwoTo53 = std::int64_t{1} << 53;
  const bool exact_bounds =
      !integer || (state.lower_units >= -kTwoTo53 && state.lower_units <= kTwoTo53 &&
                   state.upper_units >= -kTwoTo53 && state.upper_units <= kTwoTo53);
  const double lower_value = integer ? static_cast<double>(state.lower_units) : state.lower;
  const double upper_value = integer ? static_cast<double>(state.upper_units) : state.upper;
  // Rounding may step past a bound that is not a multiple of the kept
  // decimal places: a rounded mean is always clamped in numeric.
  const bool rounded = places < 1100;
  if (!rounded && exact_bounds && released.mean >= lower_value && released.mean <= upper_value)
    return result;
  // The numeric clamp below keeps a rounded mean that lies between the
  // bounds. Integer bounds: rounding to places >= 0 is monotone and keeps
  // integers, so a mean between them is rounded to a value between them
  // (a mean clamped onto a bound, the usual case of a group with few rows,
  // stays that bound). Other bounds: rounding moves the mean by at most half
  // a unit of its last kept place, so a mean at least one unit inside both
  // bounds stays inside them. With u = 10^-places as a double (relative error
  // <= 2^-53) and the differences rounded once (<= 2^-53 each), a computed
  // difference >= u means an exact one > u / 2.
  if (fast_rounding && exact_bounds) {
    if (integer) {
      if (released.mean >= lower_value && released.mean <= upper_value) return result;
    } else {
      const double unit = dp::kNegativePowersOfTen[places];
      if (released.mean - lower_value >= unit && upper_value - released.mean >= unit) return result;
    }
  }
  const Datum lower = integer ? NumericGetDatum(int64_to_numeric(state.lower_units))
                              : dp_pg::ExactNumericFromDouble(state.lower);
  const Datum upper = integer ? NumericGetDatum(int64_to_numeric(state.upper_units))
                              : dp_pg::ExactNumericFromDouble(state.upper);
  if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, result, lower)) < 0) result = lower;
  if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, result, upper)) > 0) result = upper;
  return result;
}

// dp_count_interval, dp_sum_interval, dp_avg_interval: one release (the same
// cost as dp_count, dp_sum, dp_avg) returned with its confidence interval,
// computed from public parameters and released values only. The count and
// sum intervals are exact quantiles of the noise (coverage at least the
// level); the mean's is conservative (a union bound over its two parts).
PG_FUNCTION_INFO_V1(dp_count_interval_final);
Datum dp_count_interval_final(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  const dp_pg::Release release = dp_pg::ReleaseOf(fcinfo, state, true);
  const double value = dp::ToDouble(release.value);
  // A count is never negative, so the interval may start at 0 without
  // losing coverage.
  return dp_pg::EstimateDatum(fcinfo, value, std::max(0.0, value - release.margin),
                              value + release.margin, state.confidence);
}

PG_FUNCTION_INFO_V1(dp_sum_interval_final);
Datum dp_sum_interval_final(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  const dp_pg::Release release = dp_pg::ReleaseOf(fcinfo, state, false);
  const double value = dp::ToDouble(release.value);
  return dp_pg::EstimateDatum(fcinfo, value, value - release.margin, value + release.margin,
                              state.confidence);
}

PG_FUNCTION_INFO_V1(dp_avg_interval_final);
Datum dp_avg_interval_final(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadFinalState(fcinfo, &state);
  const dp_pg::MeanResult result = dp_pg::ReleaseMeanOf(fcinfo, state);
  return dp_pg::EstimateDatum(fcinfo, result.mean, result.interval.low, result.interval.high,
                              state.confidence);
}

}  // extern "C"

namespace dp_pg {

// The final functions above that keep a PlanCache or a SelectionSiteCache,
// and the plans each builds (site_plans.h).
bool PlanStatisticFinalSite(PGFunction final_function, void** slot, MemoryContext context,
                            Datum initial) {
  enum class Plans { kCount, kSum, kMean, kSelection };
  Plans plans;
  if (final_function == dp_count_final || final_function == dp_count_interval_final) {
    plans = Plans::kCount;
  } else if (final_function == dp_sum_final_int8 || final_function == dp_sum_final_numeric ||
             final_function == dp_sum_final_float4 || final_function == dp_sum_final_float8 ||
             final_function == dp_sum_interval_final) {
    plans = Plans::kSum;
  } else if (final_function == dp_avg_final_float8 || final_function == dp_avg_final_numeric ||
             final_function == dp_avg_interval_final) {
    plans = Plans::kMean;
  } else if (final_function == dp_group_selection_final) {
    plans = Plans::kSelection;
  } else {
    return false;
  }
  const auto* prepared = reinterpret_cast<const AggregateState*>(DatumGetPointer(initial));
  if (VARSIZE(prepared) != sizeof(AggregateState) ||
      prepared->format_version != kStateFormatVersion)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dp_agg state")));
  AggregateState state;
  std::memcpy(&state, prepared, sizeof state);
  if (plans == Plans::kSelection) {
    SelectionSiteCache* cache = SiteCacheIn<SelectionSiteCache>(slot, context);
    EnsureSelectionPlan(cache, state, TestFaultIs(TestFault::kOptimalOneSided));
    // The sampler's constants too: the first draw would compute them.
    CallCore([&] { dp::PreparePartitionSampling(cache->plan); });
    return true;
  }
  MemoryContext created_in = nullptr;
  PlanCache* cache = SiteCacheIn<PlanCache>(slot, context, &created_in);
  if (created_in != nullptr) cache->context = created_in;
  if (plans == Plans::kMean) {
    EnsureMeanPlans(cache, state);
    CallCore([&] { cache->mean.PrepareSampling(); });
  } else {
    EnsureReleasePlans(cache, state, plans == Plans::kCount);
    CallCore([&] { cache->mechanism.PrepareSampling(); });
  }
  return true;
}

}  // namespace dp_pg
