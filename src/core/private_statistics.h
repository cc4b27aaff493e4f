// The statistics behind dp_count, dp_sum and dp_avg: what each releases, with
// which sensitivity, under add/remove-one-row neighbouring datasets.
#ifndef DP_AGG_CORE_PRIVATE_STATISTICS_H
#define DP_AGG_CORE_PRIVATE_STATISTICS_H

#include <cstdint>

#include "grid_value.h"
#include "laplace_mechanism.h"
#include "random_source.h"

namespace dp {

// Number of rows: one row changes it by 1.
LaplacePlan PlanCount(double epsilon);

// Sum of values clamped to [lower, upper] (in units): one row adds or removes
// one clamped value, so the sensitivity is max(|lower|, |upper|), not
// upper - lower (the number of rows is itself private).
uint128 SumSensitivity(std::int64_t lower_units, std::int64_t upper_units) noexcept;
LaplacePlan PlanSum(std::int64_t lower_units, std::int64_t upper_units, double epsilon);

// Bounded mean (Google's BoundedMean; "Differential privacy: from theory to
// practice", section 2.5.5): epsilon is split evenly between a noisy count C
// and a noisy sum S of values re-centred on the midpoint m of the bounds,
// whose sensitivity is only half the width of the bounds. The answer
// clamp(m + S / max(1, C), lower, upper) is post-processing of the two
// releases, so it is epsilon-DP by sequential composition. It never divides
// by the true count, and zero rows give a noisy value, not an error.
//
// The re-centred values are kept in half-units, 2 v - (lower + upper), so
// that the midpoint is exact even for integer bounds such as [0, 1]: their
// sensitivity is then exactly upper - lower half-units, i.e. (upper - lower) / 2.
//
// SplitMeanBudget is the one place where the mean's budget is divided between
// its two releases (PlanMean, PlanGaussianMean and MechanismBuilder::BuildMean
// all take their halves from it): each part gets half of epsilon and half of
// delta, rounded down, so that the two compose to at most (epsilon, delta).
// Throws InvalidParameter if delta > 0 but half of it rounds to 0.
struct MeanPartBudget {
  double epsilon = 0;
  double delta = 0;  // 0: Laplace
};
MeanPartBudget SplitMeanBudget(double epsilon, double delta);

struct MeanPlans {
  LaplacePlan count;
  LaplacePlan centred_sum;  // in half-units
};
MeanPlans PlanMean(std::int64_t lower_units, std::int64_t upper_units, double epsilon);

// The two released values behind a mean and the mean itself
// clamp(mid + S / max(1, C), lower, upper); the error bars (confidence.h)
// are computed from these. All three are post-processing of the releases.
struct MeanRelease {
  GridValue noisy_count;  // exponent 0 + grid shift
  GridValue noisy_centred_sum;  // in half-units: exponent unit_exponent - 1 + grid shift
  double mean = 0;
};

// The centred sum in half-units, 2 sum - count (lower + upper): exact, since
// |sum_units| < 2^126 and |lower + upper| <= 2^64 (counts below 2^62).
int128 CentredSumHalfUnits(std::int64_t count, int128 sum_units, std::int64_t lower_units,
                           std::int64_t upper_units) noexcept;

// The mean from the released count and centred sum, using only released
// values and the public bounds (shared by the Laplace and Gaussian means).
MeanRelease MeanFromReleases(const GridValue& noisy_count, const GridValue& noisy_centred_sum,
                             std::int64_t lower_units, std::int64_t upper_units, int unit_exponent);

// sum_units: the exact sum of the `count` clamped values, in units.
MeanRelease ReleaseMeanParts(std::int64_t count, int128 sum_units, std::int64_t lower_units,
                             std::int64_t upper_units, int unit_exponent, const MeanPlans& plans,
                             RandomSource& rng);
double ReleaseMean(std::int64_t count, int128 sum_units, std::int64_t lower_units,
                   std::int64_t upper_units, int unit_exponent, const MeanPlans& plans,
                   RandomSource& rng);

}  // namespace dp

#endif  // DP_AGG_CORE_PRIVATE_STATISTICS_H
