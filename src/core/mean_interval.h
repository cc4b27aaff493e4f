// Confidence intervals for the bounded mean that keep their nominal coverage
// without the union bound: inversion of an exact test on the two releases.
//
// Released: C~ = n + Z_c (count noise, grid steps of 1 unless its grid is
// coarser) and S~ = S + Z_s (the sum of values centred on the midpoint m of the
// bounds, in value units), with Z_c and Z_s independent, of known laws
// (discrete Laplace or discrete Gaussian on their grids, public parameters).
// For the centred mean mu = S / n (true mean of the clamped values minus m),
//     W(mu) = S~ - mu C~ = Z_s - mu Z_c      (exactly, when mu is the truth),
// whose law is known for every mu: a pivot in the manner of Fieller's
// theorem (Fieller 1954, for a ratio of normal means). The interval is
//     { mu in [lower - m, upper - m] : P[|Z_s - mu Z_c| >= |W(mu)| - r(mu)] > alpha },
// alpha = 1 - confidence, r(mu) the rounding of the true statistics to their
// grids (half a step of each, zero on unit grids). At the true mu the event
// "rejected" has probability <= alpha (a p-value of a continuous-or-discrete
// statistic computed from its exact law is super-uniform), so the set covers
// the true mean with probability >= confidence, with no union bound and no
// asymptotics: coverage is the nominal level up to the discreteness of the
// noise. The tail probabilities are computed from the exact discrete laws:
//     P[|Z_s R_s - mu Z_c R_c| >= w] = sum_k P[Z_c = k] (P[Z_s >= ceil((w + mu k R_c) / R_s)]
//                                                   + P[Z_s >= ceil((w - mu k R_c) / R_s)]),
// truncated where P[|Z_c| > K] < 7e-13 (the omitted mass is added, so the
// p-value is never underestimated).
//
// Shape. The test statistic is linear in mu and the noise grows with |mu|,
// so the accepted set is an interval around S~ / C~, possibly together with
// pieces reaching the ends of the range when C~ is not clearly positive (as
// Fieller's set, which is then unbounded). The returned interval runs, on
// each side of the estimate, to the first rejected point of a geometric
// sequence of steps (refined by bisection, keeping the rejected side), or to
// the end of the range if that end is accepted; rounded outward. With no
// accepted point it is the whole range [lower, upper]. (An accepted island
// strictly between a rejected point and a rejected end would be missed; the
// coverage tests and the benchmark measure the result.)
//
// Everything is post-processing of the releases and public parameters:
// publishing the interval costs no privacy.
#ifndef DP_AGG_CORE_MEAN_INTERVAL_H
#define DP_AGG_CORE_MEAN_INTERVAL_H

#include <cstdint>

#include "confidence.h"
#include "gaussian_mechanism.h"
#include "private_statistics.h"

namespace dp {

ConfidenceInterval LaplaceMeanTestInterval(const MeanRelease& release, std::int64_t lower_units,
                                           std::int64_t upper_units, int unit_exponent,
                                           const MeanPlans& plans, double confidence);
ConfidenceInterval GaussianMeanTestInterval(const MeanRelease& release, std::int64_t lower_units,
                                            std::int64_t upper_units, int unit_exponent,
                                            const GaussianMeanPlans& plans, double confidence);

// Whether the test inversion's sum over the count noise stays small (at most
// kMaxMeanTestCountRadius grid steps each side): a function of the public
// plans only. When it does not (tiny epsilon: the count noise spans up to
// 2^40 grid steps), callers use the union-bound interval (confidence.h
// MeanConfidenceInterval), which is conservative and costs O(1).
inline constexpr long kMaxMeanTestCountRadius = 1L << 12;
bool LaplaceMeanTestIsTractable(const MeanPlans& plans) noexcept;
bool GaussianMeanTestIsTractable(const GaussianMeanPlans& plans) noexcept;

// The p-value above at a centred mean mu (value units), for tests and the
// benchmark.
double LaplaceMeanPValue(const MeanRelease& release, std::int64_t lower_units,
                         std::int64_t upper_units, int unit_exponent, const MeanPlans& plans,
                         double centred_mean);
double GaussianMeanPValue(const MeanRelease& release, std::int64_t lower_units,
                          std::int64_t upper_units, int unit_exponent,
                          const GaussianMeanPlans& plans, double centred_mean);

}  // namespace dp

#endif  // DP_AGG_CORE_MEAN_INTERVAL_H
