#include "private_statistics.h"

#include <algorithm>
#include <cmath>

#include "parameters.h"

namespace dp {

namespace {
uint128 Magnitude(std::int64_t value) {
  return value < 0 ? uint128{0} - static_cast<uint128>(static_cast<int128>(value))
                   : static_cast<uint128>(value);
}
}  // namespace

uint128 SumSensitivity(std::int64_t lower_units, std::int64_t upper_units) noexcept {
  return std::max(Magnitude(lower_units), Magnitude(upper_units));
}

LaplacePlan PlanCount(double epsilon) { return PlanLaplace(1, epsilon); }

LaplacePlan PlanSum(std::int64_t lower_units, std::int64_t upper_units, double epsilon) {
  return PlanLaplace(SumSensitivity(lower_units, upper_units), epsilon);
}

namespace {
// x / 2 rounded down: exact for normal doubles; a subnormal x with an odd
// last bit would otherwise round half to even, possibly up.
double HalveDown(double x) {
  const double half = x / 2;
  return half * 2 > x ? std::nextafter(half, 0.0) : half;
}
}  // namespace

MeanPartBudget SplitMeanBudget(double epsilon, double delta) {
  MeanPartBudget part;
  part.epsilon = HalveDown(epsilon);
  part.delta = HalveDown(delta);
  if (std::isfinite(delta) && delta > 0 && !(part.delta > 0))
    throw InvalidParameter(
        "delta is too small for a Gaussian mean: half of it, which each of its two releases "
        "gets, rounds to 0",
        "Use a delta of at least 1e-323 (in practice far larger, such as 1e-9).");
  return part;
}

MeanPlans PlanMean(std::int64_t lower_units, std::int64_t upper_units, double epsilon) {
  // Centred half-unit values 2v - (lower + upper) lie in [-(upper - lower), upper - lower].
  const uint128 width = static_cast<uint128>(int128{upper_units} - int128{lower_units});
  const double half = SplitMeanBudget(epsilon, 0).epsilon;
  return MeanPlans{PlanLaplace(1, half), PlanLaplace(width, half)};
}

int128 CentredSumHalfUnits(std::int64_t count, int128 sum_units, std::int64_t lower_units,
                           std::int64_t upper_units) noexcept {
  return 2 * sum_units - int128{count} * (int128{lower_units} + int128{upper_units});
}

MeanRelease MeanFromReleases(const GridValue& noisy_count, const GridValue& noisy_centred_sum,
                             std::int64_t lower_units, std::int64_t upper_units,
                             int unit_exponent) {
  MeanRelease release;
  release.noisy_count = noisy_count;
  release.noisy_centred_sum = noisy_centred_sum;
  const double lower = ToDouble({lower_units, unit_exponent});
  const double upper = ToDouble({upper_units, unit_exponent});
  const double mid = ToDouble({int128{lower_units} + int128{upper_units}, unit_exponent - 1});
  const double denominator = std::max(1.0, ToDouble(noisy_count));
  release.mean = std::clamp(mid + ToDouble(noisy_centred_sum) / denominator, lower, upper);
  return release;
}

MeanRelease ReleaseMeanParts(std::int64_t count, int128 sum_units, std::int64_t lower_units,
                             std::int64_t upper_units, int unit_exponent, const MeanPlans& plans,
                             RandomSource& rng) {
  const int128 centred_sum = CentredSumHalfUnits(count, sum_units, lower_units, upper_units);
  const GridValue noisy_count = ReleaseLaplace(count, 0, plans.count, rng);
  const GridValue noisy_centred_sum =
      ReleaseLaplace(centred_sum, unit_exponent - 1, plans.centred_sum, rng);
  return MeanFromReleases(noisy_count, noisy_centred_sum, lower_units, upper_units, unit_exponent);
}

double ReleaseMean(std::int64_t count, int128 sum_units, std::int64_t lower_units,
                   std::int64_t upper_units, int unit_exponent, const MeanPlans& plans,
                   RandomSource& rng) {
  return ReleaseMeanParts(count, sum_units, lower_units, upper_units, unit_exponent, plans, rng)
      .mean;
}

}  // namespace dp
