// Initial states: every group, every parallel participant and every Citus
// worker gets its call's public parameters before any row is read, so that a
// final function can release a noisy answer for zero rows too.
#include "initial_state.h"
#include "support_guard.h"

#include <algorithm>

#include "../core/confidence.h"
#include "../core/gaussian_mechanism.h"
#include "../core/grid_value.h"
#include "../core/partition_selection.h"
#include "../core/privacy_accountant.h"
#include "../core/private_statistics.h"
#include "aggregate_state.h"
#include "call_parameters.h"
#include "error_boundary.h"
#include "quantile_aggregates.h"
#include "selection_aggregates.h"
#include "variance_aggregates.h"
#include "settings.h"

namespace dp_pg {

double StateEpsilon(const dp::PrivacyParameters& effective) {
  if (test_fault == static_cast<int>(TestFault::kHalveNoise)) return 2 * effective.epsilon;
  return effective.epsilon;
}

namespace {

AggregateState* NewPreparedState(ValueKind value_kind, const dp::PrivacyParameters& effective) {
  AggregateState* state = NewAggregateState();
  state->initialized = kStatePrepared;
  state->value_kind = static_cast<std::uint8_t>(value_kind);
  state->epsilon = StateEpsilon(effective);
  state->delta = effective.delta;
  return state;
}

// dp_agg.group_selection(epsilon, delta): (epsilon, delta) partition
// selection. The release table comes from the public parameters only: computed
// here as well, so that a failure is a parameter error before execution.
AggregateState* PrepareGroupSelectionState(const dp::PrivacyParameters& effective) {
  AggregateState* state = NewPreparedState(ValueKind::kNone, effective);
  const double epsilon = state->epsilon;
  const double delta = state->delta;
  CallCore([&] { dp::PlanPartitionSelection(epsilon, delta); });
  return state;
}

// dp_count, dp_sum, dp_avg and their *_interval and Gaussian forms.
AggregateState* PrepareStatisticState(const PrivateAggregateKind& kind, FinalKind final_kind,
                                      const dp::PublicParameters& values,
                                      const dp::PrivacyParameters& effective, bool leader_prepared,
                                      double* gaussian_rho) {
  AggregateState* state = NewPreparedState(kind.value_kind, effective);
  state->confidence = values.has_confidence ? values.confidence : 0;
  // Test fault (superuser-only): no clamping.
  if (test_fault == static_cast<int>(TestFault::kSkipClamping)) state->skip_clamping = 1;
  const bool has_bounds = values.has_bounds;
  if (!has_bounds) {
    // nothing more: a count
  } else if (values.integer_bounds) {
    state->unit_exponent = 0;
    state->lower_units = values.lower_integer;
    state->upper_units = values.upper_integer;
    state->lower = values.lower;
    state->upper = values.upper;
  } else {
    state->unit_exponent = dp::ChooseUnitExponent(values.lower, values.upper);
    state->unit_scale = dp::UnitScale(state->unit_exponent);
    // The same mapping as for every row (AddDouble), so that clamped values
    // always land between these units.
    state->lower_units = dp::ToUnits(values.lower, state->unit_exponent, state->unit_scale);
    state->upper_units = dp::ToUnits(values.upper, state->unit_exponent, state->unit_scale);
    state->lower = values.lower;
    state->upper = values.upper;
  }
  // The final function calibrates its noise from these public values only;
  // calibrating here as well makes every failure (e.g. a discrete Gaussian
  // too wide for the sampler) a parameter error before anything is charged
  // or computed, whatever the rows.
  const AggregateState prepared = *state;
  *gaussian_rho = 0;
  if (leader_prepared && prepared.delta > 0) return state;  // checked and charged by the leader
  // The zCDP cost of the Gaussian noise calibrated here (the same plans as
  // the final function's): the largest over the releases this transition
  // may feed (count, sum or mean), each output being one of them.
  *gaussian_rho = CallCore([&] {
    double rho = 0;
    const bool count = final_kind == FinalKind::kCount || final_kind == FinalKind::kOther;
    const bool sum =
        has_bounds && (final_kind == FinalKind::kSum || final_kind == FinalKind::kOther);
    const bool mean =
        has_bounds && (final_kind == FinalKind::kMean || final_kind == FinalKind::kOther);
    const double level = prepared.confidence;
    dp::MechanismBuilder builder;
    builder.SetEpsilon(prepared.epsilon).SetDelta(prepared.delta);
    if (count) {
      const dp::NoiseMechanism mechanism = builder.SetSensitivityUnits(1).Build();
      if (level > 0) mechanism.Interval(0, level);
      if (mechanism.kind() == dp::NoiseKind::kGaussian)
        rho = std::max(rho, dp::GaussianPlanRho(mechanism.gaussian_plan()));
    }
    if (sum) {
      const dp::NoiseMechanism mechanism =
          builder
              .SetSensitivityUnits(dp::SumSensitivity(prepared.lower_units, prepared.upper_units))
              .Build();
      if (level > 0) mechanism.Interval(prepared.unit_exponent, level);
      if (mechanism.kind() == dp::NoiseKind::kGaussian)
        rho = std::max(rho, dp::GaussianPlanRho(mechanism.gaussian_plan()));
    }
    // The mean composes two mechanisms with epsilon (and delta) split
    // between them (SplitMeanBudget, private_statistics.h).
    if (mean) {
      const dp::MeanMechanisms mechanisms =
          builder.BuildMean(prepared.lower_units, prepared.upper_units);
      if (level > 0) mechanisms.Intervals(prepared.unit_exponent, level);
      // Its two releases compose: rho adds up (BS16 Lemma 2.3).
      if (mechanisms.count.kind() == dp::NoiseKind::kGaussian)
        rho = std::max(rho, dp::GaussianPlanRho(mechanisms.count.gaussian_plan()) +
                                dp::GaussianPlanRho(mechanisms.centred_sum.gaussian_plan()));
    }
    return rho;
  });
  return state;
}

}  // namespace

Datum PrepareInitialState(Aggref* aggref, const AggregateCacheEntry& entry, EState* estate,
                          RequestedPrivacy* requested, bool leader_prepared) {
  const PrivateAggregateKind& kind = *entry.kind;
  const ArgumentLayout& layout = ArgumentLayoutOf(aggref);
  const CallParameters call = ReadCallParameters(aggref, kind, layout, estate);
  const dp::PrivacyParameters effective = ValidateCallParameters(call.values);
  requested->epsilon = call.values.epsilon;
  requested->delta = call.values.has_delta ? call.values.delta : 0;
  switch (kind.family) {
    case Family::kQuantile:
      return PrepareQuantileInitialState(call.values, effective);
    case Family::kSelection:
      return PrepareSelectionInitialState(aggref, call, effective);
    case Family::kGroupSelection:
      requested->approximate = true;
      return PointerGetDatum(PrepareGroupSelectionState(effective));
    case Family::kVariance: {
      double rho = 0;
      const Datum state = PrepareVarianceInitialState(kind, call.values, effective, &rho);
      if (requested->delta > 0) {
        requested->gaussian = true;
        requested->rho = rho;
      }
      return state;
    }
    case Family::kStatistic:
      break;
  }
  double rho = 0;
  const Datum state = PointerGetDatum(
      PrepareStatisticState(kind, entry.final_kind, call.values, effective, leader_prepared, &rho));
  if (requested->delta > 0) {
    requested->gaussian = true;
    requested->rho = rho;
  }
  return state;
}

}  // namespace dp_pg
