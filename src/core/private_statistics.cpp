#include "private_statistics.h"

#include <algorithm>

namespace dp {

namespace {
uint128 Magnitude(std::int64_t value) {
  return value < 0 ? uint128{0} - static_cast<uint128>(static_cast<int128>(value))
                   : static_cast<uint128>(value);
}
}  // namespace

LaplacePlan PlanCount(double epsilon) { return PlanLaplace(1, epsilon); }

LaplacePlan PlanSum(std::int64_t lower_units, std::int64_t upper_units, double epsilon) {
  return PlanLaplace(std::max(Magnitude(lower_units), Magnitude(upper_units)), epsilon);
}

std::int64_t MidpointUnits(std::int64_t lower_units, std::int64_t upper_units) {
  const int128 sum = int128{lower_units} + int128{upper_units};
  // Floor division by 2 (arithmetic shift), exact for negative sums too.
  return static_cast<std::int64_t>(sum >> 1);
}

MeanPlans PlanMean(std::int64_t lower_units, std::int64_t upper_units, double epsilon) {
  const std::int64_t mid = MidpointUnits(lower_units, upper_units);
  // Normalised values lie in [lower - mid, upper - mid].
  const int128 below = int128{mid} - int128{lower_units};
  const int128 above = int128{upper_units} - int128{mid};
  const uint128 sensitivity = static_cast<uint128>(std::max(below, above));
  const double half = epsilon / 2.0;  // exact: halving a double
  return MeanPlans{PlanLaplace(1, half), PlanLaplace(sensitivity, half)};
}

double ReleaseMean(std::int64_t count, int128 normalized_sum_units, std::int64_t lower_units,
                   std::int64_t upper_units, int unit_exponent, const MeanPlans& plans,
                   RandomSource& rng) {
  const GridValue noisy_count = ReleaseLaplace(count, 0, plans.count, rng);
  const GridValue noisy_sum =
      ReleaseLaplace(normalized_sum_units, unit_exponent, plans.normalized_sum, rng);
  // From here on only released values and public bounds are used.
  const double lower = ToDouble({lower_units, unit_exponent});
  const double upper = ToDouble({upper_units, unit_exponent});
  const double mid = ToDouble({MidpointUnits(lower_units, upper_units), unit_exponent});
  const double denominator = std::max(1.0, ToDouble(noisy_count));
  const double mean = mid + ToDouble(noisy_sum) / denominator;
  return std::clamp(mean, lower, upper);
}

}  // namespace dp
