#include "private_statistics.h"

#include <algorithm>

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

MeanPlans PlanMean(std::int64_t lower_units, std::int64_t upper_units, double epsilon) {
  // Centred half-unit values 2v - (lower + upper) lie in [-(upper - lower), upper - lower].
  const uint128 width = static_cast<uint128>(int128{upper_units} - int128{lower_units});
  const double half = epsilon / 2.0;  // exact: halving a double
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
