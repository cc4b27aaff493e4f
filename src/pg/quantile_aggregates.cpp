// dp_percentile and dp_median: the exponential mechanism (permute-and-flip)
// over a fixed public grid of bins between the bounds (core/quantile.h).
// The state is the grid's per-bin counts: 1024 bins, 8 KiB, whatever the
// number of rows, updated in place; combine adds counts; the final function
// draws the answer, always within [lower, upper].
#include <cstring>
#include <new>
#include <vector>

#include "../core/parameters.h"
#include "../core/quantile.h"
#include "../core/state_text.h"
#include "aggregate_state.h"
#include "distributed.h"
#include "error_boundary.h"
#include "initial_state.h"
#include "quantile_aggregates.h"
#include "settings.h"
#include "state_header.h"

namespace dp_pg {

namespace {

constexpr std::uint8_t kQuantileFormatVersion = 1;

struct QuantileState {
  std::int32_t varlena_header;
  std::uint8_t format_version;
  std::uint8_t initialized;
  std::uint8_t reserved[2];
  std::int32_t bins;
  std::int32_t padding;
  double epsilon;
  double fraction;
  double lower;
  double upper;
  std::int64_t counts[FLEXIBLE_ARRAY_MEMBER];
};

static_assert(offsetof(QuantileState, format_version) == offsetof(StateHeader, format_version) &&
                  offsetof(QuantileState, initialized) == offsetof(StateHeader, initialized),
              "QuantileState starts with StateHeader");

Size QuantileStateSize(int bins) {
  return offsetof(QuantileState, counts) + sizeof(std::int64_t) * static_cast<Size>(bins);
}

QuantileState* NewQuantileState(int bins) {
  auto* state = static_cast<QuantileState*>(palloc0(QuantileStateSize(bins)));
  SET_VARSIZE(state, QuantileStateSize(bins));
  state->format_version = kQuantileFormatVersion;
  state->bins = bins;
  return state;
}

// A read-only copy of a state argument (may come from a tuple).
QuantileState* ReadQuantileState(FunctionCallInfo fcinfo, int argument) {
  auto* state = static_cast<QuantileState*>(ReadStateCopy(
      fcinfo, argument, offsetof(QuantileState, counts), kQuantileFormatVersion,
      "dp_agg quantile state"));
  if (state->bins < 0 || VARSIZE(state) != QuantileStateSize(state->bins))
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dp_agg quantile state")));
  return state;
}

std::vector<std::int64_t> CountsOf(const QuantileState* state) {
  return std::vector<std::int64_t>(state->counts, state->counts + state->bins);
}

// The grid of a call site, built once per execution in the transition
// function's fn_extra and destroyed with its memory context.
void DestroyGrid(void* grid) { static_cast<dp::QuantileGrid*>(grid)->~QuantileGrid(); }

const dp::QuantileGrid* GridOf(FunctionCallInfo fcinfo, const QuantileState* state) {
  if (fcinfo->flinfo->fn_extra == nullptr) {
    MemoryContext context = fcinfo->flinfo->fn_mcxt;
    void* memory = MemoryContextAllocZero(context, sizeof(dp::QuantileGrid));
    auto* callback =
        static_cast<MemoryContextCallback*>(MemoryContextAllocZero(context, sizeof(MemoryContextCallback)));
    const double lower = state->lower;
    const double upper = state->upper;
    const std::size_t bins = static_cast<std::size_t>(state->bins);
    CallCore([&] { new (memory) dp::QuantileGrid(lower, upper, bins); });
    callback->func = DestroyGrid;
    callback->arg = memory;
    MemoryContextRegisterResetCallback(context, callback);
    fcinfo->flinfo->fn_extra = memory;
  }
  return static_cast<const dp::QuantileGrid*>(fcinfo->flinfo->fn_extra);
}

}  // namespace

Datum PrepareQuantileInitialState(const dp::PublicParameters& parameters,
                                  const dp::PrivacyParameters& effective) {
  QuantileState* state = NewQuantileState(static_cast<int>(dp::kDefaultQuantileBins));
  state->initialized = 1;
  state->epsilon = StateEpsilon(effective);
  state->fraction = parameters.fraction;
  state->lower = parameters.lower;
  state->upper = parameters.upper;
  return PointerGetDatum(state);
}

}  // namespace dp_pg

using dp_pg::QuantileState;

extern "C" {

// One row: NaN is ignored, anything else is clamped into its bin. STRICT:
// NULL values never arrive.
PG_FUNCTION_INFO_V1(dp_quantile_transfn);
Datum dp_quantile_transfn(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_quantile_transfn");
  auto* state = reinterpret_cast<QuantileState*>(PG_GETARG_POINTER(0));
  if (state->initialized == 0) {  // dp_agg on Citus: states start from agginitcond
    if (void* prepared = dp_pg::CitusPreparedState(fcinfo))
      state = static_cast<QuantileState*>(prepared);
  }
  dp_pg::RequireParametersPrepared(state->initialized != 0);
  const double value = PG_GETARG_FLOAT8(1);
  if (!std::isnan(value)) state->counts[dp_pg::GridOf(fcinfo, state)->BinIndex(value)] += 1;
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_quantile_combine);
Datum dp_quantile_combine(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_quantile_combine");
  auto* into = reinterpret_cast<QuantileState*>(PG_GETARG_POINTER(0));
  const QuantileState* partial = dp_pg::ReadQuantileState(fcinfo, 1);
  if (into->initialized == 0 && dp_pg::IsCitusWrapperCall(fcinfo))  // dp_agg on Citus
    into = static_cast<QuantileState*>(dp_pg::RequireCitusPreparedState(fcinfo));
  switch (dp_pg::DecideCombineStep(*reinterpret_cast<const dp_pg::StateHeader*>(into),
                                   *reinterpret_cast<const dp_pg::StateHeader*>(partial))) {
    case dp_pg::CombineStep::kKeepInto:
      PG_RETURN_POINTER(into);
    case dp_pg::CombineStep::kAdoptPartial:
      // The partial state, already a private copy (ReadQuantileState), becomes
      // the transition value; nodeAgg moves a new transition value into the
      // aggregate context.
      PG_RETURN_POINTER(partial);
    case dp_pg::CombineStep::kMerge:
      break;
  }
  dp_pg::RequireSameParameters(
      into->bins == partial->bins && into->lower == partial->lower &&
          into->upper == partial->upper && into->epsilon == partial->epsilon &&
          into->fraction == partial->fraction,
      "dp_agg quantile");
  for (int i = 0; i < into->bins; ++i) into->counts[i] += partial->counts[i];
  PG_RETURN_POINTER(into);
}

PG_FUNCTION_INFO_V1(dp_quantile_final);
Datum dp_quantile_final(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_quantile_final");
  const QuantileState* state = dp_pg::ReadQuantileState(fcinfo, 0);
  if (state->initialized == 0) {  // dp_agg on Citus: no partial state arrived
    if (void* prepared = dp_pg::CitusPreparedState(fcinfo))
      state = static_cast<QuantileState*>(prepared);
  }
  dp_pg::RequireParametersPrepared(state->initialized != 0);
  const double answer = dp_pg::CallCore([&] {
    dp::QuantileGrid grid(state->lower, state->upper, static_cast<std::size_t>(state->bins));
    grid.RestoreCounts(dp_pg::CountsOf(state));
    return grid.Release(state->fraction, state->epsilon, dp_pg::NoiseSource());
  });
  PG_RETURN_FLOAT8(answer);
}

PG_FUNCTION_INFO_V1(dp_quantile_state_in);
Datum dp_quantile_state_in(PG_FUNCTION_ARGS) {
  const char* text = PG_GETARG_CSTRING(0);
  if (std::strcmp(text, "uninitialized") == 0) PG_RETURN_POINTER(dp_pg::NewQuantileState(0));
  // The core parses into a fixed-size state allocated beforehand (the grid
  // has at most kMaxQuantileBins bins), so no C++ object outlives the call.
  QuantileState* state = dp_pg::NewQuantileState(static_cast<int>(dp::kMaxQuantileBins));
  int bins = 0;
  const bool parsed = dp_pg::CallCore([&] {
    dp::QuantileStateFields fields;
    if (!dp::ParseQuantileState(text, &fields) || fields.counts.size() > dp::kMaxQuantileBins)
      return false;
    bins = static_cast<int>(fields.counts.size());
    state->epsilon = fields.epsilon;
    state->fraction = fields.fraction;
    state->lower = fields.lower;
    state->upper = fields.upper;
    std::memcpy(state->counts, fields.counts.data(), sizeof(std::int64_t) * fields.counts.size());
    return true;
  });
  if (!parsed)
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid input syntax for type dp_agg.quantile_state")));
  state->initialized = 1;
  state->bins = bins;
  SET_VARSIZE(state, dp_pg::QuantileStateSize(bins));
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_quantile_state_out);
Datum dp_quantile_state_out(PG_FUNCTION_ARGS) {
  const QuantileState* state = dp_pg::ReadQuantileState(fcinfo, 0);
  if (state->initialized == 0) PG_RETURN_CSTRING(pstrdup("uninitialized"));
  // At most 256 characters plus 21 per bin (an int64 and a comma).
  const Size capacity = 256 + 21 * static_cast<Size>(state->bins);
  char* text = static_cast<char*>(palloc(capacity));
  const bool fits = dp_pg::CallCore([&] {
    dp::QuantileStateFields fields;
    fields.epsilon = state->epsilon;
    fields.fraction = state->fraction;
    fields.lower = state->lower;
    fields.upper = state->upper;
    fields.counts = dp_pg::CountsOf(state);
    const std::string formatted = dp::FormatQuantileState(fields);
    if (formatted.size() >= capacity) return false;
    std::memcpy(text, formatted.c_str(), formatted.size() + 1);
    return true;
  });
  if (!fits) ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("dp_agg quantile state too long")));
  PG_RETURN_CSTRING(text);
}

}  // extern "C"
