// dp_count, dp_sum and dp_avg: partial states, merged by the combine function
// (parallel aggregation, Citus) and written as text by the state type's
// input and output functions.
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
namespace {

bool SameParameters(const AggregateState* a, const AggregateState* b) {
  return a->value_kind == b->value_kind && a->unit_exponent == b->unit_exponent &&
         a->epsilon == b->epsilon && a->lower_units == b->lower_units &&
         a->upper_units == b->upper_units && a->lower == b->lower && a->upper == b->upper &&
         a->delta == b->delta && a->confidence == b->confidence;
}

void CopyParameters(AggregateState* to, const AggregateState* from) {
  to->initialized = from->initialized;  // a final function checks where they came from
  to->value_kind = from->value_kind;
  to->unit_exponent = from->unit_exponent;
  to->epsilon = from->epsilon;
  to->lower = from->lower;
  to->upper = from->upper;
  to->lower_units = from->lower_units;
  to->upper_units = from->upper_units;
  to->unit_scale = from->unit_scale;
  to->skip_clamping = from->skip_clamping;
  to->delta = from->delta;
  to->confidence = from->confidence;
}

}  // namespace
}  // namespace dp_pg

using dp_pg::AggregateState;

extern "C" {

// Merges a partial state into the first (in place). A partial state of a
// participant that saw no rows still carries the parameters from its initial
// state, so every merged state has them.
PG_FUNCTION_INFO_V1(dp_combine);
Datum dp_combine(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_combine");
  dp_pg::RequireOwnAggregateCall(fcinfo, "dp_combine");
  auto* into = reinterpret_cast<AggregateState*>(PG_GETARG_POINTER(0));
  AggregateState partial;
  dp_pg::ReadState(fcinfo, 1, &partial);
  // dp_agg on Citus: the coordinator's combining state starts from the state
  // it prepared (and charged); a partial state read from text never chooses
  // the parameters of a release.
  if (into->initialized == 0 && dp_pg::IsCitusWrapperCall(fcinfo))
    into = static_cast<AggregateState*>(dp_pg::RequireCitusPreparedState(fcinfo));
  // The state is fixed-size and updated in place, so adopting the partial's
  // parameters is a copy into `into` (whose count and sum are then zero).
  switch (dp_pg::DecideCombineStep(*reinterpret_cast<const dp_pg::StateHeader*>(into),
                                   *reinterpret_cast<const dp_pg::StateHeader*>(&partial))) {
    case dp_pg::CombineStep::kKeepInto:
      break;
    case dp_pg::CombineStep::kAdoptPartial:
      dp_pg::CopyParameters(into, &partial);
      break;
    case dp_pg::CombineStep::kMerge:
      dp_pg::RequireSameParameters(dp_pg::SameParameters(into, &partial), "dp_agg");
      break;
  }
  into->count += partial.count;
  dp_pg::SetSum(into, dp_pg::GetSum(into) + dp_pg::GetSum(&partial));
  PG_RETURN_POINTER(into);
}

// Text form, used by Citus to move partial states between nodes (see
// core/state_text.h); an initial state without parameters is "uninitialized".
PG_FUNCTION_INFO_V1(dp_aggregate_state_in);
Datum dp_aggregate_state_in(PG_FUNCTION_ARGS) {
  const char* text = PG_GETARG_CSTRING(0);
  AggregateState* state = dp_pg::NewAggregateState();
  if (std::strcmp(text, "uninitialized") == 0) PG_RETURN_POINTER(state);
  dp::PartialStateFields fields;
  const bool parsed = dp_pg::CallCore([&] { return dp::ParsePartialState(text, &fields); });
  if (!parsed || fields.kind > static_cast<unsigned>(dp_pg::ValueKind::kFloat))
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid input syntax for type dp_agg.aggregate_state: \"%s\"", text)));
  // Never kStatePrepared: a state typed as text is only ever merged into one
  // the executor hook prepared (support_guard.h).
  state->initialized = dp_pg::kStateFromText;
  state->value_kind = static_cast<std::uint8_t>(fields.kind);
  state->count = fields.count;
  dp_pg::SetSum(state, fields.sum);
  state->epsilon = fields.epsilon;
  state->lower = fields.lower;
  state->upper = fields.upper;
  state->lower_units = fields.lower_units;
  state->upper_units = fields.upper_units;
  state->unit_exponent = fields.unit_exponent;
  state->unit_scale = dp::UnitScale(fields.unit_exponent);
  state->delta = fields.delta;
  state->confidence = fields.confidence;
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_aggregate_state_out);
Datum dp_aggregate_state_out(PG_FUNCTION_ARGS) {
  AggregateState state;
  dp_pg::ReadState(fcinfo, 0, &state);
  if (state.initialized == 0) PG_RETURN_CSTRING(pstrdup("uninitialized"));
  dp::PartialStateFields fields;
  fields.kind = state.value_kind;
  fields.count = state.count;
  fields.sum = dp_pg::GetSum(&state);
  fields.epsilon = state.epsilon;
  fields.lower = state.lower;
  fields.upper = state.upper;
  fields.lower_units = state.lower_units;
  fields.upper_units = state.upper_units;
  fields.unit_exponent = state.unit_exponent;
  fields.delta = state.delta;
  fields.confidence = state.confidence;
  char text[512];
  dp_pg::CallCore([&] {
    const std::string formatted = dp::FormatPartialState(fields);
    std::memcpy(text, formatted.c_str(), std::min(formatted.size() + 1, sizeof text));
    text[sizeof text - 1] = '\0';
  });
  PG_RETURN_CSTRING(pstrdup(text));
}

}  // extern "C"
