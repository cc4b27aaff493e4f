// Error bars for the released statistics, computed from PUBLIC parameters
// (the plan, the confidence level) and, for the mean, from the released
// values only: publishing them costs no privacy (post-processing).
//
// Count and sum: the noise added on the grid is an integer number of grid
// steps X, discrete Laplace or discrete Gaussian, independent of the data.
// The half-width is built on the exact quantile
//   k = the smallest integer with P[|X| <= k] >= confidence,
// so that [released - half_width, released + half_width] covers the true
// statistic with probability >= confidence, and only as much above it as the
// discreteness forces (P[|X| <= k - 1] < confidence). When the statistic was
// rounded to a grid coarser than one unit (grid_shift > 0), half a grid step
// is added for the rounding; that grid is >= 2^30 times finer than the noise,
// so the extra width is invisible.
//
// Mean: dp_avg_interval's interval is the test inversion of mean_interval.h
// (nominal coverage, no union bound). This file keeps only its FALLBACK, used
// when that inversion is intractable (tiny epsilon: see
// LaplaceMeanTestIsTractable): the count and the centred sum each get an
// interval at level 1 - alpha/2 (alpha = 1 - confidence); by the union bound
// both hold with probability >= confidence, and on that event the true mean
// lies in the range of mid + S / n over the box they define, clamped to the
// bounds. Its actual coverage is therefore >= confidence, typically well above.
#ifndef DP_AGG_CORE_CONFIDENCE_H
#define DP_AGG_CORE_CONFIDENCE_H

#include <cstdint>

#include "gaussian_mechanism.h"
#include "grid_value.h"
#include "laplace_mechanism.h"
#include "private_statistics.h"
#include "random_source.h"

namespace dp {

// confidence must be finite and strictly between 0 and 1; throws
// InvalidParameter (parameters.h) with a hint otherwise.
void ValidateConfidence(double confidence);

// Quantiles of the noise in grid steps: the smallest k >= 0 with
// P[|X| > k] <= miss (1 - 2^-b), miss in (0, 1). The factor 1 - 2^-b
// absorbs the floating-point error in evaluating the tail, so that
// P[|X| > k] <= miss holds rigorously; k is the exact quantile unless
// P[|X| > k - 1] falls within a relative 2^-b below `miss`.
//
// Discrete Laplace: P[|X| > k] = 2 q^(k+1) / (1 + q), q = exp(-s/t), in
// closed form (error ~1e-17), b = 56. Exact up to k < 2^63 (every plan from
// PlanLaplace: scale <= 2^50 steps); beyond, rounded up.
uint128 LaplaceNoiseQuantile(const LaplacePlan& plan, double miss);
// Discrete Gaussian: P[|X| > k] = 2 P[X >= k + 1] with the tail summed
// (directly, or by Euler-Maclaurin for large sigma; error ~1e-14), b = 40;
// k by exponential and binary search on the tail. The relative change of
// the tail per step is >= 1e-9 for every supported sigma (< 2^31), far
// above 2^-40, so k is exact except on a negligible knife edge.
uint128 GaussianNoiseQuantile(const GaussianPlan& plan, double miss);

struct NoiseInterval {
  uint128 quantile_steps = 0;  // k above, in grid steps
  // In value units: k R, plus R/2 if grid_shift > 0 (R = the grid step,
  // 2^(unit_exponent + grid_shift)). Exact.
  GridValue half_width;
  // The same as a double, rounded up (exact whenever it fits 53 bits).
  double half_width_value = 0;
  // Standard deviation of the noise in value units (LaplaceNoiseStddev /
  // GaussianNoiseStddev).
  double noise_stddev = 0;
};

// unit_exponent: the unit of the released statistic (0 for a count, the
// sum's unit exponent for a sum, unit_exponent - 1 for a mean's centred
// sum in half-units).
NoiseInterval LaplaceNoiseInterval(const LaplacePlan& plan, int unit_exponent, double confidence);
NoiseInterval GaussianNoiseInterval(const GaussianPlan& plan, int unit_exponent, double confidence);

// The same at a given miss probability (confidence = 1 - miss).
NoiseInterval LaplaceNoiseIntervalForMiss(const LaplacePlan& plan, int unit_exponent, double miss);
NoiseInterval GaussianNoiseIntervalForMiss(const GaussianPlan& plan, int unit_exponent,
                                           double miss);

struct ConfidenceInterval {
  double low = 0;
  double high = 0;
};

// The interval for the mean from its released parts (MeanRelease, see
// gaussian_mechanism.h) and intervals for the count (unit exponent 0) and
// the centred sum (unit exponent unit_exponent - 1), each holding with
// probability >= 1 - alpha_i: covers the true mean of the clamped values
// (count >= 1) with probability >= 1 - alpha_1 - alpha_2. Rounded outward.
// If the count interval contains no count >= 1, the whole [lower, upper].
ConfidenceInterval MeanConfidenceInterval(const MeanRelease& release, std::int64_t lower_units,
                                          std::int64_t upper_units, int unit_exponent,
                                          const NoiseInterval& count,
                                          const NoiseInterval& centred_sum);

// The two noise intervals behind a mean's interval, with the confidence split
// evenly (each part at miss (1 - confidence) / 2). They depend on public
// parameters only, so a caller may compute them once per plan.
struct MeanNoiseIntervals {
  NoiseInterval count;
  NoiseInterval centred_sum;
};
MeanNoiseIntervals LaplaceMeanNoiseIntervals(const MeanPlans& plans, int unit_exponent,
                                             double confidence);
MeanNoiseIntervals GaussianMeanNoiseIntervals(const GaussianMeanPlans& plans, int unit_exponent,
                                              double confidence);

// With confidence split evenly: each part at miss (1 - confidence) / 2.
ConfidenceInterval LaplaceMeanInterval(const MeanRelease& release, std::int64_t lower_units,
                                       std::int64_t upper_units, int unit_exponent,
                                       const MeanPlans& plans, double confidence);
ConfidenceInterval GaussianMeanInterval(const MeanRelease& release, std::int64_t lower_units,
                                        std::int64_t upper_units, int unit_exponent,
                                        const GaussianMeanPlans& plans, double confidence);

}  // namespace dp

#endif  // DP_AGG_CORE_CONFIDENCE_H
