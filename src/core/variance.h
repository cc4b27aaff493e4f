// The bounded variance behind dp_variance and dp_stddev.
//
// Estimator (Google's BoundedVariance, differential-privacy
// cc/algorithms/bounded-variance.h; "Differential privacy: from theory to
// practice" section 2.5.5 for the mean it extends): three releases, each
// given a third of the budget,
//   C  noisy count                                    sensitivity 1
//   S  noisy sum of c = x - m                         sensitivity h
//   Q  noisy sum of c^2                               sensitivity h^2
// where m = (lower + upper) / 2 and h = (upper - lower) / 2, so that every
// clamped value has |c| <= h. The answer, post-processing of the three
// releases and the public bounds only, is
//   N = max(1, C),  mean = clamp(S / N, -h, h),  msq = clamp(Q / N, 0, h^2),
//   variance = clamp(msq - mean^2, 0, h^2)
// (never negative, never above the largest variance of values in the bounds,
// and a noisy value also for zero rows). It is epsilon-DP (Laplace, epsilon/3
// each, sequential composition) or (epsilon, delta)-DP (discrete Gaussian,
// rho/3 each where rho = RhoForEpsilonDelta(epsilon, delta), zCDP
// composition: the call costs rho). dp_stddev is sqrt(dp_variance), in [0, h].
//
// The combination is computed on S / h and Q / h^2 (ReleaseVariance), which
// the unit exponent cancels from: no overflow or underflow at any scale of
// bounds; bounds whose h^2 is no finite double are refused
// (ValidateVarianceBounds).
//
// Error (n rows, true variance v): the estimate's error is dominated by
// Q's noise, about 3 sqrt(2) h^2 / (epsilon n) standard deviation (Laplace),
// plus the mean term 2 |mean| 3 sqrt(2) h / (epsilon n) and the count's
// relative error 3 sqrt(2) / (epsilon n) times v; so about
// 3 sqrt(2) (h^2 + 2 h |mean| + v) / (epsilon n). Clamping to [0, h^2] only
// moves the estimate toward the truth.
//
// Exactness: values are clamped and turned into units exactly as dp_avg's
// (integers as themselves, floats on 2^unit_exponent); c is kept in
// half-units, c' = 2 v - (lower + upper), |c'| <= W = upper - lower units;
// c'^2 is kept on a coarser grid, c'^2 >> shift (shift chosen from the public
// bounds so that W^2 >> shift < 2^62: one row adds at most 2^62 and 2^62 rows
// cannot overflow the int128 sum). Rounding each square down before the noise
// is a function of the row: Q's sensitivity is the largest rounded square,
// W^2 >> shift, exactly what the noise is scaled to. All noise is exact
// (Laplace/discrete Gaussian on a binary grid, laplace_mechanism.h,
// gaussian_mechanism.h).
#ifndef DP_AGG_CORE_VARIANCE_H
#define DP_AGG_CORE_VARIANCE_H

#include <cstdint>
#include <type_traits>

#include "gaussian_mechanism.h"
#include "grid_value.h"
#include "laplace_mechanism.h"
#include "random_source.h"

namespace dp {

// The public grid of the squares for bounds [lower_units, upper_units].
int VarianceSquareShift(std::int64_t lower_units, std::int64_t upper_units) noexcept;

// One clamped value (in units, within the bounds) as its rounded centred
// square: (2 v - (lower + upper))^2 >> shift.
inline std::uint64_t CentredSquare(std::int64_t value_units, std::int64_t lower_units,
                                   std::int64_t upper_units, int shift) noexcept {
  const int128 centred = 2 * int128{value_units} - int128{lower_units} - int128{upper_units};
  const uint128 magnitude = static_cast<uint128>(centred < 0 ? -centred : centred);
  return static_cast<std::uint64_t>((magnitude * magnitude) >> shift);
}

// The three mechanisms (count, centred sum in half-units, centred squares
// on their grid); trivially destructible (kept in fn_extra).
struct VarianceMechanisms {
  bool gaussian = false;
  int square_shift = 0;
  LaplacePlan count_laplace, sum_laplace, squares_laplace;
  GaussianPlan count_gaussian, sum_gaussian, squares_gaussian;
  // zCDP cost of the Gaussian form (sum of the three parts' rho); 0 for Laplace.
  double rho = 0;
};
static_assert(std::is_trivially_destructible_v<VarianceMechanisms>,
              "VarianceMechanisms lives in fn_extra across PostgreSQL calls that may raise");

// epsilon, delta: the effective parameters (already validated); delta 0 is
// Laplace. Throws InvalidParameter when a part cannot be calibrated.
VarianceMechanisms PlanVariance(std::int64_t lower_units, std::int64_t upper_units, double epsilon,
                                double delta);

// Throws InvalidParameter when h^2 = ((upper - lower) / 2)^2 is not a finite
// double (half-width above about 1.34e154): the answer's range [0, h^2]
// would not be representable. Decided from the public bounds alone.
void ValidateVarianceBounds(std::int64_t lower_units, std::int64_t upper_units, int unit_exponent);

// Caches what ReleaseVariance's first draws with `plan` would compute (the
// samplers' constants: exact_sampler.h PrepareDiscreteLaplace).
void PrepareVarianceSampling(const VarianceMechanisms& plan);

struct VarianceRelease {
  double variance = 0;  // in value units squared, within [0, h^2]; never -0
  double stddev = 0;  // sqrt of the same estimate computed as sqrt(r) h, in [0, h]
  double noise_stddev = 0;  // about the noise's standard deviation on it (public)
};

// count rows, sum_units their exact clamped sum (units), squares the exact
// sum of their CentredSquare values.
VarianceRelease ReleaseVariance(const VarianceMechanisms& plan, std::int64_t count,
                                int128 sum_units, int128 squares, std::int64_t lower_units,
                                std::int64_t upper_units, int unit_exponent, RandomSource& rng);

// The variance from released values and public bounds (post-processing);
// +0 for a non-positive or NaN difference, never -0. ReleaseVariance calls
// it with values normalised by h (half_width 1): the ratio r = variance / h^2
// in [0, 1], computed without overflow or underflow whatever the bounds.
double VarianceFromReleases(double noisy_count, double noisy_centred_sum, double noisy_squares,
                            double half_width);

}  // namespace dp

#endif  // DP_AGG_CORE_VARIANCE_H
