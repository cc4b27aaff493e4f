// The Laplace mechanism on a binary grid, sampled exactly.
//
// Construction (Google, "Secure Noise Generation", differential-privacy
// common_docs/Secure_Noise_Generation.pdf; Mironov CCS 2012 for why): the true
// statistic is rounded to a multiple of a power of two r, and an integer
// multiple of r drawn from the discrete Laplace distribution is added. All of
// it is integer arithmetic, so every output is an exact multiple of r and no
// floating-point rounding ever touches the noisy sum.
//
// Privacy (Ghosh, Roughgarden, Sundararajan 2009 for the geometric
// mechanism): if the integer statistic f changes by at most D between
// neighbouring datasets, f + Z with P[Z = z] proportional to exp(-eps |z| / D)
// is eps-DP. Rounding f to the grid first is a function applied before the
// noise: |round(a / R) - round(b / R)| <= ceil(|a - b| / R), so the rounded
// statistic has sensitivity ceil(D / R), which is what the noise is scaled to.
#ifndef DP_AGG_CORE_LAPLACE_MECHANISM_H
#define DP_AGG_CORE_LAPLACE_MECHANISM_H

#include <cstdint>

#include "grid_value.h"
#include "random_source.h"

namespace dp {

// epsilon = mantissa * 2^exponent with mantissa < 2^24: the requested epsilon
// rounded DOWN to 24 significant bits (relative change < 1.2e-7). Using a
// smaller epsilon only adds noise, so the guarantee stated for the requested
// epsilon holds; in exchange epsilon is an exact small rational.
struct DyadicEpsilon {
  std::uint64_t mantissa = 0;
  int exponent = 0;
};
DyadicEpsilon RoundEpsilonDown(double epsilon);

// The value every mechanism actually uses for a requested privacy parameter
// (epsilon, and delta for the Gaussian variants): rounded down to 24
// significant bits, as a double. Never above the request, so charging the
// request (or anything at least this value) always covers what is spent.
double EffectivePrivacyParameter(double requested);

// The grid and noise distribution for one release, derived only from public
// parameters (sensitivity, epsilon): never from the data.
struct LaplacePlan {
  int grid_shift = 0;  // R = 2^grid_shift units per grid step
  uint128 sensitivity = 0;  // in grid steps: ceil(D / R)
  // Noise scale in grid steps is scale_numerator / scale_denominator
  // = sensitivity / epsilon', exactly.
  uint128 scale_numerator = 0;
  uint128 scale_denominator = 1;
};

// Target ratio between the noise scale and the grid step, as in Google's
// library: the grid is 2^-40 of the noise scale, far below anything visible
// in an answer, yet coarse enough that the output carries no float residue.
inline constexpr int kGridBitsBelowScale = 40;

// sensitivity_units: the largest change of the statistic (in units) between
// neighbouring datasets; epsilon must be validated (see parameters.h).
LaplacePlan PlanLaplace(uint128 sensitivity_units, double epsilon);

// Releases `value` (in units of 2^unit_exponent) under `plan`. The result is
// on the grid 2^(unit_exponent + grid_shift).
// Caches what ReleaseLaplace's first draw with `plan` would compute
// (exact_sampler.h PrepareDiscreteLaplace).
void PrepareLaplace(const LaplacePlan& plan);

GridValue ReleaseLaplace(int128 value, int unit_exponent, const LaplacePlan& plan,
                         RandomSource& rng);

// Standard deviation of the released value's noise, in units of the value
// itself (sqrt(2) * scale for the Laplace-like shape; exact for the discrete
// distribution: sqrt(2q)/(1-q) grid steps, q = exp(-1/scale)).
double LaplaceNoiseStddev(const LaplacePlan& plan, int unit_exponent);

}  // namespace dp

#endif  // DP_AGG_CORE_LAPLACE_MECHANISM_H
