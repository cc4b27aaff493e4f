// dp_percentile and dp_median: Smith's exponential mechanism over the
// fixed-point lattice between the bounds (core/continuous_quantile.h),
// sampled exactly, with the utility's sensitivity max(f, 1 - f).
// The state keeps every row's lattice point (8 bytes a row, grown by
// doubling, like percentile_cont's sort); combine concatenates; the final
// function sorts a private copy and draws the answer, always within
// [lower, upper].
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "../core/continuous_quantile.h"
#include "../core/parameters.h"
#include "../core/state_text.h"
#include "aggregate_state.h"
#include "citus/adapter.h"
#include "error_boundary.h"
#include "initial_state.h"
#include "quantile_aggregates.h"
#include "settings.h"
#include "state_header.h"
#include "support_guard.h"

namespace dp_pg {

namespace {

// Version 2: lattice points (Smith's mechanism); version 1 held grid counts.
constexpr std::uint8_t kQuantileFormatVersion = 2;

// The state is a plain varlena so that parallel workers and Citus ship it as
// it is (and as text, dp_quantile_state_out). VARSIZE covers the spare
// capacity as well, so that nodeAgg's datumCopy keeps it.
struct QuantileState {
  std::int32_t varlena_header;
  std::uint8_t format_version;
  std::uint8_t initialized;
  std::uint8_t reserved[2];
  std::int32_t unit_exponent;  // the public lattice (core SmithLattice), from the bounds
  std::int32_t padding;
  double epsilon;
  double fraction;
  double lower;
  double upper;
  double unit_scale;
  std::int64_t lower_units;
  std::int64_t upper_units;
  std::int64_t rows;  // points in use; the rest up to the capacity is spare
  std::int64_t points[FLEXIBLE_ARRAY_MEMBER];
};

static_assert(offsetof(QuantileState, format_version) == offsetof(StateHeader, format_version) &&
                  offsetof(QuantileState, initialized) == offsetof(StateHeader, initialized),
              "QuantileState starts with StateHeader");

constexpr Size kPointsOffset = offsetof(QuantileState, points);
// A varlena (and nodeAgg's datumCopy, which uses palloc) is at most
// MaxAllocSize bytes: about 134 million rows per group.
constexpr std::int64_t kMaxQuantileRows =
    static_cast<std::int64_t>((MaxAllocSize - kPointsOffset) / sizeof(std::int64_t));
// The first allocation for rows: small, so that many groups stay cheap.
constexpr std::int64_t kInitialQuantileCapacity = 8;

Size QuantileStateSize(std::int64_t capacity) {
  return kPointsOffset + sizeof(std::int64_t) * static_cast<Size>(capacity);
}

std::int64_t CapacityOf(const QuantileState* state) {
  return static_cast<std::int64_t>((VARSIZE(state) - kPointsOffset) / sizeof(std::int64_t));
}

QuantileState* NewQuantileState(std::int64_t capacity) {
  auto* state = static_cast<QuantileState*>(palloc0(QuantileStateSize(capacity)));
  SET_VARSIZE(state, QuantileStateSize(capacity));
  state->format_version = kQuantileFormatVersion;
  return state;
}

void SetLattice(QuantileState* state, const dp::SmithLattice& lattice) {
  state->lower = lattice.lower;
  state->upper = lattice.upper;
  state->unit_exponent = lattice.unit_exponent;
  state->unit_scale = lattice.unit_scale;
  state->lower_units = lattice.lower_units;
  state->upper_units = lattice.upper_units;
}

dp::SmithLattice LatticeOf(const QuantileState* state) {
  dp::SmithLattice lattice;
  lattice.lower = state->lower;
  lattice.upper = state->upper;
  lattice.unit_exponent = state->unit_exponent;
  lattice.unit_scale = state->unit_scale;
  lattice.lower_units = state->lower_units;
  lattice.upper_units = state->upper_units;
  return lattice;
}

// Room for `needed` rows: the state itself when it has it, else a copy with
// at least twice the capacity (amortized O(1) per row). The copy is made in
// the current memory context, the executor's per-tuple context: nodeAgg
// (ExecAggTransReparent) copies a new transition value into the aggregate
// context and frees the old one, and the per-tuple context then releases
// this intermediate. (Enlarging with repalloc would free the old value under
// nodeAgg, which frees it again.) More than kMaxQuantileRows rows cannot be
// kept: ERROR 54000. That error depends on the data (a group with more than
// about 134 million rows); README "Quantiles" states it.
QuantileState* WithRoomFor(QuantileState* state, std::int64_t needed) {
  const std::int64_t capacity = CapacityOf(state);
  if (needed <= capacity) return state;
  if (needed > kMaxQuantileRows)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("dp_median and dp_percentile keep at most %lld rows per group",
                           static_cast<long long>(kMaxQuantileRows)),
                    errdetail("The quantile mechanism keeps every row of a group, like "
                              "percentile_cont; split the group or sample the table.")));
  std::int64_t enlarged = capacity < kInitialQuantileCapacity ? kInitialQuantileCapacity : capacity;
  while (enlarged < needed)
    enlarged = enlarged > kMaxQuantileRows / 2 ? kMaxQuantileRows : enlarged * 2;
  auto* copy = static_cast<QuantileState*>(palloc(QuantileStateSize(enlarged)));
  std::memcpy(copy, state, QuantileStateSize(state->rows));
  SET_VARSIZE(copy, QuantileStateSize(enlarged));
  return copy;
}

void CheckQuantileState(const QuantileState* state) {
  if (VARSIZE(state) < kPointsOffset || state->format_version != kQuantileFormatVersion ||
      (VARSIZE(state) - kPointsOffset) % sizeof(std::int64_t) != 0 || state->rows < 0 ||
      state->rows > CapacityOf(state))
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dp_agg quantile state")));
}

// A read-only copy of a state argument (may come from a tuple).
QuantileState* ReadQuantileState(FunctionCallInfo fcinfo, int argument) {
  auto* state = static_cast<QuantileState*>(ReadStateCopy(
      fcinfo, argument, kPointsOffset, kQuantileFormatVersion, "dp_agg quantile state"));
  CheckQuantileState(state);
  return state;
}

// A state argument as it is (detoasted if it came from a tuple), not to be
// modified: the final function copies only the rows in use from it.
const QuantileState* ReadQuantileStateInPlace(FunctionCallInfo fcinfo, int argument) {
  if (PG_ARGISNULL(argument))
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("dp_agg quantile state is NULL")));
  const auto* state =
      reinterpret_cast<const QuantileState*>(PG_DETOAST_DATUM(PG_GETARG_DATUM(argument)));
  CheckQuantileState(state);
  return state;
}

}  // namespace

Datum PrepareQuantileInitialState(const dp::PublicParameters& parameters,
                                  const dp::PrivacyParameters& effective) {
  const double lower = parameters.lower;
  const double upper = parameters.upper;
  const dp::SmithLattice lattice = CallCore([&] { return dp::MakeSmithLattice(lower, upper); });
  QuantileState* state = NewQuantileState(kInitialQuantileCapacity);
  state->initialized = dp_pg::kStatePrepared;
  state->epsilon = StateEpsilon(effective);
  state->fraction = parameters.fraction;
  SetLattice(state, lattice);
  return PointerGetDatum(state);
}

}  // namespace dp_pg

using dp_pg::QuantileState;

extern "C" {

// One row: NaN is ignored, anything else is clamped to the bounds and kept
// as its lattice point. STRICT: NULL values never arrive.
PG_FUNCTION_INFO_V1(dp_quantile_transfn);
Datum dp_quantile_transfn(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_quantile_transfn");
  auto* state = reinterpret_cast<QuantileState*>(PG_GETARG_POINTER(0));
  if (state->initialized == dp_pg::kStateUninitialized) {  // dp_agg on Citus: agginitcond
    if (void* prepared = dp_pg::CitusPreparedState(fcinfo))
      state = static_cast<QuantileState*>(prepared);
  }
  dp_pg::RequirePreparedState(state->initialized);
  const double value = PG_GETARG_FLOAT8(1);
  if (std::isnan(value)) PG_RETURN_POINTER(state);
  state = dp_pg::WithRoomFor(state, state->rows + 1);
  state->points[state->rows] = dp::SmithPointOf(dp_pg::LatticeOf(state), value);
  state->rows += 1;
  PG_RETURN_POINTER(state);
}

// Concatenates the rows of two partial states of one call site.
PG_FUNCTION_INFO_V1(dp_quantile_combine);
Datum dp_quantile_combine(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_quantile_combine");
  dp_pg::RequireOwnAggregateCall(fcinfo, "dp_quantile_combine");
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
      into->lower == partial->lower && into->upper == partial->upper &&
          into->epsilon == partial->epsilon && into->fraction == partial->fraction &&
          into->unit_exponent == partial->unit_exponent &&
          into->lower_units == partial->lower_units && into->upper_units == partial->upper_units,
      "dp_agg quantile");
  into = dp_pg::WithRoomFor(into, into->rows + partial->rows);
  std::memcpy(into->points + into->rows, partial->points,
              sizeof(std::int64_t) * static_cast<Size>(partial->rows));
  into->rows += partial->rows;
  PG_RETURN_POINTER(into);
}

// Smith's exponential mechanism on the rows (core/continuous_quantile.h),
// sorting a private copy of the rows.
PG_FUNCTION_INFO_V1(dp_quantile_final);
Datum dp_quantile_final(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_quantile_final");
  dp_pg::RequireOwnAggregateCall(fcinfo, "dp_quantile_final");
  const QuantileState* state = dp_pg::ReadQuantileStateInPlace(fcinfo, 0);
  if (state->initialized == dp_pg::kStateUninitialized) {  // dp_agg on Citus: no partial arrived
    if (void* prepared = dp_pg::CitusPreparedState(fcinfo))
      state = static_cast<QuantileState*>(prepared);
  }
  dp_pg::RequirePreparedState(state->initialized);
  const dp::SmithLattice lattice = dp_pg::LatticeOf(state);
  // A private copy of the rows in use (not the spare capacity), sorted in place.
  const std::size_t rows = static_cast<std::size_t>(state->rows);
  auto* points = static_cast<std::int64_t*>(
      palloc_extended(sizeof(std::int64_t) * std::max<std::size_t>(rows, 1), MCXT_ALLOC_HUGE));
  std::memcpy(points, state->points, sizeof(std::int64_t) * rows);
  const double fraction = state->fraction;
  const double epsilon = state->epsilon;
  const double answer = dp_pg::CallCore([&] {
    return dp::ReleaseSmithQuantile(lattice, points, rows, fraction, epsilon, dp_pg::NoiseSource());
  });
  pfree(points);
  PG_RETURN_FLOAT8(answer);
}

PG_FUNCTION_INFO_V1(dp_quantile_state_in);
Datum dp_quantile_state_in(PG_FUNCTION_ARGS) {
  const char* text = PG_GETARG_CSTRING(0);
  if (std::strcmp(text, "uninitialized") == 0) PG_RETURN_POINTER(dp_pg::NewQuantileState(0));
  // The core parses into a state allocated beforehand with room for every
  // point the text can hold (one per comma, plus one), so no C++ object
  // outlives the call.
  std::int64_t most_points = 1;
  for (const char* c = text; *c != '\0'; ++c) most_points += (*c == ',');
  if (most_points > dp_pg::kMaxQuantileRows)
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid input syntax for type dp_agg.quantile_state")));
  QuantileState* state = dp_pg::NewQuantileState(most_points);
  const bool parsed = dp_pg::CallCore([&] {
    dp::QuantileStateFields fields;
    if (!dp::ParseQuantileState(text, &fields) ||
        fields.points.size() > static_cast<std::size_t>(most_points))
      return false;
    dp::SmithLattice lattice;
    try {
      lattice = dp::MakeSmithLattice(fields.lower, fields.upper);
    } catch (const dp::InvalidParameter&) {
      return false;
    }
    for (const std::int64_t point : fields.points)
      if (point < lattice.lower_units || point > lattice.upper_units) return false;
    state->epsilon = fields.epsilon;
    state->fraction = fields.fraction;
    dp_pg::SetLattice(state, lattice);
    state->rows = static_cast<std::int64_t>(fields.points.size());
    std::memcpy(state->points, fields.points.data(), sizeof(std::int64_t) * fields.points.size());
    return true;
  });
  if (!parsed)
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid input syntax for type dp_agg.quantile_state")));
  state->initialized = dp_pg::kStateFromText;  // support_guard.h
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_quantile_state_out);
Datum dp_quantile_state_out(PG_FUNCTION_ARGS) {
  const QuantileState* state = dp_pg::ReadQuantileState(fcinfo, 0);
  if (state->initialized == 0) PG_RETURN_CSTRING(pstrdup("uninitialized"));
  // At most 256 characters plus 21 per point (an int64 and a comma).
  const Size capacity = 256 + 21 * static_cast<Size>(state->rows);
  char* text = static_cast<char*>(palloc_extended(capacity, MCXT_ALLOC_HUGE));
  const bool fits = dp_pg::CallCore([&] {
    dp::QuantileStateFields fields;
    fields.epsilon = state->epsilon;
    fields.fraction = state->fraction;
    fields.lower = state->lower;
    fields.upper = state->upper;
    fields.points.assign(state->points, state->points + state->rows);
    const std::string formatted = dp::FormatQuantileState(fields);
    if (formatted.size() >= capacity) return false;
    std::memcpy(text, formatted.c_str(), formatted.size() + 1);
    return true;
  });
  if (!fits)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("dp_agg quantile state too long")));
  PG_RETURN_CSTRING(text);
}

}  // extern "C"
