#include "partition_selection.h"

#include <cmath>
#include <stdexcept>

#include "exact_sampler.h"
#include "laplace_mechanism.h"

namespace dp {

namespace {

// log P[Z >= k] = k log q - log(1 + q), with log q = -epsilon.
long double LogTail(long double epsilon, std::int64_t k) {
  return -epsilon * static_cast<long double>(k) - std::log1p(std::exp(-epsilon));
}

}  // namespace

PartitionSelectionPlan PlanPartitionSelection(double epsilon, double delta) {
  if (!(delta > 0) || !(delta <= 0.5)) throw std::invalid_argument("delta must be in (0, 0.5]");
  PartitionSelectionPlan plan;
  const DyadicEpsilon eps = RoundEpsilonDown(epsilon);
  plan.epsilon = EffectivePrivacyParameter(epsilon);
  plan.delta = EffectivePrivacyParameter(delta);
  // 1/epsilon' = 2^-e / m (e <= 0) or 1 / (m 2^e), as in PlanLaplace.
  if (eps.exponent <= 0) {
    if (-eps.exponent >= 96) throw std::invalid_argument("epsilon too small");
    plan.scale_numerator = uint128{1} << -eps.exponent;
    plan.scale_denominator = eps.mantissa;
  } else {
    if (eps.exponent >= 64) throw std::invalid_argument("epsilon too large");
    plan.scale_numerator = 1;
    plan.scale_denominator = uint128{eps.mantissa} << eps.exponent;
  }
  // Smallest k >= 1 with q^k / (1 + q) <= delta', then T = k + 1. The
  // estimate from logarithms is corrected in both directions with a margin
  // of 1e-9 in log space: the k chosen satisfies the inequality with room to
  // spare for the rounding of exp/log (errors ~1e-18 in long double), so a
  // rounding error can only make T larger, never smaller.
  const long double e = plan.epsilon;
  const long double log_delta = std::log(static_cast<long double>(plan.delta));
  const long double margin = 1e-9L;
  // The estimate includes the margin: the loops below then move k by a few
  // steps at most. Without it, they walked 1e-9 / epsilon steps (1e6 at the
  // smallest epsilon, 2^-50) to cross the margin one k at a time. The result
  // is the same: the smallest k >= 1 with LogTail <= log_delta - margin.
  long double estimate = std::ceil((margin - log_delta - std::log1p(std::exp(-e))) / e);
  if (!(estimate < 4e18L)) throw std::invalid_argument("epsilon too small for a threshold");
  std::int64_t k = estimate < 1 ? 1 : static_cast<std::int64_t>(estimate);
  while (LogTail(e, k) > log_delta - margin) ++k;
  while (k > 1 && LogTail(e, k - 1) <= log_delta - margin) --k;
  plan.threshold = k + 1;
  return plan;
}

double NoiseTailProbability(const PartitionSelectionPlan& plan, std::int64_t k) {
  return static_cast<double>(std::exp(LogTail(plan.epsilon, k)));
}

bool ReleasePartition(std::int64_t count, const PartitionSelectionPlan& plan, RandomSource& rng) {
  // The noise is always drawn, so the time taken does not depend on count.
  const int128 noise = SampleDiscreteLaplace(rng, plan.scale_numerator, plan.scale_denominator);
  return int128{count} + noise >= int128{plan.threshold};
}

}  // namespace dp
